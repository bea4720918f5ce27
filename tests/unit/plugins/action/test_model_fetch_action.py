"""The model_fetch action's wait for an async job (plugins/action/model_fetch.py): the job file
async_wrapper writes is read with one shell command, and only when that read fails or does not
parse does the async_status module decide. The job files below are what ansible-core's
async_wrapper writes (`jwrite`): {"started": true, "finished": false, ...} while the module runs,
then the module's own result."""
import json
from unittest import mock

import pytest

from ansible.playbook.task import Task
from ansible_collections.ascendfleet.llm.plugins.action.model_fetch import ActionModule, progress_file_of

RUNNING = json.dumps({"started": True, "finished": False, "ansible_job_id": "j1.1"})
DONE = json.dumps({"changed": True, "model": "Qwen/Qwen3-8B", "files": 5, "ansible_job_id": "j1.1"})
FAILED = json.dumps({"msg": "Timeout exceeded", "failed": True, "child_pid": 42})


def action(shell, status=None):
    act = ActionModule(Task(), mock.MagicMock(), mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None)
    act._low_level_execute_command = mock.MagicMock(side_effect=lambda cmd, **kw: shell)
    act._remote = mock.MagicMock(return_value=status or {})
    return act


@pytest.mark.parametrize("stdout, finished", [(RUNNING, False), (DONE, True), (FAILED, True)])
def test_the_job_file_decides_without_a_module_run(stdout, finished):
    act = action({"rc": 0, "stdout": stdout})
    assert act._finished("/root/.ansible_async/j1.1", "j1.1", "/root/.ansible_async", {}) is finished
    act._remote.assert_not_called()
    cmd = act._low_level_execute_command.call_args[0][0]
    assert cmd == "cat /root/.ansible_async/j1.1"


@pytest.mark.parametrize("shell", [{"rc": 1, "stdout": "", "stderr": "cat: no such file"},
                                   {"rc": 0, "stdout": '{"started": tr'}, {"rc": 0, "stdout": "[]"}])
@pytest.mark.parametrize("status, finished", [({"started": 1, "finished": 0}, False), ({"finished": 1, "changed": False}, True)])
def test_async_status_decides_when_the_job_file_cannot_be_read(shell, status, finished):
    act = action(shell, status)
    assert act._finished("/root/.ansible_async/j1.1", "j1.1", "/root/.ansible_async", {}) is finished
    act._remote.assert_called_once_with("ansible.legacy.async_status",
                                        {"jid": "j1.1", "_async_dir": "/root/.ansible_async"}, {})


def test_a_path_with_spaces_is_quoted():
    act = action({"rc": 0, "stdout": DONE})
    act._finished("/home/ops user/.ansible_async/j1.1", "j1.1", "/home/ops user/.ansible_async", {})
    assert act._low_level_execute_command.call_args[0][0] == "cat '/home/ops user/.ansible_async/j1.1'"


def test_the_progress_line_is_read_where_the_layout_writes_it():
    args = {"model": "Qwen/Qwen3-8B", "cache_dir": "/mnt/disk2/modelscope/"}
    assert progress_file_of(args) == "/mnt/disk2/modelscope/models/Qwen/Qwen3-8B/.ascendfleet/progress.json"
    assert progress_file_of(dict(args, layout="flat")) == progress_file_of(args)
    assert progress_file_of(dict(args, layout="revisions")) == "/mnt/disk2/modelscope/revisions/Qwen/Qwen3-8B/progress.json"
    assert progress_file_of({"model": "Qwen3-8B", "cache_dir": "/c"}) is None
    assert progress_file_of({"model": "Qwen/Qwen3-8B"}) is None
