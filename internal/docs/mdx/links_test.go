package mdx

import (
	"reflect"
	"testing"
)

func TestLinks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want []Link
	}{
		{"inline link with title", lines("See [the guide](/guides/start \"Start here\") now."),
			[]Link{{Target: "/guides/start", Line: 1, Text: "the guide"}}},
		{"angle-bracket destination", lines("", "[notes](<release notes.md>)"),
			[]Link{{Target: "release notes.md", Line: 2, Text: "notes"}}},
		{"parentheses in destination", lines("[wiki](https://example.com/a_(b))"),
			[]Link{{Target: "https://example.com/a_(b)", Line: 1, Text: "wiki"}}},
		{"markup in link text", lines("[**bold** `code` link](/b)"),
			[]Link{{Target: "/b", Line: 1, Text: "bold code link"}}},
		{"link text over two lines", lines("A [long", "label](/long) here."),
			[]Link{{Target: "/long", Line: 1, Text: "long label"}}},
		{"reference definition", lines("Read [the spec][spec].", "", `[spec]: https://example.com/spec "Spec"`),
			[]Link{{Target: "https://example.com/spec", Line: 3, Text: "spec"}}},
		{"images are excluded", lines("![diagram](/images/d.png)", `<img src="/images/e.png" />`), nil},
		{"image inside a link", lines("[![logo](/logo.png)](/home)"),
			[]Link{{Target: "/home", Line: 1, Text: ""}}},
		{"anchor element", lines(`Go <a href="https://example.com/x?a=1&amp;b=2">there</a>.`),
			[]Link{{Target: "https://example.com/x?a=1&b=2", Line: 1, Text: "there"}}},
		{"component href prop", lines(
			"<CardGroup>",
			"  <Card",
			`    title="Quick start"`,
			`    href="/quickstart"`,
			"  >",
			"    Begin here.",
			"  </Card>",
			"</CardGroup>",
		), []Link{{Target: "/quickstart", Line: 2, Text: "Quick start"}}},
		{"href as a string expression", lines(`<Card href={"/api/list"}>List</Card>`),
			[]Link{{Target: "/api/list", Line: 1, Text: "List"}}},
		{"href as a variable is skipped", lines(`<a href={url}>x</a>`), nil},
		{"nothing inside code", lines(
			"Use `[a](/in-code)` inline.",
			"",
			"```md",
			"[b](/in-fence)",
			`<Card href="/in-fence-too" />`,
			"```",
			"",
			"    [c](/indented-is-not-code-in-mdx)",
		), []Link{{Target: "/indented-is-not-code-in-mdx", Line: 8, Text: "c"}}},
		{"escaped brackets", lines(`\[not](/a-link)`), nil},
		{"shortcut reference is not a target", lines("Just [brackets] here."), nil},
		{"links in tables and lists", lines(
			"| Page | Where |",
			"| --- | --- |",
			"| Home | [home](/) |",
			"",
			"- [one](/one)",
			"- [two](#two)",
		), []Link{
			{Target: "/", Line: 3, Text: "home"},
			{Target: "/one", Line: 5, Text: "one"},
			{Target: "#two", Line: 6, Text: "two"},
		}},
		{"escaped characters in destination", lines(`[x](/a\_b)`),
			[]Link{{Target: "/a_b", Line: 1, Text: "x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Links([]byte(tt.body))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Links() = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
