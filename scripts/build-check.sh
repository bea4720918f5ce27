#!/usr/bin/env bash
# Build the collection tarball and install it into a scratch path: the round trip users make.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/.build/galaxy
rm -rf "$out"
mkdir -p "$out/dist" "$out/collections"
cd "$top"
ansible-galaxy collection build --force --output-path "$out/dist" .
tarball=$(ls "$out"/dist/ascendfleet-llm-*.tar.gz)
# Dependencies come from the `ansible` package here; Galaxy is unreachable (--no-deps).
ansible-galaxy collection install --no-deps --force -p "$out/collections" "$tarball"
installed=$out/collections/ansible_collections/ascendfleet/llm
test -f "$installed/MANIFEST.json"
# Nothing that exists only for tests may ship.
for forbidden in tests molecule .ci .collections .config scripts bench; do
  if [ -e "$installed/$forbidden" ]; then
    echo "build-check: $forbidden/ must not be in the built collection" >&2
    exit 1
  fi
done
# The installed copy must be usable on its own: every module is listed from there, and every
# role's documentation (from meta/argument_specs.yml) renders.
listing=$(ANSIBLE_COLLECTIONS_PATH=$out/collections ansible-doc -l ascendfleet.llm)
printf '%s\n' "$listing"
for m in plugins/modules/*.py; do
  [ -e "$m" ] || continue
  name=ascendfleet.llm.$(basename "$m" .py)
  grep -q "^$name " <<<"$listing" || { echo "build-check: $name missing from the installed collection" >&2; exit 1; }
done
for r in roles/*/; do
  [ -d "$r" ] || continue
  ANSIBLE_COLLECTIONS_PATH=$out/collections ansible-doc -t role "ascendfleet.llm.$(basename "$r")" >/dev/null
done
echo "build-check: $(basename "$tarball") builds and installs"
