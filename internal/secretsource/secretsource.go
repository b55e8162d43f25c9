// Package secretsource reads a secret an operator names by where it lives:
// an environment variable or a small file. The secret is read when it is
// needed, so rotating it needs no restart, and it is never stored.
package secretsource

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
)

// MaxBytes is the most a secret file may hold: secrets are short, and a
// path that names something large (a log, a device) is a mistake to report,
// not a file to read into memory.
const MaxBytes = 64 << 10

// ErrNotSet is returned when the named variable is unset or blank, or the
// named file is empty.
var ErrNotSet = errors.New("secret is not set")

// Source names where one secret lives: at most one of Env and File.
type Source struct {
	Env  string
	File string
}

// Named reports whether the source names a place at all.
func (s Source) Named() bool { return s.Env != "" || s.File != "" }

// Reader reads secrets. LookupEnv is os.LookupEnv in production; tests
// hand in their own so they can run in parallel.
type Reader struct {
	LookupEnv func(string) (string, bool)
}

// Read returns the secret src names, without the spaces and line breaks
// around it. The errors name the variable or the file, for the operator's
// log; they never hold the secret.
func (r Reader) Read(src Source) ([]byte, error) {
	switch {
	case src.Env != "" && src.File != "":
		return nil, fmt.Errorf("secret names both variable %s and file %s; name one", src.Env, src.File)
	case src.Env != "":
		lookup := r.LookupEnv
		if lookup == nil {
			lookup = os.LookupEnv
		}
		v, _ := lookup(src.Env)
		if v = strings.TrimSpace(v); v == "" {
			return nil, fmt.Errorf("variable %s: %w", src.Env, ErrNotSet)
		}
		return []byte(v), nil
	case src.File != "":
		return readFile(src.File)
	default:
		return nil, fmt.Errorf("no variable or file named: %w", ErrNotSet)
	}
}

// readFile reads a regular file of at most MaxBytes. A symbolic link is
// followed (mounted secrets, as Kubernetes makes them, are links), but what
// it leads to must be a regular file. The file is opened without blocking
// and checked once open, so a link that now names a FIFO or a device can
// neither hang the open nor feed an endless read.
func readFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("open secret file: %w", err)
	}
	defer func() { _ = f.Close() }() // read-only: a close error loses nothing
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat secret file %s: %w", path, err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("secret file %s is not a regular file (%s)", path, info.Mode().Type())
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read secret file %s: %w", path, err)
	}
	if len(b) > MaxBytes {
		return nil, fmt.Errorf("secret file %s is larger than %d bytes; a secret is a short line", path, MaxBytes)
	}
	b = []byte(strings.TrimSpace(string(b)))
	if len(b) == 0 {
		return nil, fmt.Errorf("secret file %s: %w", path, ErrNotSet)
	}
	return b, nil
}
