package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/docsmith/docsmith/internal/apperr"
)

// decodeJSON reads a JSON object body into dst. Unknown fields are ignored;
// a body that is too large, not JSON, or of the wrong shape gets an error
// that names the limit or the field.
func decodeJSON(w http.ResponseWriter, r *http.Request, limit int64, dst any) error {
	body, err := readJSON(w, r, limit)
	if err != nil {
		return err
	}
	return decodeBody(body, dst)
}

// readJSON reads a JSON request body of at most limit bytes.
func readJSON(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mediaType != "application/json" {
		return nil, apperr.New(apperr.UnsupportedType, "the request body must be JSON; send Content-Type: application/json")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, apperr.New(apperr.TooLarge, "the request body is larger than the limit of %d bytes", limit)
	}
	if err != nil {
		return nil, apperr.Wrap(err, apperr.Invalid, "the request body could not be read")
	}
	return body, nil
}

// decodeBody is decodeJSON's parsing half, separate so it can be fuzzed.
func decodeBody(body []byte, dst any) error {
	if len(strings.TrimSpace(string(body))) == 0 {
		return apperr.New(apperr.Invalid, "the request body is empty; send a JSON object")
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	if err := dec.Decode(dst); err != nil {
		return describeJSONError(err)
	}
	// More is false before a stray ']' or '}', so look for the end instead.
	if _, err := dec.Token(); err != io.EOF {
		return apperr.New(apperr.Invalid, "the request body has data after the JSON object; send exactly one object")
	}
	return nil
}

func describeJSONError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return apperr.New(apperr.Invalid, "the request body must be a JSON object, not %s", typeErr.Value)
		}
		return apperr.New(apperr.Invalid, "field %q must be %s, not %s", typeErr.Field, jsonTypeName(typeErr.Type.String()), typeErr.Value)
	case errors.As(err, &syntaxErr):
		return apperr.New(apperr.Invalid, "the request body is not valid JSON (at byte %d): %s", syntaxErr.Offset, syntaxErr.Error())
	case errors.Is(err, io.ErrUnexpectedEOF):
		return apperr.New(apperr.Invalid, "the request body ends in the middle of the JSON")
	}
	return apperr.New(apperr.Invalid, "the request body is not valid JSON: %s", err.Error())
}

func jsonTypeName(goType string) string {
	switch {
	case goType == "string" || goType == "*string":
		return "a string"
	case strings.Contains(goType, "int") || strings.Contains(goType, "float"):
		return "a number"
	case goType == "bool" || goType == "*bool":
		return "true or false"
	case strings.HasPrefix(goType, "[]") || strings.HasPrefix(goType, "*[]"):
		return "an array"
	}
	return fmt.Sprintf("an object (%s)", strings.TrimPrefix(goType, "*"))
}

// promptBody is the body of create and message.
type promptBody struct {
	Prompt *string `json:"prompt"`
}

func decodePrompt(w http.ResponseWriter, r *http.Request, limit int64) (string, error) {
	var body promptBody
	if err := decodeJSON(w, r, limit, &body); err != nil {
		return "", err
	}
	if body.Prompt == nil {
		return "", apperr.New(apperr.Invalid, "field \"prompt\" is required: the instruction for the agent")
	}
	return *body.Prompt, nil
}
