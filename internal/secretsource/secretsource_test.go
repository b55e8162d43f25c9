package secretsource

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("good", "s3cret-value\n")
	link := filepath.Join(dir, "link")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"READER_SECRET": "  from-env \n", "BLANK": "  "}
	r := Reader{LookupEnv: func(name string) (string, bool) { v, ok := env[name]; return v, ok }}

	tests := []struct {
		name    string
		src     Source
		want    string
		wantErr string
		notSet  bool
	}{
		{name: "variable", src: Source{Env: "READER_SECRET"}, want: "from-env"},
		{name: "unset variable", src: Source{Env: "NOPE"}, wantErr: "variable NOPE", notSet: true},
		{name: "blank variable", src: Source{Env: "BLANK"}, wantErr: "variable BLANK", notSet: true},
		{name: "file", src: Source{File: good}, want: "s3cret-value"},
		{name: "link to a file", src: Source{File: link}, want: "s3cret-value"},
		{name: "empty file", src: Source{File: write("empty", "\n")}, wantErr: "empty", notSet: true},
		{name: "missing file", src: Source{File: filepath.Join(dir, "nope")}, wantErr: "no such file"},
		{name: "directory", src: Source{File: dir}, wantErr: "not a regular file"},
		{name: "fifo", src: Source{File: fifo}, wantErr: "not a regular file"},
		{name: "too large", src: Source{File: write("large", strings.Repeat("a", MaxBytes+1))}, wantErr: "larger than"},
		{name: "both", src: Source{Env: "READER_SECRET", File: good}, wantErr: "name one"},
		{name: "neither", src: Source{}, notSet: true, wantErr: "no variable or file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := r.Read(tt.src)
			if tt.wantErr == "" {
				if err != nil || string(got) != tt.want {
					t.Fatalf("Read = %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Read error = %v; want one containing %q", err, tt.wantErr)
			}
			if errors.Is(err, ErrNotSet) != tt.notSet {
				t.Errorf("errors.Is(err, ErrNotSet) = %v; want %v", !tt.notSet, tt.notSet)
			}
			if strings.Contains(err.Error(), "from-env") || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error shows the secret: %v", err)
			}
		})
	}
}
