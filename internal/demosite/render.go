package demosite

import (
	"fmt"
	"html"
	"regexp"
	"strconv"
	"strings"

	"github.com/docsmith/docsmith/internal/docs"
)

// The page renderer turns an MDX page into Markdown that goldmark renders,
// with Mintlify's components drawn as HTML: each component tag becomes a
// placeholder paragraph that is swapped for its HTML after rendering, so
// goldmark (which escapes any raw HTML in the docs) never sees markup the
// docs wrote.

var (
	// tagLine is a line holding only an MDX component's opening, closing
	// or self-closing tag.
	tagLine = regexp.MustCompile(`^</?([A-Z][A-Za-z0-9.]*)((?:\s+[^\s"'{}>/=]+(?:=(?:"[^"]*"|'[^']*'|\{[^}]*\}))?)*)\s*(/?)>$`)
	// inlineTag is a component with its content on one line:
	// <Note>Text</Note>.
	inlineTag   = regexp.MustCompile(`^(<([A-Z][A-Za-z0-9.]*)(?:\s[^>]*)?>)(.*)(</([A-Z][A-Za-z0-9.]*)>)$`)
	importExp   = regexp.MustCompile(`^(?:import|export)\s`)
	attrRE      = regexp.MustCompile(`([A-Za-z][A-Za-z0-9-]*)(?:=(?:"([^"]*)"|'([^']*)'|\{([^}]*)\}))?`)
	placeholder = regexp.MustCompile(`<p>DSBLOCK(\d+)X</p>`)
)

// callouts are the admonition components and their labels.
var callouts = map[string]string{
	"Note": "Note", "Tip": "Tip", "Info": "Info", "Warning": "Warning",
	"Check": "Check", "Danger": "Danger", "Callout": "Note",
}

// renderer collects the HTML of one page's components.
type renderer struct {
	blocks []string
	open   []string // the components drawn and not closed yet
}

// block returns a placeholder paragraph for a piece of HTML.
func (r *renderer) block(h string) string {
	r.blocks = append(r.blocks, h)
	return "\n\nDSBLOCK" + strconv.Itoa(len(r.blocks)-1) + "X\n\n"
}

// fill swaps the placeholders of rendered HTML for their components.
func (r *renderer) fill(out string) string {
	return placeholder.ReplaceAllStringFunc(out, func(m string) string {
		i, err := strconv.Atoi(placeholder.FindStringSubmatch(m)[1])
		if err != nil || i >= len(r.blocks) {
			return m
		}
		return r.blocks[i]
	})
}

// attrs reads a tag's attributes; a bare name is "true".
func attrs(s string) map[string]string {
	out := map[string]string{}
	for _, m := range attrRE.FindAllStringSubmatch(s, -1) {
		v := m[2] + m[3] + m[4]
		if !strings.Contains(m[0], "=") {
			v = "true"
		}
		out[m[1]] = v
	}
	return out
}

// component returns the HTML that stands for a component tag, or "" for a
// component drawn as its content alone.
func component(name string, a map[string]string, closing bool) string {
	title := html.EscapeString(a["title"])
	switch {
	case callouts[name] != "":
		if closing {
			return `</div>`
		}
		return `<div class="callout callout-` + strings.ToLower(name) + `"><p class="callout-label">` + callouts[name] + `</p>`
	case name == "Steps":
		if closing {
			return `</ol>`
		}
		return `<ol class="steps">`
	case name == "Step":
		if closing {
			return `</li>`
		}
		return `<li class="step"><p class="step-title">` + title + `</p>`
	case name == "CardGroup" || name == "Columns":
		if closing {
			return `</div>`
		}
		return `<div class="cards">`
	case name == "Card":
		if closing {
			return `</div>`
		}
		t := title
		if href := a["href"]; href != "" && (strings.HasPrefix(href, "/") || strings.HasPrefix(href, "https://")) {
			t = `<a href="` + html.EscapeString(href) + `">` + title + `</a>`
		}
		return `<div class="card"><p class="card-title">` + t + `</p>`
	case name == "Tabs" || name == "CodeGroup" || name == "AccordionGroup" || name == "Frame":
		if closing {
			return `</div>`
		}
		return `<div class="` + strings.ToLower(name) + `">`
	case name == "Tab":
		if closing {
			return `</div>`
		}
		return `<div class="tab"><p class="tab-title">` + title + `</p>`
	case name == "Accordion" || name == "Expandable":
		if closing {
			return `</details>`
		}
		if title == "" {
			title = "More"
		}
		return `<details><summary>` + title + `</summary>`
	case name == "ParamField" || name == "ResponseField":
		if closing {
			return `</div>`
		}
		field := ""
		for _, k := range []string{"name", "path", "query", "body", "header", "cookie"} {
			if a[k] != "" {
				field = a[k]
				break
			}
		}
		h := `<div class="field"><p><code>` + html.EscapeString(field) + `</code>`
		if t := a["type"]; t != "" {
			h += ` <span class="type">` + html.EscapeString(t) + `</span>`
		}
		if a["required"] == "true" {
			h += ` <span class="required">required</span>`
		}
		if d := a["default"]; d != "" {
			h += ` <span class="type">default ` + html.EscapeString(d) + `</span>`
		}
		return h + `</p>`
	}
	return ""
}

// fenceTitle splits a fence's info string, "bash Rebuild", into the
// language and a title.
func fenceTitle(info string) (lang, title string) {
	f := strings.Fields(info)
	if len(f) == 0 {
		return "", ""
	}
	var words []string
	for _, w := range f[1:] {
		if strings.ContainsAny(w, "={}") {
			continue
		}
		words = append(words, w)
	}
	return f[0], strings.Join(words, " ")
}

// markdown turns a page's MDX body into Markdown with placeholders for its
// components. Component content is often indented for readability;
// unindented, it does not turn into code blocks. A fenced block keeps its
// own indentation only.
func (r *renderer) markdown(body []byte) []byte {
	var lines []string
	inFence := false
	for _, line := range strings.Split(string(body), "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
		}
		// One-line components become three lines (outside code).
		if m := inlineTag.FindStringSubmatch(strings.TrimSpace(line)); !inFence && m != nil && m[2] == m[5] {
			lines = append(lines, m[1], m[3], m[4])
			continue
		}
		lines = append(lines, line)
	}
	var out strings.Builder
	fence := ""     // the open fence's indent
	fenceMark := "" // the open fence's backticks, "" outside a fence
	comment := false
	for _, line := range lines {
		trimmed := strings.TrimLeft(line, " \t")
		if fenceMark != "" {
			if strings.HasPrefix(trimmed, fenceMark) && strings.TrimSpace(strings.TrimLeft(trimmed, "`~")) == "" {
				fenceMark = ""
				out.WriteString(trimmed + "\n")
				continue
			}
			out.WriteString(strings.TrimPrefix(line, fence) + "\n")
			continue
		}
		if comment || strings.HasPrefix(trimmed, "{/*") {
			comment = !strings.HasSuffix(strings.TrimSpace(trimmed), "*/}")
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = line[:len(line)-len(trimmed)]
			mark := trimmed[:3]
			fenceMark = strings.Repeat(mark[:1], len(trimmed)-len(strings.TrimLeft(trimmed, mark[:1])))
			lang, title := fenceTitle(trimmed[len(fenceMark):])
			if title != "" {
				out.WriteString(r.block(`<p class="code-title">` + html.EscapeString(title) + `</p>`))
			}
			out.WriteString(fenceMark + lang + "\n")
			continue
		}
		if importExp.MatchString(trimmed) {
			continue
		}
		if m := tagLine.FindStringSubmatch(strings.TrimSpace(trimmed)); m != nil {
			closing := strings.HasPrefix(strings.TrimSpace(trimmed), "</")
			a := attrs(m[2])
			h := component(m[1], a, closing)
			switch {
			case h == "":
			case closing && (len(r.open) == 0 || r.open[len(r.open)-1] != m[1]):
				h = "" // closes nothing drawn: drawing it would unbalance the page
			case closing:
				r.open = r.open[:len(r.open)-1]
			case m[3] == "/": // self-closing
				h += component(m[1], a, true)
			default:
				r.open = append(r.open, m[1])
			}
			if h != "" {
				out.WriteString(r.block(h))
			} else {
				out.WriteString("\n")
			}
			continue
		}
		if !strings.HasPrefix(trimmed, "-") && !strings.HasPrefix(trimmed, "*") && !startsNumbered(trimmed) {
			line = trimmed
		}
		out.WriteString(line + "\n")
	}
	for i := len(r.open) - 1; i >= 0; i-- {
		out.WriteString(r.block(component(r.open[i], nil, true)))
	}
	r.open = nil
	return []byte(out.String())
}

func startsNumbered(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i > 0 && i < len(s) && s[i] == '.'
}

// operation is what an API reference page shows from its OpenAPI
// operation: the method and path, the description, the parameters, the
// request body's fields and the responses.
func (r *renderer) operation(op *docs.Operation) []byte {
	var b strings.Builder
	method := op.Method
	b.WriteString(r.block(`<p class="endpoint"><span class="method method-` + strings.ToLower(method) + `">` + html.EscapeString(method) + `</span> <code>` + html.EscapeString(op.Path) + `</code></p>`))
	if op.Deprecated {
		b.WriteString("**Deprecated.**\n\n")
	}
	if op.Description != "" {
		b.WriteString(op.Description + "\n\n")
	}
	if len(op.Parameters) > 0 {
		b.WriteString("## Parameters\n\n| Name | In | Type | Description |\n|---|---|---|---|\n")
		for _, p := range op.Parameters {
			name := "`" + p.Name + "`"
			if p.Required {
				name += " (required)"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", name, p.In, cell(p.Type), cell(p.Description))
		}
		b.WriteString("\n")
	}
	if rb := op.RequestBody; rb != nil {
		b.WriteString("## Request body\n\n")
		if rb.Description != "" {
			b.WriteString(rb.Description + "\n\n")
		}
		if len(rb.ContentTypes) > 0 {
			fmt.Fprintf(&b, "Content type: `%s`\n\n", strings.Join(rb.ContentTypes, "`, `"))
		}
		fields(&b, rb.Fields)
	}
	if len(op.Responses) > 0 {
		b.WriteString("## Responses\n\n")
		for _, resp := range op.Responses {
			fmt.Fprintf(&b, "### %s\n\n", resp.Status)
			if resp.Description != "" {
				b.WriteString(resp.Description + "\n\n")
			}
			fields(&b, resp.Fields)
		}
	}
	return []byte(b.String())
}

func fields(b *strings.Builder, fs []docs.Field) {
	if len(fs) == 0 {
		return
	}
	b.WriteString("| Field | Type | Description |\n|---|---|---|\n")
	for _, f := range fs {
		name := "`" + f.Name + "`"
		if f.Required {
			name += " (required)"
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", name, cell(f.Type), cell(f.Description))
	}
	b.WriteString("\n")
}

// cell makes text fit a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}
