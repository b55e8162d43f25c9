package aisdk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// protocol is one encoder under test.
type protocol struct {
	name  string // golden file prefix: "v1" (data stream), "v2" (UI message stream)
	new   func(http.ResponseWriter) Stream
	parse func(body string, allowTopLevelThreadID bool) (transcript, error)
}

func protocols() []protocol {
	return []protocol{
		{name: "v1", new: func(w http.ResponseWriter) Stream { return NewDataStream(w) }, parse: parseDataStream},
		{name: "v2", new: func(w http.ResponseWriter) Stream { return NewUIMessageStream(w) }, parse: parseUIMessageStream},
	}
}

// transcript is what a client would assemble from a stream, in terms common
// to both protocols.
type transcript struct {
	MessageID        string
	ThreadID         string // from the start of the stream (v2 start metadata, v1 8: annotation)
	Sources          []Source
	Text             string
	Finished         bool
	FinishThreadID   string // v2 finish messageMetadata.threadId, v1 d:.threadId
	TopLevelThreadID string // v2 only: finish.threadId
	Usage            *Usage
	ErrorText        string
	Heartbeats       int
	Done             bool // v2 only: data: [DONE]
	// Data are the data parts, in order: v2 data-<name> chunks, v1 8:
	// annotations other than the threadId one. Key is the v1 annotation
	// key (the v2 name in camel case); ID is v2 only.
	Data []dataPart
	// FinishMetadata is what the finish carries beside threadId and usage:
	// v2 messageMetadata's other members, v1 d:'s other keys, as compact
	// JSON by key.
	FinishMetadata map[string]string
}

// dataPart is one data part as a client keeps it.
type dataPart struct {
	Key   string
	ID    string
	Value string // compact JSON
}

// compact returns raw compacted, or raw itself when it is not JSON.
func compact(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// camel is the v1 key of a v2 data part name.
func camel(name string) string {
	parts := strings.Split(name, "-")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// extraMembers returns obj's members other than skip, compacted.
func extraMembers(obj map[string]json.RawMessage, skip ...string) map[string]string {
	var out map[string]string
	for k, v := range obj {
		if slices.Contains(skip, k) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = compact(v)
	}
	return out
}

// checkProviderMetadataShape is the clients' schema for providerMetadata:
// an object of objects.
func checkProviderMetadataShape(raw json.RawMessage) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return fmt.Errorf("providerMetadata is not an object: %s", raw)
	}
	for k, v := range m {
		var inner map[string]json.RawMessage
		if err := json.Unmarshal(v, &inner); err != nil || inner == nil {
			return fmt.Errorf("providerMetadata %q is not an object: %s", k, v)
		}
	}
	return nil
}

// do runs the steps in order and stops at the first error.
func do(steps ...func() error) error {
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// uiChunkKeys returns, for a chunk type we emit, its required and optional
// keys as in the strict-schema clients (ai 5.0.0): any other key is fatal
// there.
func uiChunkKeys(typ string) (required, optional []string, known bool) {
	if name, ok := strings.CutPrefix(typ, "data-"); ok && name != "" {
		return []string{"data"}, []string{"id", "transient"}, true
	}
	switch typ {
	case "start":
		return nil, []string{"messageId", "messageMetadata"}, true
	case "start-step", "finish-step":
		return nil, nil, true
	case "source-url":
		return []string{"sourceId", "url"}, []string{"title", "providerMetadata"}, true
	case "text-start", "text-end":
		return []string{"id"}, []string{"providerMetadata"}, true
	case "text-delta":
		return []string{"id", "delta"}, []string{"providerMetadata"}, true
	case "finish":
		return nil, []string{"messageMetadata"}, true
	case "error":
		return []string{"errorText"}, nil, true
	}
	return nil, nil, false
}

// parseUIMessageStream checks the SSE framing and every chunk against the
// strict chunk schema, and assembles the message as the client would.
func parseUIMessageStream(body string, allowTopLevelThreadID bool) (transcript, error) {
	var tr transcript
	if body == "" {
		return tr, nil
	}
	if !strings.HasSuffix(body, "\n\n") {
		return tr, fmt.Errorf("body does not end with a blank line: %q", tail(body))
	}
	open := map[string]bool{}
	for i, block := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		if tr.Done {
			return tr, fmt.Errorf("event %d after [DONE]: %q", i, block)
		}
		if strings.Contains(block, "\n") || strings.Contains(block, "\r") {
			return tr, fmt.Errorf("event %d spans lines: %q", i, block)
		}
		if strings.HasPrefix(block, ":") {
			tr.Heartbeats++
			continue
		}
		data, ok := strings.CutPrefix(block, "data: ")
		if !ok {
			return tr, fmt.Errorf("event %d is not a data line: %q", i, block)
		}
		if data == "[DONE]" {
			tr.Done = true
			continue
		}
		if tr.ErrorText != "" {
			return tr, fmt.Errorf("chunk %d after error: %q", i, data)
		}
		var c map[string]json.RawMessage
		if err := strictUnmarshal([]byte(data), &c); err != nil {
			return tr, fmt.Errorf("event %d is not a JSON object: %w: %q", i, err, data)
		}
		var typ string
		if err := json.Unmarshal(c["type"], &typ); err != nil {
			return tr, fmt.Errorf("event %d has no string type: %q", i, data)
		}
		required, optional, known := uiChunkKeys(typ)
		if !known {
			return tr, fmt.Errorf("event %d has unknown type %q", i, typ)
		}
		for _, k := range required {
			if _, ok := c[k]; !ok {
				return tr, fmt.Errorf("%s chunk lacks %q: %q", typ, k, data)
			}
		}
		for k := range c {
			allowed := k == "type" || slices.Contains(required, k) || slices.Contains(optional, k) ||
				(typ == "finish" && k == "threadId" && allowTopLevelThreadID)
			if !allowed {
				return tr, fmt.Errorf("%s chunk has key %q, fatal on strict clients: %q", typ, k, data)
			}
		}
		str := func(k string) string {
			var s string
			_ = json.Unmarshal(c[k], &s)
			return s
		}
		switch typ {
		case "start":
			tr.MessageID = str("messageId")
			tr.ThreadID = metaThread(c["messageMetadata"])
		case "source-url":
			src := Source{ID: str("sourceId"), URL: str("url"), Title: str("title")}
			if pm, ok := c["providerMetadata"]; ok {
				if err := checkProviderMetadataShape(pm); err != nil {
					return tr, err
				}
				src.ProviderMetadata = json.RawMessage(compact(pm))
			}
			tr.Sources = append(tr.Sources, src)
		case "text-start":
			open[str("id")] = true
		case "text-delta":
			if !open[str("id")] {
				return tr, fmt.Errorf("text-delta for a block that is not open: %q", data)
			}
			tr.Text += str("delta")
		case "text-end":
			if !open[str("id")] {
				return tr, fmt.Errorf("text-end for a block that is not open: %q", data)
			}
			delete(open, str("id"))
		case "finish":
			if len(open) > 0 {
				return tr, fmt.Errorf("finish with text blocks still open")
			}
			tr.Finished = true
			tr.FinishThreadID = metaThread(c["messageMetadata"])
			var meta map[string]json.RawMessage
			_ = json.Unmarshal(c["messageMetadata"], &meta)
			tr.FinishMetadata = extraMembers(meta, "threadId", "usage")
			tr.TopLevelThreadID = str("threadId")
			var m struct {
				Usage *struct{ InputTokens, OutputTokens, TotalTokens int }
			}
			_ = json.Unmarshal(c["messageMetadata"], &m)
			if m.Usage != nil {
				if m.Usage.TotalTokens != m.Usage.InputTokens+m.Usage.OutputTokens {
					return tr, fmt.Errorf("usage total does not add up: %q", data)
				}
				tr.Usage = &Usage{InputTokens: m.Usage.InputTokens, OutputTokens: m.Usage.OutputTokens}
			}
		case "error":
			tr.ErrorText = str("errorText")
		default:
			if name, ok := strings.CutPrefix(typ, "data-"); ok {
				tr.Data = append(tr.Data, dataPart{Key: camel(name), ID: str("id"), Value: compact(c["data"])})
			}
		}
	}
	return tr, nil
}

func metaThread(raw json.RawMessage) string {
	var m struct {
		ThreadID string `json:"threadId"`
	}
	_ = json.Unmarshal(raw, &m)
	return m.ThreadID
}

// parseDataStream checks the line framing and each part's value as the AI
// SDK 4 parser does, and assembles the message.
func parseDataStream(body string, _ bool) (transcript, error) {
	var tr transcript
	if body == "" {
		return tr, nil
	}
	if !strings.HasSuffix(body, "\n") {
		return tr, fmt.Errorf("body does not end with a newline: %q", tail(body))
	}
	for i, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		if line == "" {
			tr.Heartbeats++
			continue
		}
		if tr.ErrorText != "" || tr.Finished {
			return tr, fmt.Errorf("line %d after the end: %q", i, line)
		}
		code, value, ok := strings.Cut(line, ":")
		if !ok {
			return tr, fmt.Errorf("line %d has no code: %q", i, line)
		}
		var v any
		if err := strictUnmarshal([]byte(value), &v); err != nil {
			return tr, fmt.Errorf("line %d is not <code>:<JSON>: %w: %q", i, err, line)
		}
		obj, isObj := v.(map[string]any)
		switch code {
		case "0", "3":
			s, ok := v.(string)
			if !ok {
				return tr, fmt.Errorf("%s: part is not a string: %q", code, line)
			}
			if code == "0" {
				tr.Text += s
			} else {
				tr.ErrorText = s
			}
		case "8":
			arr, ok := v.([]any)
			if !ok {
				return tr, fmt.Errorf("8: part is not an array: %q", line)
			}
			var items []map[string]json.RawMessage
			_ = json.Unmarshal([]byte(value), &items)
			for i, a := range arr {
				m, ok := a.(map[string]any)
				if !ok {
					continue
				}
				if id, ok := m["threadId"].(string); ok {
					tr.ThreadID = id
					continue
				}
				if i >= len(items) {
					continue
				}
				for k, v := range items[i] {
					tr.Data = append(tr.Data, dataPart{Key: k, Value: compact(v)})
				}
			}
		case "f":
			id, ok := obj["messageId"].(string)
			if !isObj || !ok {
				return tr, fmt.Errorf("f: part lacks messageId: %q", line)
			}
			tr.MessageID = id
		case "h":
			if !isObj || obj["sourceType"] != "url" {
				return tr, fmt.Errorf("h: part is not a url source: %q", line)
			}
			id, _ := obj["id"].(string)
			u, _ := obj["url"].(string)
			title, _ := obj["title"].(string)
			src := Source{ID: id, URL: u, Title: title}
			var raw map[string]json.RawMessage
			_ = json.Unmarshal([]byte(value), &raw)
			if pm, ok := raw["providerMetadata"]; ok {
				if err := checkProviderMetadataShape(pm); err != nil {
					return tr, err
				}
				src.ProviderMetadata = json.RawMessage(compact(pm))
			}
			tr.Sources = append(tr.Sources, src)
		case "e", "d":
			if _, ok := obj["finishReason"].(string); !isObj || !ok {
				return tr, fmt.Errorf("%s: part lacks finishReason: %q", code, line)
			}
			if code == "d" {
				var raw map[string]json.RawMessage
				_ = json.Unmarshal([]byte(value), &raw)
				tr.FinishMetadata = extraMembers(raw, "finishReason", "usage", "threadId")
				tr.Finished = true
				tr.FinishThreadID, _ = obj["threadId"].(string)
				if u, ok := obj["usage"].(map[string]any); ok {
					pn, _ := u["promptTokens"].(json.Number)
					cn, _ := u["completionTokens"].(json.Number)
					p, _ := pn.Int64()
					c, _ := cn.Int64()
					tr.Usage = &Usage{InputTokens: int(p), OutputTokens: int(c)}
				}
			}
		default:
			return tr, fmt.Errorf("line %d has code %q, fatal to the client: %q", i, code, line)
		}
	}
	return tr, nil
}

// strictUnmarshal decodes exactly one JSON value. Numbers stay as written
// (JavaScript reads one too large for a float64 as Infinity, no error).
func strictUnmarshal(b []byte, v any) error {
	if !json.Valid(b) {
		return fmt.Errorf("invalid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

func tail(s string) string {
	if len(s) > 40 {
		return s[len(s)-40:]
	}
	return s
}

// noFlushWriter is a ResponseWriter that cannot flush or set deadlines, like
// a middleware wrapper without Unwrap.
type noFlushWriter struct {
	h    http.Header
	code int
	buf  bytes.Buffer
}

func (w *noFlushWriter) Header() http.Header         { return w.h }
func (w *noFlushWriter) WriteHeader(code int)        { w.code = code }
func (w *noFlushWriter) Write(b []byte) (int, error) { return w.buf.Write(b) }

// failWriter fails every write, like a connection the client closed.
type failWriter struct {
	noFlushWriter
	writes int
}

func (w *failWriter) Write([]byte) (int, error) {
	w.writes++
	return 0, errClientGone
}

type constError string

func (e constError) Error() string { return string(e) }

const errClientGone = constError("client gone")
