#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).

from __future__ import annotations

DOCUMENTATION = r"""
module: vllm_image_pull_wait
short_description: Wait for a background image pull, printing its progress every interval
version_added: 0.1.0
description:
  - Waits for a pull started in the background with M(ascendfleet.llm.vllm_image_pull) (C(async), C(poll 0))
    and prints, every O(interval) seconds, one line per host with what the pull has done - layers done of
    how many, bytes downloaded of how many (at least, while the daemon has not sized every layer), the
    rate and the time left - read from the module's O(progress_file) on the host.
  - Returns the pull's own result when it ends (its C(failed) and C(msg) - the daemon's error - included).
  - An action on the control node; this file documents it.
author:
  - ascendfleet maintainers (@ascendfleet)
attributes:
  check_mode:
    support: full
    description: Skips (nothing was started in check mode).
  diff_mode:
    support: none
    description: Nothing changes.
  idempotent:
    support: full
    description: Only reads the job's status and the progress file.
  action:
    support: full
    description: Runs on the control node; asks the host with C(async_status) and C(slurp).
options:
  jid:
    description: The C(ansible_job_id) of the background pull.
    type: str
    required: true
  image:
    description: The image being pulled, for the progress lines.
    type: str
    required: true
  progress_file:
    description: The O(ascendfleet.llm.vllm_image_pull#module:progress_file) of the pull.
    type: path
  timeout:
    description: Seconds after which the wait fails with C(timed_out) (the pull's own C(async) limit ends the job).
    type: int
    default: 3600
  interval:
    description: Seconds between two looks (and two progress lines).
    type: int
    default: 10
seealso:
  - module: ascendfleet.llm.vllm_image_pull
"""

EXAMPLES = r"""
- name: Wait for the pull, printing its progress
  ascendfleet.llm.vllm_image_pull_wait:
    jid: "{{ pull_job.ansible_job_id }}"
    image: quay.io/ascend/vllm-ascend:v0.18.0rc1-openeuler
    progress_file: /opt/ascendfleet/.image-pull/qwen.json
    timeout: 3600
    interval: 10
"""

RETURN = r"""
finished:
  description: Whether the pull ended (successfully or not) before O(timeout).
  type: bool
  returned: always
pulled:
  description: Whether the pull ended and succeeded (kept when the task sets C(failed_when), which resets C(failed)).
  type: bool
  returned: always
timed_out:
  description: True when O(timeout) passed first.
  type: bool
  returned: when the wait timed out
image_id:
  description: The pulled image's ID (from the pull's result).
  type: str
  returned: when the pull succeeded
progress:
  description: The pull's last progress (see M(ascendfleet.llm.vllm_image_pull)).
  type: dict
  returned: when the pull ended
msg:
  description: The pull's message, its error, or why the wait gave up.
  type: str
  returned: always
"""
