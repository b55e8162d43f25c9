#!/bin/sh
# The setup service of compose.yaml: seeds a bare git repository in
# /srv/repos for each docs folder under /setup/docs (once; an existing
# repository is left as the agent left it), then applies /setup/setup.yaml.
# Applying again creates only what is missing, so this runs on every
# `docker compose up`; keys are printed only when they are created.
set -eu

if [ "$(id -u)" = 0 ]; then
	# The volume is root's when Docker makes it; the docsmith user owns
	# what is in it, so the worker can push and git trusts the owner.
	chown docsmith:docsmith /srv/repos
	export HOME=/data
	exec setpriv --reuid=docsmith --regid=docsmith --init-groups /bin/sh "$0" "$@"
fi

for dir in /setup/docs/*/; do
	[ -d "$dir" ] || continue
	name="$(basename "$dir")"
	repo="/srv/repos/$name.git"
	[ -d "$repo" ] && continue
	work="$(mktemp -d)"
	cp -R "$dir." "$work/"
	git -C "$work" init --quiet --initial-branch=main
	git -C "$work" add --all
	git -C "$work" -c user.name=docsmith -c user.email=docsmith@localhost commit --quiet --message="Docs of $name"
	git clone --quiet --bare "$work" "$repo.tmp"
	mv "$repo.tmp" "$repo"
	rm -rf "$work"
	echo "setup: seeded $repo from $dir"
done

exec docsmith apply /setup/setup.yaml
