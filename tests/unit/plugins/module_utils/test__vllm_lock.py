"""The rollout lock (plugins/module_utils/_vllm_lock.py) on real files: one run at a time holds a
deployment, a release gives up only this run's lock, a run of this control node that has ended is
told from one that runs (by its /proc token, so a reused pid is not taken for the holder)."""
import json
import os
import subprocess
import sys

import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils import _vllm_lock as lk

A = {"controller": "ops1", "pid": 4101, "token": "b:100", "user": "ops", "since": "2026-12-03T09:00:00Z",
     "what": "deploy-qwen.yml"}
B = {"controller": "ops2", "pid": 77, "token": "c:5", "user": "ci", "since": "2026-12-03T09:05:00Z",
     "what": "rollback.yml"}


def test_the_lock_lives_beside_the_deployments():
    assert lk.lock_path("/opt/ascendfleet", "qwen") == "/opt/ascendfleet/.locks/qwen.lock"


def test_a_free_lock_is_taken_and_names_its_holder(tmp_path):
    path = lk.lock_path(str(tmp_path), "qwen")
    got = lk.acquire(path, A)
    assert got == {"acquired": True, "holder": A, "took_over": None}
    assert json.loads(open(path).read()) == A
    assert oct(os.stat(os.path.dirname(path)).st_mode & 0o777) == "0o755"
    assert oct(os.stat(path).st_mode & 0o777) == "0o644"


def test_another_run_finds_it_busy_and_changes_nothing(tmp_path):
    path = lk.lock_path(str(tmp_path), "qwen")
    lk.acquire(path, A)
    got = lk.acquire(path, B)
    assert got == {"acquired": False, "holder": A, "took_over": None}
    assert json.loads(open(path).read()) == A


def test_the_holder_takes_it_again_without_a_change(tmp_path):
    path = lk.lock_path(str(tmp_path), "qwen")
    lk.acquire(path, A)
    later = dict(A, since="2026-12-03T09:30:00Z", what="another task")
    got = lk.acquire(path, later)
    assert got["acquired"] is True and got["holder"] == A
    assert json.loads(open(path).read())["since"] == "2026-12-03T09:00:00Z"


def test_a_take_over_replaces_only_the_run_it_names(tmp_path):
    path = lk.lock_path(str(tmp_path), "qwen")
    lk.acquire(path, A)
    # Between the look and the take-over another run took the lock: it is not replaced.
    assert lk.acquire(path, B, take_over=dict(A, pid=9999))["acquired"] is False
    got = lk.acquire(path, B, take_over=A)
    assert got == {"acquired": True, "holder": B, "took_over": A}
    assert json.loads(open(path).read()) == B


def test_a_release_gives_up_this_runs_lock_and_leaves_an_empty_file(tmp_path):
    path = lk.lock_path(str(tmp_path), "qwen")
    lk.acquire(path, A)
    assert lk.release(path, B) == {"released": False, "holder": A}
    assert json.loads(open(path).read()) == A
    assert lk.release(path, A) == {"released": True, "holder": A}
    assert open(path).read() == ""
    assert lk.acquire(path, B)["acquired"] is True


def test_release_without_a_lock_file_is_nothing(tmp_path):
    assert lk.release(lk.lock_path(str(tmp_path), "qwen"), A) == {"released": False, "holder": {}}


def test_check_mode_writes_nothing(tmp_path):
    path = lk.lock_path(str(tmp_path), "qwen")
    assert lk.acquire(path, A, check_mode=True) == {"acquired": False, "holder": {}, "took_over": None}
    assert not os.path.exists(os.path.dirname(path))
    lk.acquire(path, A)
    assert lk.acquire(path, B, check_mode=True)["holder"] == A
    assert lk.release(path, A, check_mode=True)["released"] is True
    assert json.loads(open(path).read()) == A


def test_an_unreadable_lock_file_is_never_free(tmp_path):
    path = lk.lock_path(str(tmp_path), "qwen")
    os.makedirs(os.path.dirname(path))
    open(path, "w").write("{not json")
    got = lk.acquire(path, A)
    assert got["acquired"] is False and got["holder"]["what"] == "unreadable lock file"


def _fake_proc(tmp_path, pid, starttime, boot="boot-1", comm="ansible-playbook (x)"):
    proc = tmp_path / "proc"
    (proc / "sys" / "kernel" / "random").mkdir(parents=True, exist_ok=True)
    (proc / "sys" / "kernel" / "random" / "boot_id").write_text(boot + "\n")
    (proc / str(pid)).mkdir(exist_ok=True)
    # Fields after "(comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
    # utime stime cutime cstime priority nice num_threads itrealvalue starttime ...
    rest = "S 1 4101 4101 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 %d 30000000 2000" % starttime
    (proc / str(pid) / "stat").write_text("%d (%s) %s\n" % (pid, comm, rest))
    return str(proc)


def test_the_token_is_the_boot_and_the_start_time_even_with_spaces_in_the_command(tmp_path):
    proc = _fake_proc(tmp_path, 4101, 8812345, comm="python3 ansible-playbook) x")
    assert lk.process_token(4101, proc) == "boot-1:8812345"
    assert lk.process_token(4102, proc) is None


def test_a_holder_on_this_control_node_is_gone_when_its_process_ended_or_the_pid_was_reused(tmp_path):
    proc = _fake_proc(tmp_path, 4101, 100)
    running = dict(A, token="boot-1:100")
    assert lk.holder_gone(running, "ops1", proc) is False
    assert lk.holder_gone(dict(running, token="boot-1:99"), "ops1", proc) is True   # pid reused
    assert lk.holder_gone(dict(running, token="boot-0:100"), "ops1", proc) is True  # rebooted

    def gone(pid, sig):
        raise ProcessLookupError(pid)

    assert lk.holder_gone(dict(running, pid=4102), "ops1", proc, kill=gone) is True


def test_a_holder_on_another_control_node_is_never_judged_from_here(tmp_path):
    assert lk.holder_gone(dict(A, pid=999999), "ops2", str(tmp_path / "none")) is False
    assert lk.holder_gone({}, "ops1") is False
    assert lk.holder_gone(dict(A, pid="?"), "ops1") is False


def test_a_real_ended_process_is_gone_and_this_one_is_not():
    me = lk.holder_of_this_run("ops1", os.getpid(), "ops", "test")
    assert me["token"] and lk.holder_gone(me, "ops1") is False
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    ended = lk.holder_of_this_run("ops1", child.pid, "ops", "test")
    child.wait()
    assert ended["token"], "the token was read while the child ran"
    assert lk.holder_gone(ended, "ops1") is True


def test_the_busy_message_names_host_deployment_holder_variable_and_fix():
    msg = lk.busy_message("npu-a", "qwen", "/opt/ascendfleet/.locks/qwen.lock", B, 60.4)
    assert msg.startswith("npu-a: deployment qwen is being changed by another run: control node ops2, pid 77, "
                          "user ci, since 2026-12-03T09:05:00Z (rollback.yml). Waited 60 s")
    assert "vllm_compose_lock_timeout" in msg
    assert "empty the lock file /opt/ascendfleet/.locks/qwen.lock on npu-a" in msg


@pytest.mark.parametrize("current, verdict", [({}, "acquire"), (A, "held"), (B, "busy")])
def test_decide(current, verdict):
    assert lk.decide(current, A) == verdict
