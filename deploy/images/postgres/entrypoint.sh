#!/bin/sh
# Makes the database cluster on first start (an empty data directory), the
# way the official image does, then runs PostgreSQL in the foreground.
set -eu

user="${POSTGRES_USER:-postgres}"
db="${POSTGRES_DB:-$user}"
password="${POSTGRES_PASSWORD:-}"
if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then
	password="$(cat "$POSTGRES_PASSWORD_FILE")"
fi

# init makes the cluster and the database; a failure part way leaves an
# empty data directory, so the next start tries again from the beginning.
init() {
	pwfile="$(mktemp)"
	printf '%s\n' "$password" >"$pwfile"
	initdb --pgdata="$PGDATA" --username="$user" --pwfile="$pwfile" \
		--auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >/dev/null || return 1
	rm -f "$pwfile"
	echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
	echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
	[ "$db" = postgres ] && return 0
	# Only the local socket while the database is made.
	pg_ctl --pgdata="$PGDATA" --options="-c listen_addresses=''" --wait --silent start || return 1
	echo 'CREATE DATABASE :"db"' |
		psql --quiet --no-psqlrc --set=ON_ERROR_STOP=1 --username="$user" --dbname=postgres --set=db="$db" || {
		pg_ctl --pgdata="$PGDATA" --mode=immediate --wait --silent stop
		return 1
	}
	pg_ctl --pgdata="$PGDATA" --mode=fast --wait --silent stop
}

if [ ! -s "$PGDATA/PG_VERSION" ]; then
	if [ -z "$password" ]; then
		echo "postgres: set POSTGRES_PASSWORD_FILE (or POSTGRES_PASSWORD) for the first start" >&2
		exit 1
	fi
	if ! init; then
		find "$PGDATA" -mindepth 1 -delete
		echo "postgres: making the cluster in $PGDATA failed" >&2
		exit 1
	fi
	echo "postgres: made the cluster in $PGDATA with database $db"
fi

if [ "${1:-}" = postgres ]; then
	shift
	exec postgres -D "$PGDATA" "$@"
fi
exec "$@"
