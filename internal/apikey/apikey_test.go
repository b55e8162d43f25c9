package apikey

import (
	"strings"
	"testing"
)

func TestGenerateParseRoundTrip(t *testing.T) {
	t.Parallel()
	for _, kind := range []Kind{Admin, Assistant} {
		g, err := Generate(kind)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Parse(g.Secret)
		if err != nil {
			t.Fatalf("Parse(%q): %v", g.Secret, err)
		}
		if p.Kind != kind || p.ID != g.ID {
			t.Fatalf("Parse = %+v, want kind %s id %s", p, kind, g.ID)
		}
		if !Matches(g.Secret, g.Hash) {
			t.Fatal("key does not match its own hash")
		}
		if Matches(g.Secret+"x", g.Hash) {
			t.Fatal("changed key matches")
		}
	}
	a, _ := Generate(Assistant)
	if !strings.HasPrefix(a.Secret, "svc_dsc_") {
		t.Fatalf("assistant key %q lacks svc_dsc_", a.Secret)
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	good, _ := Generate(Admin)
	for _, s := range []string{"", "svc_", "svc_dsc_", "sk-abc", "svc_short_x", good.Secret + "!", strings.ToUpper(good.Secret)} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) succeeded", s)
		}
	}
}

func FuzzParse(f *testing.F) {
	g, _ := Generate(Admin)
	f.Add(g.Secret)
	f.Add("svc_dsc_aaaaaaaaaaaa_bbbb")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err == nil && (p.ID == "" || (p.Kind != Admin && p.Kind != Assistant)) {
			t.Fatalf("Parse(%q) = %+v without error", s, p)
		}
	})
}
