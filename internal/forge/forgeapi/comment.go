package forgeapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"unicode/utf8"
)

// The search for the comment to keep up to date reads at most
// MaxCommentPages pages of CommentPageSize comments: a pull request with more
// than a thousand comments is rare, and a server that ignores paging cannot
// keep the search going.
const (
	CommentPageSize = 100
	MaxCommentPages = 10
)

// maxMarker bounds the marker of a kept-up-to-date comment.
const maxMarker = 200

// Comment is one comment of a pull request, as an upsert reads it.
type Comment struct {
	ID       int64
	AuthorID int64 // 0 when the forge did not say
	Body     string
}

// CheckComment checks the arguments of UpsertComment before any request is
// sent. maxChars is the forge's limit on a comment's length, in characters;
// forge names the forge in the message ("GitHub").
func CheckComment(number int, marker, body string, maxChars int, forge string) error {
	switch {
	case number <= 0:
		return fmt.Errorf("number %d is not a pull request number", number)
	case strings.TrimSpace(marker) == "":
		return errors.New("the marker is empty: the comment could not be found again, and each call would add one")
	case len(marker) > maxMarker || strings.ContainsAny(marker, "\r\n"):
		return fmt.Errorf("the marker must be one line of at most %d bytes", maxMarker)
	case !strings.Contains(body, marker):
		return fmt.Errorf("the body does not hold the marker %q: the comment could not be found again", marker)
	}
	if n := utf8.RuneCountInString(body); n > maxChars {
		return fmt.Errorf("the body is %d characters, more than the %d %s takes: shorten it", n, maxChars, forge)
	}
	return nil
}

// Upsert is what keeping one comment of a pull request up to date needs of
// a forge adapter.
type Upsert struct {
	// Me is the forge's id of the token's user: only its comments are
	// edited. 0 means the forge would not say, and a comment of any author
	// that holds the marker is taken.
	Me int64
	// NewestFirst is true when List returns the newest comments first, so
	// that the search may stop at the first comment that holds the marker.
	NewestFirst bool
	// List returns page (from 1) of the pull request's comments, of
	// CommentPageSize comments at most, and the number of the next page, or
	// 0 when it was the last.
	List func(ctx context.Context, page int) (comments []Comment, next int, err error)
	// Edit replaces the body of comment id.
	Edit func(ctx context.Context, id int64, body string) error
	// Create adds body as a new comment.
	Create func(ctx context.Context, body string) error
	Log    *slog.Logger
}

// Upsert outcomes.
const (
	CommentCreated   = "created"
	CommentEdited    = "edited"
	CommentUnchanged = "unchanged"
)

// Run edits the newest comment that holds marker (the one with the highest
// id, as every forge numbers comments in the order they were made) when its
// body differs from body, leaves it alone when it does not, and creates a
// comment when none holds the marker. It returns what it did.
func (u Upsert) Run(ctx context.Context, marker, body string) (string, error) {
	log := u.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var (
		found *Comment
		seen  = map[int64]bool{}
	)
	for page, pages := 1, 0; page > 0; pages++ {
		if pages == MaxCommentPages {
			log.WarnContext(ctx, "stopped looking for the comment to edit", "pages", pages)
			break
		}
		comments, next, err := u.List(ctx, page)
		if err != nil {
			return "", err
		}
		repeated := false
		for _, c := range comments {
			if seen[c.ID] {
				repeated = true // a server that ignores paging sends page 1 again
				continue
			}
			seen[c.ID] = true
			if !strings.Contains(c.Body, marker) || (u.Me != 0 && c.AuthorID != u.Me) {
				continue
			}
			if found == nil || c.ID > found.ID {
				found = &c
			}
		}
		if (found != nil && u.NewestFirst) || repeated || next <= page {
			break
		}
		page = next
	}
	if found == nil {
		if err := u.Create(ctx, body); err != nil {
			return "", err
		}
		return CommentCreated, nil
	}
	if SameBody(found.Body, body) {
		return CommentUnchanged, nil
	}
	if err := u.Edit(ctx, found.ID, body); err != nil {
		return "", err
	}
	return CommentEdited, nil
}

// SameBody reports whether a comment the forge holds says what body says:
// forges may store line ends as \r\n and trim the ends of a body.
func SameBody(stored, body string) bool {
	norm := func(s string) string { return strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n")) }
	return norm(stored) == norm(body)
}
