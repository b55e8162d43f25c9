// Package nulljson stores optional values in nullable JSON columns, the
// same way in every store: a nil pointer is NULL.
package nulljson

import "encoding/json"

// Encode returns v as JSON text for a nullable column, or nil for NULL.
func Encode[T any](v *T) (any, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// Decode reads a nullable JSON column: NULL (nil) is a nil pointer.
func Decode[T any](b []byte) (*T, error) {
	if b == nil {
		return nil, nil
	}
	v := new(T)
	if err := json.Unmarshal(b, v); err != nil {
		return nil, err
	}
	return v, nil
}
