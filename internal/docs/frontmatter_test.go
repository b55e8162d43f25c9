package docs

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseFrontMatter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		src      string
		wantFM   map[string]any
		wantBody string
		wantLine int
		errLine  int    // 0: no error
		errSub   string // part of the error message
	}{
		{
			name:     "no front matter",
			src:      "# Title\n\nText.\n",
			wantFM:   map[string]any{},
			wantBody: "# Title\n\nText.\n",
			wantLine: 1,
		},
		{
			name:     "empty file",
			src:      "",
			wantFM:   map[string]any{},
			wantBody: "",
			wantLine: 1,
		},
		{
			name:     "empty front matter",
			src:      "---\n---\nBody\n",
			wantFM:   map[string]any{},
			wantBody: "Body\n",
			wantLine: 3,
		},
		{
			name:     "only comments",
			src:      "---\n# nothing yet\n---\nBody\n",
			wantFM:   map[string]any{},
			wantBody: "Body\n",
			wantLine: 4,
		},
		{
			name:     "fields",
			src:      "---\ntitle: Setup\ndescription: \"Install it: quickly\"\nnoindex: true\n---\n\nBody\n",
			wantFM:   map[string]any{"title": "Setup", "description": "Install it: quickly", "noindex": true},
			wantBody: "\nBody\n",
			wantLine: 6,
		},
		{
			name:     "CRLF",
			src:      "---\r\ntitle: Setup\r\n---\r\nBody\r\n",
			wantFM:   map[string]any{"title": "Setup"},
			wantBody: "Body\r\n",
			wantLine: 4,
		},
		{
			name:     "BOM",
			src:      "\uFEFF---\ntitle: Setup\n---\nBody\n",
			wantFM:   map[string]any{"title": "Setup"},
			wantBody: "Body\n",
			wantLine: 4,
		},
		{
			name:     "BOM without front matter",
			src:      "\uFEFFBody\n",
			wantFM:   map[string]any{},
			wantBody: "Body\n",
			wantLine: 1,
		},
		{
			name:     "fence with trailing spaces",
			src:      "--- \ntitle: A\n---\t\nBody",
			wantFM:   map[string]any{"title": "A"},
			wantBody: "Body",
			wantLine: 4,
		},
		{
			name:     "horizontal rules in body stay",
			src:      "---\ntitle: A\n---\nOne\n\n---\n\nTwo\n---\n",
			wantFM:   map[string]any{"title": "A"},
			wantBody: "One\n\n---\n\nTwo\n---\n",
			wantLine: 4,
		},
		{
			name:     "no body after the fence",
			src:      "---\ntitle: A\n---",
			wantFM:   map[string]any{"title": "A"},
			wantBody: "",
			wantLine: 4,
		},
		{
			name:     "not on the first line",
			src:      "\n---\ntitle: A\n---\n",
			wantFM:   map[string]any{},
			wantBody: "\n---\ntitle: A\n---\n",
			wantLine: 1,
		},
		{
			name:     "four dashes are not a fence",
			src:      "----\ntitle: A\n",
			wantFM:   map[string]any{},
			wantBody: "----\ntitle: A\n",
			wantLine: 1,
		},
		{
			name:     "non-string keys become strings",
			src:      "---\ncodes:\n  404: Not found\n---\n",
			wantFM:   map[string]any{"codes": map[string]any{"404": "Not found"}},
			wantBody: "",
			wantLine: 5,
		},
		{
			name:     "colon in a value",
			src:      "---\ntitle: Setup\ndescription: Step one: install\n---\nBody\n",
			wantFM:   map[string]any{},
			wantBody: "Body\n",
			wantLine: 5,
			errLine:  3,
			errSub:   "put quotes around",
		},
		{
			name:     "unclosed quote",
			src:      "---\ntitle: \"Setup\nkeywords: [a]\n---\nBody\n",
			wantFM:   map[string]any{},
			wantBody: "Body\n",
			wantLine: 5,
			errLine:  2,
		},
		{
			name:     "bad indentation",
			src:      "---\ntitle: A\nseo:\n  robots: none\n canonical: x\n---\n",
			wantFM:   map[string]any{},
			wantBody: "",
			wantLine: 7,
			errLine:  5,
		},
		{
			name:     "tab indentation",
			src:      "---\ntitle: A\n\tdescription: B\n---\n",
			wantFM:   map[string]any{},
			wantBody: "",
			wantLine: 5,
			errLine:  3,
		},
		{
			name:     "duplicate key",
			src:      "---\ntitle: A\ndescription: B\ntitle: C\n---\n",
			wantFM:   map[string]any{},
			wantBody: "",
			wantLine: 6,
			errLine:  4,
			errSub:   "duplicate",
		},
		{
			name:     "a list, not a mapping",
			src:      "---\n- title\n- description\n---\nBody",
			wantFM:   map[string]any{},
			wantBody: "Body",
			wantLine: 5,
			errLine:  2,
			errSub:   "a list",
		},
		{
			name:     "a single value",
			src:      "---\njust words\n---\nBody",
			wantFM:   map[string]any{},
			wantBody: "Body",
			wantLine: 4,
			errLine:  2,
			errSub:   "a single value",
		},
		{
			name:    "never closed",
			src:     "---\ntitle: A\n\nBody\n",
			wantFM:  map[string]any{},
			errLine: 1,
			errSub:  "never closed",
		},
		{
			name:    "only an opening fence",
			src:     "---",
			wantFM:  map[string]any{},
			errLine: 1,
			errSub:  "never closed",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fm, body, line, err := ParseFrontMatter([]byte(tc.src))
			if tc.errLine == 0 {
				if err != nil {
					t.Fatalf("err = %v, want none", err)
				}
			} else {
				var fe *FrontMatterError
				if !errors.As(err, &fe) {
					t.Fatalf("err = %v, want a *FrontMatterError", err)
				}
				if fe.Line != tc.errLine {
					t.Errorf("error line = %d, want %d (%v)", fe.Line, tc.errLine, err)
				}
				if !strings.Contains(err.Error(), tc.errSub) {
					t.Errorf("error %q does not contain %q", err, tc.errSub)
				}
			}
			if !reflect.DeepEqual(fm, tc.wantFM) {
				t.Errorf("fm = %#v, want %#v", fm, tc.wantFM)
			}
			if string(body) != tc.wantBody {
				t.Errorf("body = %q, want %q", body, tc.wantBody)
			}
			if line != tc.wantLine {
				t.Errorf("bodyLine = %d, want %d", line, tc.wantLine)
			}
		})
	}
}

// FuzzParseFrontMatter checks that any input parses without panicking and
// that the results are consistent: the body is the end of the input and
// starts on the line bodyLine says.
func FuzzParseFrontMatter(f *testing.F) {
	for _, s := range []string{
		"",
		"---\n---\n",
		"---\ntitle: A\n---\nBody\n---\n",
		"\uFEFF---\r\ntitle: A\r\n---\r\n",
		"---\ntitle: \"A\n---\n",
		"---\n- a\n---\n",
		"---\na: &x [*x]\n---\n",
		"---\ntitle: a: b\n---\n",
		"---\n",
		"# Heading\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		fm, body, line, err := ParseFrontMatter(src)
		if fm == nil {
			t.Fatal("fm is nil")
		}
		if err != nil {
			var fe *FrontMatterError
			if !errors.As(err, &fe) || fe.Line < 1 {
				t.Fatalf("err = %#v, want a *FrontMatterError with a line", err)
			}
			if len(fm) != 0 {
				t.Fatalf("fm = %v with an error", fm)
			}
			if body == nil {
				return
			}
		}
		if !bytes.HasSuffix(src, body) {
			t.Fatalf("body %q is not the end of the input", body)
		}
		trimmed := bytes.TrimPrefix(src, utf8BOM)
		prefix := trimmed[:len(trimmed)-len(body)]
		want := bytes.Count(prefix, []byte("\n")) + 1
		if !bytes.HasSuffix(prefix, []byte("\n")) && len(prefix) > 0 {
			want++ // an empty body after a last fence with no newline
		}
		if line != want {
			t.Fatalf("bodyLine = %d, want %d", line, want)
		}
	})
}
