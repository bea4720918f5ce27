#!/usr/bin/env bash
# make bench: delegate to bench/run.sh once the benchmarks exist.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
if [ ! -x "$top/bench/run.sh" ]; then
  echo "bench: the benchmarks (bench/run.sh, issue 'Benchmarks') do not exist yet" >&2
  exit 2
fi
exec "$top/bench/run.sh" "$@"
