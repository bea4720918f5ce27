#!/usr/bin/env bash
# Everything the simulated fleet and the roles need on this machine, built or reused (test
# infrastructure, never shipped). The one list of "what the demo needs": `make demo`,
# `make sim-up` (tests/sim/fleet.sh up), `make test` (make sim-assets) and molecule-all all call it.
#   1. the sim images            tests/sim/build-images.sh   $PREFIX/base, $PREFIX/host, $PREFIX/prometheus,
#                                                            $PREFIX/haproxy (+ its archive)
#   2. stand-in vllm-ascend      tests/sim/vllm/build.sh     quay.io/ascend/vllm-ascend:<tag> +
#                                                            $ASCENDFLEET_SIM_CACHE/images/*.tar
#   3. modelscope wheelhouse     tests/sim/hub/build-wheelhouse.sh
#                                                            $ASCENDFLEET_SIM_CACHE/wheelhouse
# Each step reuses what is current (input hashes, stamps), so a warm run takes seconds.
#   assets.sh          build or reuse all of them
#   assets.sh --check  only say what is missing (exit 1 if anything is)
# Env: see tests/sim/simenv.sh (ASCENDFLEET_SIM_CACHE, ASCENDFLEET_SIM_IMAGE_PREFIX).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/sim/simenv.sh
. "$here/simenv.sh"

# The artefacts, as "kind what" lines: the --check list and the newcomer test's expectations.
expected() {
  echo "image $(sim_image base)"
  echo "image $(sim_image host)"
  echo "image $(sim_image prometheus)"
  echo "image $(sim_image haproxy)"
  echo "file $ASCENDFLEET_SIM_CACHE/images/${ASCENDFLEET_SIM_IMAGE_PREFIX//[\/:]/_}_haproxy_latest.tar"
  local ref
  while read -r ref; do
    echo "image $ref"
    echo "file $ASCENDFLEET_SIM_CACHE/images/${ref//[\/:]/_}.tar"
  done < <("$here/vllm/build.sh" --list)
  echo "file $ASCENDFLEET_SIM_CACHE/wheelhouse/.stamp"
  echo "file $ASCENDFLEET_SIM_CACHE/wheelhouse/requirements.txt"
}

check() {
  local kind what missing=0
  while read -r kind what; do
    case $kind in
      image) docker image inspect "$what" >/dev/null 2>&1 || { echo "assets: missing image $what"; missing=1; } ;;
      file) [ -s "$what" ] || { echo "assets: missing file $what"; missing=1; } ;;
    esac
  done < <(expected)
  [ "$missing" = 0 ] && echo "assets: all present (cache $ASCENDFLEET_SIM_CACHE, images $ASCENDFLEET_SIM_IMAGE_PREFIX/*)"
  return "$missing"
}

case "${1:-}" in
  --check) check; exit ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

# One build at a time on this machine (make test, molecule-all and fleet.sh may overlap).
exec 8>/tmp/ascendfleet-sim-assets.lock
flock 8
t0=$(date +%s)
echo "assets: cache $ASCENDFLEET_SIM_CACHE, sim images $ASCENDFLEET_SIM_IMAGE_PREFIX/*"
"$here/build-images.sh"
SIMVLLM_BASE_IMAGE=$(sim_image base) "$here/vllm/build.sh"
"$here/hub/build-wheelhouse.sh"
echo "assets: wheelhouse $ASCENDFLEET_SIM_CACHE/wheelhouse ($(find "$ASCENDFLEET_SIM_CACHE/wheelhouse" -name '*.whl' | wc -l) wheels)"
check >/dev/null || { check >&2; echo "assets: a builder above finished without its artefact" >&2; exit 1; }
echo "assets: ready in $(( $(date +%s) - t0 ))s"
