package gitcli

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// SeedBare creates a bare repository at dir whose branch holds one commit
// of files. It is how a fresh install gets a sample docs repository to
// work on. dir must not exist yet.
func (g *Git) SeedBare(ctx context.Context, dir, branch string, files fs.FS, opts CommitOptions) error {
	if err := ValidateRef(branch); err != nil {
		return fmt.Errorf("seed: branch: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	if _, err := os.Stat(abs); err == nil {
		return fmt.Errorf("seed: %w: %s exists already", ErrInvalidArgument, abs)
	}
	if _, err := g.run(ctx, gitCommand("init", "--quiet", "--bare", "--template=", "--initial-branch="+branch).paths(abs), invocation{dir: g.home}); err != nil {
		return fmt.Errorf("seed: init bare repository: %w", err)
	}
	work, err := os.MkdirTemp(filepath.Dir(abs), ".seed-*")
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	defer func() { _ = os.RemoveAll(work) }()
	if _, err := g.run(ctx, gitCommand("init", "--quiet", "--template=", "--initial-branch="+branch).paths(work), invocation{dir: g.home}); err != nil {
		return fmt.Errorf("seed: init work tree: %w", err)
	}
	if err := os.CopyFS(work, files); err != nil {
		return fmt.Errorf("seed: copy files: %w", err)
	}
	rem, err := parseRemote(abs, false)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	r := &Repo{Dir: work, git: g, remote: rem, bases: make(map[string]string)}
	if _, _, err := r.CommitAll(ctx, opts); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	if err := r.Push(ctx, branch, nil); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	return nil
}
