"""playbooks/status.yml falls back to the vllm_compose role's defaults for inventories that
leave them unset (it reads them without running the role); keep the two in step."""
import pathlib
import re

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
ROLE_DEFAULTS = ROOT / "roles" / "vllm_compose" / "defaults" / "main.yml"
PLAYBOOK = ROOT / "playbooks" / "status.yml"


def test_status_fallbacks_equal_the_role_defaults():
    defaults = yaml.safe_load(ROLE_DEFAULTS.read_text())
    text = PLAYBOOK.read_text()
    fallbacks = dict(re.findall(r"(vllm_compose_[a-z_]+) \| default\('([^']*)'\)", text))
    assert set(fallbacks) >= {"vllm_compose_image_repository", "vllm_compose_image_version", "vllm_compose_image_os",
                              "vllm_compose_image_variant", "vllm_compose_image", "vllm_compose_image_digest",
                              "vllm_compose_image_mirror", "vllm_compose_image_source", "vllm_compose_project_root",
                              "vllm_compose_api_key", "vllm_compose_report_dir"}
    for name, value in sorted(fallbacks.items()):
        assert str(defaults[name]) == value, "%s: status.yml falls back to %r, the role's default is %r" % (
            name, value, defaults[name])


def test_status_plays_are_read_only():
    plays = yaml.safe_load(PLAYBOOK.read_text())
    modules = [next(k for k in task if "." in k) for play in plays for task in play["tasks"]]
    assert modules == ["ascendfleet.llm.vllm_status", "ansible.builtin.set_fact", "ansible.builtin.set_fact",
                       "ansible.builtin.debug", "ansible.builtin.file", "ansible.builtin.copy"]
    # The only writes are the reports on the control node, and they never report a change.
    assert plays[1]["hosts"] == "localhost"
    for task in plays[1]["tasks"][2:]:
        assert task["changed_when"] is False and task["check_mode"] is False
