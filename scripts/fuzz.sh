#!/usr/bin/env bash
# fuzz: run every fuzz target of the module, each for FUZZTIME (default
# 10s), found by name so that a new target is fuzzed without being listed.
# RUN narrows them to the targets whose name matches a regular expression.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-10s}
RUN=${RUN:-.}
grep -rlE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(' internal cmd | sort | while read -r file; do
	pkg=./$(dirname "$file")
	grep -oE '^func Fuzz[A-Za-z0-9_]*' "$file" | cut -d' ' -f2 | { grep -E "$RUN" || true; } | while read -r target; do
		echo "== $pkg $target"
		go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME"
	done
done
