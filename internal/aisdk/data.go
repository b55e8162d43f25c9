package aisdk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// Data parts and metadata carry values whose meaning is the caller's: a
// name, an id and a JSON value, encoded where each protocol keeps such
// things (see [UIMessageStream.Data] and [DataStream.Data]). The encoders
// only check that what they are given cannot break a client: a well-formed
// name, valid JSON, and for provider metadata the shape every client's
// schema wants.

// Member is one member the caller adds to a JSON object on the wire: its
// key and its value, already JSON-encoded.
type Member struct {
	Key   string
	Value json.RawMessage
}

// reservedFinishKeys are the keys the encoders themselves write in the
// finish metadata (v2) and the finish part (v1).
var reservedFinishKeys = []string{"threadId", "usage", "finishReason"}

// checkDataName validates a data part's name: lowercase letters and digits
// in words joined by single hyphens ("answer-status"), so that the v2 chunk
// type "data-<name>" and the v1 annotation key (its camel case) are plain.
func checkDataName(name string) error {
	ok := name != "" && name[0] != '-' && name[len(name)-1] != '-'
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && name[i-1] != '-':
		default:
			ok = false
		}
	}
	if !ok {
		return fmt.Errorf("aisdk: data part name %q: want lowercase words joined by hyphens", name)
	}
	return nil
}

// camelName is the v1 annotation key of a data part: its name in camel case
// ("answer-status" gives "answerStatus").
func camelName(name string) string {
	out := make([]byte, 0, len(name))
	upper := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '-':
			upper = true
		case upper && c >= 'a' && c <= 'z':
			out = append(out, c-'a'+'A')
			upper = false
		default:
			out = append(out, c)
			upper = false
		}
	}
	return string(out)
}

// checkFinishMetadata validates the caller's finish metadata: keys set,
// distinct and not the encoders' own, values valid JSON.
func checkFinishMetadata(members []Member) error {
	for i, m := range members {
		if m.Key == "" {
			return fmt.Errorf("aisdk: finish metadata member %d has no key", i)
		}
		if slices.Contains(reservedFinishKeys, m.Key) {
			return fmt.Errorf("aisdk: finish metadata key %q is the encoder's own", m.Key)
		}
		if slices.ContainsFunc(members[:i], func(o Member) bool { return o.Key == m.Key }) {
			return fmt.Errorf("aisdk: finish metadata key %q given twice", m.Key)
		}
		if !json.Valid(m.Value) {
			return fmt.Errorf("aisdk: finish metadata %q is not valid JSON", m.Key)
		}
	}
	return nil
}

// checkProviderMetadata validates a source's provider metadata: absent, or
// a JSON object whose every value is an object ({"<provider>":{…}}), the
// only shape the clients' schema accepts.
func checkProviderMetadata(raw json.RawMessage) error {
	if len(raw) == 0 {
		return nil
	}
	var providers map[string]json.RawMessage
	if !isObject(raw) || json.Unmarshal(raw, &providers) != nil {
		return fmt.Errorf("aisdk: provider metadata must be a JSON object")
	}
	for name, v := range providers {
		if !isObject(v) {
			return fmt.Errorf("aisdk: provider metadata %q must be a JSON object", name)
		}
	}
	return nil
}

// isObject reports whether raw is a valid JSON object.
func isObject(raw []byte) bool {
	t := bytes.TrimLeft(raw, " \t\r\n")
	return len(t) > 0 && t[0] == '{' && json.Valid(raw)
}

// appendFinishMetadata appends the caller's finish members, checked
// before, after the encoder's own.
func appendFinishMetadata(dst []byte, members []Member) []byte {
	for _, m := range members {
		dst = appendJSON(appendQuotedKey(dst, m.Key), m.Value)
	}
	return dst
}

// checkData validates a Data call.
func (wr *writer) checkData(name string, value json.RawMessage) error {
	if err := wr.usable(); err != nil {
		return err
	}
	if err := checkDataName(name); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if !json.Valid(value) {
		return fmt.Errorf("%w: data part %q is not valid JSON", ErrInvalid, name)
	}
	return nil
}

// checkSources validates a Sources call: every source's provider metadata
// is checked before any is written.
func (wr *writer) checkSources(srcs []Source) error {
	if err := wr.usable(); err != nil {
		return err
	}
	for _, src := range srcs {
		if err := checkProviderMetadata(src.ProviderMetadata); err != nil {
			return fmt.Errorf("%w: source %q: %w", ErrInvalid, src.ID, err)
		}
	}
	return nil
}

// checkFinish validates a Finish call.
func (wr *writer) checkFinish(metadata []Member) error {
	if err := wr.usable(); err != nil {
		return err
	}
	if err := checkFinishMetadata(metadata); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}
