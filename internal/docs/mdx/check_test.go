package mdx

import (
	"strings"
	"testing"
)

// lines joins its arguments with line breaks, so fixtures show one line per argument.
func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

func TestCheckAcceptsValidMDX(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
	}{
		{"empty", ""},
		{"plain markdown", lines("# Title", "", "Some *text* with **bold** and a [link](/x).", "", "- one", "- two")},
		{"nested components with multi-line props", lines(
			"<Tabs>",
			`  <Tab title="Go">`,
			"    <Card",
			`      title="Install the tool"`,
			`      href="/setup/install"`,
			`      icon="download"`,
			"    >",
			"      Run the installer first.",
			"    </Card>",
			"  </Tab>",
			"</Tabs>",
		)},
		{"attribute values holding > and braces", lines(
			`<ParamField body="limits" type="Map<string, number>" default={{ max: 5, label: "a > b" }}>`,
			"  How many at most.",
			"</ParamField>",
			`<Badge color={count > 3 ? "red" : "green"}>New</Badge>`,
		)},
		{"expression attribute spanning lines", lines(
			"<Frame",
			"  caption={`Shown on ${",
			"    site",
			"  } pages`}",
			">",
			`  <img src="/shots/home.png" alt="Home page" />`,
			"</Frame>",
		)},
		{"fence inside components is not read", lines(
			"<Steps>",
			`  <Step title="Configure">`,
			"    Put this in the file:",
			"",
			"    ```yaml",
			"    <Tabs>",
			"    key: {unclosed",
			"    ```",
			"  </Step>",
			"</Steps>",
		)},
		{"tilde fence holding backticks", lines("~~~md", "```js", "<Broken", "~~~")},
		{"four backticks around three", lines("````mdx", "```js", "const a = {", "```", "````", "After.")},
		{"closing fence longer than opening", lines("```", "<Tab>", "`````")},
		{"inline code holding tags and braces", lines("Use `<Steps>` and `{value}` or ``a ` <b`` in text.")},
		{"inline code across lines", lines("Call `foo(", "<bar>)` here.")},
		{"self-closing and void elements", lines(
			`<Icon icon="check" />`,
			"Line one<br>line two<br/>",
			`<img src="/a.png" alt="A">`,
			"<hr>",
			`Inline <Icon icon="x"/> icon.`,
		)},
		{"JSX comments and expressions", lines(
			"{/* a comment with a } brace */}",
			"{/*",
			"  spanning lines",
			"*/}",
			"Literal {'{'} and {\"<\"} and {`}`}.",
			"Math {1 + {a: 2}.a} here.",
		)},
		{"imports and exports", lines(
			`import Intro from "/snippets/intro.mdx";`,
			`import { Chart } from "/snippets/chart.jsx";`,
			"",
			"export const Box = ({ title }) => {",
			"  const style = { padding: 4 };",
			"",
			"  return <div style={style}>It's {title}</div>;",
			"};",
			"",
			"<Box title=\"x\" />",
		)},
		{"inline elements closed within their paragraph", lines(
			"Press <kbd>Ctrl</kbd> and",
			"<kbd>C</kbd> together, or <b>hold",
			"it</b>.",
		)},
		{"spaced less-than is text", lines("When a < b, stop.", "x <", "y")},
		{"a lone closing brace is text", lines("Ends with } here.", "", "} too")},
		{"escapes", lines(`Write \<Tag\> and \{braces\} literally.`)},
		{"table with code and pipes", lines(
			"| Prop | Type |",
			"| --- | :--: |",
			"| `title` | `string \\| undefined` |",
			"| `<b>` | `{}` |",
		)},
		{"heading with custom id", lines("## Install {#setup}", "Text.")},
		{"link destinations are not JSX", lines("[spaced](<my page.md>) and [q](/x?a={b}&c<d)")},
		{"math with braces", lines("$$", `\frac{a}{b} < c`, "$$", "", `Inline $\sqrt{x}$ math.`)},
		{"fence in a blockquote in a list", lines(
			"1. Run this:",
			"",
			"    > ```sh",
			"    > echo {x} <y>",
			"    > ```",
			"",
			"2. Done.",
		)},
		{"character references", lines("Use &lt;Tag&gt; and &#123;x&#125;.")},
		{"fragment", lines("<>", "text", "</>")},
		{"member names", lines("<Tree.Folder name=\"app\">", "  <Tree.File name=\"page.tsx\" />", "</Tree.Folder>")},
		{"component on one line", lines(`<Note>Keep **this** short.</Note>`)},
		{"closing tag after text in one paragraph", lines("<Tip>Text here", "and here.</Tip>")},
		{"several tags on one line", lines("<Columns> <Card title=\"a\">", "A", "</Card> </Columns>")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Check([]byte(tt.body)); len(got) != 0 {
				t.Errorf("Check reported %v, want nothing for\n%s", got, tt.body)
			}
		})
	}
}

func TestCheckFindsBreakage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		line int    // line of the first problem
		want string // part of its message
	}{
		{"unclosed backtick fence", lines("Intro.", "", "```js", "const a = 1;"), 3, "code block opened with ``` is never closed"},
		{"unclosed tilde fence", lines("~~~~", "code", "~~~"), 1, "~~~~ is never closed"},
		{"three backticks do not close four", lines("````md", "```", "x", "```"), 1, "```` is never closed"},
		{"backticks do not close tildes", lines("text", "~~~", "x", "```"), 2, "~~~ is never closed"},
		{"unclosed math block", lines("$$", "x^2"), 1, "math block opened with $$ is never closed"},
		{"component never closed", lines("# Guide", "", "<Steps>", `  <Step title="One">`, "    Do it.", "  </Step>"), 3, "<Steps> is never closed (add </Steps>)"},
		{"closed in the wrong order", lines("<Tabs>", `<Tab title="A">`, "text", "</Tabs>", "</Tab>"), 2, "<Tab> is never closed (add </Tab> before </Tabs> on line 4)"},
		{"stray closing tag", lines("Text.", "", "</Card>"), 3, "</Card> has no matching <Card>"},
		{"mismatched closing tag", lines("<Accordion>", "x", "</Acordion>", "</Accordion>"), 3, "</Acordion> does not match the open <Accordion> from line 1"},
		{"element opened in a paragraph, closed after it", lines("<Note>Remember this", "", "and that.</Note>"), 1, "<Note> is never closed in its paragraph"},
		{"closing tag on the opener's text line", lines("<Warning>", "  Careful here.</Warning>"), 2, "put </Warning> on a line of its own"},
		{"inline element open at the end of a list item", lines("- use <b>bold", "- next</b>"), 1, "<b> is never closed in its paragraph"},
		{"element open at the end of a heading", lines("## Title <Badge>new", "</Badge>"), 1, "in its heading"},
		{"expression never closed", lines("Intro.", "", "Set {name to a value.", "", "More."), 3, "{ is never closed"},
		{"expression in attribute never closed", lines(`<Card title={x >`, "text"), 1, "is never closed"},
		{"less-than before a digit", lines("Latency is", "<5 ms on average."), 2, "unexpected `5` before the tag name"},
		{"less-than before equals", lines("| a <= b |"), 1, "unexpected `=` before the tag name"},
		{"autolink", lines("See <https://example.com>."), 1, "looks like an autolink"},
		{"HTML comment", lines("Text.", "<!-- TODO: rewrite -->"), 2, "HTML comments are not supported"},
		{"unquoted attribute value", lines("<Card title=Intro>", "x", "</Card>"), 1, "must be in quotes or braces"},
		{"attribute quote never closed", lines("Text", "", `<Card title="Intro>`, "x", "", "</Card>"), 3, "quote of attribute title"},
		{"tag never finished", lines("Text <Card title=\"a\"", "", "more"), 1, "never finished"},
		{"export never finished", lines("export const a = {", "  b: 1,", "", "text"), 1, "import/export statement is never finished"},
		{"fragment never closed", lines("<>", "text"), 1, "fragment <> is never closed"},
		{"line numbers count multi-line tags", lines("<Card", `  title="a"`, ">", "", "<Tab>", "</Card>"), 5, "<Tab> is never closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Check([]byte(tt.body))
			if len(got) == 0 {
				t.Fatalf("Check found nothing in\n%s", tt.body)
			}
			if got[0].Line != tt.line || !strings.Contains(got[0].Message, tt.want) {
				t.Errorf("first problem = %v, want line %d containing %q (all: %v)", got[0], tt.line, tt.want, got)
			}
		})
	}
}

func TestCheckReportsEveryProblemInOrder(t *testing.T) {
	t.Parallel()
	body := lines(
		"<Steps>",  // 1: never closed
		"text {x",  // 2: expression never closed
		"```",      // 3: fence never closed
		"</Steps>", // inside the fence
	)
	got := Check([]byte(body))
	wantLines := []int{1, 2, 3}
	if len(got) != len(wantLines) {
		t.Fatalf("got %v, want problems on lines %v", got, wantLines)
	}
	for i, l := range wantLines {
		if got[i].Line != l {
			t.Errorf("problem %d on line %d, want %d: %v", i, got[i].Line, l, got[i])
		}
	}
}

func TestProblemString(t *testing.T) {
	t.Parallel()
	p := Problem{Line: 12, Message: "<Steps> is never closed (add </Steps>)"}
	if got, want := p.String(), "line 12: <Steps> is never closed (add </Steps>)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestCheckHandlesLineEndings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want int // number of problems
	}{
		{"CRLF valid", "<Note>\r\ntext\r\n</Note>\r\n", 0},
		{"CRLF unclosed", "a\r\n\r\n<Note>\r\ntext\r\n", 1},
		{"no final newline", "<Note>\ntext\n</Note>", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Check([]byte(tt.body))
			if len(got) != tt.want {
				t.Errorf("got %v, want %d problems", got, tt.want)
			}
			if tt.want == 1 && got[0].Line != 3 {
				t.Errorf("problem on line %d, want 3", got[0].Line)
			}
		})
	}
}
