# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Filter reading a vLLM container log for a failure message (role vllm_compose).

Documentation: vllm_log_digest.yml beside this file.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_gate import digest_log, log_report


def vllm_log_digest(text, tail=40):
    """vLLM's errors first, then the tail without uvicorn access-log lines (counted)."""
    try:
        tail = int(tail)
    except (TypeError, ValueError):
        raise AnsibleFilterError("vllm_log_digest: tail must be a whole number, got %r" % (tail,))
    digest = digest_log(str(text or ""), tail)
    digest["report"] = log_report(digest, tail)
    return digest


class FilterModule(object):
    """vLLM container log filters."""

    def filters(self):
        return {"vllm_log_digest": vllm_log_digest}
