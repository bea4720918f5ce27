#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).

from __future__ import annotations

DOCUMENTATION = r"""
module: model_cache_prune
short_description: Remove model revisions no deployment, last-known-good or rollback target mounts
version_added: 0.1.0
description:
  - For the C(revisions) cache layout (C(ascendfleet_cache_layout)) - run by the vllm_compose role
    after a host's rollout passed its gates.
  - For each model of O(deployments), under that model's revisions lock
    (C(<cache_dir>/revisions/<Owner>/<Name>/.lock), the lock model_prefetch fetches under), reads
    every deployment's live, C(last-good/) and C(previous/) compose file under O(project_root),
    and removes the revision directories none of them mounts and no deployment of O(deployments)
    serves, keeping
    the newest until O(keep) revisions of the model remain (the mounted and wanted ones count and
    always stay).
  - Today's flat copy C(<cache_dir>/models/<Owner>/<Name>) of a model that was moved into the
    revisions layout goes too, once no compose file mounts C(<cache_dir>/models) any more.
  - A revision is renamed out of the way before it is deleted, so no reader ever sees half of one;
    what a stopped removal left is deleted by the next call.
author:
  - ascendfleet maintainers (@ascendfleet)
attributes:
  check_mode:
    support: full
    description: Reports what it would remove, removes nothing (and takes no lock).
  diff_mode:
    support: none
    description: Returns no diff; RV(models) lists what was removed.
  idempotent:
    support: full
    description: A second run finds nothing more to remove and reports no change.
options:
  cache_dir:
    description: The model cache root (C(<cache_dir>/revisions/<Owner>/<Name>/<key>)).
    type: path
    required: true
  project_root:
    description: Where the deployments' compose project directories are (vllm_compose's C(vllm_compose_project_root)).
    type: path
    required: true
  deployments:
    description:
      - The planned deployments of the host, each with C(model) (C(Owner/Name)) and C(revision_key)
        (the revision it serves; other keys are ignored). Only their models are looked at, and their
        keys are never removed. A deployment without C(revision_key) (the flat layout) is ignored.
    type: list
    elements: dict
    required: true
  keep:
    description: Revisions of each model to keep in all, the newest first (C(ascendfleet_cache_keep_revisions)).
    type: int
    default: 2
  lock_timeout:
    description: Seconds to wait for a model's revisions lock (a prefetch holding it).
    type: int
    default: 600
seealso:
  - module: ascendfleet.llm.model_fetch
  - module: ascendfleet.llm.vllm_last_good
"""

EXAMPLES = r"""
- name: Remove the revisions of Qwen3.5-27B nothing mounts any more, keeping two
  ascendfleet.llm.model_cache_prune:
    cache_dir: /var/lib/ascendfleet/modelscope
    project_root: /opt/ascendfleet
    deployments:
      - {name: qwen, model: Qwen/Qwen3.5-27B, revision_key: 9e2f6b3d8a153c1a4f0e9b7d2a6c5e8f1b0d4a7c}
    keep: 2
"""

RETURN = r"""
models:
  description: Per model looked at, the revisions kept and removed (would be, in check mode).
  returned: always
  type: dict
  sample:
    Qwen/Qwen3.5-27B:
      kept: [9e2f6b3d8a153c1a4f0e9b7d2a6c5e8f1b0d4a7c, 3c1a4f0e9b7d2a6c5e8f1b0d4a7c9e2f6b3d8a15]
      removed: [0d4a7c9e2f6b3d8a153c1a4f0e9b7d2a6c5e8f1b]
      legacy_removed: false
      busy: null
  contains:
    kept:
      description: Revision keys that stay, the newest first.
      type: list
      elements: str
    removed:
      description: Revision keys removed.
      type: list
      elements: str
    legacy_removed:
      description: Whether today's flat copy of the model was removed.
      type: bool
    busy:
      description:
        - Null, or why nothing of the model was removed this time - its lock stayed taken for
          O(lock_timeout) seconds (a prefetch of that model; a warning says so, the next run removes it).
      type: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import MODEL_ID_FORM, ModelCacheError, model_id_parts
from ansible_collections.ascendfleet.llm.plugins.module_utils._model_revisions import is_key, prune


def main():
    module = AnsibleModule(
        argument_spec=dict(
            cache_dir=dict(type="path", required=True),
            project_root=dict(type="path", required=True),
            deployments=dict(type="list", elements="dict", required=True),
            keep=dict(type="int", default=2),
            lock_timeout=dict(type="int", default=600),
        ),
        supports_check_mode=True,
    )
    p = module.params
    wanted = {}
    for dep in p["deployments"]:
        model, key = dep.get("model"), dep.get("revision_key")
        if key is None:
            continue
        if model_id_parts(model) is None or not is_key(key):
            module.fail_json(msg="deployments: %s: model %r at revision_key %r is not a model id (%s) with a revision key "
                                 "(a 40-hex commit id or content-<40 hex>); pass the planned deployments of the "
                                 "revisions layout" % (dep.get("name"), model, key, MODEL_ID_FORM))
        wanted.setdefault(model, []).append(key)
    try:
        models = prune(p["cache_dir"], p["project_root"], wanted, p["keep"], p["lock_timeout"], module.check_mode)
    except ModelCacheError as exc:
        module.fail_json(msg=str(exc))
    except (IOError, OSError) as exc:
        module.fail_json(msg="cannot remove old revisions in %s: %s (fix the cache's permissions and re-run; a stopped "
                             "removal is finished by the next run)" % (p["cache_dir"], exc))
    for model, done in sorted(models.items()):
        if done.get("busy"):
            module.warn("%s: old revisions not removed this time: %s" % (model, done["busy"]))
    changed = any(m["removed"] or m["legacy_removed"] for m in models.values())
    module.exit_json(changed=changed, models=models)


if __name__ == "__main__":
    main()
