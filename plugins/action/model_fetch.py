# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Action for ascendfleet.llm.model_fetch: run the module, and with ``async`` show progress.

With ``async: N`` and ``poll: P > 0`` on the task, the module starts as an async job; while it
runs, this action prints every ``progress_interval`` seconds the progress line the module
writes to ``<model dir>/.ascendfleet/progress.json`` (``layout: revisions``:
``<cache>/revisions/<Owner>/<Name>/progress.json``) (bytes done / total, rate, files, time
left). Once the job has finished it hands the job id back, and Ansible's own async poll
collects the module's result (and cleans the job up) ``P`` seconds later. ``poll: 0`` is the
usual fire-and-forget; without ``async`` the module runs normally.
"""

from __future__ import annotations

import base64
import json
import shlex
import time

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display
from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import model_dir, state_paths
from ansible_collections.ascendfleet.llm.plugins.module_utils._model_revisions import progress_path

display = Display()


def _ended(job):
    """An async job's status (its job file or async_status's answer) says it has ended: finished,
    or a result without async_wrapper's ``started`` (the module's own result, or the wrapper's error)."""
    return bool(job.get("finished")) or "started" not in job


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
        if not jid:
            result.update(started)
            return result
        if not self._task.poll:
            result.update(started)
            return result
        async_dir = self._remote_expand_user(self.get_shell_option("async_dir", default="~/.ansible_async"))
        job_file = "%s/%s" % (async_dir.rstrip("/"), jid)
        now = time.monotonic()
        deadline = now + int(self._task.async_val)
        # The job is checked with one plain `cat` of its job file (no module run): every second
        # at first, then less often as it runs on (at most every 5 s), so the task ends soon
        # after the copy without a fleet of polls loading the control node. The progress line
        # is read and printed every progress_interval seconds (the first after 2 s at most).
        next_progress = now + min(interval, 2)
        last_line = None
        while time.monotonic() < deadline:
            time.sleep(min(1 + (time.monotonic() - now) / 10, 5))
            if self._finished(job_file, jid, async_dir, task_vars):
                break
            if progress_file and time.monotonic() >= next_progress:
                next_progress = time.monotonic() + interval
                line = self._progress(progress_file, task_vars)
                if line and line != last_line:
                    display.display("  [%s] %s" % (host, line))
                    last_line = line
        # Ansible's async poll (task poll > 0) now reads the final result and cleans the job up.
        result.update(started)
        return result

    def _finished(self, job_file, jid, async_dir, task_vars):
        """Whether the async job has ended: its job file read with one shell command; when that
        read fails or does not parse, ``async_status`` decides (the module Ansible itself polls)."""
        res = self._low_level_execute_command("cat %s" % shlex.quote(job_file))
        if res.get("rc") == 0:
            try:
                data = json.loads(res.get("stdout") or "")
            except ValueError:
                data = None
            if isinstance(data, dict):
                return _ended(data)
        return _ended(self._remote("ansible.legacy.async_status", {"jid": jid, "_async_dir": async_dir}, task_vars))

    def _progress(self, path, task_vars):
        try:
            slurped = self._remote("ansible.legacy.slurp", {"src": path}, task_vars)
            if slurped.get("failed"):
                return None
            data = json.loads(base64.b64decode(slurped["content"]).decode("utf-8"))
            return data.get("line")
        except Exception:  # pylint: disable=broad-except
            return None
