#!/usr/bin/env bash
# Writes the secrets compose.yaml reads, once: a random PostgreSQL password
# and the database URL docsmith connects with, which holds the same
# password. Files already there are kept, so running it again changes
# nothing.
#
#   scripts/compose-secrets.sh [DIR]    (default deploy/compose/secrets,
#                                        or DOCSMITH_SECRETS_DIR)
#
# The folder is readable by its owner alone. The files in it are readable
# by all, because Docker Compose bind-mounts each one into the containers,
# whose users (postgres, docsmith) are not the owner on this host.
set -euo pipefail

dir="${1:-${DOCSMITH_SECRETS_DIR:-$(dirname "$0")/../deploy/compose/secrets}}"
mkdir -p "$dir"
chmod 700 "$dir"

if [ ! -s "$dir/postgres_password" ]; then
	# Letters and digits only, so the password needs no escaping in a URL.
	password="$(head -c 64 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 32)"
	(umask 022 && printf '%s\n' "$password" >"$dir/postgres_password")
	rm -f "$dir/database_url"
	echo "wrote $dir/postgres_password"
fi
if [ ! -s "$dir/database_url" ]; then
	password="$(tr -d '\n' <"$dir/postgres_password")"
	(umask 022 && printf 'postgres://docsmith:%s@postgres:5432/docsmith?sslmode=disable\n' "$password" >"$dir/database_url")
	echo "wrote $dir/database_url"
fi
