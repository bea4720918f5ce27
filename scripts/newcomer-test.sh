#!/usr/bin/env bash
# make newcomer (part of make test): a new user's first run, proven on every CI run.
#   git clone of this checkout's HEAD, an EMPTY sim cache (ASCENDFLEET_SIM_CACHE in a fresh
#   temporary directory) and NONE of the sim's own images (they are built under the prefix
#   ascendfleet-sim-newcomer, removed first), then:
#     1. make demo       must deploy the four simulated hosts and print live endpoints
#                        (each answers a chat request), with no task name left unrendered
#     2. make demo       again: changed=0 in every play recap
#     3. make demo-down
# Whatever the demo needs and does not build itself fails step 1. Only the Python toolchain
# (.venv of this checkout) is shared with the clone: it is not a sim artefact.
# The demo fleet's containers (sim-*, ascendfleet-sim-hub) have fixed names: the test refuses
# to start while another demo fleet is up. Env: NEWCOMER_KEEP=1 keeps the work directory.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
venv=${VENV:-$top/.venv}
prefix=ascendfleet-sim-newcomer
t0=$(date +%s)
say() { echo "newcomer: $*"; }
die() { echo "newcomer: FAILED: $*" >&2; exit 1; }

[ -x "$venv/bin/ansible-playbook" ] || die "no toolchain in $venv: run make venv first"
if docker ps -a --format '{{.Names}}' | grep -qxE 'ascendfleet-sim-hub|sim-910b2-seed|sim-910b3-idle|sim-a3-16chips|sim-310p-duo'; then
  die "a demo fleet is up on this machine (docker ps); run 'make demo-down' first"
fi
[ -n "$(git -C "$top" status --porcelain --untracked-files=no)" ] \
  && say "warning: uncommitted changes in $top are not in the clone (the test runs HEAD)"

work=$(mktemp -d /var/tmp/ascendfleet-newcomer.XXXXXX)
cleanup() {
  local rc=$?
  if [ -d "$work/clone" ]; then
    (cd "$work/clone" && ASCENDFLEET_SIM_CACHE=$work/cache ASCENDFLEET_SIM_IMAGE_PREFIX=$prefix \
      make demo-down VENV="$venv" >"$work/down-cleanup.log" 2>&1) || true
  fi
  docker images --format '{{.Repository}}:{{.Tag}}' | grep "^$prefix/" | xargs -r docker rmi -f >/dev/null 2>&1 || true
  if [ "${NEWCOMER_KEEP:-0}" = 1 ] || [ $rc -ne 0 ]; then
    say "logs kept in $work (the cache dir removed)"
    rm -rf "$work/cache"
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT

export ASCENDFLEET_SIM_CACHE=$work/cache
export ASCENDFLEET_SIM_IMAGE_PREFIX=$prefix
mkdir -p "$ASCENDFLEET_SIM_CACHE"
mapfile -t stale < <(docker images --format '{{.Repository}}:{{.Tag}}' | grep "^$prefix/" || true)
if [ ${#stale[@]} -gt 0 ]; then
  say "removing images of an earlier run: ${stale[*]}"
  docker rmi -f "${stale[@]}" >/dev/null
fi
say "cold start: sim cache $ASCENDFLEET_SIM_CACHE (empty), sim images $prefix/* (none)"

git clone -q "$top" "$work/clone"
cd "$work/clone"
say "cloned $(git rev-parse --short HEAD) into $work/clone"

run() { # run NAME: make NAME in the clone, output to $work/NAME.log
  local name=$1 target=$2 s rc=0
  s=$(date +%s)
  make "$target" VENV="$venv" >"$work/$name.log" 2>&1 || rc=$?
  say "$name: make $target rc=$rc in $(( $(date +%s) - s ))s (log $work/$name.log)"
  if [ $rc -ne 0 ]; then
    tail -60 "$work/$name.log" >&2
    die "make $target failed on a cold machine; the log's end is above"
  fi
}
unrendered() { # a task name that failed to template
  if grep -n '<< error' "$1" >&2; then die "$2 printed a task name that did not render (above)"; fi
}

run demo-1 demo
unrendered "$work/demo-1.log" "the first make demo"
# Every simulated host serves an endpoint that answers.
hosts=$(ANSIBLE_INVENTORY_ENABLED=yaml "$venv/bin/ansible-inventory" -i inventories/sim/hosts.yml --list \
  | python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["ascend_servers"]["hosts"]))')
for h in $hosts; do
  grep -qE "^$h  http://" "$work/demo-1.log" || die "make demo printed no endpoint for $h"
done
grep -E '^sim-[^ ]+  http://' "$work/demo-1.log" | python3 -c '
import json, sys, time, urllib.request
bad = []
for line in sys.stdin:
    host, url = line.split()[:2]
    models = json.load(urllib.request.urlopen(url + "/models", timeout=10))["data"]
    body = json.dumps({"model": models[0]["id"], "max_tokens": 8,
                       "messages": [{"role": "user", "content": "Hello"}]}).encode()
    req = urllib.request.Request(url + "/chat/completions", body, {"Content-Type": "application/json"})
    reply = json.load(urllib.request.urlopen(req, timeout=30))
    if not reply.get("choices"):
        bad.append(host)
    print("newcomer: %s %s answers: %r" % (host, url, reply["choices"][0]["message"]["content"][:40]))
sys.exit("newcomer: FAILED: no answer from %s" % bad if bad else 0)
'
run demo-2 demo
unrendered "$work/demo-2.log" "the second make demo"
recaps=$(grep -E '^[^ ]+ +: ok=' "$work/demo-2.log" || true)
[ -n "$recaps" ] || die "the second make demo printed no play recap"
if echo "$recaps" | grep -vE ' changed=0 '; then
  die "the second make demo changed something (recap lines above): a re-run must change nothing"
fi
say "the second make demo changed nothing ($(echo "$recaps" | wc -l) recap lines, all changed=0)"
run down demo-down
! docker ps -a --format '{{.Names}}' | grep -qxE 'ascendfleet-sim-hub|sim-910b2-seed|sim-910b3-idle|sim-a3-16chips|sim-310p-duo' \
  || die "make demo-down left containers of the fleet"
say "passed in $(( $(date +%s) - t0 ))s"
