package workflow

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Limits on what a repository may hold. The repository is written by
// anyone with push access, so every one of these is enforced, not advised.
const (
	// MaxFileBytes is the largest workflow file read.
	MaxFileBytes = 64 << 10
	// MaxFiles is the most workflow files read from one directory.
	MaxFiles = 100
	// maxDirEntries bounds how many directory entries are looked at at all,
	// so a directory stuffed with other files cannot cost unbounded memory.
	maxDirEntries = 1000
	// MaxPushRepos is the most repositories one push trigger may watch.
	MaxPushRepos = 10
	// MaxContextRepos is the most context repositories one workflow may name.
	MaxContextRepos = 10
	maxNameRunes    = 200
	maxBranchBytes  = 255
)

// Dirs are the directories read, in order; a later one overrides an
// earlier one for the same id (see doc.go).
var Dirs = []string{".mintlify/workflows", ".docsmith/workflows"}

// Workflow is one validated workflow file.
type Workflow struct {
	// ID is the file name without ".md"; it names the workflow in URLs.
	ID string
	// Path is the file's slash-separated path in the repository.
	Path string
	// Overrides is the path of a file with the same id that this one
	// replaced, or "".
	Overrides string
	// Name is the display name.
	Name string
	// Cron is the schedule expression when the workflow runs on a
	// schedule; exactly one of Cron and Push is set.
	Cron string
	// Push lists the repositories (and branches) whose pushes run it.
	Push []PushTrigger
	// Context lists repositories cloned read-only for the agent.
	Context []string
	// Automerge pushes to the base branch instead of opening a pull request.
	Automerge bool
	// Instruction is the Markdown body: what the agent is asked to do.
	Instruction string
}

// PushTrigger watches one repository.
type PushTrigger struct {
	// Repo is "owner/name" (GitLab subgroups add segments).
	Repo string
	// Branch is the watched branch; "" means the repository's default branch.
	Branch string
}

// Problem is one reason a workflow file was not loaded.
type Problem struct {
	File string // slash-separated path in the repository
	Line int    // 1-based; 0 when the problem is the whole file
	Key  string // dotted key path such as "on.push[1].repo", or ""
	Msg  string
}

func (p Problem) Error() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	if p.Key != "" {
		fmt.Fprintf(&b, ": %s", p.Key)
	}
	b.WriteString(": ")
	b.WriteString(p.Msg)
	return b.String()
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// Load reads every workflow file under Dirs in fsys, which is rooted at the
// repository. It returns the valid workflows sorted by id and one Problem
// per thing wrong; a file with any problem is left out whole. A missing
// directory is not a problem.
func Load(fsys fs.FS) ([]Workflow, []Problem) {
	byID := map[string]Workflow{}
	var problems []Problem
	for _, dir := range Dirs {
		names, p := listDir(fsys, dir)
		problems = append(problems, p...)
		for _, name := range names {
			file := dir + "/" + name
			data, err := readFile(fsys, file)
			var wf Workflow
			var ps []Problem
			if err != nil {
				ps = []Problem{{File: file, Msg: err.Error()}}
			} else {
				wf, ps = Parse(file, data)
			}
			if len(ps) > 0 {
				problems = append(problems, ps...)
				// A broken override must not let the file it was meant to
				// replace run in its place.
				id := strings.TrimSuffix(name, ".md")
				if prev, ok := byID[id]; ok {
					delete(byID, id)
					problems = append(problems, Problem{File: prev.Path, Msg: fmt.Sprintf("is not used either: %s, which overrides it, has errors", file)})
				}
				continue
			}
			if prev, ok := byID[wf.ID]; ok {
				wf.Overrides = prev.Path
			}
			byID[wf.ID] = wf
		}
	}
	out := make([]Workflow, 0, len(byID))
	for _, wf := range byID {
		out = append(out, wf)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, problems
}

// listDir returns the names of the regular .md files directly in dir,
// sorted. Symlinks anywhere on the way are refused.
func listDir(fsys fs.FS, dir string) ([]string, []Problem) {
	// Each directory on the path must be a real directory, not a link
	// that points the reader somewhere else in (or out of) the checkout.
	parts := strings.Split(dir, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		mode, err := lstatMode(fsys, p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, []Problem{{File: p, Msg: fmt.Sprintf("cannot read: %v", err)}}
		}
		if mode&fs.ModeSymlink != 0 {
			return nil, []Problem{{File: p, Msg: "is a symbolic link; workflow directories must be real directories"}}
		}
		if !mode.IsDir() {
			return nil, []Problem{{File: p, Msg: "is not a directory"}}
		}
	}
	entries, err := readDirBounded(fsys, dir, maxDirEntries)
	if err != nil {
		return nil, []Problem{{File: dir, Msg: err.Error()}}
	}
	var names []string
	var problems []Problem
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".md") || e.IsDir() {
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 {
			problems = append(problems, Problem{File: dir + "/" + name, Msg: "is a symbolic link; workflow files must be regular files"})
			continue
		}
		if !e.Type().IsRegular() {
			problems = append(problems, Problem{File: dir + "/" + name, Msg: "is not a regular file"})
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	if len(names) > MaxFiles {
		problems = append(problems, Problem{File: dir, Msg: fmt.Sprintf("holds %d workflow files; at most %d are read, so none were loaded: remove some", len(names), MaxFiles)})
		return nil, problems
	}
	return names, problems
}

// lstatMode returns the type bits of name without following a final
// symlink: from fsys when it can tell links apart, otherwise from the
// parent directory's entry, which carries them.
func lstatMode(fsys fs.FS, name string) (fs.FileMode, error) {
	if rl, ok := fsys.(fs.ReadLinkFS); ok {
		info, err := rl.Lstat(name)
		if err != nil {
			return 0, err
		}
		return info.Mode().Type(), nil
	}
	entries, err := readDirBounded(fsys, path.Dir(name), -1)
	if err != nil {
		return 0, err
	}
	base := path.Base(name)
	for _, e := range entries {
		if e.Name() == base {
			return e.Type(), nil
		}
	}
	return 0, fs.ErrNotExist
}

// readDirBounded reads at most limit entries of dir (all when limit < 0)
// and fails when there are more.
func readDirBounded(fsys fs.FS, dir string, limit int) ([]fs.DirEntry, error) {
	f, err := fsys.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("open directory: %w", err)
	}
	defer func() { _ = f.Close() }() // read-only: nothing to flush
	rd, ok := f.(fs.ReadDirFile)
	if !ok {
		return nil, errors.New("cannot list directory")
	}
	var out []fs.DirEntry
	for {
		batch, err := rd.ReadDir(100)
		out = append(out, batch...)
		if limit >= 0 && len(out) > limit {
			return nil, fmt.Errorf("holds more than %d entries; keep only workflow files here", limit)
		}
		if errors.Is(err, io.EOF) || (err == nil && len(batch) == 0) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list directory: %w", err)
		}
	}
}

func readFile(fsys fs.FS, name string) ([]byte, error) {
	mode, err := lstatMode(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("cannot read: %w", err)
	}
	if mode&fs.ModeSymlink != 0 {
		return nil, errors.New("is a symbolic link; workflow files must be regular files")
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, fmt.Errorf("cannot read: %w", err)
	}
	defer func() { _ = f.Close() }() // read-only: nothing to flush
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot read: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("is not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read: %w", err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("is larger than %d bytes; shorten the instruction", MaxFileBytes)
	}
	return data, nil
}

// Parse validates one workflow file. file is its slash-separated path in
// the repository; its base name gives the id.
func Parse(file string, data []byte) (Workflow, []Problem) {
	wf := Workflow{Path: file, ID: strings.TrimSuffix(path.Base(file), ".md")}
	var ps []Problem
	add := func(line int, key, format string, args ...any) {
		ps = append(ps, Problem{File: file, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	if !idPattern.MatchString(wf.ID) {
		add(0, "", "the file name %q does not give a valid workflow id: use 1 to 64 letters, digits, '-' or '_', starting with a letter or digit", path.Base(file))
	}
	if !utf8.Valid(data) {
		add(0, "", "is not valid UTF-8")
		return Workflow{}, ps
	}
	front, frontLine, body, ok := splitFrontMatter(data)
	if !ok {
		add(1, "", "must start with a YAML front matter block between two '---' lines")
		return Workflow{}, ps
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(front, &doc); err != nil {
		add(frontLine, "", "front matter is not valid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
		return Workflow{}, ps
	}
	// Lines in the YAML node count from the front matter's first line.
	line := func(n *yaml.Node) int { return n.Line + frontLine - 1 }
	if len(doc.Content) == 0 {
		add(frontLine, "", "front matter is empty; it needs at least name and on")
		return Workflow{}, ps
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		add(line(root), "", "front matter must be a mapping of keys to values")
		return Workflow{}, ps
	}
	if hasAlias(root) {
		add(line(root), "", "front matter must not use YAML anchors or aliases")
		return Workflow{}, ps
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		key := k.Value
		if seen[key] {
			add(line(k), key, "is given twice")
			continue
		}
		seen[key] = true
		switch key {
		case "name":
			name, ok := scalarString(v)
			switch {
			case !ok:
				add(line(v), key, "must be a string")
			case strings.TrimSpace(name) == "":
				add(line(v), key, "must not be empty")
			case utf8.RuneCountInString(name) > maxNameRunes:
				add(line(v), key, "is longer than %d characters", maxNameRunes)
			case strings.ContainsFunc(name, unicode.IsControl):
				add(line(v), key, "must be a single line without control characters")
			default:
				wf.Name = strings.TrimSpace(name)
			}
		case "on":
			parseOn(&wf, v, line, add)
		case "context":
			parseContext(&wf, v, line, add)
		case "automerge":
			if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!bool" {
				add(line(v), key, "must be true or false")
				continue
			}
			wf.Automerge = v.Value == "true" || v.Value == "True" || v.Value == "TRUE"
		default:
			add(line(k), key, "is not a known key; use name, on, context or automerge")
		}
	}
	if !seen["name"] {
		add(line(root), "name", "is required")
	}
	if !seen["on"] {
		add(line(root), "on", "is required: a cron schedule or push repositories")
	}
	wf.Instruction = strings.TrimSpace(string(body))
	if wf.Instruction == "" {
		add(frontLine+countLines(front)+1, "", "the instruction (the Markdown after the front matter) must not be empty")
	}
	if len(ps) > 0 {
		return Workflow{}, ps
	}
	return wf, nil
}

func parseOn(wf *Workflow, v *yaml.Node, line func(*yaml.Node) int, add func(int, string, string, ...any)) {
	if v.Kind != yaml.MappingNode || len(v.Content) == 0 {
		add(line(v), "on", "must hold exactly one trigger: cron or push")
		return
	}
	if len(v.Content) > 2 {
		add(line(v.Content[2]), "on", "must hold exactly one trigger; a workflow runs on cron or on push, not both")
		return
	}
	k, t := v.Content[0], v.Content[1]
	switch k.Value {
	case "cron":
		expr, ok := scalarString(t)
		if !ok {
			add(line(t), "on.cron", "must be a string such as \"0 9 * * 1\"")
			return
		}
		if _, err := parseCron(expr); err != nil {
			add(line(t), "on.cron", "%v", err)
			return
		}
		wf.Cron = strings.Join(strings.Fields(expr), " ")
	case "push":
		var items []*yaml.Node
		switch t.Kind {
		case yaml.MappingNode:
			items = []*yaml.Node{t}
		case yaml.SequenceNode:
			items = t.Content
		default:
			add(line(t), "on.push", "must be a mapping with repo (and optional branch) or a list of them")
			return
		}
		if len(items) == 0 {
			add(line(t), "on.push", "must name at least one repository")
			return
		}
		if len(items) > MaxPushRepos {
			add(line(t), "on.push", "names %d repositories; at most %d are allowed", len(items), MaxPushRepos)
			return
		}
		seen := map[string]bool{}
		for i, item := range items {
			key := "on.push"
			if t.Kind == yaml.SequenceNode {
				key = fmt.Sprintf("on.push[%d]", i)
			}
			var pt PushTrigger
			if !parseRepoEntry(item, key, map[string]*string{"repo": &pt.Repo, "branch": &pt.Branch}, line, add) {
				continue
			}
			if pt.Branch != "" && !validBranch(pt.Branch) {
				add(line(item), key+".branch", "is not a valid branch name")
				continue
			}
			id := strings.ToLower(pt.Repo) + "\x00" + pt.Branch
			if seen[id] {
				add(line(item), key, "repeats an earlier entry")
				continue
			}
			seen[id] = true
			wf.Push = append(wf.Push, pt)
		}
	default:
		add(line(k), "on."+k.Value, "is not a known trigger; use cron or push")
	}
}

func parseContext(wf *Workflow, v *yaml.Node, line func(*yaml.Node) int, add func(int, string, string, ...any)) {
	if v.Kind != yaml.SequenceNode {
		add(line(v), "context", "must be a list of entries like '- repo: owner/name'")
		return
	}
	if len(v.Content) > MaxContextRepos {
		add(line(v), "context", "names %d repositories; at most %d are allowed", len(v.Content), MaxContextRepos)
		return
	}
	seen := map[string]bool{}
	for i, item := range v.Content {
		key := fmt.Sprintf("context[%d]", i)
		var repo string
		if !parseRepoEntry(item, key, map[string]*string{"repo": &repo}, line, add) {
			continue
		}
		if seen[strings.ToLower(repo)] {
			add(line(item), key, "repeats an earlier repository")
			continue
		}
		seen[strings.ToLower(repo)] = true
		wf.Context = append(wf.Context, repo)
	}
}

// parseRepoEntry reads a mapping whose keys are exactly those of fields
// (repo being required) into fields.
func parseRepoEntry(item *yaml.Node, key string, fields map[string]*string, line func(*yaml.Node) int, add func(int, string, string, ...any)) bool {
	if item.Kind != yaml.MappingNode {
		add(line(item), key, "must be a mapping such as 'repo: owner/name'")
		return false
	}
	ok := true
	seen := map[string]bool{}
	for i := 0; i+1 < len(item.Content); i += 2 {
		k, v := item.Content[i], item.Content[i+1]
		dst, known := fields[k.Value]
		if !known {
			add(line(k), key+"."+k.Value, "is not a known key")
			ok = false
			continue
		}
		if seen[k.Value] {
			add(line(k), key+"."+k.Value, "is given twice")
			ok = false
			continue
		}
		seen[k.Value] = true
		s, isStr := scalarString(v)
		if !isStr || s == "" {
			add(line(v), key+"."+k.Value, "must be a non-empty string")
			ok = false
			continue
		}
		*dst = s
	}
	if !seen["repo"] {
		add(line(item), key+".repo", "is required")
		return false
	}
	if ok && !ValidRepo(*fields["repo"]) {
		add(line(item), key+".repo", "must look like owner/name")
		return false
	}
	return ok
}

var repoSegment = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$`)

// ValidRepo reports whether s is "owner/name", or "group/sub/name" for
// GitLab's nested groups: 2 to 10 segments of letters, digits, '.', '-'
// and '_', none of them "." or "..".
func ValidRepo(s string) bool {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 10 {
		return false
	}
	for _, p := range parts {
		if !repoSegment.MatchString(p) || p == "." || p == ".." || strings.HasSuffix(p, ".git") {
			return false
		}
	}
	return true
}

// validBranch accepts the branch names git accepts in practice, minus the
// ones that could be mistaken for options or paths out of refs/heads.
func validBranch(b string) bool {
	if len(b) > maxBranchBytes || strings.HasPrefix(b, "-") || strings.HasPrefix(b, "/") ||
		strings.HasSuffix(b, "/") || strings.HasSuffix(b, ".lock") || strings.HasSuffix(b, ".") ||
		strings.Contains(b, "..") || strings.Contains(b, "//") || strings.Contains(b, "@{") {
		return false
	}
	for _, r := range b {
		if r < 0x21 || r == 0x7f || strings.ContainsRune("~^:?*[\\", r) {
			return false
		}
	}
	return true
}

func scalarString(n *yaml.Node) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return "", false
	}
	return n.Value, true
}

func hasAlias(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		return true
	}
	for _, c := range n.Content {
		if hasAlias(c) {
			return true
		}
	}
	return false
}

// splitFrontMatter splits "---\n<yaml>---\n<body>". frontLine is the file
// line on which the YAML starts.
func splitFrontMatter(data []byte) (front []byte, frontLine int, body []byte, ok bool) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	first, rest, found := cutLine(data)
	if !found || strings.TrimRight(string(first), " \t") != "---" {
		return nil, 0, nil, false
	}
	start := rest
	for len(rest) > 0 {
		l, next, _ := cutLine(rest)
		if strings.TrimRight(string(l), " \t") == "---" {
			front = start[:len(start)-len(rest)]
			return front, 2, next, true
		}
		rest = next
	}
	return nil, 0, nil, false
}

// cutLine returns the first line of b without its "\n" or "\r\n".
func cutLine(b []byte) (line, rest []byte, found bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, nil, len(b) > 0
	}
	return bytes.TrimSuffix(b[:i], []byte("\r")), b[i+1:], true
}

func countLines(b []byte) int { return bytes.Count(b, []byte("\n")) }
