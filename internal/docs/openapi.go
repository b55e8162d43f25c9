package docs

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Operation is what an OpenAPI spec says about one operation, for pages
// whose content comes from the spec ("openapi: GET /users" front matter).
type Operation struct {
	// Spec is the spec file it was read from.
	Spec string
	// Method is the HTTP method in upper case, or "WEBHOOK".
	Method string
	// Path is the operation's path ("/users/{id}") or the webhook's name.
	Path        string
	OperationID string
	Summary     string
	Description string
	Tags        []string
	Deprecated  bool
	// Parameters are the path, query, header and cookie parameters (and
	// Swagger 2 form fields), the path item's first, then the operation's.
	Parameters  []Parameter
	RequestBody *Body
	Responses   []Response
}

// Parameter is a parameter of an operation.
type Parameter struct {
	Name, In, Description, Type string
	Required                    bool
}

// Body is an operation's request body.
type Body struct {
	Description  string
	Required     bool
	ContentTypes []string
	// Fields are the top-level properties of the body's schema.
	Fields []Field
}

// Response is one response of an operation.
type Response struct {
	// Status is the status code ("200", "4XX") or "default".
	Status      string
	Description string
	// Fields are the top-level properties of the response's schema.
	Fields []Field
}

// Field is a property of a request or response schema.
type Field struct {
	Name, Type, Description string
	Required                bool
}

// specDoc is a parsed spec.
type specDoc struct {
	file string
	root map[string]any
}

// maxRefHops bounds chains of "$ref" inside a spec.
const maxRefHops = 32

// errNoLocalSpec means the operation names a spec that is not a local file
// (a URL), so it cannot be looked up.
var errNoLocalSpec = errors.New("the spec is not a local file")

// Operation returns the OpenAPI operation an API page documents: its
// "openapi" front matter names it as "METHOD /path" or "spec.json METHOD
// /path" (or "webhook name"). Without a spec in the front matter, the spec
// set on the page's navigation entry is used, then the specs the config
// names, then openapi.json/.yaml/.yml at the docs root. ok is false when the
// page has no such front matter or the operation is not found.
func (s *Site) Operation(p *Page) (*Operation, bool) {
	if p == nil || p.OpenAPI == "" {
		return nil, false
	}
	op, err := s.operation(p.Path, p.OpenAPI)
	return op, err == nil
}

// operation looks an operation reference up; the error says why it was not
// found.
func (s *Site) operation(pagePath, ref string) (*Operation, error) {
	spec, method, target, ok := parseOperationRef(ref)
	if !ok {
		return nil, fmt.Errorf(`openapi: %q must be "METHOD /path" or "spec-file METHOD /path", like "GET /users"`, ref)
	}
	var cands []string
	if spec != "" {
		if isURL(spec) {
			return nil, errNoLocalSpec
		}
		c, ok := cleanRootPath(spec)
		if !ok {
			return nil, fmt.Errorf("openapi: spec %q is not a path under the docs root", spec)
		}
		cands = append(cands, c)
		if !strings.HasPrefix(spec, "/") {
			if rel, ok := cleanRootPath(path.Join(path.Dir(pagePath), spec)); ok && rel != c {
				cands = append(cands, rel)
			}
		}
	} else {
		if n := s.navOpenAPI[pagePath]; n != "" {
			if isURL(n) {
				return nil, errNoLocalSpec
			}
			if c, ok := cleanRootPath(n); ok {
				cands = append(cands, c)
			}
		}
		cands = append(cands, s.OpenAPISpecs...)
		cands = append(cands, "openapi.json", "openapi.yaml", "openapi.yml")
	}
	var read []string
	for _, c := range cands {
		if slices.Contains(read, c) {
			continue
		}
		doc, err := s.spec(c)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("openapi: spec %s: %w", c, err)
		}
		read = append(read, c)
		if op, ok := doc.find(method, target); ok {
			return op, nil
		}
	}
	what := method + " " + target
	if method == "WEBHOOK" {
		what = "webhook " + target
	}
	switch {
	case len(read) == 0 && spec != "":
		return nil, fmt.Errorf("openapi: spec file %s does not exist", cands[0])
	case len(read) == 0:
		return nil, fmt.Errorf("openapi: no spec to look %s up in; name one in the front matter (\"openapi.json %s\") or in the config", what, what)
	default:
		return nil, fmt.Errorf("openapi: %s is not in %s; fix the method or path to match the spec", what, strings.Join(read, ", "))
	}
}

// spec reads and caches a spec file.
func (s *Site) spec(name string) (*specDoc, error) {
	s.mu.Lock()
	doc, err := s.specs[name], s.specErrs[name]
	s.mu.Unlock()
	if doc != nil || err != nil {
		return doc, err
	}
	doc, err = readSpec(s.fsys, name)
	s.mu.Lock()
	s.specs[name], s.specErrs[name] = doc, err
	s.mu.Unlock()
	return doc, err
}

func readSpec(fsys fs.FS, name string) (*specDoc, error) {
	raw, err := ReadFile(fsys, name, MaxSpecBytes)
	if err != nil {
		return nil, err
	}
	root, err := parseSpec(name, raw)
	if err != nil {
		return nil, err
	}
	return &specDoc{file: name, root: root}, nil
}

// parseSpec decodes a JSON or YAML spec into maps.
func parseSpec(name string, raw []byte) (map[string]any, error) {
	var v any
	if strings.EqualFold(path.Ext(name), ".json") {
		var err error
		if v, err = decodeJSON(name, raw); err != nil {
			return nil, err
		}
	} else {
		var n yaml.Node
		if err := yaml.Unmarshal(raw, &n); err != nil {
			line, msg := yamlErrorLine(err)
			return nil, &ConfigError{File: name, Line: line, Message: "invalid YAML: " + msg}
		}
		if err := n.Decode(&v); err != nil {
			line, msg := yamlErrorLine(err)
			return nil, &ConfigError{File: name, Line: line, Message: "invalid YAML: " + msg}
		}
		v = normalizeYAML(v, 0)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &ConfigError{File: name, Line: 1, Message: "an OpenAPI spec must be an object"}
	}
	return m, nil
}

// deref follows local "$ref"s ("#/components/schemas/User").
func (d *specDoc) deref(v any) any {
	for range maxRefHops {
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		ref, ok := m["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#/") {
			return v
		}
		var cur any = d.root
		for _, tok := range strings.Split(ref[2:], "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			cm, ok := cur.(map[string]any)
			if !ok {
				return nil
			}
			cur = cm[tok]
		}
		v = cur
	}
	return nil
}

func (d *specDoc) obj(v any) map[string]any {
	m, _ := d.deref(v).(map[string]any)
	return m
}

// find looks up an operation or webhook.
func (d *specDoc) find(method, target string) (*Operation, bool) {
	if method == "WEBHOOK" {
		hooks := d.obj(d.root["webhooks"])
		if hooks == nil {
			hooks = d.obj(d.root["x-webhooks"])
		}
		item := d.obj(hooks[target])
		for _, m := range []string{"post", "get", "put", "patch", "delete", "options", "head", "trace"} {
			if op := d.obj(item[m]); op != nil {
				return d.operation(item, op, "WEBHOOK", target), true
			}
		}
		return nil, false
	}
	paths := d.obj(d.root["paths"])
	key := target
	item := d.obj(paths[key])
	if item == nil {
		want := templateKey(target)
		for _, k := range sortedKeys(paths) {
			if templateKey(k) == want {
				key, item = k, d.obj(paths[k])
				break
			}
		}
	}
	op := d.obj(item[strings.ToLower(method)])
	if op == nil {
		return nil, false
	}
	return d.operation(item, op, method, key), true
}

// templateKey makes paths comparable regardless of parameter names and a
// trailing slash: "/users/{id}/" and "/users/{userId}" give "/users/{}".
func templateKey(p string) string {
	var b strings.Builder
	depth := 0
	for _, c := range strings.TrimSuffix(p, "/") {
		switch {
		case c == '{':
			if depth == 0 {
				b.WriteString("{}")
			}
			depth++
		case c == '}' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(c)
		}
	}
	return b.String()
}

func (d *specDoc) operation(item, op map[string]any, method, p string) *Operation {
	o := &Operation{
		Spec:        d.file,
		Method:      method,
		Path:        p,
		OperationID: stringOf(op["operationId"]),
		Summary:     stringOf(op["summary"]),
		Description: stringOf(op["description"]),
		Deprecated:  op["deprecated"] == true,
	}
	if o.Summary == "" {
		o.Summary = stringOf(item["summary"])
	}
	if o.Description == "" {
		o.Description = stringOf(item["description"])
	}
	if tags, ok := op["tags"].([]any); ok {
		for _, t := range tags {
			if s := stringOf(t); s != "" {
				o.Tags = append(o.Tags, s)
			}
		}
	}
	// Operation parameters override path item ones with the same name and
	// location.
	var params []Parameter
	index := map[string]int{}
	for _, list := range []any{item["parameters"], op["parameters"]} {
		arr, _ := d.deref(list).([]any)
		for _, e := range arr {
			pm := d.obj(e)
			if pm == nil {
				continue
			}
			in := stringOf(pm["in"])
			if in == "body" {
				// Swagger 2 body parameter.
				o.RequestBody = &Body{
					Description:  stringOf(pm["description"]),
					Required:     pm["required"] == true,
					ContentTypes: stringList(op["consumes"], d.root["consumes"]),
					Fields:       d.fields(pm["schema"]),
				}
				continue
			}
			prm := Parameter{
				Name:        stringOf(pm["name"]),
				In:          in,
				Description: stringOf(pm["description"]),
				Required:    pm["required"] == true,
				Type:        d.typeName(pm),
			}
			k := prm.In + "\x00" + prm.Name
			if i, ok := index[k]; ok {
				params[i] = prm
				continue
			}
			index[k] = len(params)
			params = append(params, prm)
		}
	}
	o.Parameters = params
	if rb := d.obj(op["requestBody"]); rb != nil {
		b := &Body{Description: stringOf(rb["description"]), Required: rb["required"] == true}
		content := d.obj(rb["content"])
		b.ContentTypes = sortedKeys(content)
		b.Fields = d.fields(d.obj(content[preferredType(b.ContentTypes)])["schema"])
		o.RequestBody = b
	}
	responses := d.obj(op["responses"])
	for _, status := range sortedKeys(responses) {
		if strings.HasPrefix(status, "x-") {
			continue
		}
		r := d.obj(responses[status])
		resp := Response{Status: status, Description: stringOf(r["description"])}
		if content := d.obj(r["content"]); content != nil {
			resp.Fields = d.fields(d.obj(content[preferredType(sortedKeys(content))])["schema"])
		} else if r["schema"] != nil {
			resp.Fields = d.fields(r["schema"])
		}
		o.Responses = append(o.Responses, resp)
	}
	return o
}

// preferredType picks the JSON content type if there is one, else the first.
func preferredType(types []string) string {
	for _, t := range types {
		if strings.Contains(t, "json") {
			return t
		}
	}
	if len(types) > 0 {
		return types[0]
	}
	return ""
}

// fields lists the top-level properties of a schema (through allOf, and
// the items of an array).
func (d *specDoc) fields(schema any) []Field {
	var out []Field
	seen := map[string]bool{}
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		m := d.obj(v)
		if m == nil || depth > 8 {
			return
		}
		if items := m["items"]; items != nil && stringOf(m["type"]) == "array" {
			walk(items, depth+1)
			return
		}
		for _, key := range []string{"allOf"} {
			if arr, ok := m[key].([]any); ok {
				for _, e := range arr {
					walk(e, depth+1)
				}
			}
		}
		required := map[string]bool{}
		if req, ok := m["required"].([]any); ok {
			for _, r := range req {
				required[stringOf(r)] = true
			}
		}
		props := d.obj(m["properties"])
		for _, name := range sortedKeys(props) {
			if seen[name] {
				continue
			}
			seen[name] = true
			pm := d.obj(props[name])
			out = append(out, Field{
				Name:        name,
				Type:        d.typeName(map[string]any{"schema": props[name]}),
				Description: stringOf(pm["description"]),
				Required:    required[name],
			})
		}
	}
	walk(schema, 0)
	return out
}

// typeName describes the type of a parameter (OpenAPI 3 "schema" or
// Swagger 2 "type"): "string", "array of integer", "User".
func (d *specDoc) typeName(pm map[string]any) string {
	if t := stringOf(pm["type"]); t != "" {
		return t
	}
	raw := pm["schema"]
	if rm, ok := raw.(map[string]any); ok {
		if ref, ok := rm["$ref"].(string); ok {
			return path.Base(ref)
		}
	}
	sm := d.obj(raw)
	if sm == nil {
		return ""
	}
	switch t := sm["type"].(type) {
	case string:
		if t == "array" {
			if it := d.typeName(map[string]any{"schema": sm["items"]}); it != "" {
				return "array of " + it
			}
		}
		return t
	case []any:
		var parts []string
		for _, e := range t {
			if s := stringOf(e); s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, " or ")
	}
	return ""
}

func stringList(vs ...any) []string {
	for _, v := range vs {
		if arr, ok := v.([]any); ok {
			var out []string
			for _, e := range arr {
				if s := stringOf(e); s != "" {
					out = append(out, s)
				}
			}
			return out
		}
	}
	return nil
}

// validateSpecFile checks that a changed spec file parses.
func validateSpecFile(name string, raw []byte) *Problem {
	var err error
	if strings.EqualFold(path.Ext(name), ".json") {
		_, err = decodeJSON(name, raw)
	} else {
		var n yaml.Node
		if yerr := yaml.Unmarshal(raw, &n); yerr != nil {
			line, msg := yamlErrorLine(yerr)
			err = &ConfigError{File: name, Line: line, Message: "invalid YAML: " + msg}
		}
	}
	if err == nil {
		return nil
	}
	var ce *ConfigError
	if errors.As(err, &ce) {
		return &Problem{File: name, Line: ce.Line, Message: ce.Message}
	}
	return &Problem{File: name, Message: err.Error()}
}
