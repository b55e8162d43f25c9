package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Parameter types, as JSON Schema names them.
const (
	typeString  = "string"
	typeInteger = "integer"
	typeBoolean = "boolean"
)

type param struct {
	name     string
	typ      string
	required bool
	desc     string
	example  any // shown in "for example" hints when required
}

// tool is one entry of the table: what the model sees and the function that runs it. The same
// table drives Specs, argument checking and dispatch.
type tool struct {
	name   string
	desc   string
	params []param
	run    func(ctx context.Context, a args) (string, error)
}

func (t *tool) param(name string) *param {
	for i := range t.params {
		if t.params[i].name == name {
			return &t.params[i]
		}
	}
	return nil
}

func (t *tool) paramNames() string {
	names := make([]string, len(t.params))
	for i, p := range t.params {
		names[i] = p.name
	}
	return strings.Join(names, ", ")
}

// example is a minimal valid arguments object, for error messages.
func (t *tool) example() string {
	var b strings.Builder
	b.WriteByte('{')
	n := 0
	for _, p := range t.params {
		if !p.required {
			continue
		}
		if n > 0 {
			b.WriteString(", ")
		}
		n++
		k, _ := json.Marshal(p.name)
		v, _ := json.Marshal(p.example)
		b.Write(k)
		b.WriteString(": ")
		b.Write(v)
	}
	b.WriteByte('}')
	return b.String()
}

func (t *tool) schema() json.RawMessage {
	type prop struct {
		Type        string `json:"type"`
		Description string `json:"description"`
	}
	props := make(map[string]prop, len(t.params))
	required := []string{}
	for _, p := range t.params {
		props[p.name] = prop{Type: p.typ, Description: p.desc}
		if p.required {
			required = append(required, p.name)
		}
	}
	s := struct {
		Type                 string          `json:"type"`
		Properties           map[string]prop `json:"properties"`
		Required             []string        `json:"required"`
		AdditionalProperties bool            `json:"additionalProperties"`
	}{"object", props, required, false}
	data, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("tools: schema of %s: %v", t.name, err)) // static data; cannot happen
	}
	return data
}

func (w *Workspace) lookup(name string) *tool {
	for _, t := range w.tools {
		if t.name == name {
			return t
		}
	}
	return nil
}

func (w *Workspace) toolNames() []string {
	names := make([]string, len(w.tools))
	for i, t := range w.tools {
		names[i] = t.name
	}
	return names
}

// args holds a call's arguments after checking: strings, ints and bools by parameter name.
type args map[string]any

func (a args) str(name string) string {
	s, _ := a[name].(string)
	return s
}

func (a args) has(name string) bool {
	_, ok := a[name]
	return ok
}

func (a args) integer(name string) int {
	n, _ := a[name].(int)
	return n
}

func (a args) boolean(name string) bool {
	b, _ := a[name].(bool)
	return b
}

// parseArgs checks raw against t's parameters. Every problem is a *ToolError that names the
// parameter and shows a valid call. It is lenient where models often slip and the meaning is
// clear: empty arguments are {}, a JSON object sent as a JSON string is unwrapped, and numbers
// and booleans may come as strings.
func parseArgs(t *tool, raw string) (args, error) {
	data := bytes.TrimSpace([]byte(raw))
	if len(data) == 0 {
		data = []byte("{}")
	}
	if data[0] == '"' {
		var inner string
		if err := json.Unmarshal(data, &inner); err == nil && strings.HasPrefix(strings.TrimSpace(inner), "{") {
			data = []byte(inner)
		}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, toolErrorf("the arguments of %s are not valid JSON (%s, at byte %d); send one JSON object, for example %s",
				t.name, strings.TrimPrefix(se.Error(), "json: "), se.Offset, t.example())
		case errors.As(err, &te):
			return nil, toolErrorf("the arguments of %s must be a JSON object, not %s; for example %s", t.name, kindOf(data), t.example())
		default:
			return nil, toolErrorf("the arguments of %s are not valid JSON (%s); send one JSON object, for example %s",
				t.name, strings.TrimPrefix(err.Error(), "json: "), t.example())
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	a := args{}
	for _, k := range keys {
		p := t.param(k)
		if p == nil {
			return nil, toolErrorf("%s has no parameter %s; its parameters are %s", t.name, quoteShort(k), t.paramNames())
		}
		v, present, err := decodeParam(t, p, obj[k])
		if err != nil {
			return nil, err
		}
		if present {
			a[k] = v
		}
	}
	for _, p := range t.params {
		if p.required && !a.has(p.name) {
			return nil, toolErrorf("%s needs the parameter %q (%s: %s); for example %s", t.name, p.name, p.typ, p.desc, t.example())
		}
	}
	return a, nil
}

// decodeParam returns the value of one parameter; present is false for JSON null.
func decodeParam(t *tool, p *param, raw json.RawMessage) (v any, present bool, err error) {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return nil, false, nil
	}
	wrong := func() error {
		return toolErrorf("parameter %q of %s must be %s, not %s", p.name, t.name, article(p.typ), kindOf(raw))
	}
	switch p.typ {
	case typeString:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false, wrong()
		}
		return s, true, nil
	case typeInteger:
		var text string
		if raw[0] == '"' {
			if json.Unmarshal(raw, &text) != nil {
				return nil, false, wrong()
			}
			text = strings.TrimSpace(text)
		} else {
			text = string(raw)
		}
		f, perr := strconv.ParseFloat(text, 64)
		if perr != nil {
			return nil, false, wrong()
		}
		if f != math.Trunc(f) || math.Abs(f) > 1e9 {
			return nil, false, toolErrorf("parameter %q of %s must be a whole number between -1000000000 and 1000000000, not %s", p.name, t.name, quoteShort(text))
		}
		return int(f), true, nil
	case typeBoolean:
		switch strings.ToLower(strings.Trim(string(raw), `" `)) {
		case "true":
			return true, true, nil
		case "false":
			return false, true, nil
		}
		return nil, false, wrong()
	}
	return nil, false, fmt.Errorf("tools: parameter %s of %s has unknown type %q", p.name, t.name, p.typ)
}

func article(typ string) string {
	switch typ {
	case typeInteger:
		return "an integer"
	case typeBoolean:
		return "a boolean (true or false)"
	default:
		return "a " + typ
	}
}

// kindOf names the kind of a JSON value for error messages.
func kindOf(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}
