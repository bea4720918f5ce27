"""The plan's use of the one read per host (issue 30): vllm_compose's plan (tasks_from: plan) takes what
runs on the host from the fact ascendfleet_host only when the read asked its own question and nothing
may have changed on the host since; every other case reads the host again (vllm_host_info), so a
host whose state differs in anything the plan checks goes through the full path as before.

Real ansible-playbook on this machine (connection local), one inventory host per case. The first
play builds ascendfleet_host as the deploy playbook's verify play does (its vars import
vllm_compose's read_args; judge.yml's shape), with an answer marked by a sentinel problem; then one
thing of the case is made different. The second play is the plan of deploy_qwen.yml; what the plan
used is read back from __vllm_compose_host."""
import json
import sys

from ..playbook_run import one_read_play, run_playbook

SENTINEL = "answered by the one read of this run"
CHIPS = [{"device_id": i, "health": "OK"} for i in range(8)]
CASES = {
    # case: (host vars, groups)
    "same": ({}, []),
    "port-asked-differs": ({"case_asked": {"port": 8001}}, []),
    "image-asked-differs": ({"case_asked": {"image": "quay.io/ascend/vllm-ascend:v0.16.0rc1-openeuler"}}, []),
    "chip-unhealthy-since": ({"case_unhealthy": [3]}, []),
    "multinode-member": ({}, ["ascendfleet_multinode_members"]),
    "gateway-host": ({}, ["ascendfleet_gateways"]),
    "prefetch-copied": ({"case_prefetch": {"own_fetch": [], "copy": [{"model": "Qwen/Qwen3.5-27B"}]}}, []),
    "prefetch-fetched": ({"case_prefetch": {"own_fetch": [{"model": "Qwen/Qwen3.5-27B"}], "copy": []}}, []),
    "no-read-this-run": ({"case_fact": {}}, []),
    "read-failed": ({"case_answer": {"error": "reading what runs on the host failed: boom"}}, []),
    "api-key-set-since": ({"case_api_key_set": True}, []),
}
PLAY = one_read_play(["vllm_compose"]) + """    - name: Keep the answer with its question
      ansible.builtin.set_fact:
        ascendfleet_npu: {family: 910B, chips: %(chips)s, healthy_device_ids: [0, 1, 2, 3, 4, 5, 6, 7],
                          unhealthy_device_ids: "{{ case_unhealthy | default([]) }}"}
        ascendfleet_host: >-
          {{ case_fact if case_fact is defined else
             {'vllm_host': case_answer | default({'orphans': [], 'errors': [], 'port_holders': {}, 'problems': ['%(sentinel)s'],
                                                  'exclude': [], 'deployments': {'qwen': {'cards': [0, 1]}}}),
              'vllm_host_asked': {'base': __vllm_compose_read_base, 'api_key_set': case_api_key_set | default(false),
                                  'planned': __vllm_compose_read_args.planned_by_family['910B']
                                             | map('combine', case_asked | default({})) | list,
                                  'exclude': []}} }}
        __model_prefetch_plans: "{{ {inventory_hostname: case_prefetch} if case_prefetch is defined else {} }}"

- name: The plan of deploy_qwen.yml
  hosts: all
  gather_facts: false
  tasks:
    - name: Plan each host's deployments
      ansible.builtin.import_role:
        name: ascendfleet.llm.vllm_compose
        tasks_from: plan
    - name: Keep what the plan used
      ansible.builtin.copy:
        content: "{{ {'problems': __vllm_compose_host.problems | default(none), 'noop': __vllm_compose_noop} | to_json }}"
        dest: "%(out)s/{{ inventory_hostname }}.json"
        mode: "0600"
      delegate_to: localhost
"""


def test_the_plan_takes_the_one_read_only_for_its_own_question_on_an_unchanged_host(tmp_path):
    hosts, groups = {}, {"ascendfleet_multinode_members": {"hosts": {}}, "ascendfleet_gateways": {"hosts": {}}}
    for case, (hostvars, in_groups) in CASES.items():
        hosts[case] = dict(hostvars, ansible_connection="local", ansible_python_interpreter=sys.executable)
        for group in in_groups:
            groups[group]["hosts"][case] = {}
    common = {"ascendfleet_deployments": [{"name": "qwen", "preset": "qwen3.5-27b", "model": "Qwen/Qwen3.5-27B",
                                           "revision": "master", "port": 8000}],
              "vllm_compose_project_root": str(tmp_path / "opt"), "ascendfleet_cache_dir": str(tmp_path / "cache"),
              "vllm_compose_api_key": "sim-key-3b9f"}
    # api-key-set-since: the read was asked without the key line, the plan now has one; the others
    # were asked with it.
    for case, hv in hosts.items():
        hv.setdefault("case_api_key_set", True)
    hosts["api-key-set-since"]["case_api_key_set"] = False
    out = tmp_path / "out"
    out.mkdir()
    proc = run_playbook(tmp_path, {"all": {"vars": common, "hosts": hosts, "children": groups}},
                        PLAY % {"chips": json.dumps(CHIPS), "sentinel": SENTINEL, "out": out}, fake_docker=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    used = dict((case, json.loads((out / (case + ".json")).read_text())) for case in CASES)
    # Only the host whose read asked the plan's own question, with nothing changed since, is
    # answered by the one read; every other case reads the host again.
    shared = sorted(case for case, got in used.items() if got["problems"] == [SENTINEL])
    assert shared == ["same"], used
    for case, got in used.items():
        if case != "same":
            assert isinstance(got["problems"], list) and SENTINEL not in got["problems"], (case, got)
