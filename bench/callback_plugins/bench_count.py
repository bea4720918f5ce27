# Benchmark instrument (bench/, never shipped): counts module executions per host.
"""Count what a playbook really executes, per host.

Enabled only by bench/bench.py (ANSIBLE_CALLBACK_PLUGINS=bench/callback_plugins,
ANSIBLE_CALLBACKS_ENABLED=bench_count, BENCH_COUNT_FILE=<path>). When loaded, it wraps three
methods of ansible.plugins.action.ActionBase in the controller process; ansible-core forks its
workers from that process (ansible.utils.multiprocessing uses the 'fork' context), so the wraps
are active in every worker:

- ``_execute_module``: one line per module execution (an AnsiballZ payload run on a host or on
  the control node), whichever action plugin asked for it: ``template`` counts its ``stat`` and
  its ``copy``, ``async_status`` polls count one each, ``set_fact``/``assert``/``debug`` count
  nothing because they run no module;
- ``_low_level_execute_command``: one line per command sent through the connection (with
  pipelining one per module; without, also the temp-dir mkdir/chmod/rm);
- ``_transfer_data``: one line per file put on the host (none per module with pipelining).

Each line is a JSON object appended to BENCH_COUNT_FILE (O_APPEND, one write per line, so the
forked workers do not interleave): kind, host (inventory_hostname for modules, else where it ran),
ran_on (the connection's remote address), connection, module, task.
"""

import json
import os
import sys
import time

from ansible.plugins.action import ActionBase
from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
    name: bench_count
    type: aggregate
    short_description: count module executions and remote commands per host (benchmark only)
    description:
      - Appends one JSON line per module execution, remote command and file transfer to the
        file named by the environment variable BENCH_COUNT_FILE.
    requirements:
      - enabled in callbacks_enabled; BENCH_COUNT_FILE set
"""

_PATH = os.environ.get("BENCH_COUNT_FILE")


def _record(action, kind, module=None, task_vars=None):
    if not _PATH:
        return
    try:
        ran_on = action._connection.get_option("remote_addr")  # pylint: disable=protected-access
    except (KeyError, AttributeError):
        ran_on = getattr(action._play_context, "remote_addr", None)  # pylint: disable=protected-access
    host = (task_vars or {}).get("inventory_hostname", ran_on)
    line = json.dumps({
        "kind": kind,
        "host": host,
        "ran_on": ran_on,
        "connection": getattr(action._connection, "transport", None),  # pylint: disable=protected-access
        "module": module,
        "task": action._task.get_name(),  # pylint: disable=protected-access
        "pid": os.getpid(),
    }) + "\n"
    fd = os.open(_PATH, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)


def _wrap_execute_module(original):
    def wrapper(self, module_name=None, module_args=None, *args, **kwargs):
        task_vars = kwargs.get("task_vars")
        if task_vars is None and len(args) >= 2:
            task_vars = args[1]
        _record(self, "module", module_name or self._task.action, task_vars)  # pylint: disable=protected-access
        return original(self, module_name, module_args, *args, **kwargs)
    wrapper.bench_count = True
    return wrapper


def _wrap_low_level(original):
    def wrapper(self, *args, **kwargs):
        _record(self, "command")
        return original(self, *args, **kwargs)
    wrapper.bench_count = True
    return wrapper


def _wrap_transfer(original):
    def wrapper(self, *args, **kwargs):
        _record(self, "transfer")
        return original(self, *args, **kwargs)
    wrapper.bench_count = True
    return wrapper


if _PATH and not getattr(ActionBase._execute_module, "bench_count", False):  # pylint: disable=protected-access
    ActionBase._execute_module = _wrap_execute_module(ActionBase._execute_module)  # pylint: disable=protected-access
    ActionBase._low_level_execute_command = _wrap_low_level(ActionBase._low_level_execute_command)  # pylint: disable=protected-access
    ActionBase._transfer_data = _wrap_transfer(ActionBase._transfer_data)  # pylint: disable=protected-access


class CallbackModule(CallbackBase):
    """Also writes one "task" line per task with its wall time (from its start to the next
    task's start, as ansible.posix.profile_tasks measures it)."""
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "bench_count"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._current = None

    def _close(self):
        if self._current and _PATH:
            name, start = self._current
            line = json.dumps({"kind": "task", "task": name, "seconds": time.monotonic() - start}) + "\n"
            with open(_PATH, "a", encoding="utf-8") as handle:
                handle.write(line)
        self._current = None

    def v2_playbook_on_play_start(self, play):
        # Mitogen's strategy (loaded at the first play, after this callback) gives action plugins
        # its own _execute_module; wrap that too, before the workers fork.
        mixins = sys.modules.get("ansible_mitogen.mixins")
        mixin = getattr(mixins, "ActionModuleMixin", None)
        if _PATH and mixin is not None and not getattr(mixin._execute_module, "bench_count", False):  # pylint: disable=protected-access
            mixin._execute_module = _wrap_execute_module(mixin._execute_module)  # pylint: disable=protected-access

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._close()
        self._current = (task.get_name(), time.monotonic())

    def v2_playbook_on_handler_task_start(self, task):
        self.v2_playbook_on_task_start(task, False)

    def _result(self, result, status):
        """One "result" line per task result of a host: its role (where the task comes from, or
        the playbook) and its status, for the tasks per host per role."""
        if not _PATH:
            return
        task = result._task  # pylint: disable=protected-access
        role = task._role.get_name() if getattr(task, "_role", None) else "(playbook)"  # pylint: disable=protected-access
        line = json.dumps({"kind": "result", "host": result._host.get_name(),  # pylint: disable=protected-access
                           "role": role, "status": status, "task": task.get_name()}) + "\n"
        fd = os.open(_PATH, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)

    def v2_runner_on_ok(self, result, **kwargs):
        self._result(result, "ok")

    def v2_runner_on_skipped(self, result, **kwargs):
        self._result(result, "skipped")

    def v2_runner_on_failed(self, result, ignore_errors=False, **kwargs):
        self._result(result, "failed")

    def v2_playbook_on_stats(self, stats):
        self._close()
