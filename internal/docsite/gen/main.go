// Command gen writes the generated pages of docsmith's docs site: the
// configuration reference and the API reference pages. Run it from the
// repository's root (make docs).
package main

import (
	"fmt"
	"os"

	"github.com/docsmith/docsmith/internal/docsite"
)

func main() {
	dir := "docs"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if err := docsite.Generate(dir); err != nil {
		fmt.Fprintln(os.Stderr, "docs:", err)
		os.Exit(1)
	}
}
