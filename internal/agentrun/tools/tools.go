// Package tools is the docs agent's set of file tools: list, read, search, exact string
// replace, insert, create, delete and move (which also rewrites navigation entries and links).
//
// Every file access goes through an os.Root opened on the docs root of the checkout, and every
// path the model sends is checked before it is used: it must be relative, must not contain
// "..", must not touch .git, and must not pass through a symbolic link, even one that stays
// inside the root. Only regular text files under a size cap can be read or edited. Writes are
// atomic (a temporary file in the same directory, then a rename) and are counted against the
// turn's budgets of files and lines changed.
//
// Mistakes in a call come back as a *ToolError whose message tells the model how to fix the
// call; the loop sends it back as the tool result. Any other error is the service's own failure.
// The content of the docs is data: nothing a file says changes what the tools allow.
//
// Context (list_context_files, read_context_file, search_context) reads the repositories a
// workflow names as context, each through an os.Root of its own, with the same checks and
// hidden paths refused besides; it has no tool that writes.
package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"unicode"

	"github.com/docsmith/docsmith/internal/docs"
)

// Defaults applied by Open to zero Limits fields.
const (
	DefaultMaxFileBytes  = docs.MaxFileBytes
	DefaultMaxReadLines  = 400
	DefaultMaxSearchHits = 100
)

const (
	maxListEntries = 1000 // files shown by one list_files call
	maxShownLine   = 2000 // bytes of one line shown by read_file and search
	maxTargetLen   = 200  // bytes of a path shown in a progress event
)

// Limits bound what one turn may do through the tools. Zero means the default for the read
// limits and "unlimited" for the change budgets.
type Limits struct {
	MaxFileBytes    int64 // largest file that can be read, edited or written; default 1 MiB
	MaxFilesChanged int   // files created, modified, deleted or moved in the turn; 0 = unlimited
	MaxLinesChanged int   // lines added plus removed in the turn; 0 = unlimited
	MaxReadLines    int   // lines one read_file call returns; default 400
	MaxSearchHits   int   // hits one search call returns; default 100
}

func (l Limits) withDefaults() (Limits, error) {
	if l.MaxFileBytes < 0 || l.MaxFilesChanged < 0 || l.MaxLinesChanged < 0 || l.MaxReadLines < 0 || l.MaxSearchHits < 0 {
		return l, fmt.Errorf("tools: limits must not be negative: %+v", l)
	}
	if l.MaxFileBytes == 0 {
		l.MaxFileBytes = DefaultMaxFileBytes
	}
	if l.MaxReadLines == 0 {
		l.MaxReadLines = DefaultMaxReadLines
	}
	if l.MaxSearchHits == 0 {
		l.MaxSearchHits = DefaultMaxSearchHits
	}
	return l, nil
}

// ToolError is a mistake in a tool call. Its message goes back to the model as the tool result
// and says how to fix the call.
type ToolError struct {
	Message string
}

func (e *ToolError) Error() string { return e.Message }

func toolErrorf(format string, args ...any) *ToolError {
	return &ToolError{Message: fmt.Sprintf(format, args...)}
}

// Spec describes one tool to the model.
type Spec struct {
	Name        string
	Description string
	Parameters  json.RawMessage // JSON Schema of the arguments object
}

// Workspace is the docs root of one checkout, opened for the tools of one turn. Its methods are
// safe to call from several goroutines; calls run one at a time.
type Workspace struct {
	limits Limits
	tools  []*tool

	mu       sync.Mutex
	root     *os.Root
	ownsRoot bool
	ledger   *ledger
	// vocab words the messages; readOnly is set for a reader (newReader), whose apply
	// refuses every change.
	vocab    vocabulary
	readOnly bool
}

// New gives the tools the docs root root, opened by the caller from the
// checkout's own root (see docs.OpenCheckout) and closed by the caller after
// the workspace.
func New(root *os.Root, limits Limits) (*Workspace, error) {
	l, err := limits.withDefaults()
	if err != nil {
		return nil, err
	}
	w := &Workspace{limits: l, root: root, ledger: newLedger(), vocab: docsVocabulary}
	w.tools = w.toolTable()
	return w, nil
}

// newReader is a workspace that only reads root, for the context tools: it offers no tools of
// its own (the caller calls its read functions), and any change is refused.
func newReader(root *os.Root, limits Limits, vocab vocabulary) *Workspace {
	return &Workspace{limits: limits, root: root, ledger: newLedger(), vocab: vocab, readOnly: true}
}

// Open opens the directory docsRoot itself for the tools, for callers that
// trust that path; a checkout of a repository uses New.
func Open(docsRoot string, limits Limits) (*Workspace, error) {
	if _, err := limits.withDefaults(); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(docsRoot)
	if err != nil {
		return nil, fmt.Errorf("tools: open docs root: %w", err)
	}
	w, err := New(root, limits)
	if err != nil {
		_ = root.Close()
		return nil, err
	}
	w.ownsRoot = true
	return w, nil
}

// Close ends the workspace, and closes the docs root when Open opened it.
// Calls after Close fail.
func (w *Workspace) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.root == nil {
		return nil
	}
	var err error
	if w.ownsRoot {
		err = w.root.Close()
	}
	w.root = nil
	return err
}

// Specs returns the tools for the model, in a fixed order.
func (w *Workspace) Specs() []Spec {
	specs := make([]Spec, 0, len(w.tools))
	for _, t := range w.tools {
		specs = append(specs, Spec{Name: t.name, Description: t.desc, Parameters: t.schema()})
	}
	return specs
}

// Call runs the tool name with args, the model's raw JSON arguments (which may be malformed).
// A *ToolError (see errors.As) is to be sent back to the model as the tool result; any other
// error is the service's own failure, such as a canceled ctx or a failing disk.
func (w *Workspace) Call(ctx context.Context, name string, args string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	t := w.lookup(name)
	if t == nil {
		return "", toolErrorf("there is no tool named %s; the file tools are %s", quoteShort(name), strings.Join(w.toolNames(), ", "))
	}
	a, err := parseArgs(t, args)
	if err != nil {
		return "", err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.root == nil {
		return "", errors.New("tools: workspace is closed")
	}
	return t.run(ctx, a)
}

// Change is one file the tools changed in this turn, compared with the checkout as it was
// when the workspace was opened.
type Change struct {
	Path string // the file's path relative to the docs root (for a move, the new path)
	Kind string // ChangeCreated, ChangeModified, ChangeDeleted or ChangeMoved
	From string // for ChangeMoved, the old path
}

// Kinds of Change.
const (
	ChangeCreated  = "created"
	ChangeModified = "modified"
	ChangeDeleted  = "deleted"
	ChangeMoved    = "moved"
)

// Changed returns the files created, modified, deleted or moved so far, sorted by path. A file
// changed and then changed back is not listed.
func (w *Workspace) Changed() []Change {
	w.mu.Lock()
	defer w.mu.Unlock()
	changes, _ := w.ledger.summary()
	return changes
}

// LinesChanged returns the lines added plus the lines removed so far, over all changed files.
func (w *Workspace) LinesChanged() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, lines := w.ledger.summary()
	return lines
}

// Target returns what a call is about, for progress events: the tool name and the path(s) it
// names, never file contents or search text. It never fails; malformed args give just the name.
func Target(name, args string) string {
	name = sanitizeTarget(name)
	var m map[string]any
	if err := json.Unmarshal([]byte(args), &m); err != nil {
		var s string
		if json.Unmarshal([]byte(args), &s) != nil || json.Unmarshal([]byte(s), &m) != nil {
			return name
		}
	}
	get := func(k string) string {
		s, _ := m[k].(string)
		return sanitizeTarget(s)
	}
	switch name {
	case "move_file":
		from, to := get("from"), get("to")
		if from == "" && to == "" {
			return name
		}
		return name + " " + from + " -> " + to
	case "list_files":
		if d := get("dir"); d != "" {
			return name + " " + d
		}
		return name
	case "list_context_files", "read_context_file", "search_context":
		where := get("repo")
		if p := cmp.Or(get("path"), get("dir")); p != "" {
			where += ":" + p
		}
		if where == "" {
			return name
		}
		return name + " " + where
	default:
		if p := get("path"); p != "" {
			return name + " " + p
		}
		return name
	}
}

func sanitizeTarget(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return -1
		}
		return r
	}, s)
	if len(s) > maxTargetLen {
		s = strings.ToValidUTF8(s[:maxTargetLen], "") + "…"
	}
	return s
}

// quoteShort quotes a value from the model for an error message, cut to a readable length.
func quoteShort(s string) string {
	const max = 120
	if len(s) > max {
		return fmt.Sprintf("%q…", strings.ToValidUTF8(s[:max], ""))
	}
	return fmt.Sprintf("%q", s)
}
