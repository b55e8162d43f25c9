// Package examples ships the sample docs site that a fresh install's demo
// project works on.
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
