package aisdk

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"reflect"
	"testing"
)

// wantText is what a client reads back for s: encoding/json replaces each
// invalid UTF-8 byte with U+FFFD, exactly like converting to []rune.
func wantText(s string) string { return string([]rune(s)) }

// FuzzTextDelta streams arbitrary text in two deltas through both encoders;
// the output must parse under the client's rules and give the text back.
func FuzzTextDelta(f *testing.F) {
	f.Add("To deploy, ", "run `acme deploy` [1].")
	f.Add("", "")
	f.Add("a\n\ndata: [DONE]\n\n", "0:\"x\"\n")
	f.Add("\u2028\u2029", "\xff\xfe")
	f.Add(nasty, "🚀")
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, p := range protocols() {
			rec := httptest.NewRecorder()
			s := p.new(rec)
			err := do(
				func() error { return s.TextStart("txt_0") },
				func() error { return s.TextDelta("txt_0", a) },
				func() error { return s.TextDelta("txt_0", b) },
				func() error { return s.Finish("thr", false, nil) },
			)
			if err != nil {
				t.Fatalf("%s: %v", p.name, err)
			}
			tr, err := p.parse(rec.Body.String(), false)
			if err != nil {
				t.Fatalf("%s: %v\n%q", p.name, err, rec.Body.String())
			}
			if want := wantText(a) + wantText(b); tr.Text != want {
				t.Fatalf("%s: text %q, want %q", p.name, tr.Text, want)
			}
		}
	})
}

// FuzzSources streams an arbitrary citation (with a quote in its provider
// metadata) and error text; both must come back intact.
func FuzzSources(f *testing.F) {
	f.Add("src_1", "https://docs.example.com/quickstart", "Quickstart", "Run `acme deploy`.", "Retrieval backend unavailable")
	f.Add("", "", "", "", "")
	f.Add("a\"b", "https://x/?a=1&b=<2>", "line\nbreak\r\n\u2028", "}\n\ndata: [DONE]\n", "3:\"x\"\n\ndata: [DONE]")
	f.Add("\xc3", "\x00", "é中文🚀", "\u2028\x01", "\xff")
	f.Fuzz(func(t *testing.T, id, url, title, quote, errText string) {
		meta, err := json.MarshalIndent(map[string]map[string]string{"example": {"quote": quote}}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range protocols() {
			rec := httptest.NewRecorder()
			s := p.new(rec)
			err := do(
				func() error { return s.Start("msg", "thr") },
				func() error {
					return s.Sources([]Source{{ID: id, URL: url, Title: title, ProviderMetadata: meta}})
				},
				func() error { return s.Error(errText) },
			)
			if err != nil {
				t.Fatalf("%s: %v", p.name, err)
			}
			tr, err := p.parse(rec.Body.String(), false)
			if err != nil {
				t.Fatalf("%s: %v\n%q", p.name, err, rec.Body.String())
			}
			want := Source{ID: wantText(id), URL: wantText(url), Title: wantText(title), ProviderMetadata: json.RawMessage(compact(meta))}
			if len(tr.Sources) != 1 || !reflect.DeepEqual(tr.Sources[0], want) {
				t.Fatalf("%s: sources %q, want [%q]", p.name, tr.Sources, want)
			}
			wantErr := wantText(errText)
			if wantErr == "" {
				wantErr = defaultErrorText
			}
			if tr.ErrorText != wantErr {
				t.Fatalf("%s: error %q, want %q", p.name, tr.ErrorText, wantErr)
			}
		}
	})
}

// FuzzData sends an arbitrary value as a data part and as finish metadata:
// valid JSON must come back the same (compacted), anything else must be
// refused with ErrInvalid and write nothing.
func FuzzData(f *testing.F) {
	f.Add(`{"status":"partial","note":"a\nb","missing":["X"]}`)
	f.Add("{\n  \"a\": [1, 2,\n 3]\n}\n")
	f.Add(`"\u2028</script>"`)
	f.Add(`null`)
	f.Add(`{"a":`)
	f.Add("\"\n\ndata: [DONE]\n\n\"")
	f.Add("")
	f.Fuzz(func(t *testing.T, value string) {
		raw := json.RawMessage(value)
		valid := json.Valid(raw)
		for _, p := range protocols() {
			rec := httptest.NewRecorder()
			s := p.new(rec)
			if err := s.Start("msg", "thr"); err != nil {
				t.Fatal(err)
			}
			before := rec.Body.String()
			err := s.Data("some-value", "v_1", raw)
			if !valid {
				if !errors.Is(err, ErrInvalid) || rec.Body.String() != before {
					t.Fatalf("%s: invalid JSON %q: err %v, wrote %q", p.name, value, err, rec.Body.String()[len(before):])
				}
				if err := s.Finish("thr", false, nil, Member{Key: "some", Value: raw}); !errors.Is(err, ErrInvalid) {
					t.Fatalf("%s: finish metadata %q: err %v", p.name, value, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", p.name, err)
			}
			if err := s.Finish("thr", false, nil, Member{Key: "some", Value: raw}); err != nil {
				t.Fatalf("%s: %v", p.name, err)
			}
			tr, err := p.parse(rec.Body.String(), false)
			if err != nil {
				t.Fatalf("%s: %v\n%q", p.name, err, rec.Body.String())
			}
			want := compact(raw)
			if len(tr.Data) != 1 || tr.Data[0].Key != "someValue" || tr.Data[0].Value != want {
				t.Fatalf("%s: data %+v, want someValue=%s", p.name, tr.Data, want)
			}
			if got := tr.FinishMetadata["some"]; got != want {
				t.Fatalf("%s: finish metadata %s, want %s", p.name, got, want)
			}
		}
	})
}

// FuzzMessage decodes arbitrary JSON as a message: no panic, and whatever
// decodes re-encodes as valid JSON.
func FuzzMessage(f *testing.F) {
	f.Add(`{"id":"a","role":"user","parts":[{"type":"text","text":"hi"}]}`)
	f.Add(`{"role":"assistant","content":"x","annotations":[{"threadId":"t"}],"parts":[{"type":"step-start"}]}`)
	f.Add(`{"role":"assistant","metadata":{"threadId":"t"},"parts":[1,null,{"type":"text","text":null}]}`)
	f.Add(`{"parts":{}}`)
	f.Add(`null`)
	f.Fuzz(func(t *testing.T, in string) {
		var msgs []Message
		if json.Unmarshal([]byte("["+in+"]"), &msgs) != nil {
			return
		}
		if _, err := json.Marshal(msgs); err != nil {
			t.Fatal(err)
		}
		_ = ThreadIDFromHistory(msgs)
	})
}
