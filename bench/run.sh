#!/usr/bin/env bash
# make bench: the collection on its own simulated fleet against floors measured in the same run
# (see docs/benchmarks.md). Never fails on speed; exits non-zero only when the harness breaks.
#   bench/run.sh                 full run (within 25 min on 2 cores when the machine is quiet), rewrites docs/benchmarks.md
#   BENCH_QUICK=1 bench/run.sh   small sizes for iterating; results in .cache/bench/latest.json
#   BENCH_SECTIONS=gateway BENCH_WRITE_DOCS=0 bench/run.sh   one section (noop, prefetch, rollout, gateway) on its own fleet
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
venv=${VENV:-$top/.venv}
if [ -x "$venv/bin/ansible-playbook" ]; then
  export PATH="$venv/bin:$PATH"
fi
command -v ansible-playbook >/dev/null 2>&1 \
  || { echo "bench: ansible-playbook not found: run 'make setup' (or make VENV=... bench)" >&2; exit 2; }
docker info >/dev/null 2>&1 || { echo "bench: Docker is not answering (docker info failed): run 'make docker'" >&2; exit 2; }
export ANSIBLE_CONFIG="$top/ansible.cfg"
python=$(command -v python3)
[ -x "$venv/bin/python" ] && python=$venv/bin/python
exec "$python" "$top/bench/bench.py" "$@"
