#!/usr/bin/env bash
# release-check DIST VERSION COMMIT: checks a release directory that `make
# release` wrote. Every binary of SHA256SUMS is there with its sum and no
# binary lacks one; the binary of this machine runs, reports VERSION and
# COMMIT, and was built static (CGO off) with -trimpath.
set -euo pipefail
dist=${1:?usage: release-check.sh DIST VERSION COMMIT}
version=${2:?usage: release-check.sh DIST VERSION COMMIT}
commit=${3:-}

fail() { echo "release-check: $*" >&2; exit 1; }

[ -s "$dist/SHA256SUMS" ] || fail "$dist/SHA256SUMS is missing or empty"
(cd "$dist" && sha256sum --quiet --strict -c SHA256SUMS) || fail "a binary of $dist does not match SHA256SUMS"
for f in "$dist"/docsmith-*; do
	grep -q "  $(basename "$f")\$" "$dist/SHA256SUMS" || fail "$f has no line in SHA256SUMS"
done

goos=$(go env GOOS)
goarch=$(go env GOARCH)
ext=
[ "$goos" = windows ] && ext=.exe
bin="$dist/docsmith-$version-$goos-$goarch$ext"
[ -x "$bin" ] || fail "$bin is missing"

json=$("$bin" version --format json) || fail "$bin version failed"
case "$json" in
*"\"version\":\"$version\""*) ;;
*) fail "$bin version says $json, not version $version" ;;
esac
if [ -n "$commit" ]; then
	case "$json" in
	*"\"commit\":\"$commit\""*) ;;
	*) fail "$bin version says $json, not commit $commit" ;;
	esac
fi

settings=$(go version -m "$bin") || fail "go version -m $bin failed"
grep -q 'CGO_ENABLED=0' <<<"$settings" || fail "$bin was not built with CGO_ENABLED=0"
grep -q -- '-trimpath=true' <<<"$settings" || fail "$bin was not built with -trimpath"

echo "release-check: $bin ($(wc -c <"$bin") bytes) runs: $json"
