"""The deploy playbook's no-op decision (issue 30): the play "Decide which hosts have nothing to do" of
playbooks/deploy_qwen.yml, run as it is (real ansible-playbook, connection local, one inventory host
per case) after a first play that keeps the one read per host as npu_verify's judge.yml does
(ascendfleet_npu, ascendfleet_host). Each case differs from a no-op host in one thing a role checks,
and must not join the group ascendfleet_noop: the decision names why (filter fleet_noop_hosts with
reasons), and a host whose cache is not complete is not even planned. The no-op side (a host that
is left out of every later play) is measured on the sim fleet by the bench's noop section."""
import json
import sys

import yaml

from .playbook_run import ROOT, one_read_play, run_playbook

MODEL = "Qwen/Qwen3.5-27B"
CHIPS = [{"device_id": i, "health": "OK"} for i in range(8)]
RUNNING = {"cards": [0, 1], "cards_changed": False, "image_id": "sha256:aa", "last_good_mode": "0755",
           "compose": "services: {}\n", "compose_mode": "0644", "last_good_compose": "services: {}\n",
           "containers": [{"service": "vllm-ascend", "status": "running", "config_hash": "h1", "image_label": "sha256:aa"}],
           "config_hashes": {"vllm-ascend": "h1"}, "env_matches": True, "env_mode": "0600"}
CASES = {
    # case: (host vars, groups, the reason the decision must give)
    "chip-unhealthy": ({"case_verdict": "fail"}, [], "npu_verify: verdict fail"),
    "shard-missing": ({"case_missing": [{"model": MODEL, "revision": "master"}]}, [],
                      "model_prefetch: missing {'model': '%s', 'revision': 'master'}" % MODEL),
    "no-read-this-run": ({"case_fact": {}}, [], "model_prefetch: the one read did not answer its question"),
    "container-stopped": ({"case_state": {"containers": [{"service": "vllm-ascend", "status": "exited", "config_hash": "h1",
                                                          "image_label": "sha256:aa"}]}}, [], "containers: exited, not running"),
    "live-not-last-good": ({"case_state": {"last_good_compose": "services: {old: {}}\n"}}, [],
                           "gate: the live compose.yaml is not last-known-good"),
    "multinode-member": ({}, ["ascendfleet_multinode_members"], "member of a multi-node deployment"),
    "gateway-host": ({}, ["ascendfleet_gateways"], "gateway host"),
}
FIRST = one_read_play(["model_prefetch", "vllm_compose"]) + """    - name: Keep the answers with their questions
      ansible.builtin.set_fact:
        ascendfleet_npu: {family: 910B, chips: %(chips)s, healthy_device_ids: [0, 1, 2, 3, 4, 5, 6, 7],
                          unhealthy_device_ids: [], verdict: "{{ case_verdict | default('pass') }}"}
        ascendfleet_host: >-
          {{ case_fact if case_fact is defined else
             {'model_cache': {'models': [], 'missing': case_missing | default([]), 'cli_version': none, 'states': {}},
              'model_cache_asked': __model_prefetch_read_args,
              'vllm_host': {'orphans': [], 'errors': [], 'port_holders': {}, 'problems': [], 'exclude': [],
                            'deployments': {'qwen': %(running)s | combine(case_state | default({}))}},
              'vllm_host_asked': {'base': __vllm_compose_read_base, 'api_key_set': true,
                                  'planned': __vllm_compose_read_args.planned_by_family['910B'], 'exclude': []}} }}
"""
LAST = """
- name: Keep the decision
  hosts: all
  gather_facts: false
  tasks:
    - name: Write what the decision found
      ansible.builtin.copy:
        content: >-
          {{ {'noop': groups['ascendfleet_noop'] | default([]),
              'decision': ansible_play_hosts | ascendfleet.llm.fleet_noop_hosts(hostvars,
                multinode=groups['ascendfleet_multinode_members'] | default([]), gateways=groups['ascendfleet_gateways'] | default([]),
                reasons=true),
              'planned': ansible_play_hosts | select('in', hostvars | dict2items | selectattr('value.__vllm_compose_planned', 'defined')
                                                     | map(attribute='key') | list) | list} | to_json }}
        dest: "%(out)s/decision.json"
        mode: "0600"
      run_once: true
      delegate_to: localhost
"""


def decision_play():
    """The play of playbooks/deploy_qwen.yml that decides, as it is."""
    plays = yaml.safe_load((ROOT / "playbooks" / "deploy_qwen.yml").read_text())
    return [p for p in plays if p.get("name") == "Decide which hosts have nothing to do"]


def test_a_host_that_differs_in_anything_a_role_checks_is_not_a_no_op(tmp_path):
    hosts, groups = {}, {"ascendfleet_multinode_members": {"hosts": {}}, "ascendfleet_gateways": {"hosts": {}}}
    for case, (hostvars, in_groups, _reason) in CASES.items():
        hosts[case] = dict(hostvars, ansible_connection="local", ansible_python_interpreter=sys.executable)
        for group in in_groups:
            groups[group]["hosts"][case] = {}
    common = {"ascendfleet_deployments": [{"name": "qwen", "preset": "qwen3.5-27b", "model": MODEL, "revision": "master", "port": 8000}],
              "vllm_compose_project_root": str(tmp_path / "opt"), "ascendfleet_cache_dir": str(tmp_path / "cache"),
              "model_prefetch_venv": str(tmp_path / "venv"), "vllm_compose_api_key": "sim-key-3b9f",
              "model_prefetch_report_dir": str(tmp_path / "reports"),
              # Each case on its own (a host missing a model keeps its whole fan-out domain in the full
              # path: proven in tests/unit/plugins/module_utils/test__fleet_noop.py).
              "model_prefetch_fanout": False}
    out = tmp_path / "out"
    out.mkdir()
    inventory = {"all": {"vars": common, "hosts": hosts, "children": dict(groups, ascend_servers={"hosts": dict.fromkeys(hosts, {})})}}
    proc = run_playbook(tmp_path, inventory, FIRST % {"chips": json.dumps(CHIPS), "running": json.dumps(RUNNING)}
                        + yaml.safe_dump(decision_play(), sort_keys=False) + LAST % {"out": out}, fake_docker=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-3000:]
    got = json.loads((out / "decision.json").read_text())
    assert got["noop"] == [] and got["decision"]["noop"] == [], got
    for case, (_hostvars, _groups, reason) in CASES.items():
        assert any(reason in why for why in got["decision"]["reasons"][case]), (case, got["decision"]["reasons"][case])
    # Only the hosts a no-op is still possible for are planned from the one read (no plan, no read
    # of the host for the others: the later plays take them through the full path).
    assert sorted(got["planned"]) == ["container-stopped", "live-not-last-good"], got["planned"]
