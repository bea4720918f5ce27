#!/usr/bin/env bash
# make demo: bring up the simulated Ascend fleet, deploy Qwen to it with the real playbook,
# then print what was deployed and how to call it. Refuses, naming what is missing, when a
# piece it needs does not exist yet.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
missing=()
[ -x tests/sim/fleet.sh ] || missing+=("the simulated Ascend fleet (tests/sim/fleet.sh, issue 'Simulated Ascend fleet')")
[ -f inventories/sim/hosts.yml ] || missing+=("the simulated fleet's inventory (inventories/sim/hosts.yml)")
for role in npu_verify model_prefetch vllm_compose; do
  [ -f "roles/$role/tasks/main.yml" ] || missing+=("role $role (roles/$role)")
done
[ -f playbooks/deploy_qwen.yml ] || missing+=("the playbook playbooks/deploy-qwen.yml")
if [ ${#missing[@]} -gt 0 ]; then
  echo "make demo cannot run yet; missing:" >&2
  printf '  - %s\n' "${missing[@]}" >&2
  exit 2
fi
tests/sim/fleet.sh up
ansible-playbook playbooks/deploy-qwen.yml -i inventories/sim/hosts.yml "$@"
# The fleet at a glance (read-only): a table here, reports/status.html for the browser.
ansible-playbook playbooks/status.yml -i inventories/sim/hosts.yml
# The fleet's one endpoint first (the gateway, routing by the request's "model"), then each host's own.
echo "demo: the fleet's endpoint (gateway):"
tests/sim/fleet.sh gateways
echo "demo: each deployment's own endpoint:"
tests/sim/fleet.sh endpoints
echo "demo: status page $top/reports/status.html (re-run: ansible-playbook playbooks/status.yml -i inventories/sim/hosts.yml)"
