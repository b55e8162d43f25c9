#!/usr/bin/env bash
# bench-compare: measure the assistant side by side with what a team would
# otherwise run, in one window on this machine, and print the table with
# ratios. The servers answer the same question on the same corpus, each
# loaded in turn at the same concurrency while the others are stopped:
#
#   docsmith  the assistant endpoint with the extractive model
#   openai    the same with an openai/bench model, streamed from a local
#             OpenAI-protocol server that answers at once (scripts/openaimock:
#             the Node server's mock answer, 200 deltas of 4 characters);
#             that server's CPU and memory are reported apart
#   node      the chat server written with the Vercel AI SDK's helpers
#   floor     a Go server replaying one recorded docsmith answer, event by event
#
# The peers (the Node server, the load generator and the floor server) live
# in PEERS. Variables:
#   PEERS    peers directory (default ../shared/tools/peers)
#   CORPUS   docs folder (default $PEERS/../../corpora/hoppscotch)
#   C        concurrent streams (default 100)
#   D        measured duration (default 10s); WARMUP before it (default 2s)
#   BODY     request body, an AI SDK UI message request (default $PEERS/chat-server/body.json)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
PEERS=${PEERS:-../shared/tools/peers}
PEERS=$(cd "$PEERS" && pwd)
CORPUS=${CORPUS:-$PEERS/../../corpora/hoppscotch}
CORPUS=$(cd "$CORPUS" && pwd)
C=${C:-100}
D=${D:-10s}
WARMUP=${WARMUP:-2s}
BODY=${BODY:-$PEERS/chat-server/body.json}
cache="$root/.cache/bench-compare"
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

say() { printf '%s\n' "$*" >&2; }

# wait_http URL: until the server answers (any status).
wait_http() {
	for _ in $(seq 1 300); do
		if curl -s -o /dev/null "$1"; then return 0; fi
		sleep 0.1
	done
	say "no answer from $1"; return 1
}

stop() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

say "building docsmith, the model server, the load generator and the floor server"
# docsmith as it ships: make build's flags (no cgo, no symbol tables), whose
# binary maps about 9 MiB less than a plain go build's.
make -s build BIN="$work/docsmith" >&2
go build -o "$work/openaimock" ./scripts/openaimock
(cd "$PEERS/load" && go build -o "$work/load" .)
(cd "$PEERS/floor" && go build -o "$work/floor" main.go)

# The Node server runs from a copy (with the retrieval code it imports),
# installed once per lock file.
node_dir="$cache/chat-server"
mkdir -p "$cache/retrieval"
cp "$PEERS/retrieval/"*.mjs "$cache/retrieval/"
stamp=$(sha256sum "$PEERS/chat-server/package-lock.json" | cut -c1-16)
if [ ! -f "$node_dir/.installed-$stamp" ]; then
	say "installing the Node chat server's packages"
	rm -rf "$node_dir" && mkdir -p "$node_dir"
	cp "$PEERS/chat-server/"*.mjs "$PEERS/chat-server/package.json" "$PEERS/chat-server/package-lock.json" "$node_dir/"
	(cd "$node_dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
	touch "$node_dir/.installed-$stamp"
fi

# docsmith: a store with one domain indexed from the corpus, an assistant
# key, no rate limits and no daily model budget (the load is the point), the
# extractive model.
export DOCSMITH_DATA_DIR="$work/data" DOCSMITH_DEMO=false DOCSMITH_LOG_LEVEL=warn \
	DOCSMITH_LIMIT_ASSISTANT_PER_KEY_MONTH=0 DOCSMITH_LIMIT_ASSISTANT_PER_ORG_HOUR=0 DOCSMITH_LIMIT_ASSISTANT_PER_IP_DAY=0 \
	DOCSMITH_LIMIT_ASSISTANT_PER_IP_MINUTE=0 DOCSMITH_LIMIT_ASSISTANT_PER_IP_BURST=0 \
	DOCSMITH_ASSISTANT_ANSWERS_PER_DAY=0 DOCSMITH_ASSISTANT_TOKENS_PER_DAY=0
# docsmith's endpoint also wants the reader's fingerprint; the others ignore it.
jq -c '. + {fp: "anonymous"}' "$BODY" >"$work/body.json"
BODY="$work/body.json"
ds="$work/docsmith"
"$ds" org create bench >/dev/null
"$ds" project create --org bench --id docs --repo "$CORPUS" --forge local >/dev/null
"$ds" domain create --org bench --domain docs --project docs --site-url https://docs.example >/dev/null
"$ds" domain create --org bench --domain docs-openai --project docs --site-url https://docs.example --model openai/bench >/dev/null
"$ds" index docs >&2
key=$("$ds" key create --org bench --kind assistant)
port=${DOCSMITH_PORT:-18480}

# serve: start docsmith in the background (dpid), ready.
serve() {
	DOCSMITH_ADDR=127.0.0.1:$port "$ds" serve >>"$work/docsmith.log" 2>&1 &
	dpid=$!; pids+=("$dpid")
	wait_http "http://127.0.0.1:$port/healthz"
}

# answer DOMAIN FILE: one answer, which must end with [DONE].
answer() {
	curl -sN -X POST "http://127.0.0.1:$port/discovery/v2/assistant/$1/message" -H "Authorization: Bearer $key" \
		-H 'Content-Type: application/json' --data-binary @"$BODY" >"$2"
	grep -q '^data: \[DONE\]' "$2" || { say "docsmith's answer on $1 did not end with [DONE]:"; head -c 600 "$2" >&2; exit 1; }
}

load() { # NAME URL PID AUTH [LABEL]
	say "loading ${5:-$1} at C=$C for $D"
	"$work/load" -label "${5:-$1}" -url "$2" -c "$C" -d "$D" -warmup "$WARMUP" -body @"$BODY" -auth "$4" -pid "$3" -json >"$work/$1.json"
}

serve
url="http://127.0.0.1:$port/discovery/v2/assistant/docs/message"
answer docs "$work/answer.txt"
load docsmith "$url" "$dpid" "Bearer $key"
stop "$dpid"

# docsmith with an openai/… model, in a process of its own, beside the
# model server; the model server's CPU over the load (warm-up included)
# per answer it streamed, and its peak RSS, are reported apart.
mport=${MODEL_PORT:-18600}
"$work/openaimock" -addr "127.0.0.1:$mport" >"$work/openaimock.log" 2>&1 &
mpid=$!; pids+=("$mpid")
wait_http "http://127.0.0.1:$mport/stats"
export DOCSMITH_OPENAI_BASE_URL="http://127.0.0.1:$mport/v1" DOCSMITH_OPENAI_API_KEY=bench
serve
answer docs-openai "$work/answer-openai.txt"
grep -q '"delta":"Per' "$work/answer-openai.txt" || { say "docsmith's openai answer lacks the model's text:"; head -c 600 "$work/answer-openai.txt" >&2; exit 1; }
before=$(curl -s "http://127.0.0.1:$mport/stats")
load openai "http://127.0.0.1:$port/discovery/v2/assistant/docs-openai/message" "$dpid" "Bearer $key" openai/bench
after=$(curl -s "http://127.0.0.1:$mport/stats")
hwm=$(awk '/^VmHWM:/ {print $2 / 1024}' "/proc/$mpid/status")
jq -n --argjson a "$before" --argjson b "$after" --argjson hwm "${hwm:-0}" \
	'($b.answered - $a.answered) as $n | {label: "OpenAI mock", streams: $n, cpu_ms_per_stream: (($b.cpu_s - $a.cpu_s) * 1000 / ([$n, 1] | max)), vmhwm_mib: $hwm}' \
	>"$work/model.json"
stop "$dpid"
stop "$mpid"
unset DOCSMITH_OPENAI_BASE_URL DOCSMITH_OPENAI_API_KEY

nport=${NODE_PORT:-18787}
(cd "$node_dir" && exec node server.mjs --corpus "$CORPUS" --port "$nport" --token bench) >"$work/node.log" 2>&1 &
npid=$!; pids+=("$npid")
wait_http "http://127.0.0.1:$nport/"
load node "http://127.0.0.1:$nport/api/chat" "$npid" "Bearer bench"
stop "$npid"

fport=${FLOOR_PORT:-18999}
"$work/floor" -addr "127.0.0.1:$fport" -body "$work/answer.txt" >"$work/floor.log" 2>&1 &
fpid=$!; pids+=("$fpid")
wait_http "http://127.0.0.1:$fport/"
load floor "http://127.0.0.1:$fport/" "$fpid" "Bearer bench"
stop "$fpid"

go run ./scripts/benchtable "$work/docsmith.json" "$work/node.json" "$work/floor.json" "$work/openai.json" "$work/model.json"
