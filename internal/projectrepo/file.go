package projectrepo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/docsmith/docsmith/internal/gitcli"
)

// FileProblem is a repository file that docsmith will not read: a symbolic
// link (or one on the way to it), something other than a regular file, or
// a file over the size allowed. Its message names the file and what to
// change.
type FileProblem struct {
	File string
	Msg  string
}

func (p *FileProblem) Error() string { return p.File + ": " + p.Msg }

// validRepoPath checks a file's path in the repository as code gives it.
func validRepoPath(file string) error {
	if file == "" || path.IsAbs(file) || path.Clean(file) != file || strings.HasPrefix(file, "../") || file == ".." {
		return fmt.Errorf("read file: %q is not a clean relative path", file)
	}
	return nil
}

// ReadFile reads one file of commit (already in the mirror, as ReadDocs
// leaves it) by its path from the repository's root, whatever the docs
// root: at most maxBytes, regular, with no symbolic link on the way (a
// *FileProblem otherwise). A commit without the file is an error wrapping
// fs.ErrNotExist.
func (m *Mirror) ReadFile(ctx context.Context, commit, file string, maxBytes int64) ([]byte, error) {
	if err := validRepoPath(file); err != nil {
		return nil, err
	}
	var problem *FileProblem
	keep := func(f gitcli.TreeFile) bool {
		switch {
		case f.Path != file && !strings.HasPrefix(file, f.Path+"/"):
			return false
		case !f.Regular():
			problem = &FileProblem{File: file, Msg: "is a symbolic link in the repository (or lies below one), which docsmith does not follow; make it a regular file"}
			if f.Path != file {
				problem.Msg = fmt.Sprintf("lies below %s, a symbolic link in the repository, which docsmith does not follow; make it a regular directory", f.Path)
			}
		case f.Path != file:
			// A file where a directory of the path should be: no such file.
		case f.Size > maxBytes:
			problem = &FileProblem{File: file, Msg: fmt.Sprintf("is %d bytes; the limit is %d", f.Size, maxBytes)}
		default:
			return true
		}
		return false
	}
	files, err := m.m.Files(ctx, commit, keep)
	if err != nil {
		return nil, err
	}
	if problem != nil {
		return nil, problem
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s at %.12s: %w", file, commit, fs.ErrNotExist)
	}
	tree, err := m.m.ReadFiles(ctx, files)
	if err != nil {
		return nil, err
	}
	return tree.ReadFile(file)
}

// ReadFolderFile is ReadFile for a project whose repository is a plain
// folder: the file below dir, through an os.Root, with no symbolic link
// followed and at most maxBytes read.
func ReadFolderFile(dir, file string, maxBytes int64) ([]byte, error) {
	if err := validRepoPath(file); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open the docs folder: %w", err)
	}
	defer func() { _ = root.Close() }()
	parts := strings.Split(file, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		info, err := root.Lstat(filepath.FromSlash(p))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("%s: %w", file, fs.ErrNotExist)
			}
			return nil, fmt.Errorf("read %s: %w", file, err)
		}
		last := i == len(parts)-1
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			return nil, &FileProblem{File: file, Msg: fmt.Sprintf("%s is a symbolic link, which docsmith does not follow; make it a regular file or directory", p)}
		case last && !info.Mode().IsRegular():
			return nil, &FileProblem{File: file, Msg: "is not a regular file"}
		case !last && !info.IsDir():
			return nil, fmt.Errorf("%s: %w", file, fs.ErrNotExist)
		case last && info.Size() > maxBytes:
			return nil, &FileProblem{File: file, Msg: fmt.Sprintf("is %d bytes; the limit is %d", info.Size(), maxBytes)}
		}
	}
	f, err := root.Open(filepath.FromSlash(file))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	if int64(len(data)) > maxBytes {
		return nil, &FileProblem{File: file, Msg: fmt.Sprintf("is over %d bytes, the limit", maxBytes)}
	}
	return data, nil
}
