package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
)

// ContextRepo is a repository cloned read-only beside the docs for the model to read: code a
// workflow names as context.
type ContextRepo struct {
	// Name is the repository as the workflow names it, "owner/name".
	Name string
	// Root is its checkout, opened by the caller and closed by the caller after the Context.
	Root *os.Root
	// Omitted maps the paths that were not checked out to why (too large, over the clone's
	// caps, a symbolic link…), so that asking for one says so rather than "does not exist".
	Omitted map[string]string
}

// Context is the read-only tools over a turn's context repositories: list_context_files,
// read_context_file and search_context. Each repository is read through its own os.Root with
// the very checks of the docs tools (no "..", no absolute path, no symbolic link on the way,
// no .git, text files under the size cap only); hidden files and directories are refused as
// well, and none of the tools writes. Its methods are safe to call from several goroutines.
type Context struct {
	repos []contextRepo
	tools []*tool
}

type contextRepo struct {
	name    string
	ws      *Workspace
	omitted map[string]string
}

// contextVocabulary names the context tools and their root in what the shared read code says.
var contextVocabulary = vocabulary{
	root:    "the repository root",
	scope:   "the repository",
	example: "src/main.go",
	list:    "list_context_files",
	read:    "read_context_file",
	search:  "search_context",
}

// NewContext gives the context tools the repositories, in the order given. limits bounds what
// they read (MaxFileBytes, MaxReadLines, MaxSearchHits); the change budgets do not apply.
func NewContext(repos []ContextRepo, limits Limits) (*Context, error) {
	l, err := limits.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &Context{}
	seen := map[string]bool{}
	for _, r := range repos {
		key := strings.ToLower(r.Name)
		if r.Name == "" || r.Root == nil || seen[key] {
			return nil, fmt.Errorf("tools: context repository %q is unnamed, has no root or is given twice", r.Name)
		}
		seen[key] = true
		c.repos = append(c.repos, contextRepo{name: r.Name, ws: newReader(r.Root, l, contextVocabulary), omitted: r.Omitted})
	}
	c.tools = c.toolTable(l)
	return c, nil
}

// Specs returns the context tools for the model, in a fixed order.
func (c *Context) Specs() []Spec {
	specs := make([]Spec, 0, len(c.tools))
	for _, t := range c.tools {
		specs = append(specs, Spec{Name: t.name, Description: t.desc, Parameters: t.schema()})
	}
	return specs
}

// Has reports whether name is one of the context tools.
func (c *Context) Has(name string) bool {
	for _, t := range c.tools {
		if t.name == name {
			return true
		}
	}
	return false
}

// Call runs the context tool name with the model's raw JSON args, as Workspace.Call does: a
// *ToolError is for the model, any other error is the service's own.
func (c *Context) Call(ctx context.Context, name, args string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	var t *tool
	for _, ct := range c.tools {
		if ct.name == name {
			t = ct
		}
	}
	if t == nil {
		names := make([]string, len(c.tools))
		for i, ct := range c.tools {
			names[i] = ct.name
		}
		return "", toolErrorf("there is no context tool named %s; they are %s, and they only read", quoteShort(name), strings.Join(names, ", "))
	}
	a, err := parseArgs(t, args)
	if err != nil {
		return "", err
	}
	return t.run(ctx, a)
}

// Close ends the context tools; calls after Close fail. The roots stay open for their owner.
func (c *Context) Close() error {
	for _, r := range c.repos {
		_ = r.ws.Close()
	}
	return nil
}

func (c *Context) repoNames() string {
	names := make([]string, len(c.repos))
	for i, r := range c.repos {
		names[i] = r.name
	}
	return strings.Join(names, ", ")
}

// repo finds the repository a call names, without regard to case (as forges compare them).
func (c *Context) repo(a args) (*contextRepo, error) {
	name := strings.TrimSpace(a.str("repo"))
	for i := range c.repos {
		if strings.EqualFold(c.repos[i].name, name) {
			return &c.repos[i], nil
		}
	}
	return nil, toolErrorf("there is no context repository %s; the context repositories are %s", quoteShort(name), c.repoNames())
}

// checkVisible refuses a path with a hidden component (".git", ".env", ".github/…"): the context
// tools read code and docs, not a repository's tool configuration or secrets left in dotfiles.
func checkVisible(field, p string) error {
	if part := hiddenPart(p); part != "" {
		return toolErrorf("%s %s is a hidden path (%s); the context tools do not read hidden files or directories", field, quoteShort(p), part)
	}
	return nil
}

func (c *Context) toolTable(l Limits) []*tool {
	repoParam := param{name: "repo", typ: typeString, required: true, example: "acme/api",
		desc: "The context repository, \"owner/name\", as listed in the instructions."}
	return []*tool{
		{
			name: "list_context_files",
			desc: fmt.Sprintf("List the text files of a context repository (read-only code or docs given as background), recursively, one path per line "+
				"relative to the repository's root. Skips hidden files and directories, symlinks and binary files. Shows at most %d files; "+
				"narrow with dir or glob.", maxListEntries),
			params: []param{
				repoParam,
				{name: "dir", typ: typeString, desc: "Directory to list, relative to the repository root, e.g. \"src\". Omit for the whole repository."},
				{name: "glob", typ: typeString, desc: "Only files matching this pattern. Without a \"/\" it matches the file name (\"*.go\"); " +
					"with one it matches the path from the repository root, and \"**\" matches any number of directories (\"src/**/*.ts\")."},
			},
			run: c.list,
		},
		{
			name: "read_context_file",
			desc: fmt.Sprintf("Read a text file of a context repository with line numbers, each line shown as \"  12| text\" (the number and \"| \" are not part of the file). "+
				"Returns at most %d lines per call; use start_line and end_line to read other parts.", l.MaxReadLines),
			params: []param{
				repoParam,
				{name: "path", typ: typeString, required: true, example: "src/main.go", desc: "File to read, relative to the repository root, e.g. \"src/main.go\"."},
				{name: "start_line", typ: typeInteger, desc: "First line to show, 1-based. Default 1."},
				{name: "end_line", typ: typeInteger, desc: "Last line to show, inclusive; -1 for the end of the file. Default: the end of the file."},
			},
			run: c.read,
		},
		{
			name: "search_context",
			desc: fmt.Sprintf("Search the text files of a context repository and return matching lines as \"path:line: text\". "+
				"By default query is literal text matched case-insensitively; set regex to use an RE2 regular expression. Returns at most %d hits.", l.MaxSearchHits),
			params: []param{
				repoParam,
				{name: "query", typ: typeString, required: true, example: "--watch", desc: "Text (or, with regex, a regular expression) to find within one line."},
				{name: "regex", typ: typeBoolean, desc: "Treat query as an RE2 regular expression. Default false."},
				{name: "path", typ: typeString, desc: "Only search this file or directory (e.g. \"src\"), or the files matching this glob (e.g. \"**/*.go\"). Omit for all files."},
			},
			run: c.search,
		},
	}
}

func (c *Context) list(ctx context.Context, a args) (string, error) {
	r, err := c.repo(a)
	if err != nil {
		return "", err
	}
	dir, err := contextVocabulary.cleanPath("dir", a.str("dir"), true)
	if err != nil {
		return "", err
	}
	if err := checkVisible("dir", dir); err != nil {
		return "", err
	}
	out, err := r.ws.readCall(ctx, r.ws.listFiles, a)
	if err != nil {
		return "", err
	}
	if n := r.omittedUnder(dir); n > 0 {
		out += fmt.Sprintf("\n(%d more %s here %s left out of this clone: too large, over the clone's caps, symbolic links or submodules; read_context_file on one says why.)",
			n, plural(n, "file"), plural(n, "was", "were"))
	}
	return out, nil
}

func (c *Context) read(ctx context.Context, a args) (string, error) {
	r, err := c.repo(a)
	if err != nil {
		return "", err
	}
	p, err := contextVocabulary.cleanPath("path", a.str("path"), false)
	if err != nil {
		return "", err
	}
	if err := checkVisible("path", p); err != nil {
		return "", err
	}
	if why, ok := r.omitted[p]; ok {
		return "", toolErrorf("%s of %s was left out of the clone (%s), so it cannot be read", p, r.name, why)
	}
	return r.ws.readCall(ctx, r.ws.readFile, a)
}

func (c *Context) search(ctx context.Context, a args) (string, error) {
	r, err := c.repo(a)
	if err != nil {
		return "", err
	}
	if ps := strings.TrimSpace(a.str("path")); ps != "" && !isGlob(ps) {
		p, err := contextVocabulary.cleanPath("path", ps, true)
		if err != nil {
			return "", err
		}
		if err := checkVisible("path", p); err != nil {
			return "", err
		}
	}
	return r.ws.readCall(ctx, r.ws.search, a)
}

// omittedUnder counts the omitted files under dir.
func (r *contextRepo) omittedUnder(dir string) int {
	n := 0
	for p := range r.omitted {
		if dir == "." || strings.HasPrefix(p, dir+"/") {
			n++
		}
	}
	return n
}

// readCall runs one of the read functions of a reader workspace under its lock, as Call runs a
// tool.
func (w *Workspace) readCall(ctx context.Context, fn func(context.Context, args) (string, error), a args) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.root == nil {
		return "", errors.New("tools: context repository is closed")
	}
	return fn(ctx, a)
}

func plural(n int, one string, many ...string) string {
	if n == 1 {
		return one
	}
	if len(many) > 0 {
		return many[0]
	}
	return one + "s"
}
