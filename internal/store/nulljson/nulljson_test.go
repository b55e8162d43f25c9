package nulljson

import "testing"

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	type spec struct{ A []string }
	if v, err := Encode[spec](nil); err != nil || v != nil {
		t.Fatalf("nil encodes as %v, %v", v, err)
	}
	if v, err := Decode[spec](nil); err != nil || v != nil {
		t.Fatalf("NULL decodes as %v, %v", v, err)
	}
	enc, err := Encode(&spec{A: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode[spec]([]byte(enc.(string)))
	if err != nil || got == nil || len(got.A) != 1 || got.A[0] != "x" {
		t.Fatalf("round trip = %+v, %v", got, err)
	}
	if _, err := Decode[spec]([]byte("{")); err == nil {
		t.Fatal("bad JSON decoded")
	}
}
