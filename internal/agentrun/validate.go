package agentrun

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/docsmith/docsmith/internal/agentrun/tools"
	"github.com/docsmith/docsmith/internal/docs"
)

// verdict is the validation of a turn's edits measured against the branch
// they started from: only the problems the edits made block the turn; the
// ones the branch already had are reported beside it.
type verdict struct {
	introduced []docs.Problem
	existing   []docs.Problem
}

// validateEdits validates the docs after the workspace's edits and, when
// that finds problems, the same files before them, and splits the problems
// into those the edits made and those that were already there. A problem
// counts as already there when the base had as many of it, on the same file
// (a moved file's old name), with the same message up to line numbers and
// list positions, which an edit elsewhere in the file shifts.
func validateEdits(co *docs.Checkout, ws *tools.Workspace) verdict {
	changes := ws.Changed()
	after := docs.Validate(co.FS(), changedPaths(changes))
	if len(after) == 0 {
		return verdict{}
	}
	var basePaths []string
	renamed := map[string]string{} // old path → new path
	for _, c := range changes {
		switch c.Kind {
		case tools.ChangeDeleted:
		case tools.ChangeMoved:
			basePaths = append(basePaths, c.From)
			renamed[c.From] = c.Path
		default:
			basePaths = append(basePaths, c.Path)
		}
	}
	before := docs.Validate(ws.BaseFS(co.FS()), basePaths)
	have := map[string]int{}
	for _, p := range before {
		if to, ok := renamed[p.File]; ok {
			p.File = to
		}
		have[problemKey(p)]++
	}
	var v verdict
	for _, p := range after {
		k := problemKey(p)
		if have[k] > 0 {
			have[k]--
			v.existing = append(v.existing, p)
			continue
		}
		v.introduced = append(v.introduced, p)
	}
	return v
}

var shifting = regexp.MustCompile(`\[\d+\]|\bline \d+`)

func problemKey(p docs.Problem) string {
	return p.File + "\x00" + shifting.ReplaceAllStringFunc(p.Message, func(s string) string {
		if strings.HasPrefix(s, "[") {
			return "[]"
		}
		return "line"
	})
}

// maxExistingShown bounds the problems of the base branch a summary lists.
const maxExistingShown = 5

// existingNote says what the base branch already had wrong, for the
// summary of a turn that went ahead anyway; "" when nothing.
func existingNote(existing []docs.Problem) string {
	if len(existing) == 0 {
		return ""
	}
	var parts []string
	for i, p := range existing {
		if i == maxExistingShown {
			parts = append(parts, fmt.Sprintf("and %d more", len(existing)-maxExistingShown))
			break
		}
		parts = append(parts, p.String())
	}
	return "The base branch already has these problems, which this turn did not cause or make worse: " + strings.Join(parts, "; ") + "."
}
