// Package docsite generates the pages of docsmith's docs site that come
// from the code, so they cannot drift from it: the configuration reference
// from the configuration table, and the API reference pages (one per
// operation, grouped by tag) from the OpenAPI document the server serves.
// Generate writes them; Stale lists those the committed site lacks or
// holds in another form.
package docsite

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"unicode"

	"github.com/docsmith/docsmith"
	"github.com/docsmith/docsmith/internal/config"
)

// Paths of the generated files, from the docs root.
const (
	ConfigurationPage = "reference/configuration.mdx"
	// APIGroups is the API reference tab's groups, which docs.json takes in
	// with {"$ref": "api-reference/groups.json"}.
	APIGroups = "api-reference/groups.json"
	// APIIntroduction is the hand-written first page of the API reference.
	APIIntroduction = "api-reference/introduction"
	apiDir          = "api-reference"
)

// Regenerate is what a stale file's message tells the reader to run.
const Regenerate = "make docs"

// Files returns every generated file, path from the docs root to content.
// openapi is the OpenAPI document (docs/api-reference/openapi.json).
func Files(openapi []byte) (map[string][]byte, error) {
	files := map[string][]byte{ConfigurationPage: configurationPage(config.Options())}
	api, err := apiFiles(openapi)
	if err != nil {
		return nil, err
	}
	for k, v := range api {
		files[k] = v
	}
	return files, nil
}

// Stale compares a docs site with what the generator gives: it lists the
// generated files that are missing or differ, and the API reference pages
// the generator no longer makes.
func Stale(fsys fs.FS) ([]string, error) {
	openapi, err := fs.ReadFile(fsys, docsmith.OpenAPIPath)
	if err != nil {
		return nil, fmt.Errorf("read the OpenAPI document: %w", err)
	}
	want, err := Files(openapi)
	if err != nil {
		return nil, err
	}
	var stale []string
	for name, content := range want {
		got, err := fs.ReadFile(fsys, name)
		if err != nil || !bytes.Equal(got, content) {
			stale = append(stale, name)
		}
	}
	old, err := generatedPages(fsys)
	if err != nil {
		return nil, err
	}
	for _, name := range old {
		if _, ok := want[name]; !ok {
			stale = append(stale, name)
		}
	}
	slices.Sort(stale)
	return stale, nil
}

// Generate writes the generated files under the docs directory dir and
// removes the API reference pages of operations that are gone.
func Generate(dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open the docs directory: %w", err)
	}
	defer func() { _ = root.Close() }()
	openapi, err := root.ReadFile(docsmith.OpenAPIPath)
	if err != nil {
		return fmt.Errorf("read the OpenAPI document: %w", err)
	}
	files, err := Files(openapi)
	if err != nil {
		return err
	}
	old, err := generatedPages(root.FS())
	if err != nil {
		return err
	}
	for _, name := range old {
		if _, ok := files[name]; !ok {
			if err := root.Remove(name); err != nil {
				return fmt.Errorf("remove %s: %w", name, err)
			}
		}
	}
	for _, name := range sortedKeys(files) {
		if err := root.MkdirAll(path.Dir(name), 0o755); err != nil {
			return fmt.Errorf("create the folder of %s: %w", name, err)
		}
		if err := root.WriteFile(name, files[name], 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}

// generatedPages lists the API reference pages on disk: every .mdx file in
// a folder of api-reference/ (one folder per tag) is generated.
func generatedPages(fsys fs.FS) ([]string, error) {
	var out []string
	err := fs.WalkDir(fsys, apiDir, func(name string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && name == apiDir {
			return fs.SkipDir
		}
		if err != nil {
			return err
		}
		if !d.IsDir() && path.Dir(name) != apiDir && strings.HasSuffix(name, ".mdx") {
			out = append(out, name)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list the API reference pages: %w", err)
	}
	return out, nil
}

// configurationPage is the configuration reference: one section per
// option, in the table's order.
func configurationPage(options []config.OptionDoc) []byte {
	var b bytes.Buffer
	b.WriteString(`---
title: "Configuration"
description: "Every option of docsmith serve: its environment variable, flag, default and what it does."
---

{/* Generated from the configuration table (internal/config) by "` + Regenerate + `"; edit the table, not this page. */}

Each option comes from a flag, a ` + "`DOCSMITH_*`" + ` environment variable or a YAML file (` + "`--config FILE`" + ` or
` + "`DOCSMITH_CONFIG`" + `, keyed by the option's name), in that order of precedence, and falls back to its
default. ` + "`docsmith serve --help`" + ` prints this table; ` + "`docsmith config show`" + ` prints the values a
server would run with, secrets masked, and where each one came from.

A secret option can also be read from a file: set the variable with ` + "`_FILE`" + ` after its name (such as
` + "`DOCSMITH_DATABASE_URL_FILE=/run/secrets/database_url`" + `) to the file's path, which suits Docker and
Kubernetes secrets. Secret values never appear in logs, errors or ` + "`config show`" + `.

A configuration file looks like this:

` + "```yaml" + `
addr: 0.0.0.0:8080
data_dir: /data
log_format: json
trusted_proxies: [10.0.0.0/8]
` + "```" + `

## Options
`)
	for _, o := range options {
		fmt.Fprintf(&b, "\n### %s\n\n%s\n\n", o.Name, sentence(o.Description))
		fmt.Fprintf(&b, "- Environment: `%s`", o.Env)
		if o.Secret {
			fmt.Fprintf(&b, ", or the file `%s_FILE` names", o.Env)
		}
		b.WriteString("\n- Flag: ")
		for i, f := range o.Flags {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "`%s`", f)
		}
		if o.Common {
			b.WriteString(" (every command)")
		} else {
			b.WriteString(" (`docsmith serve`)")
		}
		b.WriteString("\n- Default: ")
		if o.Default == "" {
			b.WriteString("empty")
		} else {
			fmt.Fprintf(&b, "`%s`", o.Default)
		}
		b.WriteString("\n")
		if o.Secret {
			b.WriteString("- Secret: masked wherever it is shown\n")
		}
	}
	return b.Bytes()
}

// sentence makes a table description a sentence of MDX: a capital first
// letter, a full stop, and the characters MDX reads as markup escaped.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	s = string(r)
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return mdxText(s)
}

// mdxText escapes what MDX would read as JSX or an expression outside code
// spans: <, {, }.
func mdxText(s string) string {
	var b strings.Builder
	code := false
	for _, c := range s {
		switch {
		case c == '`':
			code = !code
		case code:
		case c == '<':
			b.WriteString("&lt;")
			continue
		case c == '{':
			b.WriteString("&#123;")
			continue
		case c == '}':
			b.WriteString("&#125;")
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// spec is the part of the OpenAPI document the API reference is made from.
type spec struct {
	Tags []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"tags"`
	Paths map[string]map[string]json.RawMessage `json:"paths"`
}

type operation struct {
	OperationID string   `json:"operationId"`
	Summary     string   `json:"summary"`
	Tags        []string `json:"tags"`
	Deprecated  bool     `json:"deprecated"`
}

// apiFiles makes one page per operation, in a folder per tag, and the
// navigation groups that list them: the tags in the document's order, the
// operations in the order of their paths in the document.
func apiFiles(openapi []byte) (map[string][]byte, error) {
	var doc spec
	if err := json.Unmarshal(openapi, &doc); err != nil {
		return nil, fmt.Errorf("read the OpenAPI document: %w", err)
	}
	order, err := pathOrder(openapi)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	groups := map[string][]string{}
	for _, p := range order {
		for _, method := range []string{"get", "post", "put", "patch", "delete"} {
			raw, ok := doc.Paths[p][method]
			if !ok {
				continue
			}
			var op operation
			if err := json.Unmarshal(raw, &op); err != nil {
				return nil, fmt.Errorf("read %s %s: %w", strings.ToUpper(method), p, err)
			}
			if op.OperationID == "" || len(op.Tags) == 0 {
				return nil, fmt.Errorf("%s %s needs an operationId and a tag for its reference page", strings.ToUpper(method), p)
			}
			tag := op.Tags[0]
			page := apiDir + "/" + slug(tag) + "/" + slug(op.OperationID)
			if _, dup := files[page+".mdx"]; dup {
				return nil, fmt.Errorf("two operations make the page %s; give them distinct operationIds", page)
			}
			files[page+".mdx"] = apiPage(strings.ToUpper(method), p, op)
			groups[tag] = append(groups[tag], page)
		}
	}
	type group struct {
		Group string   `json:"group"`
		Pages []string `json:"pages"`
	}
	nav := []group{{Group: "Overview", Pages: []string{APIIntroduction}}}
	for _, t := range doc.Tags {
		if len(groups[t.Name]) > 0 {
			nav = append(nav, group{Group: tagTitle(t.Name), Pages: groups[t.Name]})
			delete(groups, t.Name)
		}
	}
	for _, t := range sortedKeys(groups) { // tags the document does not list
		nav = append(nav, group{Group: tagTitle(t), Pages: groups[t]})
	}
	b, err := json.MarshalIndent(nav, "", "  ")
	if err != nil {
		return nil, err
	}
	files[APIGroups] = append(b, '\n')
	return files, nil
}

// apiPage is an endpoint page: front matter only, as Mintlify and docsmith
// both make the page from the operation in the OpenAPI document.
func apiPage(method, p string, op operation) []byte {
	title := op.Summary
	if title == "" {
		title = method + " " + p
	}
	var b strings.Builder
	b.WriteString("---\n")
	fmt.Fprintf(&b, "title: %s\n", quote(title))
	// A summary like "Readiness: the stores answer …" is long for the
	// sidebar; the words before the colon name the endpoint.
	if short, _, ok := strings.Cut(title, ": "); ok {
		fmt.Fprintf(&b, "sidebarTitle: %s\n", quote(short))
	}
	fmt.Fprintf(&b, "openapi: %s\n", quote(method+" "+p))
	if op.Deprecated {
		b.WriteString("deprecated: true\n")
	}
	b.WriteString("---\n")
	return []byte(b.String())
}

// quote writes a YAML double-quoted string.
func quote(s string) string {
	b, _ := json.Marshal(s) // a JSON string is a YAML double-quoted string
	return string(b)
}

// pathOrder lists the document's paths in the order they are written
// (a map would lose it).
func pathOrder(openapi []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(openapi))
	fail := func(err error) ([]string, error) {
		return nil, fmt.Errorf("read the OpenAPI document's paths: %w", err)
	}
	if _, err := dec.Token(); err != nil { // {
		return fail(err)
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		if key != "paths" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fail(err)
			}
			continue
		}
		if _, err := dec.Token(); err != nil { // {
			return fail(err)
		}
		var order []string
		for dec.More() {
			p, err := dec.Token()
			if err != nil {
				return fail(err)
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fail(err)
			}
			if s, ok := p.(string); ok {
				order = append(order, s)
			}
		}
		return order, nil
	}
	return nil, errors.New("the OpenAPI document has no paths")
}

// slug makes an operationId or tag a file name: "createJob" gives
// "create-job".
func slug(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case unicode.IsUpper(r):
			if i > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(unicode.ToLower(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		default:
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
				b.WriteByte('-')
			}
		}
	}
	return strings.Trim(b.String(), "-")
}

// tagTitle is a tag's group name in the navigation: "agent" gives "Agent".
func tagTitle(tag string) string {
	r := []rune(tag)
	if len(r) > 0 {
		r[0] = unicode.ToUpper(r[0])
	}
	return string(r)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
