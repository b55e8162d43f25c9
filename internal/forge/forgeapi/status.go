package forgeapi

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxStatusDescription is the longest description sent with a commit status,
// in characters: GitHub's limit, used on every forge so that a status reads
// the same everywhere.
const MaxStatusDescription = 140

// maxStatusContext bounds a status's name (GitLab stores 255 characters).
const maxStatusContext = 255

// maxTargetURL bounds a status's link.
const maxTargetURL = 2048

// PrepareStatus checks sha and st before any request is sent, and returns
// them as the forges take them: sha in lower case, the description on one
// line and cut at MaxStatusDescription characters on a character boundary.
func PrepareStatus(sha string, st CommitStatus) (string, CommitStatus, error) {
	sha, err := CheckSHA(sha)
	if err != nil {
		return "", CommitStatus{}, err
	}
	switch st.State {
	case StatusPending, StatusSuccess, StatusFailure, StatusError:
	default:
		return "", CommitStatus{}, fmt.Errorf("status state %q is none of %s, %s, %s, %s",
			st.State, StatusPending, StatusSuccess, StatusFailure, StatusError)
	}
	st.Context = strings.TrimSpace(st.Context)
	switch {
	case st.Context == "":
		return "", CommitStatus{}, errors.New("status context is empty: name the status, e.g. docsmith/answers")
	case utf8.RuneCountInString(st.Context) > maxStatusContext:
		return "", CommitStatus{}, fmt.Errorf("status context is longer than %d characters", maxStatusContext)
	case strings.IndexFunc(st.Context, unicode.IsControl) >= 0 || !utf8.ValidString(st.Context):
		return "", CommitStatus{}, fmt.Errorf("status context %q holds control characters or invalid UTF-8", st.Context)
	}
	if st.TargetURL != "" {
		if err := checkTargetURL(st.TargetURL); err != nil {
			return "", CommitStatus{}, err
		}
	}
	st.Description = OneLine(st.Description, MaxStatusDescription)
	return sha, st, nil
}

// CheckSHA returns sha in lower case when it is a full commit id: 40 hex
// digits (SHA-1) or 64 (SHA-256). Forges take an abbreviated id or a branch
// name in the same place; a status meant for one commit must name it.
func CheckSHA(sha string) (string, error) {
	if n := len(sha); n != 40 && n != 64 {
		return "", fmt.Errorf("commit %q is not a full commit id (40 or 64 hex digits)", shorten(sha))
	}
	for i := 0; i < len(sha); i++ {
		c := sha[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
			return "", fmt.Errorf("commit %q is not a full commit id (40 or 64 hex digits)", shorten(sha))
		}
	}
	return strings.ToLower(sha), nil
}

func checkTargetURL(raw string) error {
	if len(raw) > maxTargetURL {
		return fmt.Errorf("status target URL is longer than %d bytes", maxTargetURL)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return fmt.Errorf("status target URL %s is not an absolute http(s) URL without credentials", shorten(DisplayURL(raw)))
	}
	return nil
}

// OneLine folds runs of white space and control characters of s into one
// space, drops invalid UTF-8, and cuts the result at limit characters,
// ending it with "…" when it was cut. A cut never splits a character.
func OneLine(s string, limit int) string {
	if limit <= 0 {
		return ""
	}
	line := strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return r == utf8.RuneError || unicode.IsSpace(r) || unicode.IsControl(r)
	}), " ")
	if utf8.RuneCountInString(line) <= limit {
		return line
	}
	n, cut := 0, 0
	for cut = range line { // cut is where the n-th character starts
		if n == limit-1 {
			break
		}
		n++
	}
	return strings.TrimRight(line[:cut], " ") + "…"
}

func shorten(s string) string {
	const limit = 80
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
