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


PROGRESS = json.dumps({"line": "Qwen/Qwen3-8B: 1.0 GiB / 4.0 GiB (25%), 110 MiB/s, 1/5 files, ~28 s left", "done": 1})
JOB = "/root/.ansible_async/j1.1"
PROGRESS_FILE = "/c/models/Qwen/Qwen3-8B/.ascendfleet/progress.json"


def round_output(job, progress=PROGRESS):
    return "%s\n\n--ascendfleet-progress--\n%s" % (job, progress)


@pytest.mark.parametrize("stdout, finished", [(RUNNING, False), (DONE, True), (FAILED, True)])
def test_one_shell_command_waits_and_reads_the_job_and_its_progress(stdout, finished):
    act = action({"rc": 0, "stdout": round_output(stdout)})
    ended, line = act._wait(JOB, "j1.1", "/root/.ansible_async", PROGRESS_FILE, 5, {})
    assert (ended, line) == (finished, json.loads(PROGRESS)["line"])
    act._remote.assert_not_called()  # no module run: neither async_status nor slurp
    cmd = act._low_level_execute_command.call_args[0][0]
    # Waits on the host in quarter seconds while async_wrapper's job file says it runs, 5 s at most.
    assert cmd.startswith("j=%s; n=20; while " % JOB)
    assert "grep -q '\"finished\": false' \"$j\"" in cmd and "sleep 0.25 || break" in cmd
    assert cmd.endswith('cat "$j"; echo; echo --ascendfleet-progress--; cat %s 2>/dev/null' % PROGRESS_FILE)


def test_a_missing_progress_file_is_no_line():
    act = action({"rc": 0, "stdout": round_output(RUNNING, progress="")})
    assert act._wait(JOB, "j1.1", "/root/.ansible_async", PROGRESS_FILE, 1, {}) == (False, None)
    act = action({"rc": 0, "stdout": RUNNING})
    assert act._wait(JOB, "j1.1", "/root/.ansible_async", None, 1, {}) == (False, None)
    assert "progress" not in act._low_level_execute_command.call_args[0][0]


@pytest.mark.parametrize("shell", [{"rc": 1, "stdout": "", "stderr": "cat: no such file"},
                                   {"rc": 0, "stdout": round_output('{"started": tr')}, {"rc": 0, "stdout": "[]"}])
@pytest.mark.parametrize("status, finished", [({"started": 1, "finished": 0}, False), ({"finished": 1, "changed": False}, True)])
def test_async_status_decides_when_the_job_file_cannot_be_read(shell, status, finished):
    act = action(shell, status)
    assert act._wait(JOB, "j1.1", "/root/.ansible_async", PROGRESS_FILE, 1, {})[0] is finished
    act._remote.assert_called_once_with("ansible.legacy.async_status",
                                        {"jid": "j1.1", "_async_dir": "/root/.ansible_async"}, {})


def test_a_path_with_spaces_is_quoted():
    act = action({"rc": 0, "stdout": round_output(DONE)})
    act._wait("/home/ops user/.ansible_async/j1.1", "j1.1", "/home/ops user/.ansible_async",
              "/mnt/my disk/models/Qwen/Qwen3-8B/.ascendfleet/progress.json", 1, {})
    cmd = act._low_level_execute_command.call_args[0][0]
    assert cmd.startswith("j='/home/ops user/.ansible_async/j1.1'; ")
    assert cmd.endswith("cat '/mnt/my disk/models/Qwen/Qwen3-8B/.ascendfleet/progress.json' 2>/dev/null")


def async_action(rounds, final):
    task = Task()
    task.async_val, task.poll = 600, 1
    task.args = {"model": "Qwen/Qwen3-8B", "cache_dir": "/c", "progress_interval": 1}
    act = ActionModule(task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None)
    outputs = iter(rounds)
    commands = []

    def shell(cmd, **_kw):
        commands.append(cmd)
        return {"rc": 0, "stdout": ""} if cmd.startswith("rm ") else next(outputs)

    act._low_level_execute_command = mock.MagicMock(side_effect=shell)
    act._execute_module = mock.MagicMock(return_value={"ansible_job_id": "j1.1", "started": 1, "finished": 0})
    act._remote_expand_user = mock.MagicMock(side_effect=lambda path, **kw: path.replace("~", "/root"))
    act.get_shell_option = mock.MagicMock(side_effect=lambda name, default=None: default)
    act._remote = mock.MagicMock(return_value=final)
    return act, commands


def test_the_action_collects_the_result_itself_and_ansible_does_not_poll_again():
    final = {"changed": True, "model": "Qwen/Qwen3-8B", "action": "copied", "finished": 1, "ansible_job_id": "j1.1"}
    act, commands = async_action([{"rc": 0, "stdout": round_output(RUNNING)}, {"rc": 0, "stdout": round_output(DONE)}], final)
    result = act.run(task_vars={"inventory_hostname": "node-1"})
    assert (result["changed"], result["action"], result["finished"]) == (True, "copied", True)
    act._remote.assert_called_once_with("ansible.legacy.async_status", {"jid": "j1.1", "_async_dir": "/root/.ansible_async"},
                                        {"inventory_hostname": "node-1"})
    assert commands[-1] == "rm -f /root/.ansible_async/j1.1" and len(commands) == 3
    assert act._task.poll == 0  # the task executor's own poll (sleep + two module runs) is skipped


def test_a_job_async_status_does_not_see_finished_is_left_to_ansibles_poll():
    act, commands = async_action([{"rc": 0, "stdout": round_output(DONE)}], {"started": 1, "finished": 0})
    result = act.run(task_vars={"inventory_hostname": "node-1"})
    assert result["ansible_job_id"] == "j1.1" and act._task.poll == 1
    assert not any(cmd.startswith("rm ") for cmd in commands)


def test_the_progress_line_is_read_where_the_layout_writes_it():
    args = {"model": "Qwen/Qwen3-8B", "cache_dir": "/mnt/disk2/modelscope/"}
    assert progress_file_of(args) == "/mnt/disk2/modelscope/models/Qwen/Qwen3-8B/.ascendfleet/progress.json"
    assert progress_file_of(dict(args, layout="flat")) == progress_file_of(args)
    assert progress_file_of(dict(args, layout="revisions")) == "/mnt/disk2/modelscope/revisions/Qwen/Qwen3-8B/progress.json"
    assert progress_file_of({"model": "Qwen3-8B", "cache_dir": "/c"}) is None
    assert progress_file_of({"model": "Qwen/Qwen3-8B"}) is None
