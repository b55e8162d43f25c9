package forgeapi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestOneLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in    string
		limit int
		want  string
	}{
		{"4 reader questions now answered, 0 regressed", 140, "4 reader questions now answered, 0 regressed"},
		{"  two\n\tlines\r\n ", 140, "two lines"},
		{"bad \xff byte", 140, "bad byte"},
		{"abcdef", 6, "abcdef"},
		{"abcdefg", 6, "abcde…"},
		{"ab cdefg", 4, "ab…"}, // no space before the ellipsis
		{"ééééé", 3, "éé…"},
		{"日本語のテキスト", 4, "日本語…"},
		{"x", 0, ""},
	}
	for _, tt := range tests {
		if got := OneLine(tt.in, tt.limit); got != tt.want {
			t.Errorf("OneLine(%q, %d) = %q, want %q", tt.in, tt.limit, got, tt.want)
		}
	}
}

func FuzzOneLine(f *testing.F) {
	f.Add("4 reader questions now answered, 0 regressed", 140)
	f.Add(strings.Repeat("é", 200), 140)
	f.Add("a\x00b\nc\xff", 3)
	f.Fuzz(func(t *testing.T, s string, limit int) {
		if limit > 1000 || limit < -1 {
			return
		}
		got := OneLine(s, limit)
		if !utf8.ValidString(got) {
			t.Fatalf("OneLine(%q, %d) = %q: invalid UTF-8", s, limit, got)
		}
		if n := utf8.RuneCountInString(got); n > max(limit, 0) {
			t.Fatalf("OneLine(%q, %d) = %q: %d characters", s, limit, got, n)
		}
		if strings.ContainsAny(got, "\r\n\t") {
			t.Fatalf("OneLine(%q, %d) = %q: not one line", s, limit, got)
		}
	})
}

func TestPrepareStatus(t *testing.T) {
	t.Parallel()
	sha := strings.Repeat("aB", 20)
	sha256 := strings.Repeat("0f", 32)
	ok := CommitStatus{State: StatusSuccess, Context: " docsmith/answers ", Description: "all\nanswered", TargetURL: "https://docs.example/c/1"}
	gotSHA, got, err := PrepareStatus(sha, ok)
	if err != nil || gotSHA != strings.ToLower(sha) || got.Context != "docsmith/answers" || got.Description != "all answered" || got.TargetURL != ok.TargetURL {
		t.Fatalf("PrepareStatus = %q, %+v, %v", gotSHA, got, err)
	}
	if _, _, err := PrepareStatus(sha256, ok); err != nil {
		t.Fatalf("a SHA-256 commit id: %v", err)
	}
	bad := []struct {
		name string
		sha  string
		st   CommitStatus
		want string
	}{
		{"abbreviated", sha[:7], ok, "not a full commit id"},
		{"41 digits", sha + "a", ok, "not a full commit id"},
		{"not hex", strings.Repeat("z", 40), ok, "not a full commit id"},
		{"a path", "../../../../../../../../../../../../../x", ok, "not a full commit id"},
		{"empty state", sha, CommitStatus{Context: "c"}, `state "" is none of`},
		{"no context", sha, CommitStatus{State: StatusError}, "context is empty"},
		{"control in context", sha, CommitStatus{State: StatusError, Context: "a\x1bb"}, "control characters"},
		{"long context", sha, CommitStatus{State: StatusError, Context: strings.Repeat("c", 256)}, "longer than 255"},
		{"relative link", sha, CommitStatus{State: StatusError, Context: "c", TargetURL: "/checks/1"}, "not an absolute http(s) URL"},
		{"ftp link", sha, CommitStatus{State: StatusError, Context: "c", TargetURL: "ftp://docs.example/"}, "not an absolute http(s) URL"},
	}
	for _, tt := range bad {
		if _, _, err := PrepareStatus(tt.sha, tt.st); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want one saying %q", tt.name, err, tt.want)
		}
	}
	_, _, err = PrepareStatus(sha, CommitStatus{State: StatusError, Context: "c", TargetURL: "http://me:s3cret@docs.example/"})
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("a link with credentials: err = %v", err)
	}
}

// fakeThread is a pull request's comments, listed page by page.
type fakeThread struct {
	pages   [][]Comment // the comments of each page, from page 1
	listed  []int
	edited  map[int64]string
	created []string
	failOn  string
}

func (f *fakeThread) upsert(me int64, newestFirst bool) Upsert {
	return Upsert{
		Me:          me,
		NewestFirst: newestFirst,
		List: func(_ context.Context, page int) ([]Comment, int, error) {
			f.listed = append(f.listed, page)
			if f.failOn == "list" {
				return nil, 0, errors.New("list failed")
			}
			next := page + 1
			if page >= len(f.pages) {
				next = 0
			}
			if page > len(f.pages) {
				return nil, 0, nil
			}
			return f.pages[page-1], next, nil
		},
		Edit: func(_ context.Context, id int64, body string) error {
			if f.edited == nil {
				f.edited = map[int64]string{}
			}
			f.edited[id] = body
			return nil
		},
		Create: func(_ context.Context, body string) error {
			f.created = append(f.created, body)
			return nil
		},
	}
}

func TestUpsert(t *testing.T) {
	t.Parallel()
	const marker = "<!-- m -->"
	body := marker + " new"
	ctx := context.Background()

	// Oldest first across two pages: the newest of ours is edited.
	th := &fakeThread{pages: [][]Comment{
		{{ID: 1, AuthorID: 5, Body: marker + " old"}, {ID: 2, AuthorID: 9, Body: marker + " quoted"}},
		{{ID: 3, AuthorID: 5, Body: marker + " older edit"}, {ID: 4, AuthorID: 9, Body: "chatter"}},
	}}
	if done, err := th.upsert(5, false).Run(ctx, marker, body); err != nil || done != CommentEdited || th.edited[3] != body || len(th.edited) != 1 {
		t.Fatalf("Run = %q, %v; edited %v", done, err, th.edited)
	}

	// Newest first: the search stops at the first page that has one.
	th = &fakeThread{pages: [][]Comment{{{ID: 8, AuthorID: 5, Body: marker + " old"}}, {{ID: 2, AuthorID: 5, Body: marker}}}}
	if done, err := th.upsert(5, true).Run(ctx, marker, body); err != nil || done != CommentEdited || th.edited[8] != body || fmt.Sprint(th.listed) != "[1]" {
		t.Fatalf("Run = %q, %v; edited %v after pages %v", done, err, th.edited, th.listed)
	}

	// Unchanged, though stored with \r\n.
	th = &fakeThread{pages: [][]Comment{{{ID: 1, AuthorID: 5, Body: marker + "\r\nx\r\n"}}}}
	if done, err := th.upsert(5, false).Run(ctx, marker, marker+"\nx"); err != nil || done != CommentUnchanged || th.edited != nil || th.created != nil {
		t.Fatalf("Run = %q, %v", done, err)
	}

	// Only another author's comment holds it: a new one is created; with
	// no author known, that one is taken.
	th = &fakeThread{pages: [][]Comment{{{ID: 1, AuthorID: 9, Body: marker}}}}
	if done, err := th.upsert(5, false).Run(ctx, marker, body); err != nil || done != CommentCreated || len(th.created) != 1 {
		t.Fatalf("Run = %q, %v", done, err)
	}
	th = &fakeThread{pages: [][]Comment{{{ID: 1, AuthorID: 9, Body: marker}}}}
	if done, err := th.upsert(0, false).Run(ctx, marker, body); err != nil || done != CommentEdited || th.edited[1] != body {
		t.Fatalf("Run = %q, %v", done, err)
	}

	// The pages read are bounded.
	th = &fakeThread{}
	for i := range 3 * MaxCommentPages {
		th.pages = append(th.pages, []Comment{{ID: int64(i + 1), AuthorID: 9, Body: "chatter"}})
	}
	if done, err := th.upsert(5, false).Run(ctx, marker, body); err != nil || done != CommentCreated || len(th.listed) != MaxCommentPages {
		t.Fatalf("Run = %q, %v after %d pages", done, err, len(th.listed))
	}

	// A list error stops it.
	th = &fakeThread{failOn: "list"}
	if _, err := th.upsert(5, false).Run(ctx, marker, body); err == nil || th.created != nil {
		t.Fatalf("Run = %v, created %v", err, th.created)
	}
}

func TestCheckComment(t *testing.T) {
	t.Parallel()
	const m = "<!-- m -->"
	if err := CheckComment(7, m, m+strings.Repeat("é", 90), 100, "GitHub"); err != nil {
		t.Fatal(err)
	}
	err := CheckComment(7, m, m+strings.Repeat("é", 91), 100, "GitHub")
	if err == nil || err.Error() != "the body is 101 characters, more than the 100 GitHub takes: shorten it" {
		t.Fatalf("err = %v", err)
	}
	if err := CheckComment(7, strings.Repeat("m", 201), strings.Repeat("m", 201), 1000, "GitHub"); err == nil {
		t.Fatal("a marker of 201 bytes was taken")
	}
}
