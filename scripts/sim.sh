#!/usr/bin/env bash
# make sim-up / sim-down: delegate to the simulated fleet's own script once it exists.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
if [ ! -x "$top/tests/sim/fleet.sh" ]; then
  echo "sim: the simulated Ascend fleet (tests/sim/fleet.sh) does not exist yet" >&2
  [ "${1:-}" = down ] && exit 0
  exit 2
fi
exec "$top/tests/sim/fleet.sh" "$@"
