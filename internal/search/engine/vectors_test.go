package engine

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func TestNearestHonoursTheFilter(t *testing.T) {
	t.Parallel()
	chunks := []Chunk{
		{ID: "a", PagePath: "a", Text: "one"},
		{ID: "b", PagePath: "b", Text: "two", Version: "v2"},
		{ID: "c", PagePath: "c", Text: "three", Groups: []string{"staff"}},
		{ID: "d", PagePath: "d", Text: "four", Language: "fr"},
		{ID: "e", PagePath: "e", Text: "five"}, // no vector
		{ID: "f", PagePath: "f", Text: "six"},  // a vector of another length
	}
	vectors := map[string][]float32{
		"a": {1, 0, 0}, "b": {0.9, 0.1, 0}, "c": {2, 0, 0}, "d": {0.8, 0.2, 0}, "f": {1, 0},
	}
	di := Build(chunks, 1)
	before := di.Bytes()
	if n := di.SetVectors(func(c *Chunk) []float32 { return vectors[c.ID] }); n != 4 {
		t.Fatalf("%d chunks got a vector, want 4", n)
	}
	if di.Bytes() <= before {
		t.Errorf("the vectors are not counted in the index's size (%d, was %d)", di.Bytes(), before)
	}
	ids := func(hits []Hit) []string {
		var out []string
		for _, h := range hits {
			out = append(out, h.ID)
		}
		return out
	}
	tests := []struct {
		name string
		f    Filter
		want []string
	}{
		{"no filter: restricted left out", Filter{}, []string{"a", "b", "d"}},
		{"reader in the group", Filter{Groups: []string{"staff"}}, []string{"a", "c", "b", "d"}},
		{"version", Filter{Version: "v1"}, []string{"a", "d"}},
		{"language", Filter{Language: "de"}, []string{"a", "b"}},
	}
	for _, tt := range tests {
		hits, err := di.Nearest([]float32{3, 0, 0}, 10, tt.f)
		if err != nil {
			t.Fatal(err)
		}
		// a and c are the same direction: equal cosines keep chunk order.
		if got := ids(hits); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
		for _, h := range hits {
			if h.Score < 0 || h.Score > 1 {
				t.Errorf("%s: score %v outside [0, 1]", tt.name, h.Score)
			}
		}
	}
	if hits, _ := di.Nearest([]float32{1, 0, 0}, 1, Filter{}); len(hits) != 1 || hits[0].ID != "a" || math.Abs(hits[0].Score-1) > 1e-6 {
		t.Errorf("top 1 = %+v", hits)
	}
	if _, err := di.Nearest([]float32{1, 0}, 3, Filter{}); !errors.Is(err, ErrBadVector) {
		t.Errorf("a query of another length: %v", err)
	}
	if _, err := di.Nearest([]float32{0, 0, 0}, 3, Filter{}); !errors.Is(err, ErrBadVector) {
		t.Errorf("a query of no length: %v", err)
	}
	if hits, err := Build(chunks, 1).Nearest([]float32{1, 0, 0}, 3, Filter{}); hits != nil || err != nil {
		t.Errorf("an index without vectors: %v, %v", hits, err)
	}
}

func TestNormalizedRefusesWhatCannotBeCompared(t *testing.T) {
	t.Parallel()
	for _, v := range [][]float32{nil, {0, 0}, {float32(math.NaN()), 1}, {float32(math.Inf(1))}} {
		if _, ok := Normalized(v); ok {
			t.Errorf("Normalized(%v) accepted", v)
		}
	}
	if u, ok := Normalized([]float32{3, 4}); !ok || math.Abs(float64(u[0])-0.6) > 1e-6 || math.Abs(float64(u[1])-0.8) > 1e-6 {
		t.Errorf("Normalized(3, 4) = %v", u)
	}
	if d := dot([]float32{1, 2, 3, 4, 5}, []float32{5, 4, 3, 2, 1}); d != 35 {
		t.Errorf("dot = %v, want 35", d)
	}
}
