#!/usr/bin/env bash
# Brings up compose.yaml's topology (PostgreSQL, Redis, migrate, setup, two
# API replicas, a worker, the balancer) under a project name of its own and
# checks it as an operator would:
#
#   - the balancer and each replica answer /readyz; the replicas serve
#     /metrics and the balancer does not;
#   - the setup service seeded the docs and printed an admin key;
#   - a job created through replica 1 is read through replica 2;
#   - replica 1 is stopped while the job's turn runs on the worker, and the
#     job is still active after it is gone;
#   - the job completes, read through the balancer, and its branch is in
#     the repository;
#   - the assistant's search answers through the balancer.
#
# Everything it started is removed at the end, volumes too, whatever
# happened; on a failure it prints the services' logs first.
#
#   scripts/compose-test.sh            (make compose-test)
#
# SKIP_BUILD=1 uses the images already there (docsmith:local or
# DOCSMITH_IMAGE). COMPOSE_TEST_PAGES sets the size of the docs the job
# works on (default 2000), which is what keeps its turn running long
# enough to stop a replica in the middle of it.
set -euo pipefail
cd "$(dirname "$0")/.."

started=$(date +%s)
pages="${COMPOSE_TEST_PAGES:-2000}"
docsmith="${DOCSMITH_BIN:-bin/docsmith}"
export DOCSMITH_IMAGE="${DOCSMITH_IMAGE:-docsmith:local}"

step() { printf '%s compose-test: %s\n' "$(date +%H:%M:%S)" "$*"; }
fail() {
	printf 'compose-test: FAIL: %s\n' "$*" >&2
	exit 1
}

for tool in docker curl "${DOCKER_COMPOSE:-docker-compose}"; do
	command -v "${tool%% *}" >/dev/null || fail "${tool%% *} is needed (apt-get install -y docker.io docker-compose curl)"
done

project="docsmith-ct-$$-$(date +%s)"
tmp="$(mktemp -d)"
# DOCKER_COMPOSE="docker compose" runs it with Compose v2.
read -r -a compose_cmd <<<"${DOCKER_COMPOSE:-docker-compose}"
compose() { "${compose_cmd[@]}" --project-name "$project" --file compose.yaml --file "$tmp/test.yaml" "$@"; }

cleanup() {
	code=$?
	if [ "$code" != 0 ] && [ -f "$tmp/test.yaml" ]; then
		echo "compose-test: the services' logs:" >&2
		compose ps >&2 || true
		compose logs --no-color --tail=60 >&2 || true
	fi
	if [ -f "$tmp/test.yaml" ]; then
		compose down --volumes --remove-orphans --timeout 10 >/dev/null 2>&1 || true
	fi
	rm -rf "$tmp"
	exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The images: docsmith's from the binary built outside it, the others from
# Debian's packages on a base made the same way.
if [ "${SKIP_BUILD:-0}" != 1 ]; then
	step "building the images"
	if ! docker image inspect debian:bookworm-slim >/dev/null 2>&1; then
		scripts/debian-base-image.sh
	fi
	if grep -q '^image:' Makefile; then
		make --no-print-directory image
	else
		make --no-print-directory build
		docker build --tag "$DOCSMITH_IMAGE" . >"$tmp/build.log" 2>&1 || {
			cat "$tmp/build.log" >&2
			fail "building $DOCSMITH_IMAGE failed"
		}
	fi
fi
[ -x "$docsmith" ] || fail "$docsmith is needed as the client (make build)"

# Secrets of this run only.
scripts/compose-secrets.sh "$tmp/secrets" >/dev/null
export DOCSMITH_SECRETS_DIR="$tmp/secrets"
# The balancer on a free port of the loopback interface.
export DOCSMITH_PUBLISH=127.0.0.1:

# Docs large enough that one turn over them takes seconds: every page is
# read and checked, and every 50th mentions "alpha", which the job replaces
# (40 files changed at 2000 pages, under the turn's budget of 50).
step "writing $pages pages of docs for the job"
mkdir -p "$tmp/load/p"
filler="$(printf 'A paragraph about the settings of this page. %.0s' $(seq 1 40))"
nav=""
for ((i = 0; i < pages; i++)); do
	word=gamma
	((i % 50 == 0)) && word=alpha
	printf -- '---\ntitle: "Page %d"\ndescription: "Page %d of the load docs."\n---\n\nThe %s setting is set here. See [the next page](/p/page%d).\n\n%s\n\n%s\n\n%s\n' \
		"$i" "$i" "$word" "$(((i + 1) % pages))" "$filler" "$filler" "$filler" >"$tmp/load/p/page$i.mdx"
	nav+="${nav:+,}\"p/page$i\""
done
printf '{"name": "load", "navigation": {"groups": [{"group": "Pages", "pages": [%s]}]}}\n' "$nav" >"$tmp/load/docs.json"

# What only the test adds: the load docs for the setup service to seed, and
# each API replica published on a free loopback port so it can be called
# directly.
cat >"$tmp/test.yaml" <<YAML
services:
  setup:
    volumes:
      - $tmp/load:/setup/docs/load:ro
  api1:
    ports: ["127.0.0.1::8080"]
  api2:
    ports: ["127.0.0.1::8080"]
YAML

step "building the PostgreSQL, Redis and balancer images"
compose build postgres redis lb >"$tmp/build.log" 2>&1 || {
	cat "$tmp/build.log" >&2
	fail "building the images failed"
}
step "bringing up project $project"
up_started=$(date +%s)
compose up --detach 2>&1 | grep -v '^Creating\|^$' || true
setup_id="$(compose ps -q setup)"
[ -n "$setup_id" ] || fail "the setup service did not start"
[ "$(docker wait "$setup_id")" = 0 ] || fail "the setup service failed"
up_took=$(($(date +%s) - up_started))
step "up in ${up_took}s"

lb="http://$(compose port lb 8080)"
api1="http://$(compose port api1 8080)"
api2="http://$(compose port api2 8080)"
# Replica 1 is stopped with docker stop, as docker-compose stop would,
# without the seconds docker-compose takes to start while the turn runs.
api1_id="$(compose ps -q api1)"
for url in "$lb" "$api1" "$api2"; do
	curl -fsS --max-time 5 "$url/readyz" >/dev/null || fail "$url/readyz does not answer 200"
done

# Metrics are scraped from each process, never through the published port.
curl -fsS --max-time 5 "$api2/metrics" | grep -q '^docsmith_http_requests_total' || fail "replica 2 serves no metrics"
code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$lb/metrics")"
[ "$code" = 404 ] || fail "the balancer answers /metrics with $code; want 404"
code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$lb/%6detrics")"
[ "$code" = 404 ] || fail "the balancer answers /%6detrics with $code; want 404"

key="$(compose logs --no-color setup | sed -n 's/.*created admin key .*(shown once): \(svc_[A-Za-z0-9_]*\).*/\1/p' | head -1)"
[ -n "$key" ] || fail "the setup service's log has no admin key"
compose exec -T worker docsmith project create --org demo --id load --repo /srv/repos/load.git --forge local --check=false >/dev/null ||
	fail "could not create the load project"

# job URL [ARGS...] runs the docsmith client against one address.
job() {
	local url=$1
	shift
	"$docsmith" job "$1" --project load --url "$url" --key "$key" "${@:2}"
}
# field OUTPUT NAME prints a field of 'docsmith job get' (job, status, ...);
# turn OUTPUT prints the state of its first message.
field() { awk -v k="$2" '$1 == k { print $2; exit }' <<<"$1"; }
turn() { awk '$1 == "#1" { print $2; exit }' <<<"$1"; }

step "creating a job through replica 1 ($api1)"
job_started=$(date +%s)
out="$(job "$api1" create 'replace "alpha" with "beta" everywhere')" || fail "job create through replica 1: $out"
id="$(field "$out" job)"
[ -n "$id" ] || fail "job create printed no id: $out"

out="$(job "$api2" get "$id")" || fail "job get through replica 2: $out"
[ "$(field "$out" job)" = "$id" ] || fail "replica 2 does not know job $id: $out"
step "replica 2 reads job $id: $(field "$out" status), turn $(turn "$out")"

# Wait for the worker to take the turn, then stop the replica that took
# the request while the turn runs.
for ((i = 0; i < 600; i++)); do
	out="$(job "$api2" get "$id")"
	[ "$(turn "$out")" = running ] && break
	[ "$(field "$out" status)" = active ] || fail "the job ended before replica 1 could be stopped (raise COMPOSE_TEST_PAGES): $out"
	sleep 0.1
done
[ "$(turn "$out")" = running ] || fail "the worker did not start the job's turn in 60s: $out"
step "the turn is running; stopping replica 1"
stop_started=$(date +%s%3N)
docker stop --time 30 "$api1_id" >/dev/null
stop_ms=$(($(date +%s%3N) - stop_started))
out="$(job "$api2" get "$id")"
[ "$(field "$out" status)" = active ] ||
	fail "the job was no longer running when replica 1 had stopped, so this proves nothing (raise COMPOSE_TEST_PAGES): $out"
step "replica 1 stopped in ${stop_ms}ms and the job is still active (turn $(turn "$out"))"
curl -fsS --max-time 5 "$api1/readyz" >/dev/null 2>&1 && fail "replica 1 still answers after it was stopped"

# The balancer takes replica 1 out on its own; every read goes through it.
for ((i = 0; i < 240; i++)); do
	out="$(job "$lb" get "$id")" || fail "job get through the balancer with replica 1 down: $out"
	[ "$(field "$out" status)" = active ] || break
	sleep 0.5
done
[ "$(field "$out" status)" = completed ] || fail "the job did not complete: $out"
grep -q 'Pushed to branch' <<<"$out" || fail "the job's summary says nothing was pushed: $out"
branch="$(field "$out" branch)"
compose exec -T worker git --git-dir /srv/repos/load.git rev-parse --verify --quiet "refs/heads/$branch" >/dev/null ||
	fail "branch $branch is not in the repository"
changed="$(compose exec -T worker git --git-dir /srv/repos/load.git diff --name-only "main...$branch" | grep -c .)"
[ "$changed" = $((pages / 50)) ] || fail "the job changed $changed files; want $((pages / 50))"
step "the job completed through the balancer in $(($(date +%s) - job_started))s: branch $branch, $changed files changed"

# The assistant's side over the demo domain (docsmith's own docs).
assistant_key="$(compose logs --no-color setup | sed -n 's/.*created assistant key .*(shown once): \(svc_[A-Za-z0-9_]*\).*/\1/p' | head -1)"
hits="$(curl -fsS --max-time 10 -X POST "$lb/discovery/v1/search/docsmith" \
	-H "Authorization: Bearer $assistant_key" -H 'Content-Type: application/json' \
	-d '{"query": "widget"}')" || fail "search through the balancer failed"
grep -q '"path"' <<<"$hits" || fail "search through the balancer found nothing: $hits"

step "passed in $(($(date +%s) - started))s (topology up in ${up_took}s)"
