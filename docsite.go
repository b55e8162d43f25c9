// Package docsmith carries docsmith's own documentation site, docs/, in the
// binary: the demo serves it, the demo's assistant answers from it, and the
// API serves its OpenAPI document. It sits at the module root because an
// embed directive reaches only files under its package's directory.
package docsmith

import (
	"embed"
	"io/fs"
)

//go:generate go run ./internal/docsite/gen docs

//go:embed all:docs
var docs embed.FS

// OpenAPIPath is where the API's OpenAPI document is in the docs site. The
// server serves this file at /openapi.json and the API reference pages name
// their operations in it, so there is one document, not a copy.
const OpenAPIPath = "api-reference/openapi.json"

// Docs returns the docs site: docs.json, the .mdx pages and the OpenAPI
// document, rooted at docs/.
func Docs() fs.FS {
	sub, err := fs.Sub(docs, "docs")
	if err != nil {
		panic(err) // the directory is embedded above
	}
	return sub
}

// OpenAPIDocument returns the API description the server serves at
// /openapi.json.
func OpenAPIDocument() []byte {
	b, err := fs.ReadFile(docs, "docs/"+OpenAPIPath)
	if err != nil {
		panic(err) // the file is embedded above
	}
	return b
}
