#!/usr/bin/env bash
# Run every molecule scenario (each directory under molecule/ with a molecule.yml).
# The shared base config is .config/molecule/config.yml; scenarios only override variables.
#
# Scenarios run ASCENDFLEET_MOLECULE_JOBS at a time (default 3): each has its own instances,
# networks and ephemeral directory, and most of a scenario's time is waiting on containers and
# health gates (two at a time kept a quiet 2-core machine at a load of 1.5-4), so three share it. Each scenario's output goes to its own log,
# printed whole when it fails (a passing one prints one line). -s NAME... runs only those.
# The scenarios that judge a time budget (the health gate's crash budget, the alert's firing
# time) run first, each alone, so the budget is judged on a machine that is not overloaded.
# With ASCENDFLEET_MOLECULE_PYTEST_FLEET=1 (make test) the end-to-end fleet tests (pytest -m fleet:
# scripts/fleet-test.sh on a simulated fleet, mostly waiting on containers as a scenario does) run
# as more jobs of the pool instead of alone in make unit: pytest-fleet-revisions (the four-host model
# revisions test, the longest) and pytest-fleet (the others).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
jobs=${ASCENDFLEET_MOLECULE_JOBS:-3}
read -r -a alone <<<"${ASCENDFLEET_MOLECULE_ALONE:-vllm_compose_health_gate fleet_monitoring_prometheus}"
# The others start longest first (in the order of this list, then the unlisted ones), so the
# short ones fill the gaps at the end and none is left running alone for long. The order is the
# durations of a full CI run with three at a time (s): image_pull 1001, multinode_deploy 790,
# rollout 432, npu_verify_faults 279, prefetch_fanout 274, bad_inputs 272, fabric_preflight 265,
# prefetch_errors 261, prefetch_resume 195, vllm_compose_deploy 153, fleet_status 146, sim_host 95.
read -r -d "" -a longest <<<"${ASCENDFLEET_MOLECULE_LONGEST:-pytest-fleet-revisions vllm_compose_image_pull pytest-fleet vllm_compose_interrupted multinode_deploy vllm_compose_rollout
  npu_verify_faults prefetch_fanout bad_inputs multinode_fabric_preflight prefetch_errors prefetch_resume
  vllm_compose_deploy fleet_status sim_host}" || true
if [ "${1:-}" = "-s" ]; then
  shift
  scenarios=("$@")
else
  mapfile -t scenarios < <(find molecule -mindepth 2 -maxdepth 2 -name molecule.yml -printf '%h\n' | xargs -r -n1 basename | sort)
fi
if [ "${ASCENDFLEET_MOLECULE_PYTEST_FLEET:-0}" = 1 ]; then
  scenarios+=(pytest-fleet-revisions pytest-fleet)
fi
if [ ${#scenarios[@]} -eq 0 ]; then
  echo "molecule: no scenarios exist yet"
  exit 0
fi
# Everything the simulated fleet needs is built (or taken from the cache) once, up front.
tests/sim/assets.sh
logs=$(mktemp -d /tmp/molecule-all.XXXXXX)
# Scenarios run side by side share the fleet network: none removes it in its destroy (another
# may have just created it and not yet started its hosts on it); this script removes it at its
# end when it is one of the sim's and nothing uses it.
export ASCENDFLEET_SIM_KEEP_NETWORK=1
sim_network=${ASCENDFLEET_SIM_NETWORK:-ascendfleet-sim}
remove_network() {
  if docker network inspect -f '{{json .Labels}}' "$sim_network" 2>/dev/null | grep -qE '"ascendfleet-sim\.(fleet|molecule)"' \
     && [ "$(docker network inspect -f '{{len .Containers}}' "$sim_network")" = 0 ]; then
    docker network rm "$sim_network" >/dev/null 2>&1 || true
  fi
}
trap 'rm -rf "$logs"; remove_network' EXIT
# Made once here, before the scenarios start side by side: two creates of one name at the same
# moment make two networks of that name, and every host start then fails ("network ... is ambiguous").
docker network inspect "$sim_network" >/dev/null 2>&1 \
  || docker network create --label ascendfleet-sim.molecule=1 "$sim_network" >/dev/null

revisions_test=tests/sim/test_fleet_revisions.py
run_one() {
  local s=$1 start=$SECONDS rc=0
  if [ "$s" = pytest-fleet ]; then
    python -m pytest -m fleet -p no:cacheprovider --ignore "$revisions_test" >"$logs/$s.log" 2>&1 || rc=$?
  elif [ "$s" = pytest-fleet-revisions ]; then
    python -m pytest -m fleet -p no:cacheprovider "$revisions_test" >"$logs/$s.log" 2>&1 || rc=$?
  else
    molecule test -s "$s" >"$logs/$s.log" 2>&1 || rc=$?
  fi
  echo "$rc $((SECONDS - start))" >"$logs/$s.rc"
}

report() {
  local s=$1 rc seconds
  read -r rc seconds <"$logs/$s.rc"
  if [ "$rc" -eq 0 ]; then
    echo "=== molecule scenario: $s passed in ${seconds}s"
  else
    echo "=== molecule scenario: $s FAILED (rc $rc) in ${seconds}s; its log:"
    cat "$logs/$s.log"
    echo "=== end of the log of $s"
  fi
}

started=$SECONDS
pending=()
rest=()
for s in "${scenarios[@]}"; do
  if [[ " ${alone[*]} " == *" $s "* ]]; then
    echo "=== molecule scenario: $s started (alone)"
    run_one "$s"
    report "$s"
  elif [[ " ${longest[*]} " != *" $s "* ]]; then
    rest+=("$s")
  fi
done
for s in "${longest[@]}"; do
  if [[ " ${scenarios[*]} " == *" $s "* && " ${alone[*]} " != *" $s "* ]]; then
    pending+=("$s")
  fi
done
pending+=(${rest[@]+"${rest[@]}"})

declare -A running=()
while [ ${#pending[@]} -gt 0 ] || [ ${#running[@]} -gt 0 ]; do
  while [ ${#pending[@]} -gt 0 ] && [ ${#running[@]} -lt "$jobs" ]; do
    s=${pending[0]}
    pending=("${pending[@]:1}")
    echo "=== molecule scenario: $s started"
    run_one "$s" &
    running[$s]=$!
  done
  wait -n || true
  for s in "${!running[@]}"; do
    if [ -f "$logs/$s.rc" ]; then
      wait "${running[$s]}" || true
      unset "running[$s]"
      report "$s"
    fi
  done
done

failed=()
for s in "${scenarios[@]}"; do
  read -r rc _ <"$logs/$s.rc"
  [ "$rc" -eq 0 ] || failed+=("$s")
done
echo "molecule: ${#scenarios[@]} scenario(s) in $((SECONDS - started))s, $jobs at a time"
if [ ${#failed[@]} -gt 0 ]; then
  echo "molecule: failed scenarios: ${failed[*]}" >&2
  exit 1
fi
echo "molecule: ${#scenarios[@]} scenario(s) passed: ${scenarios[*]}"
