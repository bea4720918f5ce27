"""playbooks/status.yml runs two entry points of the vllm_compose role (so the role's defaults
and the shared ascendfleet_* inputs apply as in a deployment); both only read, and the only
writes are the reports on the control node (fleet_report, never a change)."""
import pathlib

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
PLAYBOOK = ROOT / "playbooks" / "status.yml"
TASKS = ROOT / "roles" / "vllm_compose" / "tasks"


def modules(tasks):
    return [next(k for k in task if "." in k) for task in tasks]


def test_status_plays_are_role_entry_points():
    plays = yaml.safe_load(PLAYBOOK.read_text())
    # The report play too is on the hosts of the run (once, on the control node): on localhost,
    # --limit <host> skipped it.
    # The first play's hosts load the collection's filters in ansible-playbook's own process (issue 30).
    assert [play["hosts"] for play in plays] == ["{{ 'ascend_servers' | ascendfleet.llm.load_plugins }}", "ascend_servers"]
    entry = [play["tasks"][0]["ansible.builtin.include_role"] for play in plays]
    assert entry == [{"name": "ascendfleet.llm.vllm_compose", "tasks_from": "status"},
                     {"name": "ascendfleet.llm.vllm_compose", "tasks_from": "status_report"}]
    assert all(len(play["tasks"]) == 1 for play in plays)


def test_status_entry_points_are_read_only():
    read = yaml.safe_load((TASKS / "status.yml").read_text())
    assert modules(read) == ["ascendfleet.llm.vllm_status", "ansible.builtin.set_fact"]
    assert read[0]["check_mode"] is False
    report = yaml.safe_load((TASKS / "status_report.yml").read_text())
    # the reports go through the collection's one writer (on the control node, in check mode too,
    # never a change: tests/unit/plugins/action/test_fleet_report.py)
    # Behind gateways, fleet_gateway's read-only entry point first (each gateway's pools).
    assert modules(report) == ["ansible.builtin.include_role", "ansible.builtin.set_fact", "ansible.builtin.debug",
                               "ascendfleet.llm.fleet_report"]
    assert report[0]["ansible.builtin.include_role"]["tasks_from"] == "status"
    assert sorted(report[3]["ascendfleet.llm.fleet_report"]["files"]) == ["status.html", "status.json", "status.md"]
    gateway = yaml.safe_load((ROOT / "roles" / "fleet_gateway" / "tasks" / "status.yml").read_text())
    assert modules(gateway) == ["ascendfleet.llm.fleet_gateway_server", "ansible.builtin.set_fact"]
    # no state: the module only reads
    assert "state" not in gateway[0]["ascendfleet.llm.fleet_gateway_server"] and gateway[0]["check_mode"] is False
