package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/llmstxt"
)

// exportLLMsTxt runs `docsmith export llms-txt DOMAIN DIR`: it writes the
// domain's llms.txt and llms-full.txt, as the server serves them, into DIR
// (a docs site's root, to publish them with the site).
func exportLLMsTxt(ctx context.Context, args []string, env Env) error {
	flags := newFlagSet("export llms-txt", env)
	loader := config.Bind(flags, false)
	flags.Usage = func() {
		fmt.Fprint(env.Stderr, "Usage: docsmith export llms-txt DOMAIN DIR [--data DIR]\n\nWrites DIR/llms.txt and DIR/llms-full.txt from the domain's index (run docsmith index first):\nthe public pages only, as /discovery/v1/llms.txt/DOMAIN serves them.\n\n")
		flags.PrintDefaults()
	}
	pos, err := parse(flags, args)
	if err != nil {
		return usageErr(err)
	}
	if len(pos) != 2 {
		flags.Usage()
		return errUsage
	}
	domainID, dir := pos[0], pos[1]
	cfg, err := loader.Load(env.LookupEnv)
	if err != nil {
		return err
	}
	b, err := app.OpenBackend(ctx, cfg, cfg.Logger(env.Stderr))
	if err != nil {
		return err
	}
	defer func() { _ = b.Close() }()
	d, err := b.Tenants.GetDomain(ctx, domainID)
	if err != nil {
		return err
	}
	docs := assistant.New(assistant.Config{Index: b.Index, Threads: b.Threads, Catalogs: b.Catalogs})
	index, err := llmstxt.IndexOf(ctx, docs, d)
	if err != nil {
		return err
	}
	full, err := llmstxt.FullOf(ctx, docs, d)
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open the output directory: %w", err)
	}
	defer func() { _ = root.Close() }()
	for _, f := range []struct {
		name string
		body []byte
	}{{llmstxt.IndexFile, index}, {llmstxt.FullFile, full}} {
		if err := writeFileAtomic(root, f.name, f.body); err != nil {
			return fmt.Errorf("write %s in %s: %w", f.name, dir, err)
		}
		fmt.Fprintf(env.Stdout, "wrote %s/%s (%d bytes)\n", dir, f.name, len(f.body))
	}
	return nil
}

// writeFileAtomic writes name inside root through a temporary file and a
// rename, so a reader never sees half a file; the rename replaces a file,
// never what a symbolic link points at, and root keeps the write inside the
// directory.
func writeFileAtomic(root *os.Root, name string, body []byte) error {
	if info, err := root.Lstat(name); err == nil && !info.Mode().IsRegular() {
		return fmt.Errorf("%s exists and is not a regular file; remove it first", name)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	suffix := make([]byte, 8)
	_, _ = rand.Read(suffix)
	tmp := "." + name + "." + hex.EncodeToString(suffix) + ".tmp"
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(body); err != nil {
		_ = f.Close()
		_ = root.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	if err := root.Rename(tmp, name); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	return nil
}
