# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Flags and environment variables that a vllm-ascend release removes, renames or deprecates.

PRIVATE to this collection; may change without notice. Standard library only.

``CHANGES`` is written by hand from the release notes named in each row's ``source`` (flags that
simply disappear from a release's vLLM are found in the generated ``_vllm_cli_data`` by ``_vllm_cli``;
a row here adds what the data cannot say: the replacement, and environment variables, which are not
in any parser). Each row: ``release`` (the first vllm-ascend release with the change), ``kind``
(``env`` or ``flag``), ``name``, ``change`` (``removed``, ``renamed``: refused from ``release`` on;
``deprecated``: a warning), ``replacement`` (what to write instead, or None) and ``source``; an env var
that became a key of vllm-ascend's ``--additional-config`` names that key in ``additional_config`` (the
role writes its own settings there from that release on: :func:`additional_config_key`).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ascendfleet.llm.plugins.module_utils._ascend_versions import VersionError, vllm_ascend_version_key

NOTES_023 = "vllm-ascend v0.23.0 release notes (docs/source/user_guide/release_notes.md, tag v0.23.0)"
CHANGES = (
    {"release": "v0.20.2rc1", "kind": "flag", "name": "--model", "change": "deprecated",
     "replacement": "the model as the positional argument of vllm serve (the role writes it so)",
     "source": "vLLM 0.20 (../shared/field-facts.md, flag drift)"},
    {"release": "v0.23.0", "kind": "env", "name": "VLLM_ASCEND_ENABLE_FLASHCOMM1", "change": "renamed",
     "additional_config": "enable_flashcomm1",
     "replacement": "--additional-config '{\"enable_flashcomm1\": true}'",
     "source": NOTES_023 + (": 'Migrate FlashComm1 deployments from VLLM_ASCEND_ENABLE_FLASHCOMM1 to "
                            "additional_config.enable_flashcomm1' (#9064)")},
    {"release": "v0.23.0", "kind": "env", "name": "VLLM_ASCEND_ENABLE_CONTEXT_PARALLEL", "change": "removed",
     "replacement": "--additional-config '{\"enable_dsa_cp\": true}' (with enable_flashcomm1 where FlashComm1 "
                    "implied DSA-CP before)",
     "source": NOTES_023 + (": 'VLLM_ASCEND_ENABLE_CONTEXT_PARALLEL was removed during the AscendConfig migration. "
                            "DSA-CP is now controlled by additional_config.enable_dsa_cp' (#9668, #9697, #9910)")},
    {"release": "v0.23.0", "kind": "env", "name": "ASCEND_BUFFER_POOL", "change": "removed",
     "replacement": "ASCEND_ENABLE_USE_FABRIC_MEM=1 (A3 HCCS) or HCCL_INTRA_ROCE_ENABLE=1 (A2/A3 RoCE)",
     "source": "vllm-ascend v0.23.0 docs/source/user_guide/feature_guide/kv_pool.md: 'ASCEND_BUFFER_POOL has been "
               "removed. Use ASCEND_ENABLE_USE_FABRIC_MEM=1 for A3 HCCS scenarios or HCCL_INTRA_ROCE_ENABLE=1 for "
               "A2/A3 RoCE scenarios instead.'"},
)
# Not in CHANGES, because no release in the data has them yet (add the row when one does): vLLM 0.27.0
# removes --max-num-partial-prefills and --max-long-partial-prefills, vLLM 0.28.0 --override-attention-dtype
# and --calculate-kv-scales; the open vllm-ascend PR #14637 removes seven more env vars (VLLM_ASCEND_ENABLE_NZ,
# VLLM_ASCEND_ENABLE_FUSED_MC2, ...) in a release not yet known.


def _key(release):
    try:
        return vllm_ascend_version_key(release)
    except VersionError:
        return None


def applying(release):
    """The CHANGES rows in force for an image of ``release`` (their release is ``release`` or older)."""
    key = _key(release) if release else None
    if key is None:
        return []
    return [dict(row) for row in CHANGES if vllm_ascend_version_key(row["release"]) <= key]


def additional_config_key(env, release):
    """The ``--additional-config`` key that replaces the environment variable ``env`` in an image of
    ``release`` (``enable_flashcomm1`` for ``VLLM_ASCEND_ENABLE_FLASHCOMM1`` from v0.23.0), or None
    while that release still reads the variable (or the release cannot be read)."""
    for row in applying(release):
        if row["kind"] == "env" and row["name"] == env and row.get("additional_config"):
            return row["additional_config"]
    return None


def between(old, new):
    """The CHANGES rows that a roll from ``old`` to ``new`` crosses (``old`` < release <= ``new``), oldest first."""
    low, high = _key(old), _key(new)
    if low is None or high is None:
        return []
    rows = [dict(row) for row in CHANGES if low < vllm_ascend_version_key(row["release"]) <= high]
    return sorted(rows, key=lambda row: vllm_ascend_version_key(row["release"]))


def describe(row):
    """One sentence: 'VLLM_ASCEND_ENABLE_FLASHCOMM1 is --additional-config '{...}' from v0.23.0'."""
    if row["change"] == "renamed":
        text = "%s is %s from %s" % (row["name"], row["replacement"], row["release"])
    else:
        text = "%s is %s from %s" % (row["name"], row["change"], row["release"])
        if row.get("replacement"):
            text += "; use %s" % row["replacement"]
    return text


def check(used_flags, used_env, release):
    """``(errors, warnings)``: lists of ``(name, sentence)`` for the flags and env vars a deployment uses.

    Removed and renamed names in force at ``release`` are errors; deprecated ones warnings.
    """
    errors, warnings = [], []
    used = {"flag": set(used_flags or ()), "env": set(used_env or ())}
    for row in applying(release):
        if row["name"] in used[row["kind"]]:
            (warnings if row["change"] == "deprecated" else errors).append((row["name"], describe(row)))
    return errors, warnings
