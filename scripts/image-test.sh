#!/usr/bin/env bash
# Runs docsmith's container image as an operator would, on a fresh volume and
# a free port, and checks what the first day needs: the health check and
# /readyz, a non-root server under an init, an assistant answer with a
# citation from the demo domain, a builtin agent job that completes and
# pushes its branch, a restart that keeps the data, and a clean stop on
# SIGTERM. The container and its volume are removed whatever happens; on a
# failure the container's log is printed.
#
#   IMAGE=docsmith:local scripts/image-test.sh     # make image-test builds the image first
set -euo pipefail

image="${IMAGE:-docsmith:local}"
name="docsmith-image-test-$$"
volume="$name"
started=$(date +%s)

for tool in docker curl jq; do
	command -v "$tool" >/dev/null || { echo "image-test: $tool is needed (apt-get install -y $tool)" >&2; exit 1; }
done
docker image inspect "$image" >/dev/null 2>&1 || { echo "image-test: no image $image (make image)" >&2; exit 1; }

cleanup() {
	docker rm -f "$name" >/dev/null 2>&1 || true
	docker volume rm -f "$volume" >/dev/null 2>&1 || true
}
trap cleanup EXIT

fail() {
	echo "image-test: FAILED: $*" >&2
	echo "--- the container's log (last 80 lines) ---" >&2
	docker logs --tail 80 "$name" >&2 2>&1 || true
	exit 1
}
ok() { echo "image-test: ok   $*"; }

# ready waits for the container's own health check to say healthy (or, with
# "readyz", only for /readyz to answer), failing at once if it stops.
ready() {
	local how="$1" deadline=$(($(date +%s) + 120)) state
	while :; do
		state=$(docker inspect -f '{{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{end}} {{.State.ExitCode}}' "$name")
		case "$state" in
		running\ *) ;;
		*) fail "the container stopped before it was ready (status and exit code: $state)" ;;
		esac
		if [ "$how" = health ]; then
			[ "$(echo "$state" | cut -d' ' -f2)" = healthy ] && return 0
		elif curl -fsS -o /dev/null "$base/readyz" 2>/dev/null; then
			return 0
		fi
		[ "$(date +%s)" -lt "$deadline" ] || fail "not ready after 120 s ($how; status: $state)"
		sleep 1
	done
}

# api calls the server and fails the test, with the response, on an error.
api() {
	local out
	out=$(curl -sS --max-time 60 -w '\n%{http_code}' "$@") || fail "curl $* did not get an answer"
	local code="${out##*$'\n'}"
	out="${out%$'\n'*}"
	case "$code" in
	2??) printf '%s' "$out" ;;
	*) fail "curl $* answered $code: $out" ;;
	esac
}

docker volume create "$volume" >/dev/null
# 127.0.0.1::8080 lets the engine pick a free port on the host.
docker run -d --name "$name" -v "$volume:/data" -p 127.0.0.1::8080 "$image" >/dev/null
# The engine picks the port again on every start.
published() {
	local port
	port=$(docker port "$name" 8080/tcp | head -1)
	base="http://127.0.0.1:${port##*:}"
}
published
echo "image-test: $image runs as $name on $base with the volume $volume"

ready health
t_ready=$(($(date +%s) - started))
[ "$(api "$base/readyz" | jq -r .status)" = ready ] || fail "/readyz did not say ready"
ok "health check healthy and /readyz ready after ${t_ready} s"

[ "$(docker exec "$name" id -u)" = 10001 ] || fail "the server does not run as uid 10001"
[ "$(docker exec "$name" cat /proc/1/comm)" = tini ] || fail "PID 1 is not tini"
ok "runs as uid 10001 under tini (PID 1)"

# The first start prints one key of each kind; an admin key is svc_ID_SECRET,
# an assistant key svc_dsc_ID_SECRET.
first_start=$(docker logs "$name" 2>&1)
admin=$(grep -o 'svc_[a-z0-9_]*' <<<"$first_start" | grep -v '^svc_dsc_' | head -1 || true)
assistant=$(grep -o 'svc_dsc_[a-z0-9_]*' <<<"$first_start" | head -1 || true)
[ -n "$admin" ] && [ -n "$assistant" ] || fail "the first start printed no demo keys"
if grep -Eq 'http://(\[::\]|0\.0\.0\.0)' <<<"$first_start"; then
	fail "the first start printed an address to open that listens on every interface, not 127.0.0.1"
fi
ok "first start printed the demo's admin and assistant keys and addresses on 127.0.0.1"

# Any docs site will do: the question and the page the job edits are read
# from the demo domain's llms.txt, whose lines are "- [TITLE](/PATH.md): ...".
page_line=$(api "$base/discovery/v1/llms.txt/demo" -H "Authorization: Bearer $assistant" | grep -E '^- \[[^]]+\]\(/[^)]+\.md\)' | tail -1)
[ -n "$page_line" ] || fail "the demo's llms.txt lists no page"
title=$(sed -E 's/^- \[([^]]+)\].*/\1/' <<<"$page_line")
page=$(sed -E 's/^- \[[^]]+\]\(\/([^)]+)\.md\).*/\1/' <<<"$page_line")
about=$(sed -nE 's/^- \[[^]]+\]\([^)]+\): (.+)$/\1/p' <<<"$page_line")

# The extractive model quotes the passages that match best: the page's
# title and description are words a reader of it would use.
question="$title${about:+: $about}"
stream=$(api -N -X POST "$base/discovery/v2/assistant/demo/message" \
	-H "Authorization: Bearer $assistant" -H 'Content-Type: application/json' \
	-d "$(jq -cn --arg q "$question" '{fp: "image-test", messages: [{id: "m1", role: "user", parts: [{type: "text", text: $q}]}]}')")
events=$(sed -n 's/^data: //p' <<<"$stream" | grep -v '^\[DONE\]$' || true)
status=$(jq -r 'select(.type == "data-answer-status") | .data.status' <<<"$events" | head -1)
cited=$(jq -r 'select(.type == "source-url") | .url' <<<"$events" | paste -sd ' ' -)
[ "$status" = answered ] || fail "the assistant did not answer \"$question\" (status: ${status:-none}): $stream"
[ -n "$cited" ] || fail "the assistant's answer to \"$question\" cites no page: $stream"
tail -1 <<<"$stream" | grep -q '^data: \[DONE\]' || fail "the answer's stream did not end with [DONE]"
ok "assistant answered \"$question\" citing $cited"

prompt="set description to \"Checked by the image test\" in $page"
job=$(api -X POST "$base/v2/agent/demo/job" -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' \
	-d "$(jq -cn --arg p "$prompt" '{prompt: $p}')")
id=$(jq -r .id <<<"$job")
deadline=$(($(date +%s) + 120))
while :; do
	job=$(api "$base/v2/agent/demo/job/$id" -H "Authorization: Bearer $admin")
	case "$(jq -r .status <<<"$job")" in
	completed) break ;;
	failed | archived) fail "the job $id ended $(jq -r .status <<<"$job"): $(jq -r .error <<<"$job")" ;;
	esac
	[ "$(date +%s)" -lt "$deadline" ] || fail "the job $id did not complete in 120 s: $job"
	sleep 1
done
[ "$(jq -r '.filesChanged | length' <<<"$job")" -gt 0 ] || fail "the job $id completed without changing a file: $job"
repo=$(jq -r .source.repository <<<"$job")
branch=$(jq -r .source.ref <<<"$job")
docker exec "$name" git --git-dir "$repo" rev-parse -q --verify "refs/heads/$branch" >/dev/null ||
	fail "the job's branch $branch is not in $repo"
ok "builtin job \"$prompt\" completed and pushed $branch"

# stop sends SIGTERM (docker stop) and sets took to the seconds it took.
stop() {
	local t0 code
	t0=$(date +%s)
	docker stop -t 30 "$name" >/dev/null
	took=$(($(date +%s) - t0))
	code=$(docker inspect -f '{{.State.ExitCode}}' "$name")
	[ "$code" = 0 ] || fail "docker stop ended the server with exit code $code, not 0"
	docker logs --tail 5 "$name" 2>&1 | grep -q 'docsmith stopped' || fail "no \"docsmith stopped\" in the log after docker stop"
}
stop
ok "docker stop (SIGTERM): \"docsmith stopped\", exit code 0, in ${took} s"

# A restart on the same volume serves the same data with the same keys and
# makes no second demo.
since=$(date -u +%Y-%m-%dT%H:%M:%SZ)
docker start "$name" >/dev/null
published
ready readyz
[ "$(api "$base/v2/agent/demo/job/$id" -H "Authorization: Bearer $admin" | jq -r .status)" = completed ] ||
	fail "after a restart the job $id is no longer completed"
if docker logs --since "$since" "$name" 2>&1 | grep -q 'svc_'; then
	fail "the restart printed new demo keys: the volume did not keep the data"
fi
stop
ok "restart on the same volume: the job and keys are still there; stopped again in ${took} s"

size=$(docker image inspect -f '{{.Size}}' "$image")
echo "image-test: passed in $(($(date +%s) - started)) s; $image is $((size / 1000000)) MB"
