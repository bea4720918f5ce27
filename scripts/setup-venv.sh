#!/usr/bin/env bash
# Create the project virtualenv and install the pinned toolchain into it.
set -euo pipefail
venv=${1:-.venv}
python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "setup-venv: need Python >= 3.11 (found $("$python" -V 2>&1))" >&2
  exit 1
fi
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q -r "$(dirname "$0")/../requirements-dev.txt"
