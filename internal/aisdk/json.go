package aisdk

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// The chunks are small JSON objects of strings and integers in a fixed key
// order. They are appended to the call's buffer directly rather than
// through encoding/json, whose reflection and boxing cost allocations on
// every event; the bytes are the same as encoding/json's with HTML
// escaping off (FuzzAppendString compares them).

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string exactly as encoding/json writes it
// with SetEscapeHTML(false): '"', '\\' and control characters escaped (the
// short forms \b \f \n \r \t where JSON has them), each invalid UTF-8 byte
// as \ufffd, and U+2028 and U+2029 escaped as well, since JavaScript
// outside JSON reads them as line ends. HTML escaping is off only so that
// the transcripts read like the SDK's own.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendKey appends an object member's key, after a comma unless it is the
// object's first. Keys are our own plain names and need no escaping.
func appendKey(dst []byte, key string) []byte {
	if dst[len(dst)-1] != '{' {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, key...)
	return append(dst, '"', ':')
}

// appendStringMember appends "key":"value".
func appendStringMember(dst []byte, key, value string) []byte {
	return appendString(appendKey(dst, key), value)
}

// appendIntMember appends "key":value.
func appendIntMember(dst []byte, key string, value int) []byte {
	return strconv.AppendInt(appendKey(dst, key), int64(value), 10)
}

// appendQuotedKey is appendKey for a key that is the caller's, escaped as
// a JSON string.
func appendQuotedKey(dst []byte, key string) []byte {
	if dst[len(dst)-1] != '{' {
		dst = append(dst, ',')
	}
	return append(appendString(dst, key), ':')
}

// appendJSON appends raw, a JSON value the caller checked with json.Valid,
// on one line: both protocols frame by line, so the insignificant white
// space (which may hold newlines) goes.
func appendJSON(dst []byte, raw []byte) []byte {
	b := bytes.NewBuffer(dst)
	if err := json.Compact(b, raw); err != nil {
		// Unreachable for valid JSON; keep the frame intact regardless.
		return append(dst, "null"...)
	}
	return b.Bytes()
}
