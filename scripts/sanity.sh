#!/usr/bin/env bash
# ansible-test needs the working directory to *be* .../ansible_collections/<ns>/<name>
# (a symlink is not enough), so run it on a fresh copy of the tracked + new files.
# --venv, not --docker: there is no container registry to pull the test image from.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dest=$top/.build/ansible_collections/ascendfleet/llm
rm -rf "$dest"
mkdir -p "$dest"
cd "$top"
git ls-files -z --cached --others --exclude-standard \
  | grep -zv -e '^\.collections/' \
  | while IFS= read -r -d '' f; do [ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"; done \
  | rsync -a --from0 --files-from=- ./ "$dest/"
cd "$dest"
# ansible-test reads the file list from git when it is a repository: make it one.
git init -q && git add -A && git -c user.email=ci@localhost -c user.name=ci commit -qm sanity
ansible-test sanity --venv --python "$(python -c 'import sys; print("%d.%d" % sys.version_info[:2])')" \
  --color no "$@"
