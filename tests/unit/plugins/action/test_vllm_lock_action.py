"""The vllm_lock action (plugins/action/vllm_lock.py) against the host half on real files: the
module's answers come from _vllm_lock.acquire/release on a tmp directory, as the module returns
them. It waits for a busy lock within its timeout and then fails naming the holder, takes over
a lock left by an ended run of this control node at once, and never one of another control node."""
import os
import socket
import subprocess
import sys
from unittest import mock

from ansible.playbook.task import Task
from ansible_collections.ascendfleet.llm.plugins.action.vllm_lock import ActionModule
from ansible_collections.ascendfleet.llm.plugins.module_utils import _vllm_lock as lk

from ..fake_clock import Clock


def action(tmp_path, args, check_mode=False, on_call=None):
    task = Task()
    task.args = dict(args, project_root=str(tmp_path))
    task.check_mode = check_mode
    act = ActionModule(task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None)
    calls = []

    def module(module_name, module_args, task_vars):
        assert module_name == "ascendfleet.llm.vllm_lock"
        calls.append(dict(module_args))
        if on_call:
            on_call(len(calls))
        path = lk.lock_path(module_args["project_root"], module_args["name"])
        out = dict(changed=False, path=path, acquired=False, released=False, holder={}, took_over=None)
        if module_args.get("state", "present") == "present":
            out.update(lk.acquire(path, module_args["holder"], module_args.get("take_over"), check_mode))
        else:
            out.update(lk.release(path, module_args["holder"], check_mode))
        return out

    act._execute_module = module
    clock = Clock()
    act.clock = clock
    act.sleep = clock.sleep
    return act, calls, clock


def run(act):
    return act.run(task_vars={"inventory_hostname": "npu-a", "ansible_play_name": "Deploy"})


def test_this_run_is_the_parent_process_on_this_control_node(tmp_path):
    act, calls, dummy = action(tmp_path, {"name": "qwen", "what": "roll out v2"})
    got = run(act)
    assert got["acquired"] is True and not got.get("failed")
    holder = got["holder"]
    assert (holder["controller"], holder["pid"], holder["what"]) == (socket.gethostname(), os.getppid(), "roll out v2")
    assert holder["token"] == lk.process_token(os.getppid())
    assert len(calls) == 1
    act, calls, dummy = action(tmp_path, {"name": "qwen", "state": "absent"})
    assert run(act)["released"] is True
    assert open(lk.lock_path(str(tmp_path), "qwen")).read() == ""


def test_a_busy_lock_is_waited_for_then_the_task_fails_naming_the_holder(tmp_path):
    other = {"controller": "ops2", "pid": 77, "token": "c:5", "user": "ci", "since": "2026-12-03T09:05:00Z",
             "what": "rollback.yml"}
    lk.acquire(lk.lock_path(str(tmp_path), "qwen"), other)
    act, calls, clock = action(tmp_path, {"name": "qwen", "timeout": 10, "poll": 3})
    got = run(act)
    assert got["failed"] is True
    assert got["msg"].startswith("npu-a: deployment qwen is being changed by another run: control node ops2, pid 77")
    assert "Waited 10 s" in got["msg"]
    assert 10 <= clock.now < 11 and len(calls) == 5  # at 0, 3, 6, 9 and 10 s
    assert lk.acquire(lk.lock_path(str(tmp_path), "qwen"), other)["holder"] == other


def test_a_lock_given_up_while_waiting_is_taken(tmp_path):
    path = lk.lock_path(str(tmp_path), "qwen")
    other = {"controller": "ops2", "pid": 77, "token": "c:5"}
    lk.acquire(path, other)
    act, calls, clock = action(tmp_path, {"name": "qwen", "timeout": 60, "poll": 2},
                               on_call=lambda n: n == 3 and lk.release(path, other))
    got = run(act)
    assert got["acquired"] is True and len(calls) == 3 and clock.now == 4


def test_a_lock_of_an_ended_run_of_this_control_node_is_taken_over_at_once(tmp_path):
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    ended = lk.holder_of_this_run(socket.gethostname(), child.pid, "ops", "deploy-qwen.yml")
    child.wait()
    lk.acquire(lk.lock_path(str(tmp_path), "qwen"), ended)
    act, calls, clock = action(tmp_path, {"name": "qwen", "timeout": 0})
    got = run(act)
    assert got["acquired"] is True and got["took_over"] == ended and clock.now == 0
    assert calls[1]["take_over"] == ended


def test_check_mode_reports_the_holder_and_waits_for_nothing(tmp_path):
    other = {"controller": "ops2", "pid": 77, "token": "c:5"}
    lk.acquire(lk.lock_path(str(tmp_path), "qwen"), other)
    act, calls, clock = action(tmp_path, {"name": "qwen", "timeout": 60}, check_mode=True)
    got = run(act)
    assert not got.get("failed") and got["acquired"] is False and got["holder"] == other and clock.now == 0
