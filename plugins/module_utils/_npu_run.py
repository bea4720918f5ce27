# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet maintainers
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Run ``npu-smi info`` for a module and parse it, failing the module clearly.

PRIVATE to this collection; may change without notice.
"""

from __future__ import annotations

import os

from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_smi import (
    NpuSmiParseError,
    parse_info,
)

SEARCH_DIRS = ["/usr/local/bin", "/usr/local/sbin"]
C_LOCALE = {"LC_ALL": "C", "LANGUAGE": "C", "LANG": "C"}


def resolve_executable(module, executable):
    """Absolute path of ``executable`` (a name looked up in PATH + SEARCH_DIRS, or a path)."""
    if os.sep in executable:
        path = os.path.abspath(executable)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
        module.fail_json(msg="npu-smi not found: %s is not an executable file; is the Ascend "
                             "driver installed? Set executable to the full path of npu-smi."
                             % path)
    path = module.get_bin_path(executable, required=False, opt_dirs=SEARCH_DIRS)
    if not path:
        module.fail_json(msg="npu-smi not found: no %r in PATH or %s; is the Ascend driver "
                             "installed? Install it, or set executable to the full path of "
                             "npu-smi." % (executable, ", ".join(SEARCH_DIRS)))
    return path


def npu_smi_info(module, executable):
    """(NpuSmiInfo, stdout) of ``<executable> info``; fails the module on any problem."""
    path = resolve_executable(module, executable)
    rc, out, err = module.run_command([path, "info"], environ_update=C_LOCALE)
    if rc != 0:
        detail = " ".join(x.strip() for x in (err, out) if x and x.strip()) or "no output"
        module.fail_json(
            msg="%s info failed (rc %d): %s. Check that the Ascend driver is loaded and that "
                "the user may access /dev/davinci* (root or the HwHiAiUser group)."
                % (path, rc, detail),
            rc=rc, stdout=out, stderr=err)
    warnings = []
    try:
        info = parse_info(out, warnings.append)
    except NpuSmiParseError as exc:
        module.fail_json(msg="cannot read the output of %s info: %s" % (path, exc),
                         stdout=out, stderr=err)
    for warning in warnings:
        module.warn(warning)
    return info, out
