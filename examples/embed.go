// Package examples ships a sample docs site, "Quill", that tests seed their
// repositories with, and the sample workflow a fresh install's demo project
// carries beside docsmith's own docs.
package examples

import (
	"embed"
	"io/fs"
)

//go:embed all:demo-docs
var demo embed.FS

// DemoDocs returns the sample docs site: docs.json, pages, AGENTS.md and a
// scheduled workflow in .mintlify/workflows.
func DemoDocs() fs.FS {
	sub, err := fs.Sub(demo, "demo-docs")
	if err != nil {
		panic(err) // the directory is embedded above
	}
	return sub
}

// DemoWorkflows returns the sample workflows (check-navigation.md), the
// files of a repository's .mintlify/workflows.
func DemoWorkflows() fs.FS {
	sub, err := fs.Sub(demo, "demo-docs/.mintlify/workflows")
	if err != nil {
		panic(err) // the directory is embedded above
	}
	return sub
}
