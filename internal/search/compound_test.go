package search

import (
	"strings"
	"testing"
)

func TestIndexTokensJoinsPieces(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"open the team-space page", "open the teamspace team space page"},
		{"run with --dry-run first", "run with dryrun dry run first"},
		{"set DRY_RUN=1", "set DRYRUN DRY RUN 1"},
		{"GET api/v1/users now", "GET apiv1users api v1 users now"},
		{"read user.profile.name", "read userprofilename user profile name"},
		{"the myApp-config file", "the myAppconfig myApp my App config file"},
		// Versions and dates are not names: a piece needs a letter.
		{"since v1.2.3 and 2024-01-05", "since v1 2 3 and 2024 01 05"},
		// A path of many pieces is not joined.
		{"see a/b/c/d/e", "see a b c d e"},
		// Two joiners, or a space, break the run.
		{"a -- b, x. Y", "a b x Y"},
		{"naïve-café text", "naïve café text"},
		{"plain words only", "plain words only"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			var got []string
			indexTokens(tt.in, func(raw string) { got = append(got, raw) })
			if g := strings.Join(got, " "); g != tt.want {
				t.Errorf("indexTokens(%q) = %q, want %q", tt.in, g, tt.want)
			}
		})
	}
}

func TestIndexTokensLongRun(t *testing.T) {
	t.Parallel()
	// More camel parts than a run can hold: the tokens all come, in order,
	// and nothing is joined.
	in := "aaBbCcDdEe-ffGgHhIi-jjKk"
	var got []string
	indexTokens(in, func(raw string) { got = append(got, raw) })
	var want []string
	analyzedTokens(in, func(raw string) { want = append(want, raw) })
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("indexTokens(%q) = %q, want %q", in, got, want)
	}
}
