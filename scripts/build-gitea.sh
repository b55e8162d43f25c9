#!/usr/bin/env bash
# Builds the Gitea server that the forge end-to-end tests run against, once,
# into a cache directory, and prints the binary's path. Later runs reuse it.
#
# Gitea is built from its module source: its go.mod has replace directives, so
# `go install` cannot build it. SQLite support needs cgo and the sqlite tags.
# At run time Gitea needs its options/ (and templates/ for web pages), which
# are copied next to the binary as static/.
set -euo pipefail

version="${GITEA_VERSION:-1.26.0}"
cache="${GITEA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/docsmith}"
dest="$cache/gitea-$version"
bin="$dest/gitea"

if [ -x "$bin" ] && [ -d "$dest/static/options" ]; then
  echo "$bin"
  exit 0
fi

mkdir -p "$cache"
exec 9>"$cache/gitea-$version.lock"
flock 9
if [ -x "$bin" ] && [ -d "$dest/static/options" ]; then  # built while we waited
  echo "$bin"
  exit 0
fi

echo "building Gitea $version into $dest (takes a few minutes the first time)" >&2
src=$(go mod download -json "code.gitea.io/gitea@v$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [ -z "$src" ] || [ ! -d "$src" ]; then
  echo "could not download code.gitea.io/gitea@v$version from the Go module proxy" >&2
  exit 1
fi

work=$(mktemp -d "$cache/gitea-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp -r "$src" "$work/src"
chmod -R u+w "$work/src"
(
  cd "$work/src"
  CGO_ENABLED=1 go build -trimpath -tags 'sqlite sqlite_unlock_notify' \
    -ldflags "-s -w -X main.Version=$version -X 'main.Tags=sqlite sqlite_unlock_notify'" \
    -o "$work/gitea" .
)
mkdir -p "$work/static"
cp -r "$work/src/options" "$work/src/templates" "$work/src/public" "$work/static/"
rm -rf "$dest"
mkdir -p "$dest"
mv "$work/gitea" "$work/static" "$dest/"
echo "$bin"
