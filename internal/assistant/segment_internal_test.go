package assistant

import (
	"reflect"
	"testing"
)

// segments splits a whole answer, as the grounder does once it has ended.
func segments(text string) []segment {
	var out []segment
	for from := 0; ; {
		seg, next, ok := nextSegment(text, from, true)
		if !ok {
			return out
		}
		out = append(out, seg)
		from = next
	}
}

func segmentTexts(text string) []string {
	var out []string
	for _, s := range segments(text) {
		out = append(out, text[s.start:s.end])
	}
	return out
}

func TestSegmentsSplitSentencesAwareOfMarkdown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		text string
		want []string
	}{
		{"sentences and markers", "Run the server. It listens on port 8080 [1]. Stop it with Ctrl-C [2].",
			[]string{"Run the server.", "It listens on port 8080 [1].", "Stop it with Ctrl-C [2]."}},
		{"marker after the stop", "It is fast. [1] It is small. [2][3]",
			[]string{"It is fast. [1]", "It is small. [2][3]"}},
		{"numbers and file names", "Version 1.5 reads app.json first. Then it stops.",
			[]string{"Version 1.5 reads app.json first.", "Then it stops."}},
		{"abbreviations and initials", "Use a flag, e.g. --force, etc. when J. Smith says so. Done.",
			[]string{"Use a flag, e.g. --force, etc. when J. Smith says so.", "Done."}},
		{"inline code holds dots", "Call `a. b` or `x.y()`. Next.",
			[]string{"Call `a. b` or `x.y()`.", "Next."}},
		{"list items", "Steps:\n\n1. Install it [1].\n2. Run it. Then wait [2].\n- A bullet",
			[]string{"Steps:", "Install it [1].", "Run it.", "Then wait [2].", "A bullet"}},
		{"code block whole", "Run this [1]:\n\n```sh\nnpm i. x\n\necho done.\n```\nIt prints done.",
			[]string{"Run this [1]:", "```sh\nnpm i. x\n\necho done.\n```", "It prints done."}},
		{"headings and tables", "## Set up\n\n| Key | Value |\n| --- | --- |\n| port | 80 |\n",
			[]string{"## Set up", "| Key | Value |", "| --- | --- |", "| port | 80 |"}},
		{"quoted closing", `He said "stop." Then it did.`, []string{`He said "stop."`, "Then it did."}},
		{"question and exclamation", "Is it? Yes! Fine", []string{"Is it?", "Yes!", "Fine"}},
		{"CJK stops", "这是一句。[1]这是第二句。", []string{"这是一句。[1]", "这是第二句。"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := segmentTexts(tc.text); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("segments of %q:\n got %q\nwant %q", tc.text, got, tc.want)
			}
		})
	}
}

func TestSegmentKindsAndCitations(t *testing.T) {
	t.Parallel()
	text := "# Title\n\nIt works [1, 3] and [2].\n\n```\ncode [4]\n```\n`[5]` is code."
	segs := segments(text)
	want := []struct {
		kind  segmentKind
		cites []int
	}{{segLayout, nil}, {segProse, []int{1, 3, 2}}, {segCode, nil}, {segProse, nil}}
	if len(segs) != len(want) {
		t.Fatalf("segments = %+v", segs)
	}
	for i, w := range want {
		if segs[i].kind != w.kind || !reflect.DeepEqual(segs[i].cites, w.cites) {
			t.Errorf("segment %d %q = kind %d cites %v; want %d %v", i, text[segs[i].start:segs[i].end], segs[i].kind, segs[i].cites, w.kind, w.cites)
		}
	}
}

// TestSegmentsWaitForWhatSettlesThem checks that a sentence is not settled
// before what follows it is known: a marker may follow its stop, a number
// may go on after a dot, a code block may not be closed yet.
func TestSegmentsWaitForWhatSettlesThem(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"It is fast.",      // a marker may follow
		"It is fast. ",     // still
		"It is fast. [1",   // an unfinished marker
		"Version 1.",       // "1.5"?
		"```sh\nnpm i\n",   // an open code block
		"Half a sentence",  // no end
		"#",                // a heading or a tag?
		"It is fast [1][2", // markers still coming
	} {
		if seg, _, ok := nextSegment(text, 0, false); ok {
			t.Errorf("%q settled %q before its end was known", text, text[seg.start:seg.end])
		}
	}
	if seg, next, ok := nextSegment("It is fast. [1] Next", 0, false); !ok || next != 15 || seg.end != 15 {
		t.Errorf("a sentence followed by its marker and more = %+v, next %d, %v", seg, next, ok)
	}
}
