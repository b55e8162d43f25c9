package agentjob

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/docsmith/docsmith/internal/apperr"
)

var allEvents = []Event{EvCreate, EvFinished, EvFailed, EvCancel, EvFollowUp, EvArchive}

var allFroms = []Status{"", Active, Completed, Failed, Archived}

// specTransitions is SPEC §3's table, written out independently of the
// package's own map so that a change to one shows up as a failure here.
var specTransitions = map[Status]map[Event]Status{
	"": {EvCreate: Active},
	Active: {
		EvFinished: Completed,
		EvFailed:   Failed,
		EvCancel:   Failed,
		EvFollowUp: Active,
		EvArchive:  Archived,
	},
	Completed: {EvFollowUp: Active, EvArchive: Archived},
	Failed:    {EvFollowUp: Active, EvArchive: Archived},
	Archived:  {EvArchive: Archived},
}

func TestTransitionEveryPair(t *testing.T) {
	t.Parallel()
	allowed := 0
	for _, from := range allFroms {
		for _, ev := range allEvents {
			want, ok := specTransitions[from][ev]
			t.Run(fmt.Sprintf("%q-%s", from, ev), func(t *testing.T) {
				t.Parallel()
				got, err := Transition(from, ev)
				if ok {
					if err != nil {
						t.Fatalf("Transition(%q, %q) = error %v, want %q", from, ev, err, want)
					}
					if got != want {
						t.Fatalf("Transition(%q, %q) = %q, want %q", from, ev, got, want)
					}
					return
				}
				if err == nil {
					t.Fatalf("Transition(%q, %q) = %q, want a Conflict error", from, ev, got)
				}
				if !apperr.Is(err, apperr.Conflict) {
					t.Fatalf("Transition(%q, %q) error %v has code %s, want %s", from, ev, err, apperr.CodeOf(err), apperr.Conflict)
				}
				if msg := apperr.MessageOf(err); strings.TrimSpace(msg) == "" {
					t.Fatalf("Transition(%q, %q) error has an empty message", from, ev)
				}
				if got != "" {
					t.Fatalf("Transition(%q, %q) refused but returned state %q", from, ev, got)
				}
			})
			if ok {
				allowed++
			}
		}
	}
	// 1 (create) + 5 (active) + 2 (completed) + 2 (failed) + 1 (archived).
	if allowed != 11 {
		t.Fatalf("spec table has %d allowed pairs, want 11", allowed)
	}
}

func TestTransitionRefusalMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		from Status
		ev   Event
		want string
	}{
		{Archived, EvFollowUp, "archived"},
		{Archived, EvCancel, "nothing to cancel"},
		{Completed, EvCancel, "only an active job can be canceled"},
		{Failed, EvCancel, "only an active job can be canceled"},
		{Completed, EvFinished, `"finish"`},
	}
	for _, tc := range tests {
		_, err := Transition(tc.from, tc.ev)
		if err == nil {
			t.Errorf("Transition(%q, %q) succeeded", tc.from, tc.ev)
			continue
		}
		if msg := apperr.MessageOf(err); !strings.Contains(msg, tc.want) {
			t.Errorf("Transition(%q, %q) message %q lacks %q", tc.from, tc.ev, msg, tc.want)
		}
	}
}

func TestParseStatus(t *testing.T) {
	t.Parallel()
	for _, s := range []Status{Active, Completed, Failed, Archived} {
		got, err := ParseStatus(string(s))
		if err != nil || got != s {
			t.Errorf("ParseStatus(%q) = %q, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "ACTIVE", "queued", "running", "done"} {
		if _, err := ParseStatus(s); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("ParseStatus(%q) error = %v, want Invalid", s, err)
		}
	}
}

func TestValidatePrompt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		prompt  string
		wantErr string // empty: accepted; otherwise a substring of the message
	}{
		{"empty", "", "non-space"},
		{"spaces only", "     ", "non-space"},
		{"tabs and newlines only", "\t\n\r\n\t", "non-space"},
		{"unicode spaces only", "\u00a0\u2003\u3000", "non-space"},
		{"one character", "x", ""},
		{"surrounded by space", "  fix the typo \n", ""},
		{"non-ASCII", "Übersetze die Einleitung ins Deutsche – bitte", ""},
		{"exactly the limit", strings.Repeat("a", MaxPromptBytes), ""},
		{"exactly the limit in multibyte runes", strings.Repeat("é", MaxPromptBytes/2), ""},
		{"one byte over", strings.Repeat("a", MaxPromptBytes+1), "32768"},
		{"far over", strings.Repeat("ab ", MaxPromptBytes), "32768"},
		{"invalid UTF-8", "fix \xff\xfe this", "UTF-8"},
		{"truncated rune", "fix \xc3", "UTF-8"},
	}
	if MaxPromptBytes != 32768 {
		t.Fatalf("MaxPromptBytes = %d, want 32768", MaxPromptBytes)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := ValidatePrompt(tc.prompt)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("ValidatePrompt(%d bytes) = %v, want nil", len(tc.prompt), err)
				}
				return
			}
			if !apperr.Is(err, apperr.Invalid) {
				t.Fatalf("ValidatePrompt(%d bytes) = %v, want an Invalid error", len(tc.prompt), err)
			}
			if msg := apperr.MessageOf(err); !strings.Contains(msg, tc.wantErr) {
				t.Fatalf("ValidatePrompt message %q lacks %q", msg, tc.wantErr)
			}
		})
	}
}

func TestBranchName(t *testing.T) {
	t.Parallel()
	const id = "a5b4c3d2-4b5a-6978-8796-0f1e0f1e2d3c"
	tests := []struct {
		name   string
		id     string
		prompt string
		want   string
	}{
		{"simple", id, "Fix typo", "docsmith/0f1e2d3c-fix-typo"},
		{"punctuation collapses", id, "Fix the typo!!! in   README.md, please...", "docsmith/0f1e2d3c-fix-the-typo-in-readme-md-please"},
		{"leading and trailing junk", id, "  --- Add FAQ ---  ", "docsmith/0f1e2d3c-add-faq"},
		{"digits kept", id, "Bump v2 to v3", "docsmith/0f1e2d3c-bump-v2-to-v3"},
		{"no letters or digits", id, "!!! ??? ...", "docsmith/0f1e2d3c-edit"},
		{"only spaces", id, "   \t\n", "docsmith/0f1e2d3c-edit"},
		{"non-ASCII letters are separators", id, "Übersetze ça", "docsmith/0f1e2d3c-bersetze-a"},
		{"only non-ASCII", id, "日本語", "docsmith/0f1e2d3c-edit"},
		{"exactly 40", id, strings.Repeat("a", 40), "docsmith/0f1e2d3c-" + strings.Repeat("a", 40)},
		{"long prompt cut at 40", id, strings.Repeat("a", 100), "docsmith/0f1e2d3c-" + strings.Repeat("a", 40)},
		{"cut does not end in a dash", id, strings.Repeat("a", 39) + " bbbb", "docsmith/0f1e2d3c-" + strings.Repeat("a", 39)},
		{"id without dashes", "0123456789abcdef", "x", "docsmith/89abcdef-x"},
		{"dash inside last 8", "23-ab-cd-ef-01", "x", "docsmith/abcdef01-x"},
		{"short id", "abc", "x", "docsmith/abc-x"},
	}
	slugRE := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := BranchName(tc.id, tc.prompt)
			if got != tc.want {
				t.Fatalf("BranchName(%q, %q) = %q, want %q", tc.id, tc.prompt, got, tc.want)
			}
		})
	}

	// Properties over assorted prompts.
	prompts := []string{
		"", "a", "A-B_C d", strings.Repeat("Hello, World! ", 20), "x--y", "ÀÉÎ õü", "123 456",
		strings.Repeat("ab-", 30), "\xff\xfe", "Kelvin \u212a sign", "tab\tand\nnewline",
	}
	for _, p := range prompts {
		got := BranchName(id, p)
		rest, ok := strings.CutPrefix(got, "docsmith/0f1e2d3c-")
		if !ok {
			t.Errorf("BranchName(%q) = %q lacks the docsmith/<short-id>- prefix", p, got)
			continue
		}
		if !slugRE.MatchString(rest) {
			t.Errorf("BranchName(%q) slug %q is not lowercase alnum words joined by single dashes", p, rest)
		}
		if len(rest) > 40 {
			t.Errorf("BranchName(%q) slug %q is %d characters, want at most 40", p, rest, len(rest))
		}
	}
}

func TestValidateIdempotencyKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		key     string
		wantErr string
	}{
		{"empty (no header)", "", ""},
		{"uuid", "5f0c7a4e-8a57-4c1e-9b61-3f8e2a1d9c00", ""},
		{"printable punctuation", "!#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", ""},
		{"exactly 255", strings.Repeat("k", 255), ""},
		{"256", strings.Repeat("k", 256), "255"},
		{"space", "my key", "printable ASCII"},
		{"tab", "key\t1", "printable ASCII"},
		{"newline", "key\n", "printable ASCII"},
		{"DEL", "key\x7f", "printable ASCII"},
		{"NUL", "key\x00", "printable ASCII"},
		{"non-ASCII", "schlüssel", "printable ASCII"},
		{"invalid UTF-8", "key\xff", "printable ASCII"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateIdempotencyKey(tc.key)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("ValidateIdempotencyKey(%q) = %v, want nil", tc.key, err)
				}
				return
			}
			if !apperr.Is(err, apperr.Invalid) {
				t.Fatalf("ValidateIdempotencyKey(%q) = %v, want an Invalid error", tc.key, err)
			}
			if msg := apperr.MessageOf(err); !strings.Contains(msg, tc.wantErr) {
				t.Fatalf("ValidateIdempotencyKey(%q) message %q lacks %q", tc.key, msg, tc.wantErr)
			}
		})
	}
}

// TestJobIDs: job ids are version 7 UUIDs, made in time order, and the
// short ids of jobs created at once differ.
func TestJobIDs(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	prev := ""
	for range 1000 {
		id := newJobID()
		u, err := uuid.Parse(id)
		if err != nil || u.Version() != 7 {
			t.Fatalf("job id %q is not a version 7 UUID (%v)", id, err)
		}
		if id <= prev {
			t.Fatalf("job id %s made after %s sorts before it", id, prev)
		}
		prev = id
		if seen[ShortID(id)] {
			t.Fatalf("two jobs made together share the short id %s", ShortID(id))
		}
		seen[ShortID(id)] = true
	}
}
