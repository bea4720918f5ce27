# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Action for ascendfleet.llm.vllm_lock: name this run as the holder, wait for a busy lock.

The module on the host only ever tries once. Here, on the control node: the holder is this run
(the control node's name, the pid of ``ansible-playbook`` - the parent of this worker process -
and that process's token); a busy lock is looked at every ``poll`` seconds until ``timeout``,
then the task fails naming the holder; a lock whose holder is a run of this control node that
has ended is taken over at once (the module replaces it only if it still names that run).
"""

from __future__ import annotations

import getpass
import os
import socket
import time

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display
from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_lock import (
    busy_message, describe, holder_gone, holder_of_this_run)

display = Display()

MODULE = "ascendfleet.llm.vllm_lock"


def this_run(what):
    """The holder this run writes (``ansible-playbook`` is the parent of the worker running this)."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid())
    return holder_of_this_run(socket.gethostname(), os.getppid(), user, what)


class ActionModule(ActionBase):

    _supports_check_mode = True
    _supports_async = False

    # Seams for the unit tests.
    sleep = staticmethod(time.sleep)
    clock = staticmethod(time.monotonic)

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        args = dict(self._task.args)
        host = task_vars.get("inventory_hostname", "?")
        name = args.get("name", "?")
        holder = this_run(args.get("what") or task_vars.get("ansible_play_name") or "")
        args["holder"] = holder
        args.pop("take_over", None)
        timeout = max(0, int(args.get("timeout") if args.get("timeout") is not None else 60))
        poll = max(1, int(args.get("poll") or 2))
        if args.get("state", "present") == "absent":
            result.update(self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars))
            return result

        started = self.clock()
        told = None
        take_overs = 0
        while True:
            answer = self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars)
            if answer.get("failed") or answer.get("acquired") or self._task.check_mode:
                result.update(answer)
                if answer.get("took_over"):
                    display.warning("%s: deployment %s: took over the rollout lock of a run that has ended (%s)"
                                    % (host, name, describe(answer["took_over"])))
                return result
            current = answer.get("holder") or {}
            # Each take-over replaces one run that has ended; a few in a row is already odd.
            if holder_gone(current, holder["controller"]) and take_overs < 3:
                take_overs += 1
                args["take_over"] = current
                continue
            args.pop("take_over", None)
            waited = self.clock() - started
            if waited >= timeout:
                result.update(answer)
                result["failed"] = True
                result["msg"] = busy_message(host, name, answer.get("path", "?"), current, waited)
                return result
            if told != current:
                display.display("%s: deployment %s: waiting up to %d s for the rollout lock, held by %s"
                                % (host, name, timeout, describe(current)))
                told = current
            self.sleep(min(poll, max(0.1, timeout - waited)))
