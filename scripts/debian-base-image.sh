#!/usr/bin/env bash
# Makes the Dockerfile's base image, debian:bookworm-slim, from Debian's own
# packages when no image registry can be reached: debootstrap a minimal
# bookworm into a folder, trim it as the slim images are trimmed, and import
# it into the local Docker engine under that tag. Does nothing when the tag
# is already there (FORCE=1 makes it again).
#
#   scripts/debian-base-image.sh [TAG]
set -euo pipefail

tag="${1:-debian:bookworm-slim}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

if [ "${FORCE:-0}" != 1 ] && docker image inspect "$tag" >/dev/null 2>&1; then
	echo "$tag is already in the local engine"
	exit 0
fi
for tool in debootstrap docker; do
	command -v "$tool" >/dev/null || { echo "$tool is needed (apt-get install -y $tool)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "debootstrap needs root" >&2; exit 1; }

root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT

debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.log" 2>&1 || {
	tail -20 "$root.log" >&2
	exit 1
}
rm -f "$root.log"

# What the slim images leave out: documentation, manual pages, locales but
# English, apt's lists and caches, and logs.
rm -rf "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* \
	"$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
	"$root"/var/log/*.log "$root"/var/log/apt/*
find "$root"/usr/share/locale -mindepth 1 -maxdepth 1 ! -name 'en*' ! -name locale.alias -exec rm -rf {} +
# And what keeps them so: the same settings as Debian's slim images, so a
# Dockerfile's apt-get install leaves no packages, caches, manuals or
# translations behind, here as on an image pulled from a registry.
mkdir -p "$root/etc/dpkg/dpkg.cfg.d" "$root/etc/apt/apt.conf.d"
cat >"$root/etc/dpkg/dpkg.cfg.d/docker" <<'DPKG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/overrides/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/man/*
DPKG
cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'APT'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
APT
echo 'Acquire::Languages "none";' >"$root/etc/apt/apt.conf.d/docker-no-languages"
echo 'APT::AutoRemove::SuggestsImportant "false";' >"$root/etc/apt/apt.conf.d/docker-autoremove-suggests"

cat >"$root/etc/apt/sources.list" <<SOURCES
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
SOURCES

tar --numeric-owner -C "$root" -c . |
	docker import --change 'CMD ["bash"]' --change 'ENV LANG=C.UTF-8' - "$tag" >/dev/null
docker image ls "$tag" --format '{{.Repository}}:{{.Tag}} {{.Size}}'
