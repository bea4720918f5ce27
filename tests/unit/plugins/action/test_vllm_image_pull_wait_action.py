"""The vllm_image_pull_wait action (plugins/action/vllm_image_pull_wait.py): while the background
pull runs it prints one progress line per interval from the host's progress file (here the snapshots
of the recorded daemon lines, module_utils/fixtures/image_pull/), returns the pull's result when it
ends and gives up at its timeout."""
import base64
import json
import os
from unittest import mock

from ansible.playbook.task import Task
from ansible_collections.ascendfleet.llm.plugins.action import vllm_image_pull_wait as mod
from ansible_collections.ascendfleet.llm.plugins.module_utils._image_pull import PullProgress

from ..fake_clock import Clock

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "module_utils", "fixtures", "image_pull")
IMAGE = "reg:5000/quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler"


def snapshots(upto_list):
    with open(os.path.join(FIXTURES, "pull-fresh.jsonl"), "rb") as handle:
        lines = handle.read().splitlines()
    out = []
    for upto in upto_list:
        progress = PullProgress()
        for line in lines[:upto]:
            progress.feed(line)
        out.append(progress.snapshot())
    return out


def action(statuses, files, args=None, check_mode=False):
    task = Task()
    task.args = dict({"jid": "j1", "image": IMAGE, "progress_file": "/opt/ascendfleet/.image-pull/qwen.json",
                      "timeout": 60, "interval": 10}, **(args or {}))
    task.check_mode = check_mode
    act = mod.ActionModule(task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None)
    calls = []

    def module(module_name, module_args, task_vars):
        calls.append(module_name)
        if module_name == "ansible.legacy.async_status":
            assert module_args["jid"] == "j1"
            return statuses.pop(0) if len(statuses) > 1 else statuses[0]
        assert module_name == "ansible.legacy.slurp"
        snap = files.pop(0) if files else None
        if snap is None:
            return {"failed": True, "msg": "file not found"}
        return {"content": base64.b64encode(json.dumps(snap).encode()).decode()}

    act._execute_module = module
    act._remote_expand_user = lambda path, sudoable=True: path
    act.get_shell_option = lambda name, default=None: default
    clock = Clock()
    act.clock, act.sleep = clock, clock.sleep
    return act, calls, clock


def run(act):
    shown = []
    with mock.patch.object(mod.display, "display", side_effect=shown.append):
        got = act.run(task_vars={"inventory_hostname": "npu-a"})
    return got, shown


RUNNING = {"started": 1, "finished": 0}


def test_progress_lines_while_the_pull_runs_then_its_result():
    first, later = snapshots([6, 10])
    done = {"started": 1, "finished": 1, "changed": True, "image_id": "sha256:ab", "msg": "pulled",
            "progress": snapshots([27])[0]}
    act, calls, clock = action([RUNNING, RUNNING, RUNNING, done], [None, first, later])
    got, shown = run(act)
    assert got["pulled"] is True and got["finished"] is True and got["image_id"] == "sha256:ab"
    assert shown == [
        "npu-a: %s: starting" % IMAGE,
        "npu-a: %s: 0/3 layers, 72.8 kB of at least 6.3 MB (2 of 3 layers sized), 10s elapsed" % IMAGE,
        "npu-a: %s: 0/3 layers, 631.2 kB of 30.3 MB (2%%), 20s elapsed" % IMAGE,
        "npu-a: %s: 3/3 layers, 30.3 MB of 30.3 MB (100%%), 30s elapsed" % IMAGE,
    ]
    assert clock.now == 30


def test_a_failed_pull_returns_the_daemons_message():
    failed = {"started": 1, "finished": 1, "failed": True, "msg": "unknown blob"}
    act, calls, clock = action([RUNNING, failed], [None])
    got, shown = run(act)
    assert got["failed"] is True and got["pulled"] is False and got["msg"] == "unknown blob"


def test_the_wait_gives_up_at_its_timeout():
    act, calls, clock = action([RUNNING], [], args={"timeout": 25})
    got, shown = run(act)
    assert got["failed"] is True and got["timed_out"] is True and got["pulled"] is False
    assert got["msg"] == "the pull did not finish within 25 s (vllm_compose_image_pull_timeout)"
    assert clock.now == 25 and calls.count("ansible.legacy.async_status") == 4  # at 0, 10, 20 and 25 s


def test_check_mode_skips():
    act, calls, clock = action([RUNNING], [], check_mode=True)
    got, shown = run(act)
    assert got["skipped"] is True and calls == []
