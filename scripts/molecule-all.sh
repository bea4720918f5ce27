#!/usr/bin/env bash
# Run every molecule scenario (each directory under molecule/ with a molecule.yml).
# The shared base config is .config/molecule/config.yml; scenarios only override variables.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
mapfile -t scenarios < <(find molecule -mindepth 2 -maxdepth 2 -name molecule.yml -printf '%h\n' | xargs -r -n1 basename | sort)
if [ ${#scenarios[@]} -eq 0 ]; then
  echo "molecule: no scenarios exist yet"
  exit 0
fi
# Everything the simulated fleet needs is built (or taken from the cache) once, up front.
tests/sim/assets.sh
failed=()
timings=()
for s in "${scenarios[@]}"; do
  echo "=== molecule scenario: $s"
  start=$SECONDS
  if ! molecule test -s "$s"; then
    failed+=("$s")
  fi
  timings+=("$s $((SECONDS - start))s")
done
printf 'molecule: %s\n' "${timings[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "molecule: failed scenarios: ${failed[*]}" >&2
  exit 1
fi
echo "molecule: ${#scenarios[@]} scenario(s) passed: ${scenarios[*]}"
