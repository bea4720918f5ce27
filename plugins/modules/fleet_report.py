#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).

from __future__ import annotations

DOCUMENTATION = r"""
module: fleet_report
short_description: Write a run's report files (Markdown, JSON, HTML) on the control node
version_added: 0.1.0
description:
  - The one report writer of the collection - npu_verify, model_prefetch, vllm_compose and the
    status playbook write their fleet reports with it.
  - Runs on the control node only (an action plugin; no host is contacted). A relative O(dir) is
    taken from where C(ansible-playbook) was started (its E(PWD)), else from the playbook's directory.
  - Each file is replaced atomically, and only when its content differs.
  - Reports are written in check mode too, because a report is the output of the run. The task
    never reports C(changed) - a report describes the fleet and is not fleet state, so a no-op
    re-run stays C(changed=0) on the control node; RV(rewritten) says which files were rewritten.
author:
  - ascendfleet maintainers (@ascendfleet)
attributes:
  check_mode:
    support: full
    description: Writes the same files in check mode (they are the run's output).
  diff_mode:
    support: none
    description: Reports are output, not configuration; nothing to diff.
  idempotent:
    support: full
    description: The same content leaves the files untouched; the task never reports a change.
options:
  dir:
    description: The report directory (C(ascendfleet_report_dir)); created when missing.
    type: str
    required: true
  files:
    description: File name (no directory) to its content.
    type: dict
    required: true
notes:
  - Use it with C(run_once) - the report covers the fleet.
seealso:
  - module: ascendfleet.llm.vllm_status
"""

EXAMPLES = r"""
# The fleet report of npu_verify
- name: Write the fleet report
  ascendfleet.llm.fleet_report:
    dir: "{{ npu_verify_report_dir }}"
    files:
      npu_verify.json: "{{ __npu_verify_fleet | to_nice_json }}\n"
      npu_verify.md: "{{ lookup('ansible.builtin.template', 'npu_verify.md.j2') }}"
  run_once: true
"""

RETURN = r"""
path:
  description: The absolute report directory.
  returned: always
  type: str
  sample: /srv/site/reports
files:
  description: The absolute paths of the report files.
  returned: always
  type: list
  elements: str
  sample: [/srv/site/reports/npu_verify.json, /srv/site/reports/npu_verify.md]
rewritten:
  description: The names of the files whose content changed and were rewritten.
  returned: always
  type: list
  elements: str
  sample: [npu_verify.json]
"""
