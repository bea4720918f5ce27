# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""What a roll-out changes on the way, for the operator, once per distinct release pair.

PRIVATE to this collection; may change without notice. Controller side (it reads the generated
release data through ``_vllm_cli``).

The deploy playbook's plan knows, per host, the image each deployment will run (the plan) and the
compose file on disk (what runs now). :func:`rolls` pairs them by release; :func:`report` names, once
per ``from -> to`` however many hosts take it, every removed, renamed and deprecated flag or env var
and every flag or parser vLLM dropped on the way (``_vllm_cli.roll_forward``), before the rollout
starts.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible_collections.ascendfleet.llm.plugins.module_utils import _vllm_cli
from ansible_collections.ascendfleet.llm.plugins.module_utils._ascend_versions import VersionError, vllm_ascend_version_key
from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import release_of

# The service's image line of the role's compose file (templates/.../compose.yaml.j2: JSON-quoted).
_IMAGE_LINE = re.compile(r"^\s+image:\s*(\"(?:[^\"\\]|\\.)*\"|\S+)\s*$", re.MULTILINE)


def compose_image(text):
    """The image of a compose file's first service, or None (no file, no image line)."""
    if not isinstance(text, str):
        return None
    match = _IMAGE_LINE.search(text)
    if not match:
        return None
    value = match.group(1)
    if value.startswith('"'):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def _key(release):
    try:
        return vllm_ascend_version_key(release)
    except (VersionError, TypeError, ValueError):
        return None


def rolls(host, plan, states):
    """``[{"host", "deployment", "from", "to"}]``: the planned deployments of ``host`` whose image
    names another release than the compose file on the host (``states``: vllm_host_info's
    ``deployments``, each with ``compose``). A new deployment, or a release a tag does not name, is
    no roll."""
    out = []
    states = states if isinstance(states, dict) else {}
    for dep in (plan or {}).get("deployments") or []:
        if not isinstance(dep, dict):
            continue
        state = states.get(dep.get("name")) or {}
        old = release_of(compose_image(state.get("compose")) or "")
        new = release_of(str(dep.get("image") or ""))
        if old and new and old != new and _key(old) is not None and _key(new) is not None:
            out.append({"host": host, "deployment": dep["name"], "from": old, "to": new})
    return out


def report(entries):
    """The operator's lines for ``entries`` (:func:`rolls` of every host), one block per distinct
    ``from -> to``, oldest pair first: the pair, where (host/deployment, ...), then each change on
    the way, or that there is none. A roll back names the changes it undoes."""
    pairs = {}
    for entry in entries or []:
        pairs.setdefault((entry["from"], entry["to"]), []).append("%s/%s" % (entry["host"], entry["deployment"]))
    lines = []
    for (old, new) in sorted(pairs, key=lambda pair: (_key(pair[0]), _key(pair[1]))):
        where = pairs[(old, new)]
        forward = _key(old) < _key(new)
        low, high = (old, new) if forward else (new, old)
        changes = _vllm_cli.roll_forward(low, high)
        head = "%s -> %s (%s on %s)" % (old, new, "roll forward" if forward else "roll back",
                                        ", ".join(sorted(where)))
        if not changes:
            lines.append("%s: no flag, parser or env var is removed, renamed or deprecated on the way" % head)
            continue
        lines.append("%s: %d change%s on the way%s:" % (head, len(changes), "" if len(changes) == 1 else "s",
                                                        "" if forward else " (undone by the roll back)"))
        lines.extend("  - %s" % change for change in changes)
    return lines
