package mdx

import (
	"reflect"
	"strings"
	"testing"
)

func TestSections(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want []Section
	}{
		{"empty body still has the intro section", "", []Section{{}}},
		{"text before the first heading", lines("Welcome to the tool.", "", "## Next", "More."), []Section{
			{Text: "Welcome to the tool."},
			{Heading: "Next", Level: 2, Anchor: "next", Text: "More."},
		}},
		{"paragraph lines join, blocks split", lines("One line", "continues here.", "", "- item *one*", "- item __two__", "", "> quoted", "> text"), []Section{
			{Text: "One line continues here.\nitem one\nitem two\nquoted text"},
		}},
		{"duplicate headings", lines("## Setup", "a", "### Setup", "b", "## Setup", "c"), []Section{
			{},
			{Heading: "Setup", Level: 2, Anchor: "setup", Text: "a"},
			{Heading: "Setup", Level: 3, Anchor: "setup-2", Text: "b"},
			{Heading: "Setup", Level: 2, Anchor: "setup-3", Text: "c"},
		}},
		{"headings with code, links and emoji", lines("## Run `deploy` with [flags](/flags) 🚀", "### Closing hashes ##"), []Section{
			{},
			{Heading: "Run deploy with flags 🚀", Level: 2, Anchor: "run-deploy-with-flags-"},
			{Heading: "Closing hashes", Level: 3, Anchor: "closing-hashes"},
		}},
		{"non-ASCII headings", lines("## Guía de instalación rápida", "## 配置 文件", "## Ünïcode Ärger"), []Section{
			{},
			{Heading: "Guía de instalación rápida", Level: 2, Anchor: "guía-de-instalación-rápida"},
			{Heading: "配置 文件", Level: 2, Anchor: "配置-文件"},
			{Heading: "Ünïcode Ärger", Level: 2, Anchor: "ünïcode-ärger"},
		}},
		{"custom heading id", lines("## Install the CLI {#cli}", "## Install the CLI"), []Section{
			{},
			{Heading: "Install the CLI", Level: 2, Anchor: "cli"},
			{Heading: "Install the CLI", Level: 2, Anchor: "install-the-cli"},
		}},
		{"setext headings", lines("Big title", "=========", "", "Smaller", "-------", "text"), []Section{
			{},
			{Heading: "Big title", Level: 1, Anchor: "big-title"},
			{Heading: "Smaller", Level: 2, Anchor: "smaller", Text: "text"},
		}},
		{"thematic break is not a heading after a list", lines("- item", "---", "after"), []Section{
			{Text: "item\nafter"},
		}},
		{"imports and exports are dropped", lines(
			`import Chart from "/snippets/chart.jsx";`,
			"",
			"export const Hello = () => {",
			"",
			"  return <p>Don't show this</p>;",
			"};",
			"",
			"Shown.",
		), []Section{{Text: "Shown."}}},
		{"component text and props", lines(
			"<AccordionGroup>",
			`  <Accordion title="Can I self-host?" description="Hosting">`,
			"    Yes, on any **Linux** server.",
			"  </Accordion>",
			"</AccordionGroup>",
			`<Tooltip tip="Application programming interface">API</Tooltip> calls.`,
			`<Note>Back up <br/> first.</Note>`,
		), []Section{
			{Text: "Can I self-host? Hosting\nYes, on any Linux server.\nApplication programming interface\nAPI calls. Back up first."},
		}},
		{"tabs, steps and code groups", lines(
			"<Tabs>",
			`  <Tab title="npm">`,
			"    ```bash",
			"    npm install tool",
			"    ```",
			"  </Tab>",
			"</Tabs>",
			"<Steps>",
			`  <Step title="Log in">`,
			"    Open the dashboard.",
			"  </Step>",
			"</Steps>",
			"<CodeGroup>",
			"```js a.js",
			"let a  =  1;",
			"```",
			"~~~py b.py",
			"b = 2",
			"~~~",
			"</CodeGroup>",
		), []Section{
			{Text: "npm\nnpm install tool\nLog in\nOpen the dashboard.\nlet a = 1;\nb = 2"},
		}},
		{"four-backtick fence keeps inner fences as code", lines("````md", "```js", "x()", "```", "````"), []Section{
			{Text: "```js\nx()\n```"},
		}},
		{"fields", lines(`<ResponseField name="items" type="Item[]" required>`, "  The list.", "</ResponseField>"), []Section{
			{Text: "items Item[]\nThe list."},
		}},
		{"tables", lines(
			"| Option | Default |",
			"|:-------|--------:|",
			"| `port` | 8080 |",
			"| **host** | [localhost](/h) |",
		), []Section{
			{Text: "Option | Default\nport | 8080\nhost | localhost"},
		}},
		{"comments are dropped", lines(
			"Before {/* hidden */} after.",
			"{/*",
			"  hidden too",
			"*/}",
			"<!-- not shown -->",
			"End.",
		), []Section{{Text: "Before after.\nEnd."}}},
		{"string expressions are kept", lines("Write {'<'}tag{'>'} or {\"{\"}."), []Section{
			{Text: "Write <tag> or {."},
		}},
		{"style and script are dropped", lines("<style>{`.a { color: red }`}</style>", "<script>", "var x = 1;", "</script>", "Text."), []Section{
			{Text: "Text."},
		}},
		{"escapes and entities", lines(`\*not emphasis\* &amp; snake_case_name and 2 * 3`), []Section{
			{Text: "*not emphasis* & snake_case_name and 2 * 3"},
		}},
		{"headings inside components", lines("<Tab title=\"A\">", "  ## Inside", "  body", "</Tab>"), []Section{
			{Text: "A"},
			{Heading: "Inside", Level: 2, Anchor: "inside", Text: "body"},
		}},
		{"images dropped, links become text", lines("![alt text](/i.png) Read [the docs](/docs)."), []Section{
			{Text: "Read the docs."},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Sections([]byte(tt.body), nil)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Sections() =\n%s\nwant\n%s", dumpSections(got), dumpSections(tt.want))
			}
		})
	}
}

func dumpSections(secs []Section) string {
	var b strings.Builder
	for _, s := range secs {
		b.WriteString("  {" + strings.Repeat("#", s.Level) + " " + s.Heading + " [" + s.Anchor + "] " + strings.ReplaceAll(s.Text, "\n", "⏎") + "}\n")
	}
	return b.String()
}

func TestSectionsSnippets(t *testing.T) {
	t.Parallel()
	snippets := map[string]string{
		"warning.mdx":             lines("<Warning>Back up the database before upgrading.</Warning>"),
		"/snippets/install.mdx":   lines("Install with `npm i {pkg}`:", "", "```bash", "npm i {pkg}", "```", "", "Then run {pkg}."),
		"/snippets/with-head.mdx": lines("## From the snippet", "Snippet body."),
		"/snippets/loop.mdx":      lines(`import Loop from "/snippets/loop.mdx";`, "", "Looping.", "", "<Loop />"),
	}
	resolve := func(path string) ([]byte, bool) {
		s, ok := snippets[path]
		return []byte(s), ok
	}
	tests := []struct {
		name    string
		body    string
		resolve func(string) ([]byte, bool)
		want    []Section
	}{
		{"Snippet file", lines("Intro.", "", `<Snippet file="warning.mdx" />`, "", "Outro."), resolve, []Section{
			{Text: "Intro.\nBack up the database before upgrading.\nOutro."},
		}},
		{"imported component with props", lines(
			`import Install from '/snippets/install.mdx'`,
			"",
			"## Setup",
			`<Install pkg="left-pad" />`,
		), resolve, []Section{
			{},
			{Heading: "Setup", Level: 2, Anchor: "setup", Text: "Install with npm i {pkg}:\nnpm i {pkg}\nThen run left-pad."},
		}},
		{"snippet headings start sections", lines(
			`import Head from "/snippets/with-head.mdx";`,
			"",
			"## From the snippet",
			"Page body.",
			"<Head />",
		), resolve, []Section{
			{},
			{Heading: "From the snippet", Level: 2, Anchor: "from-the-snippet", Text: "Page body."},
			{Heading: "From the snippet", Level: 2, Anchor: "from-the-snippet-2", Text: "Snippet body."},
		}},
		{"cycles stop", lines(`import Loop from "/snippets/loop.mdx";`, "", "<Loop />"), resolve, []Section{
			{Text: "Looping."},
		}},
		{"unknown snippet", lines(`<Snippet file="missing.mdx" />`, "Text."), resolve, []Section{{Text: "Text."}}},
		{"nil resolver", lines(`<Snippet file="warning.mdx" />`, "Text."), nil, []Section{{Text: "Text."}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Sections([]byte(tt.body), tt.resolve)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Sections() =\n%s\nwant\n%s", dumpSections(got), dumpSections(tt.want))
			}
		})
	}
}

func TestTextAndHeadings(t *testing.T) {
	t.Parallel()
	body := []byte(lines("Lead.", "", "## First", "One.", "", "### Second", "Two."))
	if got, want := Text(body), "Lead.\nFirst\nOne.\nSecond\nTwo."; got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
	want := []Section{
		{Heading: "First", Level: 2, Anchor: "first"},
		{Heading: "Second", Level: 3, Anchor: "second"},
	}
	if got := Headings(body); !reflect.DeepEqual(got, want) {
		t.Errorf("Headings() = %+v, want %+v", got, want)
	}
	if got := Headings([]byte("no headings")); len(got) != 0 {
		t.Errorf("Headings() = %+v, want none", got)
	}
}

func TestAnchors(t *testing.T) {
	t.Parallel()
	body := []byte(lines("## Overview", `<div id="pricing-table">`, "x", "</div>", "## Overview", "```", `<div id="in-code">`, "```"))
	want := []string{"overview", "overview-2", "pricing-table"}
	if got := Anchors(body); !reflect.DeepEqual(got, want) {
		t.Errorf("Anchors() = %q, want %q", got, want)
	}
}

func TestSlug(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"Quick start", "quick-start"},
		{"  Trimmed   spaces  ", "trimmed-spaces"},
		{"settings.yaml reference", "settings-yaml-reference"},
		{"Don't panic", "don’t-panic"},
		{"Retries (with backoff)", "retries-with-backoff"},
		{"Input/output & errors", "input/output-&-errors"},
		{"Step 2: Deploy", "step-2:-deploy"},
		{"Using $schema", "using-$schema"},
		{"snake_case and kebab-case", "snake_case-and-kebab-case"},
		{"What's new?!, really", "what’s-new-really"},
		{"CamelCaseWord", "camelcaseword"},
		{"Ship it 🚀", "ship-it-"},
		{"Configuración avanzada", "configuración-avanzada"},
		{"快速开始", "快速开始"},
		{"Ελληνικά Κεφαλαία", "ελληνικά-κεφαλαία"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			if got := Slug(tt.in); got != tt.want {
				t.Errorf("Slug(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
