package cli

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
)

// Commit is the commit the binary was built from, set at build time like
// Version; without it, the commit Go stamped into the build (if any).
var Commit = ""

// buildInfo is what `docsmith version` reports.
type buildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Modified  bool   `json:"modified,omitempty"` // built from a tree with uncommitted changes
	GoVersion string `json:"go"`
	Platform  string `json:"platform"` // GOOS/GOARCH
}

// readBuildInfo combines the values set at build time with what the Go
// toolchain stamped into the binary: the Go version, and the VCS revision
// when the build had the repository at hand.
func readBuildInfo() buildInfo {
	b := buildInfo{Version: Version, Commit: Commit, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.GoVersion = info.GoVersion
	var revision string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	if b.Commit == "" {
		b.Commit = revision
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	return b
}

func versionCommand(args []string, env Env) error {
	fs := newFlagSet("version", env)
	format := fs.String("format", "text", "output format: text or json")
	positional, err := parse(fs, args)
	if err != nil {
		return usageErr(err)
	}
	if len(positional) > 0 {
		fmt.Fprintln(env.Stderr, "Usage: docsmith version [--format text|json]")
		return errUsage
	}
	b := readBuildInfo()
	switch *format {
	case "json":
		enc := json.NewEncoder(env.Stdout)
		return enc.Encode(b)
	case "text":
		modified := ""
		if b.Modified {
			modified = " (modified)"
		}
		fmt.Fprintf(env.Stdout, "docsmith %s\ncommit    %s%s\ngo        %s %s\n", b.Version, b.Commit, modified, b.GoVersion, b.Platform)
		return nil
	}
	fmt.Fprintf(env.Stderr, "docsmith version: --format must be text or json, not %q\n", *format)
	return errUsage
}
