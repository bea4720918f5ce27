# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Action for ascendfleet.llm.model_fetch: run the module, and with ``async`` show progress.

With ``async: N`` and ``poll: P > 0`` on the task, the module starts as an async job; while it
runs, this action prints every ``progress_interval`` seconds the progress line the module
writes to ``<model dir>/.ascendfleet/progress.json`` (``layout: revisions``:
``<cache>/revisions/<Owner>/<Name>/progress.json``) (bytes done / total, rate, files, time
left). It watches the job with one shell command per round (at most every few seconds): the
command waits on the host until the job ends or the round is over, then prints the job file and
the progress line, so the task ends within a fraction of a second of the job without a fleet
of polls loading the control node. Once the job has ended, the action collects the result with
Ansible's ``async_status`` module (as Ansible's own async poll does), removes the job file and
returns the module's result (the task's ``poll`` is then done: Ansible does not poll again).
``poll: 0`` is the usual fire-and-forget; without ``async`` the module runs normally.
"""

from __future__ import annotations

import json
import shlex
import time

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display
from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import model_dir, state_paths
from ansible_collections.ascendfleet.llm.plugins.module_utils._model_revisions import progress_path

display = Display()
# Between the job file and the progress file in the output of one round's shell command.
_SEPARATOR = "--ascendfleet-progress--"


def _ended(job):
    """An async job's status (its job file or async_status's answer) says it has ended: finished,
    or a result without async_wrapper's ``started`` (the module's own result, or the wrapper's error)."""
    return bool(job.get("finished")) or "started" not in job


def _progress_line(text):
    """The ``line`` of a progress file's JSON text, or None."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data.get("line") if isinstance(data, dict) else None


def progress_file_of(args):
    """Where the module's transfer writes its progress line for the task arguments ``args``, or
    None when they name no model and cache: the model directory's ``.ascendfleet/progress.json``,
    with ``layout: revisions`` the model's ``<cache>/revisions/<Owner>/<Name>/progress.json``."""
    model = str(args.get("model", "?"))
    if len(model.split("/", 1)) != 2 or not args.get("cache_dir"):
        return None
    cache_dir = str(args["cache_dir"]).rstrip("/")
    if args.get("layout") == "revisions":
        return progress_path(cache_dir, model)
    return state_paths(model_dir(cache_dir, model))["progress"]


class ActionModule(ActionBase):

    _supports_async = True
    _supports_check_mode = True

    def _remote(self, name, args, task_vars):
        return self._execute_module(module_name=name, module_args=args, task_vars=task_vars,
                                    wrap_async=False)

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        args = self._task.args
        if not self._task.async_val:
            result.update(self._execute_module(module_name="ascendfleet.llm.model_fetch",
                                               module_args=args, task_vars=task_vars))
            return result

        host = task_vars.get("inventory_hostname", "?")
        interval = max(1, int(args.get("progress_interval") or 10))
        progress_file = progress_file_of(args)

        started = self._execute_module(module_name="ascendfleet.llm.model_fetch", module_args=args,
                                       task_vars=task_vars, wrap_async=True)
        jid = started.get("ansible_job_id")
        if not jid or not self._task.poll:
            result.update(started)
            return result
        async_dir = self._remote_expand_user(self.get_shell_option("async_dir", default="~/.ansible_async"))
        job_file = "%s/%s" % (async_dir.rstrip("/"), jid)
        now = time.monotonic()
        deadline = now + int(self._task.async_val)
        # Each round waits on the host for the job to end (1 s at first, longer as it runs on, at
        # most 5 s and the progress interval); the progress line is printed every
        # progress_interval seconds (the first after 2 s at most).
        next_progress = now + min(interval, 2)
        last_line = None
        ended = False
        while time.monotonic() < deadline and not ended:
            wait = min(1 + (time.monotonic() - now) / 10, 5, interval, max(deadline - time.monotonic(), 0))
            round_start = time.monotonic()
            ended, line = self._wait(job_file, jid, async_dir, progress_file, wait, task_vars)
            if ended:
                break
            if line and time.monotonic() >= next_progress:
                next_progress = time.monotonic() + interval
                if line != last_line:
                    display.display("  [%s] %s" % (host, line))
                    last_line = line
            # A host whose shell did not wait (no sleep with fractions, say) is asked no more often.
            time.sleep(max(0, wait - (time.monotonic() - round_start)))
        if not ended:
            # Ansible's async poll reports the timeout (and the job's last state) as it always does.
            result.update(started)
            return result
        final = self._remote("ansible.legacy.async_status", {"jid": jid, "_async_dir": async_dir}, task_vars)
        if not final.get("finished"):
            result.update(started)
            return result
        self._low_level_execute_command("rm -f %s" % shlex.quote(job_file))
        # Collected here: Ansible's own poll (a sleep of `poll` seconds, then async_status and its
        # cleanup, two more module runs) would only repeat it. This run's copy of the task (a loop
        # item's own copy) is told so; nothing else reads its poll.
        self._task.poll = 0
        final["finished"] = True
        result.update(final)
        return result

    def _wait(self, job_file, jid, async_dir, progress_file, seconds, task_vars):
        """One round: wait on the host up to ``seconds`` for the async job to end, with one shell
        command that then prints the job file and the progress file; (ended, progress line or None).
        When the job file cannot be read or does not parse, ``async_status`` decides."""
        ticks = max(1, int(seconds * 4))
        cmd = ("j=%s; n=%d; while [ \"$n\" -gt 0 ] && grep -q '\"finished\": false' \"$j\" 2>/dev/null; "
               "do sleep 0.25 || break; n=$((n - 1)); done; cat \"$j\"" % (shlex.quote(job_file), ticks))
        if progress_file:
            cmd += "; echo; echo %s; cat %s 2>/dev/null" % (_SEPARATOR, shlex.quote(progress_file))
        res = self._low_level_execute_command(cmd)
        job_text, _sep, progress_text = (res.get("stdout") or "").partition("\n%s\n" % _SEPARATOR)
        line = _progress_line(progress_text)
        if res.get("rc") == 0:
            try:
                data = json.loads(job_text)
            except ValueError:
                data = None
            if isinstance(data, dict):
                return _ended(data), line
        return _ended(self._remote("ansible.legacy.async_status", {"jid": jid, "_async_dir": async_dir}, task_vars)), line
