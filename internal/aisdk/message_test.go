package aisdk

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestMessageUnmarshal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    Message
		wantErr string // substring; "" = success
	}{
		{
			name: "v2 user (AI SDK 5+ transport)",
			in:   `{"id":"fFV63foQUycJjScO","role":"user","parts":[{"type":"text","text":"How do I deploy my docs site?"}]}`,
			want: Message{ID: "fFV63foQUycJjScO", Role: "user", Text: "How do I deploy my docs site?"},
		},
		{
			name: "v2 assistant with metadata and sources",
			in: `{"id":"msg_7Qk2","role":"assistant","metadata":{"threadId":"thr_1","usage":{"inputTokens":1}},
				"parts":[{"type":"step-start"},{"type":"source-url","sourceId":"src_1","url":"u","title":"Quickstart"},
				{"type":"text","text":"To deploy, ","state":"done"},{"type":"text","text":"run it."}]}`,
			want: Message{ID: "msg_7Qk2", Role: "assistant", Text: "To deploy, run it.", ThreadID: "thr_1"},
		},
		{
			name: "v1 with sendExtraMessageFields (AI SDK 4 useChat)",
			in: `{"id":"jW8R","createdAt":"2026-11-22T10:27:40.444Z","role":"user",
				"content":"How do I deploy my docs site?","parts":[{"type":"text","text":"How do I deploy my docs site?"}]}`,
			want: Message{ID: "jW8R", Role: "user", Text: "How do I deploy my docs site?"},
		},
		{
			name: "v1 assistant with annotations",
			in: `{"id":"msg_7Qk2","role":"assistant","content":"To deploy, …","revisionId":"r",
				"parts":[{"type":"step-start"},{"type":"source","source":{"sourceType":"url","id":"src_1"}},{"type":"text","text":"To deploy, …"}],
				"annotations":["x",{"other":1},{"threadId":"thr_old"},{"threadId":"thr_1"},{"threadId":7}]}`,
			want: Message{ID: "msg_7Qk2", Role: "assistant", Text: "To deploy, …", ThreadID: "thr_1"},
		},
		{
			name: "v1 without extra fields: no id, content only",
			in:   `{"role":"user","content":"And to preview?"}`,
			want: Message{Role: "user", Text: "And to preview?"},
		},
		{
			name: "content ignored when parts have text",
			in:   `{"role":"user","content":"old","parts":[{"type":"text","text":"new"}]}`,
			want: Message{Role: "user", Text: "new"},
		},
		{
			name: "content used when parts have no text",
			in:   `{"role":"user","content":"see file","parts":[{"type":"file","mediaType":"image/png","url":"data:"}]}`,
			want: Message{Role: "user", Text: "see file"},
		},
		{
			name: "unknown fields, part types and odd parts ignored",
			in: `{"role":"user","trigger":"x","experimental_attachments":[],"parts":[null,1,"s",[],{"type":7},
				{"type":"data-x","data":{}},{"type":"reasoning","text":"no"},{"type":"text","text":"yes"}]}`,
			want: Message{Role: "user", Text: "yes"},
		},
		{
			name: "metadata and annotations of odd shapes ignored",
			in:   `{"role":"assistant","metadata":"str","annotations":{"threadId":"t"},"content":"c"}`,
			want: Message{Role: "assistant", Text: "c"},
		},
		{
			name: "metadata wins over annotations",
			in:   `{"role":"assistant","metadata":{"threadId":"m"},"annotations":[{"threadId":"a"}]}`,
			want: Message{Role: "assistant", ThreadID: "m"},
		},
		{
			name: "unicode and escapes",
			in:   `{"role":"user","parts":[{"type":"text","text":"\u00e9 \"q\" \n 🚀 \u2028"}]}`,
			want: Message{Role: "user", Text: "é \"q\" \n 🚀 \u2028"},
		},
		{name: "empty object", in: `{}`, want: Message{}},
		{name: "role not a string", in: `{"role":1}`, wantErr: `"role"`},
		{name: "id not a string", in: `{"id":5,"role":"user"}`, wantErr: `"id"`},
		{name: "content not a string", in: `{"role":"user","content":["a"]}`, wantErr: `"content"`},
		{name: "parts not an array", in: `{"role":"user","parts":{"type":"text"}}`, wantErr: `"parts"`},
		{name: "text part without text", in: `{"role":"user","parts":[{"type":"text"}]}`, wantErr: "parts[0]"},
		{name: "text part with a number", in: `{"role":"user","parts":[{"type":"step-start"},{"type":"text","text":3}]}`, wantErr: "parts[1]"},
		{name: "not an object", in: `"hello"`, wantErr: "message"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got Message
			err := json.Unmarshal([]byte(tc.in), &got)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one mentioning %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestRequestBodies decodes the whole bodies that AI SDK 4 and 5+ clients send
// into a caller's struct, the way the assistant will.
func TestRequestBodies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		body       string
		wantTexts  []string
		wantThread string
	}{
		{
			name: "v1",
			body: `{"id":"GGrQlx9uJfyoFORs","fp":"anonymous","retrievalPageSize":5,"threadId":"thr_0123456789abcdef",
 "messages":[
  {"id":"jW8RIsQWZqBWETuJ","createdAt":"2026-11-22T10:27:40.444Z","role":"user",
   "content":"How do I deploy my docs site?","parts":[{"type":"text","text":"How do I deploy my docs site?"}]},
  {"id":"msg_7Qk2","createdAt":"…","role":"assistant","content":"To deploy, …","revisionId":"…",
   "parts":[{"type":"step-start"},{"type":"source","source":{"sourceType":"url","id":"src_1","url":"…","title":"Quickstart"}},
            {"type":"source","source":{}},{"type":"text","text":"To deploy, …"}],
   "annotations":[{"threadId":"thr_0123456789abcdef"}]},
  {"id":"eFXclVWuShjMgc2U","createdAt":"…","role":"user","content":"And to preview?","parts":[{"type":"text","text":"And to preview?"}]}]}`,
			wantTexts:  []string{"How do I deploy my docs site?", "To deploy, …", "And to preview?"},
			wantThread: "thr_0123456789abcdef",
		},
		{
			name: "v2",
			body: `{"fp":"anonymous","retrievalPageSize":5,"threadId":"thr_0123456789abcdef","id":"IDytNSWe3HNfzGzd",
 "messages":[
  {"id":"fFV63foQUycJjScO","role":"user","parts":[{"type":"text","text":"How do I deploy my docs site?"}]},
  {"id":"msg_7Qk2","role":"assistant","metadata":{"threadId":"thr_0123456789abcdef"},
   "parts":[{"type":"step-start"},{"type":"source-url","sourceId":"src_1","url":"…","title":"Quickstart"},
            {"type":"source-url","sourceId":"src_2","url":"…","title":"Deploying your site"},
            {"type":"text","text":"To deploy, …","state":"done"}]},
  {"id":"xhioFVjKS2cvEUB1","role":"user","parts":[{"type":"text","text":"And to preview?"}]}],
 "trigger":"submit-message"}`,
			wantTexts:  []string{"How do I deploy my docs site?", "To deploy, …", "And to preview?"},
			wantThread: "thr_0123456789abcdef",
		},
		{
			name:      "v2 hand-made by a Python consumer",
			body:      `{"fp":"anonymous","messages":[{"id":"1","role":"user","parts":[{"type":"text","text":"hi"}]}],"retrievalPageSize":5}`,
			wantTexts: []string{"hi"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var body struct {
				Fp       string    `json:"fp"`
				ThreadID string    `json:"threadId"`
				Messages []Message `json:"messages"`
			}
			if err := json.Unmarshal([]byte(tc.body), &body); err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, m := range body.Messages {
				texts = append(texts, m.Text)
			}
			if !reflect.DeepEqual(texts, tc.wantTexts) {
				t.Errorf("texts %q, want %q", texts, tc.wantTexts)
			}
			if got := ThreadIDFromHistory(body.Messages); got != tc.wantThread {
				t.Errorf("ThreadIDFromHistory = %q, want %q", got, tc.wantThread)
			}
		})
	}
}

func TestThreadIDFromHistory(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		msgs []Message
		want string
	}{
		{"none", nil, ""},
		{"user only", []Message{{Role: "user", ThreadID: "u"}}, ""},
		{"latest assistant", []Message{{Role: "assistant", ThreadID: "a"}, {Role: "user"}, {Role: "assistant", ThreadID: "b"}, {Role: "user"}}, "b"},
		{"skips assistants without one", []Message{{Role: "assistant", ThreadID: "a"}, {Role: "assistant"}, {Role: "user"}}, "a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := ThreadIDFromHistory(tc.msgs); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
