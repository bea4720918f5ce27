#!/usr/bin/env bash
# Test an ops team's own fleet configuration on the simulated fleet, without NPUs
# (docs/testing-your-fleet.md; `make fleet-test` runs this).
#
#   scripts/fleet-test.sh -i INVENTORY [--roll-to TAG] [--mapping FILE] [--playbook FILE]
#                         [--vault-password-file FILE]... [--vault-id ID]... [--prefix NAME]
#                         [--work DIR] [--keep]
#
# Maps each host of group ascend_servers (or a sample per group) onto a sim host whose NPU
# profile matches the hardware the mapping file beside the inventory (ascendfleet-sim.yml)
# gives, serves the deployments' model ids from the stand-in hub, then runs the team's real
# inventory and group_vars through the collection's playbook:
#   converge     the playbook (default playbooks/deploy-qwen.yml)
#   idempotence  the playbook again: every host and the control node must report changed=0
#   verify       every deployment of every sim host answers /v1/models and a chat completion
#   roll-forward the playbook with the image version TAG (--roll-to), then verify again
# Only connection variables and the addresses of the stood-in services (hub, image registry,
# modelscope CLI source, report directory) are replaced; see the work directory's overlay.yml.
# Exit 0 when every phase passes; otherwise the phase's output reads as on the fleet, followed
# by which real hosts the failing sim hosts stand for.
# Env (same as the options): ASCENDFLEET_FLEET_INVENTORY, ASCENDFLEET_FLEET_ROLL_TO,
#   ASCENDFLEET_FLEET_MAPPING, ASCENDFLEET_FLEET_PLAYBOOK, ASCENDFLEET_FLEET_PREFIX (default
#   fleetci: container, network and hub names), ASCENDFLEET_FLEET_WORK (default
#   reports/fleet-test/<prefix>), ASCENDFLEET_FLEET_KEEP=1, ANSIBLE_VAULT_PASSWORD_FILE (read
#   by ansible itself); ASCENDFLEET_SIM_CACHE / ASCENDFLEET_SIM_IMAGE_PREFIX (tests/sim/simenv.sh).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
[ -x "$top/.venv/bin/ansible-playbook" ] && export PATH="$top/.venv/bin:$PATH"
export ANSIBLE_CONFIG=${ANSIBLE_CONFIG:-$top/ansible.cfg}
export ANSIBLE_FORCE_COLOR=${ANSIBLE_FORCE_COLOR:-0}
# Each task's start time and duration in the logs, and the slowest tasks after each run.
export ANSIBLE_CALLBACKS_ENABLED=${ANSIBLE_CALLBACKS_ENABLED:-ansible.posix.profile_tasks}

inventory=${ASCENDFLEET_FLEET_INVENTORY:-}
roll_to=${ASCENDFLEET_FLEET_ROLL_TO:-}
mapping=${ASCENDFLEET_FLEET_MAPPING:-}
playbook=${ASCENDFLEET_FLEET_PLAYBOOK:-playbooks/deploy-qwen.yml}
prefix=${ASCENDFLEET_FLEET_PREFIX:-fleetci}
work=${ASCENDFLEET_FLEET_WORK:-}
keep=${ASCENDFLEET_FLEET_KEEP:-0}
vault=()

usage() { sed -n '5,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
die() { echo "fleet-test: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    -i|--inventory) inventory=${2:?}; shift 2 ;;
    --roll-to) roll_to=${2:?}; shift 2 ;;
    --mapping) mapping=${2:?}; shift 2 ;;
    --playbook) playbook=${2:?}; shift 2 ;;
    --vault-password-file|--vault-id) vault+=("$1=${2:?}"); shift 2 ;;
    --vault-password-file=*|--vault-id=*) vault+=("$1"); shift ;;
    --prefix) prefix=${2:?}; shift 2 ;;
    --work) work=${2:?}; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) usage ;;
    *) echo "fleet-test: unknown argument $1" >&2; usage ;;
  esac
done
[ -n "$inventory" ] || die "give the inventory: -i path/to/hosts.yml (or ASCENDFLEET_FLEET_INVENTORY)"
[ -f "$inventory" ] || die "inventory $inventory is not a file (give the hosts file; the mapping file ascendfleet-sim.yml sits beside it)"
[[ $prefix =~ ^[a-z0-9][a-z0-9-]{0,30}$ ]] || die "prefix '$prefix' must be lower-case letters, digits and dashes (it names containers)"
command -v ansible-playbook >/dev/null || die "ansible-playbook not found: run 'make setup' (or use 'make fleet-test')"
inventory=$(cd "$(dirname "$inventory")" && pwd)/$(basename "$inventory")
[ -z "$mapping" ] || mapping=$(cd "$(dirname "$mapping")" && pwd)/$(basename "$mapping")
[ -f "$playbook" ] || die "playbook $playbook does not exist"
work=${work:-$top/reports/fleet-test/$prefix}
mkdir -p "$work"
work=$(cd "$work" && pwd)
rm -rf "$work/profiles" "$work/reports" "$work"/*.log

# shellcheck source=tests/sim/simenv.sh
. tests/sim/simenv.sh
export ASCENDFLEET_SIM_INVENTORY=$work/sim-inventory.yml ASCENDFLEET_SIM_NETWORK=$prefix-net \
  ASCENDFLEET_SIM_HUB_NAME=$prefix-hub ASCENDFLEET_SIM_HUB_PORT="" \
  ASCENDFLEET_SIM_HUB_CONFIG=$work/hub.json ASCENDFLEET_SIM_PROFILES_DIR=$work/profiles \
  ASCENDFLEET_SIM_WITH_REGISTRY=0

say() { echo "fleet-test: $*"; }
t_start=$(date +%s)
phases=()
note() { phases+=("$(printf '%-13s %-6s %4ss' "$1" "$2" "$3")"); }

say "planning the simulated fleet of $inventory"
plan_args=(--inventory "$inventory" --work "$work" --prefix "$prefix" --roll-to "$roll_to")
[ -z "$mapping" ] || plan_args+=(--mapping "$mapping")
for v in ${vault[@]+"${vault[@]}"}; do plan_args+=(--vault-arg="$v"); done
python3 tests/sim/fleetci/plan.py "${plan_args[@]}" || exit $?
limit=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["limit"])' "$work/plan.json")
mapfile -t tags < <(python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["image_tags"]))' "$work/plan.json")

teardown() {
  local rc=$?
  if [ "$keep" = 1 ]; then
    say "--keep: the sim hosts stay up; remove them with:"
    say "  ASCENDFLEET_SIM_INVENTORY=$ASCENDFLEET_SIM_INVENTORY ASCENDFLEET_SIM_NETWORK=$ASCENDFLEET_SIM_NETWORK ASCENDFLEET_SIM_HUB_NAME=$ASCENDFLEET_SIM_HUB_NAME ASCENDFLEET_SIM_WITH_REGISTRY=0 tests/sim/fleet.sh down"
  else
    tests/sim/fleet.sh down >"$work/down.log" 2>&1 || { cat "$work/down.log" >&2; say "tear-down failed (log above)"; }
  fi
  if [ ${#phases[@]} -gt 0 ]; then
    say "phase         result  time"
    printf 'fleet-test: %s\n' "${phases[@]}"
  fi
  say "$([ $rc = 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - t_start ))s; logs and reports in $work"
  exit $rc
}
trap teardown EXIT

t=$(date +%s)
tests/sim/assets.sh >"$work/assets.log" 2>&1 || { cat "$work/assets.log" >&2; die "building the sim's assets failed (log above)"; }
if [ ${#tags[@]} -gt 0 ]; then
  SIMVLLM_BASE_IMAGE=$(sim_image base) tests/sim/vllm/build.sh "${tags[@]}" >>"$work/assets.log" 2>&1 \
    || { cat "$work/assets.log" >&2; die "building the stand-in images ${tags[*]} failed (log above)"; }
fi
tests/sim/fleet.sh up >"$work/up.log" 2>&1 || { cat "$work/up.log" >&2; die "starting the sim hosts failed (log above)"; }
note sim-up ok $(( $(date +%s) - t ))

# Which real hosts the sim hosts of the failed (or changed) hosts in a log stand for.
stands_for() { # stands_for LOG [changed]
  python3 - "$work/plan.json" "$1" "${2:-}" <<'EOF'
import json, re, sys
plan = json.load(open(sys.argv[1]))
recap = re.compile(r"^(\S+)\s+:\s+ok=\d+\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)")
bad = []
for line in open(sys.argv[2], encoding="utf-8", errors="replace"):
    m = recap.match(line)
    if m and (int(m.group(3)) or int(m.group(4)) or (sys.argv[3] and int(m.group(2)))):
        bad.append(m.group(1))
for s in plan["hosts"]:
    if s["real"] in bad:
        print("fleet-test: %s ran on sim host %s (%s; mapping %s) and stands for %s"
              % (s["real"], s["sim"], s["how"], s["mapping"], ", ".join(s["stands_for"])))
if "localhost" in bad:
    print("fleet-test: localhost is the control node (this runner)")
EOF
}

run_playbook() { # run_playbook PHASE LOG ARGS...
  local phase=$1 log=$2 rc=0 t
  shift 2
  t=$(date +%s)
  say "$phase: ansible-playbook $* -i $inventory --limit $limit"
  ansible-playbook "$@" -i "$inventory" -e "@$work/overlay.yml" --limit "$limit" \
    ${vault[@]+"${vault[@]}"} 2>&1 | tee "$work/$log" || rc=$?
  if [ $rc != 0 ]; then
    note "$phase" FAILED $(( $(date +%s) - t ))
    echo
    say "$phase failed (exit $rc); the output above reads as on the fleet."
    stands_for "$work/$log"
    exit 1
  fi
  note "$phase" ok $(( $(date +%s) - t ))
}

verify() { # verify PHASE [TAG]
  run_playbook "$1" "$1.log" tests/sim/fleetci/verify.yml -e "ascendfleet_fleet_test_plan=$work/plan.json" \
    -e "ascendfleet_fleet_test_tag=${2:-}"
}

run_playbook converge converge.log "$playbook"

t=$(date +%s)
run_playbook idempotence idempotence.log "$playbook"
if grep -qE '^\S+\s+:\s+ok=[0-9]+\s+changed=[1-9]' "$work/idempotence.log"; then
  phases[-1]=$(printf '%-13s %-6s %4ss' idempotence FAILED $(( $(date +%s) - t )))
  echo
  say "idempotence failed: the second run changed something (changed=0 expected). The changed tasks:"
  awk '/^TASK \[/ {task=$0} /^changed: \[/ {print "  " task " " $2}' "$work/idempotence.log"
  stands_for "$work/idempotence.log" changed
  exit 1
fi

verify verify

if [ -n "$roll_to" ]; then
  version_var=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["image_version_var"])' "$work/plan.json")
  run_playbook roll-forward roll-forward.log "$playbook" -e "$version_var=$roll_to"
  verify verify-rolled "$roll_to"
else
  say "no --roll-to TAG given: roll-forward skipped"
fi
