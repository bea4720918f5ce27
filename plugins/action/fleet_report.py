# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Action for ascendfleet.llm.fleet_report: write a run's report files on the control node.

The one report writer of the collection (npu_verify, model_prefetch, vllm_compose and the status
playbook). It runs on the controller, never on a host: no module is shipped, no connection used.
The files are written in check mode too (a report is the run's output, which --check is run for),
each atomically and only when its content differs; the task never reports ``changed`` (a report
describes the fleet, it is not fleet state, so a no-op re-run is changed=0 on the control node
as on the hosts) and returns which files it rewrote in ``rewritten``.
"""

from __future__ import annotations

import os

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_bytes, to_text
from ansible.plugins.action import ActionBase
from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import report_dir_path
from ansible_collections.ascendfleet.llm.plugins.module_utils._files import write_if_changed


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _supports_check_mode = True
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        args = self._task.args
        unknown = sorted(set(args) - {"dir", "files"})
        if unknown:
            raise AnsibleActionFail("fleet_report: unknown option(s) %s (known: dir, files)" % ", ".join(unknown))
        files = args.get("files")
        if not isinstance(files, dict) or not files:
            raise AnsibleActionFail("fleet_report: files must be a mapping of file name to content")
        if not args.get("dir"):
            raise AnsibleActionFail("fleet_report: dir is required (the report directory, ascendfleet_report_dir)")
        directory = report_dir_path(to_text(args["dir"]), os.environ.get("PWD"),
                                    to_text(task_vars.get("playbook_dir") or ""))
        for name in files:
            if not name or "/" in name or name.startswith("."):
                raise AnsibleActionFail("fleet_report: %r is not a plain file name" % (name,))
        try:
            os.makedirs(directory, mode=0o755, exist_ok=True)
            rewritten = [name for name in sorted(files)
                         if write_if_changed(os.path.join(directory, name), to_bytes(files[name]))]
        except (IOError, OSError) as exc:
            raise AnsibleActionFail("fleet_report: cannot write the report in %s (%s); set ascendfleet_report_dir "
                                    "to a writable directory on the control node" % (directory, exc))
        result.update(changed=False, path=directory, files=[os.path.join(directory, n) for n in sorted(files)],
                      rewritten=rewritten)
        return result
