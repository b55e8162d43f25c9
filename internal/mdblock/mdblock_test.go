package mdblock

import (
	"strings"
	"testing"
)

func TestSpans(t *testing.T) {
	t.Parallel()
	md := strings.Join([]string{
		"# Kettle",                 //                         0
		"",                         //                         1
		"```yaml title=\"k.yaml\"", //         2
		"kettle:",                  //         3
		"  water: soft",            //         4
		"```",                      //         5
		"| Tea | Min |",            //         6
		"| --- | --: |",            //         7
		"| Green | 2 |",            //         8
		"",                         //         9
		"> **Note:** boil",         //        10
		"> ~~~~sh",                 //        11
		"> ~~~",                    //        12: too short to close
		"> ~~~~~",                  //        13
		"Heading",                  //        14
		"---",                      //        15: a heading's underline, no table
		"   ````",                  //        16: never closed
		"a | b",                    //        17
	}, "\n")
	got := Spans(strings.Split(md, "\n"))
	want := []Span{
		{From: 2, To: 5, Kind: Fence, Close: "```", Closed: true},
		{From: 6, To: 8, Kind: Table},
		{From: 11, To: 13, Kind: Fence, Close: "> ~~~~", Closed: true},
		{From: 16, To: 17, Kind: Fence, Close: "   ````"},
	}
	if len(got) != len(want) {
		t.Fatalf("Spans = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("span %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if s, ok := At(got, 4); !ok || s.From != 2 {
		t.Errorf("At(4) = %+v, %v", s, ok)
	}
	if _, ok := At(got, 9); ok {
		t.Error("line 9 is in no span")
	}
}

func TestCut(t *testing.T) {
	t.Parallel()
	md := "Intro\n\n```yaml\nkettle:\n  water: soft\n  steps: 3\n```\nAfter\n"
	if got := Cut(md, len(md), "[cut]"); got != md {
		t.Errorf("Cut of a text that fits = %q", got)
	}
	// Cut inside the fence: the fence is closed before the marker.
	got := Cut(md, strings.Index(md, "  steps"), "\n[cut]")
	if want := "Intro\n\n```yaml\nkettle:\n  water: soft\n```\n[cut]"; got != want {
		t.Errorf("Cut = %q, want %q", got, want)
	}
	if _, open := OpenFence(strings.TrimSuffix(got, "\n[cut]")); open {
		t.Error("the cut left the fence open")
	}
	// A first line longer than the limit is cut on a character.
	if got := Cut("ééé", 3, "…"); got != "é…" {
		t.Errorf("Cut of one long line = %q", got)
	}
	if close, open := OpenFence("> ```sh\n> echo"); !open || close != "> ```" {
		t.Errorf("OpenFence = %q, %v", close, open)
	}
}

func FuzzCut(f *testing.F) {
	f.Add("```go\nfunc main() {}\n```\n| a | b |\n| - | - |\n| 1 | 2 |\n", 20)
	f.Add("~~~\n~~~~\n", 3)
	f.Fuzz(func(t *testing.T, md string, limit int) {
		if limit < 0 || limit > len(md)+1 {
			return
		}
		got := Cut(md, limit, "")
		if len(md) <= limit {
			if got != md {
				t.Fatalf("Cut changed a text that fits")
			}
			return
		}
		if _, open := OpenFence(got); open {
			if _, wasOpen := OpenFence(md); !wasOpen || len(got) < len(md) {
				t.Fatalf("Cut(%q, %d) = %q leaves a fence open", md, limit, got)
			}
		}
	})
}
