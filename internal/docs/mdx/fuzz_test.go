package mdx

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// fuzzSeeds returns small pages covering each construct the scanner knows.
func fuzzSeeds() []string {
	return []string{
		"",
		lines("# Title", "", "Text with *emphasis*, `code` and [a link](/x \"t\")."),
		lines("<Steps>", `  <Step title="One" icon={<Icon />}>`, "    ```js", "    <x>", "    ```", "  </Step>", "</Steps>"),
		lines("````", "```", "````", "~~~", "x"),
		lines("<Card", `  title="a > b"`, "  href='/c'", "  {...rest}", "/>"),
		lines("{/* c */}", "{`${a}`}", "{'{'}", "text {x"),
		lines("import A from '/snippets/a.mdx'", "", "export const B = () => {", "", "  return <p>It's</p>", "}", "", "<A p=\"v\" />"),
		lines("| a | b |", "|---|---|", "| `x\\|y` | <b>z</b> |"),
		lines("Title", "===", "", "## Same", "## Same {#same}", "## Same"),
		lines("> ```", "> <b>", "", "- [ ] task <i>", "  more</i>"),
		lines("<!-- c -->", "a <3", "<https://x.y>", "</Stray>", "$$", "\\frac{a}{b}", "$$"),
		lines("[ref]: /target", "![img](/i.png)", "[![i](/i)](/l)", "<a href=\"/h\">h</a>"),
		"\r\n<Note>\r\nx\r\n",
		"<a\u00a0b/> <π/> <a:b c:d=\"e\"/> <x.y.z></x.y.z>",
	}
}

// lineCount returns the number of lines in b, counting a last line without a break.
func lineCount(b []byte) int {
	b = normalizeNewlines(b)
	return bytes.Count(b, []byte{'\n'}) + 1
}

func FuzzCheck(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		probs := Check(body)
		n := lineCount(body)
		for i, p := range probs {
			if p.Line < 1 || p.Line > n {
				t.Errorf("problem %v outside lines 1–%d", p, n)
			}
			if p.Message == "" {
				t.Errorf("problem %d has no message", i)
			}
			if i > 0 && probs[i-1].Line > p.Line {
				t.Errorf("problems out of order: %v before %v", probs[i-1], p)
			}
		}
		if len(probs) > maxProblems {
			t.Errorf("%d problems, want at most %d", len(probs), maxProblems)
		}
		for _, l := range Links(body) {
			if l.Line < 1 || l.Line > n {
				t.Errorf("link %+v outside lines 1–%d", l, n)
			}
		}
	})
}

func FuzzSections(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		resolve := func(string) ([]byte, bool) { return body, true } // every snippet is the page itself
		secs := Sections(body, resolve)
		if len(secs) == 0 || secs[0].Level != 0 || secs[0].Heading != "" || secs[0].Anchor != "" {
			t.Fatalf("first section = %+v, want the text before the first heading", secs)
		}
		valid := utf8.Valid(body)
		anchors := map[string]bool{}
		for _, s := range secs[1:] {
			if s.Level < 1 || s.Level > 6 {
				t.Errorf("heading %q has level %d", s.Heading, s.Level)
			}
			if anchors[s.Anchor] {
				t.Errorf("anchor %q used twice", s.Anchor)
			}
			anchors[s.Anchor] = true
		}
		if !valid {
			return
		}
		for _, s := range secs {
			for _, v := range [...]string{s.Heading, s.Anchor, s.Text} {
				if !utf8.ValidString(v) {
					t.Errorf("invalid UTF-8 out of valid input: %q", v)
				}
			}
		}
		if !utf8.ValidString(Text(body)) {
			t.Errorf("Text is not valid UTF-8")
		}
		rendered := Render(body, Options{Resolve: resolve, SiteURL: "https://docs.example", PagePath: "guides/page"})
		if len(rendered) != len(secs) {
			t.Fatalf("Render has %d sections, Sections %d", len(rendered), len(secs))
		}
		for i, s := range rendered {
			if s.Text != secs[i].Text || s.Heading != secs[i].Heading {
				t.Errorf("section %d: Render's text %q differs from Sections' %q", i, s.Text, secs[i].Text)
			}
			var lines []string
			for _, l := range s.Lines {
				if l.Text != "" {
					lines = append(lines, l.Text)
				}
			}
			if got := strings.Join(lines, "\n"); got != s.Text {
				t.Errorf("section %d: the Lines' text %q is not the section's %q", i, got, s.Text)
			}
			if md := JoinLines(s.Lines); !utf8.ValidString(md) {
				t.Errorf("section %d: Markdown is not valid UTF-8: %q", i, md)
			}
		}
		for _, h := range Headings(body) {
			if h.Text != "" {
				t.Errorf("Headings returned text %q", h.Text)
			}
		}
		for _, a := range Anchors(body) {
			if !utf8.ValidString(a) {
				t.Errorf("anchor %q is not valid UTF-8", a)
			}
		}
		for _, l := range Links(body) {
			if !utf8.ValidString(l.Target) || !utf8.ValidString(l.Text) {
				t.Errorf("link %+v is not valid UTF-8", l)
			}
		}
	})
}

// TestAdversarialInputIsLinear feeds long runs of half-finished constructs.
// Each once took quadratic time (tens of seconds at this size); now each
// takes milliseconds, so the bound only catches a return to quadratic.
func TestAdversarialInputIsLinear(t *testing.T) {
	t.Parallel()
	units := []string{
		"[", "![", "[`", "[a](", "[a](b \"", "{\n", "{", "``a`", "<a></b>", "<a>\n\n</b>\n\n",
		"a <b>\n\n", "<a b='", "<a\n", "$", "| a |\n|---|\n", "export {\n", "<x y={`${",
		"<Note>\nx\n", "> ", "- ", "  - x\n", "<Steps>\n<Step>\n", "```\n", "<Tip>x", "| a |\n|---|\n| b<br/> |\n",
	}
	for _, unit := range units {
		t.Run(unit, func(t *testing.T) {
			t.Parallel()
			body := []byte(strings.Repeat(unit, 64<<10/len(unit)))
			start := time.Now()
			Check(body)
			Sections(body, nil)
			Links(body)
			Render(body, Options{SiteURL: "https://docs.example", PagePath: "a/b"})
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("%q ×%d took %v", unit, len(body)/len(unit), d)
			}
		})
	}
}
