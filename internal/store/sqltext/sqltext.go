// Package sqltext builds the text of SQL statements the stores share.
package sqltext

import "strings"

// Qualified prefixes each of a comma-separated list of columns ("a, b")
// with a table's alias ("j.a, j.b").
func Qualified(alias, columns string) string {
	names := strings.Split(columns, ", ")
	for i, n := range names {
		names[i] = alias + "." + n
	}
	return strings.Join(names, ", ")
}
