#!/usr/bin/env bash
# Check execution-environment.yml without building an image (building needs the base image from
# a registry, which these machines cannot reach): build the collection tarball the EE installs,
# then `ansible-builder create` validates the definition against its schema and writes the
# build context (Containerfile + requirement files) into .build/ee-context. Idempotent.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:-$top/.venv}
builder=${ANSIBLE_BUILDER:-$venv/bin/ansible-builder}
[ -x "$builder" ] || { echo "check-ee: $builder not found: run 'make venv' (ansible-builder is pinned in requirements-dev.txt)" >&2; exit 2; }
cd "$top"
rm -rf .build/ee .build/ee-context
mkdir -p .build/ee
"$venv/bin/ansible-galaxy" collection build --force --output-path .build/ee >/dev/null
"$builder" create --file execution-environment.yml --context .build/ee-context --output-filename Containerfile -v 1 >/dev/null
cf=.build/ee-context/Containerfile
for want in "EE_BASE_IMAGE=\"registry.access.redhat.com/ubi9/python-311:" "ansible-galaxy collection install --offline"; do
  grep -q -- "$want" "$cf" || { echo "check-ee: $cf lacks '$want'" >&2; exit 1; }
done
ls .build/ee-context/_build/ascendfleet/ascendfleet-llm-*.tar.gz >/dev/null
echo "check-ee: execution-environment.yml is valid; build context in .build/ee-context"
