"""The one report writer (plugins/action/fleet_report.py): the same files in normal and check mode,
rewritten only when their content changes, never reported as a change; and every role and the
status playbook write their reports with it."""
import os
import pathlib
from unittest import mock

import pytest
import yaml

from ansible.errors import AnsibleActionFail
from ansible.playbook.task import Task
from ansible_collections.ascendfleet.llm.plugins.action.fleet_report import ActionModule
from ansible_collections.ascendfleet.llm.plugins.module_utils._files import write_if_changed

ROOT = pathlib.Path(__file__).resolve().parents[4]


def action(args, check_mode=False):
    task = Task()
    task.args = args
    context = mock.MagicMock(check_mode=check_mode)
    return ActionModule(task, mock.MagicMock(), context, loader=None, templar=None, shared_loader_obj=None)


@pytest.mark.parametrize("check_mode", [False, True])
def test_writes_reports_and_never_reports_a_change(tmp_path, monkeypatch, check_mode):
    monkeypatch.setenv("PWD", str(tmp_path))
    files = {"a.json": '{"x": 1}\n', "a.md": "# A\n"}
    first = action({"dir": "reports", "files": files}, check_mode).run(task_vars={"playbook_dir": "/elsewhere"})
    assert first["changed"] is False and first["rewritten"] == ["a.json", "a.md"]
    assert first["path"] == str(tmp_path / "reports")
    assert (tmp_path / "reports" / "a.md").read_text() == "# A\n"
    stamp = os.stat(tmp_path / "reports" / "a.json").st_mtime_ns
    again = action({"dir": "reports", "files": files}, check_mode).run(task_vars={})
    assert again["changed"] is False and again["rewritten"] == []
    assert os.stat(tmp_path / "reports" / "a.json").st_mtime_ns == stamp
    moved = action({"dir": str(tmp_path / "reports"), "files": dict(files, **{"a.md": "# B\n"})}).run(task_vars={})
    assert moved["rewritten"] == ["a.md"] and (tmp_path / "reports" / "a.md").read_text() == "# B\n"


def test_bad_arguments_are_refused(tmp_path):
    with pytest.raises(AnsibleActionFail, match="not a plain file name"):
        action({"dir": str(tmp_path), "files": {"../x": ""}}).run(task_vars={})
    with pytest.raises(AnsibleActionFail, match="files must be a mapping"):
        action({"dir": str(tmp_path), "files": []}).run(task_vars={})
    with pytest.raises(AnsibleActionFail, match="unknown option"):
        action({"dir": str(tmp_path), "files": {"a": ""}, "mode": "0600"}).run(task_vars={})


def test_an_unwritable_directory_names_the_variable(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(AnsibleActionFail, match="set ascendfleet_report_dir to a writable directory"):
        action({"dir": str(tmp_path / "file" / "reports"), "files": {"a": ""}}).run(task_vars={})


def test_write_if_changed(tmp_path):
    path = str(tmp_path / "r.txt")
    assert write_if_changed(path, b"1") is True
    assert write_if_changed(path, b"1") is False
    assert write_if_changed(path, b"2") is True and open(path, "rb").read() == b"2"
    assert os.listdir(str(tmp_path)) == ["r.txt"]  # no temporary file left


def report_tasks():
    """Every task of the roles that writes on the control node (delegate_to localhost) or a report."""
    for path in sorted((ROOT / "roles").glob("*/tasks/*.yml")):
        for task in yaml.safe_load(path.read_text()) or []:
            for inner in [task] + task.get("block", []) + task.get("always", []) + task.get("rescue", []):
                yield path, inner


def test_every_report_is_written_by_fleet_report():
    writers = [(p.parent.parent.name, p.name) for p, t in report_tasks() if "ascendfleet.llm.fleet_report" in t]
    assert sorted(writers) == [("model_prefetch", "report_write.yml"), ("npu_verify", "report.yml"),
                               ("vllm_compose", "status_report.yml"), ("vllm_compose", "summary.yml")]
    for path, task in report_tasks():
        if "ascendfleet.llm.fleet_report" in task:
            assert task["run_once"] is True, path
        # nothing else writes on the control node (a stat only reads: the image pre-flight's archive check)
        assert task.get("delegate_to") != "localhost" or "ansible.builtin.stat" in task, "%s: %s" % (path, task.get("name"))
