# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Finding and running the host's tools (npu-smi, docker, hccn_tool) for a module: one lookup rule,
one locale.

PRIVATE to this collection; may change without notice.

Every module that runs a host tool does it through these functions, so each tool is looked up
the same way (a name in PATH plus the tool's usual directories, or a path that must be an
executable file) and its output is always in the C locale (the parsers read English text).
"""

from __future__ import annotations

import os

from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_smi import (
    NpuSmiParseError,
    detect_family,
    parse_info,
)

# Where the Ascend driver installs npu-smi, when it is not in PATH.
NPU_SMI_DIRS = ["/usr/local/bin", "/usr/local/sbin"]
# Tools' output is parsed as English text.
C_LOCALE = {"LC_ALL": "C", "LANGUAGE": "C", "LANG": "C"}


def find_tool(module, name, opt_dirs=None):
    """Absolute path of ``name`` (looked up in PATH and ``opt_dirs``, or a path), or None."""
    if os.sep in name:
        path = os.path.abspath(name)
        return path if os.path.isfile(path) and os.access(path, os.X_OK) else None
    return module.get_bin_path(name, required=False, opt_dirs=opt_dirs or [])


def run_tool(module, argv):
    """(rc, stdout, stderr) of ``argv`` in the C locale."""
    return module.run_command(argv, environ_update=C_LOCALE)


def tool_runner(module, name):
    """(``run(argv)`` or None when the tool is missing, its path or name) for helpers that take a runner."""
    path = find_tool(module, name)
    if not path:
        return None, name

    def run(argv):
        return run_tool(module, argv)
    return run, path


def find_npu_smi(module, executable):
    """(path, None) of npu-smi, or (None, what is wrong and the fix)."""
    path = find_tool(module, executable, NPU_SMI_DIRS)
    if path:
        return path, None
    if os.sep in executable:
        return None, ("npu-smi not found: %s is not an executable file; is the Ascend driver installed? "
                      "Set executable to the full path of npu-smi." % os.path.abspath(executable))
    return None, ("npu-smi not found: no %r in PATH or %s; is the Ascend driver installed? Install it, or "
                  "set executable to the full path of npu-smi." % (executable, ", ".join(NPU_SMI_DIRS)))


class NpuSmiReadError(Exception):
    """``npu-smi info`` could not be read: ``msg`` says why and the fix, ``details`` holds rc/stdout/stderr."""

    def __init__(self, msg, **details):
        super().__init__(msg)
        self.msg = msg
        self.details = details


def read_npu_smi(module, executable):
    """(NpuSmiInfo, stdout, parser warnings) of ``<executable> info``; raises NpuSmiReadError on any problem."""
    path, problem = find_npu_smi(module, executable)
    if problem:
        raise NpuSmiReadError(problem)
    rc, out, err = run_tool(module, [path, "info"])
    if rc != 0:
        detail = " ".join(x.strip() for x in (err, out) if x and x.strip()) or "no output"
        raise NpuSmiReadError(
            "%s info failed (rc %d): %s. Check that the Ascend driver is loaded and that "
            "the user may access /dev/davinci* (root or the HwHiAiUser group)."
            % (path, rc, detail),
            rc=rc, stdout=out, stderr=err)
    warnings = []
    try:
        info = parse_info(out, warnings.append)
    except NpuSmiParseError as exc:
        raise NpuSmiReadError("cannot read the output of %s info: %s" % (path, exc), stdout=out, stderr=err)
    return info, out, warnings


def npu_smi_info(module, executable):
    """(NpuSmiInfo, stdout) of ``<executable> info``; fails the module on any problem."""
    try:
        info, out, warnings = read_npu_smi(module, executable)
    except NpuSmiReadError as exc:
        module.fail_json(msg=exc.msg, **exc.details)
    for warning in warnings:
        module.warn(warning)
    return info, out


def check_idle_threshold(module, value):
    """Fail the module unless ``idle_threshold_pct`` (``value``) is a percentage (0-100)."""
    if not 0 <= value <= 100:
        module.fail_json(msg="idle_threshold_pct must be between 0 and 100, got %s" % value)


def npu_info_result(info, idle_threshold_pct):
    """What M(npu_info) returns for ``info`` (versions, family, chips with their idle verdict)."""
    return dict(
        npu_smi_version=info.version,
        driver_version=info.driver_version,
        family=detect_family(info),
        has_process_table=info.has_process_table,
        chips=[chip.to_dict(idle_threshold_pct) for chip in info.chips],
    )


def npu_info_or_error(module, executable, idle_threshold_pct):
    """What M(npu_info) returns for the host, or ``{"msg", rc/stdout/stderr}`` when npu-smi cannot be read.

    For modules that report problems as data (npu_host_facts): the message is the one npu_info
    fails with, and the parser's warnings become the module's warnings.
    """
    return npu_info_read(module, executable, idle_threshold_pct)[0]


def npu_info_read(module, executable, idle_threshold_pct):
    """(:func:`npu_info_or_error`'s answer, ``(path, stdout)`` of the ``npu-smi info`` it read, or
    None when it could not be read): a later reader of the same execution parses that output
    again instead of running npu-smi a second time."""
    try:
        info, out, warnings = read_npu_smi(module, executable)
    except NpuSmiReadError as exc:
        return dict(exc.details, msg=exc.msg), None
    for warning in warnings:
        module.warn(warning)
    return npu_info_result(info, idle_threshold_pct), (find_npu_smi(module, executable)[0], out)
