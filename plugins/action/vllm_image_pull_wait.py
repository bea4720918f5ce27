# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Action ascendfleet.llm.vllm_image_pull_wait: wait for a background pull, printing its progress.

Every ``interval`` seconds, on the control node: ask the async job (``async_status``) whether the
pull ended; if not, read the progress file the module ascendfleet.llm.vllm_image_pull writes on the
host and print one line - ``npu-01: quay.io/ascend/vllm-ascend:v0.18.0rc1: 7/12 layers, 4.1 GB of
14.8 GB (28%), 52.3 MB/s, about 3m30s left, 1m12s elapsed`` - in place of Ansible's
"FAILED - RETRYING ... (361 retries left)". Gives up after ``timeout`` seconds.
"""

from __future__ import annotations

import base64
import json
import time

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display
from ansible.utils.vars import merge_hash
from ansible_collections.ascendfleet.llm.plugins.module_utils._image_pull import describe

display = Display()


class ActionModule(ActionBase):

    _supports_check_mode = True
    _supports_async = False

    # Seams for the unit tests.
    sleep = staticmethod(time.sleep)
    clock = staticmethod(time.monotonic)

    def _status(self, jid, task_vars):
        async_dir = self._remote_expand_user(self.get_shell_option("async_dir", default="~/.ansible_async"))
        answer = self._execute_module(module_name="ansible.legacy.async_status", task_vars=task_vars,
                                      module_args={"jid": jid, "mode": "status", "_async_dir": async_dir})
        answer["finished"] = bool(answer.get("finished"))
        return answer

    def _progress(self, path, task_vars):
        """The progress file's snapshot, or None while it is missing or unreadable."""
        answer = self._execute_module(module_name="ansible.legacy.slurp", module_args={"src": path},
                                      task_vars=task_vars)
        if answer.get("failed") or not answer.get("content"):
            return None
        try:
            return json.loads(base64.b64decode(answer["content"]).decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return None

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        _validation, args = self.validate_argument_spec(argument_spec=dict(
            jid=dict(type="str", required=True),
            image=dict(type="str", required=True),
            progress_file=dict(type="path"),
            timeout=dict(type="int", default=3600),
            interval=dict(type="int", default=10),
        ))
        host = task_vars.get("inventory_hostname", "?")
        if self._task.check_mode:
            result.update(skipped=True, pulled=False, msg="check mode: nothing was pulled")
            return result
        interval = max(1, args["interval"])
        started = self.clock()
        while True:
            status = self._status(args["jid"], task_vars)
            if status["finished"] or status.get("failed"):
                result = merge_hash(result, status)
                result["pulled"] = not status.get("failed")
                snap = status.get("progress")
                if snap and not status.get("failed"):
                    display.display("%s: %s: %s" % (host, args["image"], describe(snap, self.clock() - started)))
                return result
            elapsed = self.clock() - started
            if elapsed >= args["timeout"]:
                result.update(failed=True, finished=False, timed_out=True, pulled=False,
                              msg="the pull did not finish within %d s (vllm_compose_image_pull_timeout)"
                              % args["timeout"])
                return result
            snap = self._progress(args["progress_file"], task_vars) if args["progress_file"] else None
            display.display("%s: %s: %s" % (host, args["image"], describe(snap, elapsed)))
            self.sleep(min(interval, max(1, args["timeout"] - elapsed)))
