#!/usr/bin/env bash
# ansible-test needs the working directory to *be* .../ansible_collections/<ns>/<name>
# (a symlink is not enough), so run it on a fresh copy of the tracked + new files.
# --venv, not --docker: there is no container registry to pull the test image from.
# The simulators (tests/sim/) and benchmarks (bench/) are test infrastructure that never ships
# and never runs on a managed host: they are left out here and checked by pytest instead.
set -euo pipefail
# The shellcheck sanity test is skipped with a warning when shellcheck is absent: install it.
if ! command -v shellcheck >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq shellcheck >/dev/null
fi
top=$(cd "$(dirname "$0")/.." && pwd)
dest=$top/.build/ansible_collections/ascendfleet/llm
rm -rf "$dest"
mkdir -p "$dest"
cd "$top"
git ls-files -z --cached --others --exclude-standard \
  | grep -zv -e '^\.collections/' -e '^tests/sim/' -e '^bench/' \
  | while IFS= read -r -d '' f; do [ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"; done \
  | rsync -a --from0 --files-from=- ./ "$dest/"
# ansible-test --venv bootstraps pip with a script it downloads from a host we cannot reach;
# give it our own equivalent at the cache path it checks first (scripts/ansible-test-get-pip.py).
pip_version=$(python - <<'PY'
from ansible_test._internal.python_requirements import get_venv_packages
from ansible_test._internal.host_configs import NativePythonConfig
import sys
print(get_venv_packages(NativePythonConfig(version="%d.%d" % sys.version_info[:2]))["pip"])
PY
)
cache=${HOME}/.ansible/test/cache
mkdir -p "$cache"
cp "$top/scripts/ansible-test-get-pip.py" "$cache/get_pip_${pip_version//./_}.py"
cd "$dest"
# ansible-test reads the file list from git when it is a repository: make it one.
git init -q && git add -A && git -c user.email=ci@localhost -c user.name=ci commit -qm sanity
ansible-test sanity --venv --python "$(python -c 'import sys; print("%d.%d" % sys.version_info[:2])')" \
  --color no "$@"
