package agentrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/agentrun/builtin"
	"github.com/docsmith/docsmith/internal/agentrun/tools"
	"github.com/docsmith/docsmith/internal/docs"
	"github.com/docsmith/docsmith/internal/workflow"
)

// builtinRun carries out builtin commands. It reads the docs root of the
// checkout as the docs reader does (no symbolic links, capped sizes) and
// writes only through the file tools, like a model would.
type builtinRun struct {
	ws       *tools.Workspace
	fsys     fs.FS
	progress agentjob.Progress
	done     []string
}

// runBuiltin carries out the commands of prompt. A push-triggered
// workflow run's prompt ends in data about the push, which is not
// instruction: only the part before it is read.
func runBuiltin(ctx context.Context, prompt string, fsys fs.FS, ws *tools.Workspace, progress agentjob.Progress) (string, error) {
	instruction, _ := workflow.SplitInstruction(prompt)
	cmds, err := builtin.Parse(instruction)
	if err != nil {
		return "", failf("%v", err)
	}
	b := &builtinRun{ws: ws, fsys: fsys, progress: progress}
	for _, c := range cmds {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		if err := b.run(ctx, c); err != nil {
			var te *tools.ToolError
			if errors.As(err, &te) {
				return "", failf("builtin: %s", te.Message)
			}
			return "", err
		}
	}
	return strings.Join(b.done, " "), nil
}

func (b *builtinRun) run(ctx context.Context, c builtin.Command) error {
	switch c.Kind {
	case builtin.Replace:
		return b.replace(ctx, c)
	case builtin.SetField:
		return b.setField(ctx, c)
	case builtin.AddPage:
		return b.addPage(ctx, c)
	case builtin.Move:
		from, err := b.pageFile(c.Path)
		if err != nil {
			return err
		}
		to := c.To
		if path.Ext(to) == "" {
			to += path.Ext(from)
		}
		if _, err := b.call(ctx, "move_file", map[string]any{"from": from, "to": to}); err != nil {
			return err
		}
		b.done = append(b.done, fmt.Sprintf("Moved %s to %s.", from, to))
		return nil
	case builtin.Delete:
		return b.deletePage(ctx, c)
	case builtin.FixLink:
		return b.fixLink(ctx, c)
	case builtin.FixBrokenLinks:
		return b.fixBrokenLinks(ctx)
	case builtin.CheckNavigation:
		b.checkNavigation()
		return nil
	}
	return failf("builtin: unknown command %q", c.Kind)
}

// call runs a tool and reports the step (name and target, never contents).
func (b *builtinRun) call(ctx context.Context, name string, args map[string]any) (string, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return "", fmt.Errorf("encode %s arguments: %w", name, err)
	}
	out, err := b.ws.Call(ctx, name, string(raw))
	emitTool(ctx, b.progress, name, string(raw), err)
	return out, err
}

func emitTool(ctx context.Context, progress agentjob.Progress, name, args string, err error) {
	data := map[string]any{"name": name, "target": tools.Target(name, args), "ok": err == nil}
	progress.Emit(ctx, "tool", data)
}

// pageFile finds the file of a page given with or without its extension.
func (b *builtinRun) pageFile(p string) (string, error) {
	p = strings.TrimPrefix(path.Clean("/"+p), "/")
	if path.Ext(p) != "" {
		if _, err := docs.StatNoLinks(b.fsys, p); err != nil {
			if errors.Is(err, docs.ErrSymlink) {
				return "", failf("builtin: %s leads through a symbolic link, which docsmith does not follow", p)
			}
			return "", failf("builtin: there is no file %s in the docs", p)
		}
		return p, nil
	}
	for _, ext := range []string{".mdx", ".md"} {
		if _, err := docs.StatNoLinks(b.fsys, p+ext); err == nil {
			return p + ext, nil
		}
	}
	return "", failf("builtin: there is no page %s (looked for %s.mdx and %s.md)", p, p, p)
}

// pages lists the docs' page files, for commands that apply everywhere.
func (b *builtinRun) pages() ([]string, error) {
	var out []string
	err := fs.WalkDir(b.fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != "." && strings.HasPrefix(d.Name(), ".") {
			return fs.SkipDir
		}
		if d.Type().IsRegular() && (strings.HasSuffix(p, ".mdx") || strings.HasSuffix(p, ".md")) {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

func (b *builtinRun) read(p string) (string, error) {
	data, err := docs.ReadFile(b.fsys, p, docs.MaxFileBytes)
	var tooLarge *docs.FileTooLargeError
	switch {
	case errors.As(err, &tooLarge):
		return "", failf("builtin: %v", err)
	case errors.Is(err, docs.ErrSymlink):
		return "", failf("builtin: %s leads through a symbolic link, which docsmith does not follow", p)
	case err != nil:
		return "", failf("builtin: %s could not be read", p)
	}
	return string(data), nil
}

// replaceIn replaces every occurrence of old in file p, if any, and returns
// how many there were.
func (b *builtinRun) replaceIn(ctx context.Context, p, old, replacement string) (int, error) {
	text, err := b.read(p)
	if err != nil {
		return 0, err
	}
	n := strings.Count(text, old)
	if n == 0 {
		return 0, nil
	}
	_, err = b.call(ctx, "str_replace", map[string]any{"path": p, "old_str": old, "new_str": replacement, "replace_all": true})
	return n, err
}

func (b *builtinRun) targets(p string) ([]string, error) {
	if p == "" {
		return b.pages()
	}
	f, err := b.pageFile(p)
	if err != nil {
		return nil, err
	}
	return []string{f}, nil
}

func (b *builtinRun) replace(ctx context.Context, c builtin.Command) error {
	files, err := b.targets(c.Path)
	if err != nil {
		return err
	}
	total, touched := 0, 0
	for _, f := range files {
		n, err := b.replaceIn(ctx, f, c.Old, c.New)
		if err != nil {
			return err
		}
		if n > 0 {
			total += n
			touched++
		}
	}
	if total == 0 {
		where := "any page"
		if c.Path != "" {
			where = files[0]
		}
		// An instruction that needs no change is carried out by changing
		// nothing: the turn completes and its summary says why.
		b.done = append(b.done, fmt.Sprintf("Nothing changed: %q does not occur in %s, so there was nothing to replace.", c.Old, where))
		return nil
	}
	b.done = append(b.done, fmt.Sprintf("Replaced %d occurrence(s) of %q with %q in %d file(s).", total, c.Old, c.New, touched))
	return nil
}

var frontMatterBlock = regexp.MustCompile(`\A(?:\x{FEFF})?---\r?\n(?s:.*?)\r?\n---[ \t]*(?:\r?\n|\z)`)

func (b *builtinRun) setField(ctx context.Context, c builtin.Command) error {
	f, err := b.pageFile(c.Path)
	if err != nil {
		return err
	}
	text, err := b.read(f)
	if err != nil {
		return err
	}
	if _, _, _, err := docs.ParseFrontMatter([]byte(text)); err != nil {
		return failf("builtin: the front matter of %s does not parse, so %s cannot be set: %v", f, c.Field, err)
	}
	value, _ := json.Marshal(c.Value) // a JSON string is a valid YAML double-quoted scalar
	line := c.Field + ": " + string(value)
	block := frontMatterBlock.FindString(text)
	if block == "" {
		if _, err := b.call(ctx, "insert", map[string]any{"path": f, "insert_line": 0, "text": "---\n" + line + "\n---\n"}); err != nil {
			return err
		}
	} else {
		fieldLine := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(c.Field) + `[ \t]*:.*$`)
		var updated string
		switch n := len(fieldLine.FindAllStringIndex(block, -1)); n {
		case 1:
			updated = fieldLine.ReplaceAllLiteralString(block, line)
		case 0:
			end := strings.LastIndex(block, "---")
			updated = block[:end] + line + "\n" + block[end:]
		default:
			return failf("builtin: %s appears %d times in the front matter of %s; fix that by hand first", c.Field, n, f)
		}
		if _, err := b.call(ctx, "str_replace", map[string]any{"path": f, "old_str": block, "new_str": updated}); err != nil {
			return err
		}
	}
	b.done = append(b.done, fmt.Sprintf("Set %s of %s to %q.", c.Field, f, c.Value))
	return nil
}

// navFile is the docs' navigation config.
func (b *builtinRun) navFile() (string, string, error) {
	for _, name := range []string{docs.DocsJSON, "mint.json"} {
		if text, err := docs.ReadFile(b.fsys, name, docs.MaxFileBytes); err == nil {
			return name, string(text), nil
		}
	}
	return "", "", failf("builtin: the docs have no docs.json or mint.json")
}

func (b *builtinRun) addPage(ctx context.Context, c builtin.Command) error {
	navPath := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(path.Clean("/"+c.Path), "/"), ".mdx"), ".md")
	file := navPath + ".mdx"
	title, _ := json.Marshal(c.Title)
	name, config, err := b.navFile()
	if err != nil {
		return err
	}
	updated, err := appendToGroup(config, c.Group, navPath)
	if err != nil {
		return err
	}
	if _, err := b.call(ctx, "create_file", map[string]any{"path": file, "content": "---\ntitle: " + string(title) + "\n---\n"}); err != nil {
		return err
	}
	if _, err := b.call(ctx, "str_replace", map[string]any{"path": name, "old_str": config, "new_str": updated}); err != nil {
		return err
	}
	b.done = append(b.done, fmt.Sprintf("Added page %s (%q) to the group %q.", file, c.Title, c.Group))
	return nil
}

func (b *builtinRun) deletePage(ctx context.Context, c builtin.Command) error {
	f, err := b.pageFile(c.Path)
	if err != nil {
		return err
	}
	navPath := strings.TrimSuffix(f, path.Ext(f))
	name, config, err := b.navFile()
	if err != nil {
		return err
	}
	if updated, removed := removeNavEntry(config, navPath); removed > 0 {
		if _, err := b.call(ctx, "str_replace", map[string]any{"path": name, "old_str": config, "new_str": updated}); err != nil {
			return err
		}
	}
	if _, err := b.call(ctx, "delete_file", map[string]any{"path": f}); err != nil {
		return err
	}
	b.done = append(b.done, fmt.Sprintf("Deleted %s and its navigation entry.", f))
	return nil
}

func (b *builtinRun) fixLink(ctx context.Context, c builtin.Command) error {
	files, err := b.targets(c.Path)
	if err != nil {
		return err
	}
	total := 0
	for _, f := range files {
		for _, form := range []string{"](%s)", "](%s#", `href="%s"`, `href="%s#`} {
			n, err := b.replaceIn(ctx, f, fmt.Sprintf(form, c.Old), fmt.Sprintf(form, c.New))
			if err != nil {
				return err
			}
			total += n
		}
	}
	if total == 0 {
		b.done = append(b.done, fmt.Sprintf("Nothing changed: no link to %s was found.", c.Old))
		return nil
	}
	b.done = append(b.done, fmt.Sprintf("Pointed %d link(s) at %s instead of %s.", total, c.New, c.Old))
	return nil
}
