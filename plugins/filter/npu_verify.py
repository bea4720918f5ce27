# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Filters judging a host for the npu_verify role (module_utils/_npu_verify.py).

Documentation: npu_verify_python.yml, npu_verify_judge.yml, npu_verify_fleet.yml,
npu_verify_image_record.yml and npu_verify_image_records.yml beside this file.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible_collections.ascendfleet.llm.plugins.filter.facts import _plain
from ansible_collections.ascendfleet.llm.plugins.module_utils._ascend_versions import VersionError
from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_verify import (
    _older,
    fleet_lines,
    fleet_rows,
    image_record,
    image_records,
    judge,
    python_version,
)


def npu_verify_python(raw, minimum):
    """``{"version", "usable"}`` of the target Python from the raw probe's result."""
    raw = _plain(raw or {})
    version = python_version(raw)
    return {"version": version,
            "usable": raw.get("rc", 1) == 0 and version is not None and not _older(version, str(minimum))}


def npu_verify_judge(gathered, host, settings):
    """The host verdict (``ascendfleet_npu``, with its findings) from what npu_verify gathered."""
    if not isinstance(gathered, dict) or not isinstance(settings, dict):
        raise AnsibleFilterError("npu_verify_judge: expects the gathered facts and the settings as mappings")
    try:
        result = judge(str(host), _plain(gathered), _plain(settings))
    except (KeyError, TypeError, ValueError, VersionError) as exc:
        raise AnsibleFilterError("npu_verify_judge: cannot judge %s (%s: %s)" % (host, type(exc).__name__, exc))
    fact = result["fact"]
    fact["findings"] = result["findings"]
    return fact


def npu_verify_fleet(hosts, verdicts, report_path=""):
    """The fleet table (failing hosts first), its summary and the lines the play shows, from each
    host's ``ascendfleet_npu``."""
    fleet = fleet_rows([str(h) for h in hosts or []], _plain(dict(verdicts or {})))
    fleet["lines"] = fleet_lines(fleet, str(report_path))
    return fleet


def _report_text(report_text, name):
    if report_text is not None and not isinstance(report_text, str):
        raise AnsibleFilterError("%s: expects the text of npu_verify.json, got %s" % (name, type(report_text).__name__))
    return report_text or ""


def npu_verify_image_record(report_text, host):
    """The image ID and CANN version the last fleet report holds for ``host`` (``{}`` when none)."""
    return image_record(_report_text(report_text, "npu_verify_image_record"), str(host))


def npu_verify_image_records(report_text):
    """The image ID and CANN version the last fleet report holds for each host, by host."""
    return image_records(_report_text(report_text, "npu_verify_image_records"))


class FilterModule(object):
    """npu_verify filters."""

    def filters(self):
        return {
            "npu_verify_python": npu_verify_python,
            "npu_verify_judge": npu_verify_judge,
            "npu_verify_fleet": npu_verify_fleet,
            "npu_verify_image_record": npu_verify_image_record,
            "npu_verify_image_records": npu_verify_image_records,
        }
