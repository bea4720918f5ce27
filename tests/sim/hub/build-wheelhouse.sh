#!/usr/bin/env bash
# Build, once, the wheelhouse of the ModelScope CLI for the simulated fleet (a simulator
# asset: the sim hosts install `modelscope` from it the air-gapped way, with
# `pip install --no-index --find-links`).
#
#   tests/sim/hub/build-wheelhouse.sh [--force]
#
# Target: Debian bookworm python3 (CPython 3.11, x86_64, glibc 2.36). Pins come from
# modelscope-requirements.txt next to this script. Output, under
# $ASCENDFLEET_SIM_CACHE (tests/sim/simenv.sh decides it; tests/sim/assets.sh calls this):
#   wheelhouse/          the wheels, plus .stamp (sha256 of the pins and target)
#   modelscope-venv/     a venv installed from the wheelhouse offline (the proof that the
#                        wheelhouse is complete; the hub's pytest uses its CLI)
# A matching stamp skips the work.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
req="$here/modelscope-requirements.txt"
python=${PYTHON:-python3}
force=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "build-wheelhouse: unknown argument '$arg' (usage: $0 [--force])" >&2; exit 2 ;;
  esac
done

# shellcheck source=tests/sim/simenv.sh
. "$here/../simenv.sh"
cache=$ASCENDFLEET_SIM_CACHE
wh="$cache/wheelhouse"
venv="$cache/modelscope-venv"

# The sim hosts run bookworm's python3 3.11 on x86_64 with glibc 2.36: every manylinux
# tag up to 2.36 fits (pip does not expand --platform to the older tags by itself).
target=(--python-version 3.11 --implementation cp --abi cp311 --abi abi3 --abi none
  --only-binary=:all:)
for glibc in 36 35 34 33 32 31 30 29 28 27 26 25 24 23 22 21 20 19 18 17; do
  target+=(--platform "manylinux_2_${glibc}_x86_64")
done
target+=(--platform manylinux2014_x86_64)
stamp=$( { cat "$req"; echo "${target[*]}"; echo "format 1"; } | sha256sum | cut -d' ' -f1)

started=$(date +%s)
if [ "$force" = 0 ] && [ -f "$wh/.stamp" ] && [ "$(cat "$wh/.stamp")" = "$stamp" ]; then
  echo "build-wheelhouse: $wh is up to date (stamp $stamp)"
else
  if ! "$python" -m pip --version >/dev/null 2>&1; then
    echo "build-wheelhouse: '$python -m pip' is not available; install python3-pip or set" \
      "PYTHON to an interpreter that has pip" >&2
    exit 1
  fi
  rm -rf "$wh.tmp"
  mkdir -p "$wh.tmp"
  echo "build-wheelhouse: downloading the pinned wheels into $wh"
  "$python" -m pip download --quiet --disable-pip-version-check --no-cache-dir \
    "${target[@]}" -r "$req" -d "$wh.tmp"
  cp "$req" "$wh.tmp/requirements.txt"
  echo "$stamp" > "$wh.tmp/.stamp"
  rm -rf "$wh"
  mv "$wh.tmp" "$wh"
fi

# Prove the wheelhouse is complete: install from it with no index at all.
if [ "$force" = 0 ] && [ -f "$venv/.stamp" ] && [ "$(cat "$venv/.stamp")" = "$stamp" ] \
  && [ -x "$venv/bin/modelscope" ]; then
  echo "build-wheelhouse: $venv is up to date"
else
  rm -rf "$venv"
  "$python" -m venv "$venv"
  PIP_CONFIG_FILE=/dev/null "$venv/bin/pip" install --quiet --disable-pip-version-check \
    --no-index --find-links "$wh" -r "$wh/requirements.txt"
  "$venv/bin/modelscope" download --help >/dev/null 2>&1 || {
    echo "build-wheelhouse: '$venv/bin/modelscope download --help' failed after an offline" \
      "install from $wh; run it by hand to see why" >&2
    exit 1
  }
  echo "$stamp" > "$venv/.stamp"
fi

echo "build-wheelhouse: $(find "$wh" -name '*.whl' | wc -l) wheels, $(du -sh "$wh" | cut -f1)," \
  "$(( $(date +%s) - started ))s; $("$venv/bin/modelscope" --version 2>/dev/null | tail -1)"
echo "wheelhouse=$wh"
echo "venv=$venv"
