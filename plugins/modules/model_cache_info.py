#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).

from __future__ import annotations

DOCUMENTATION = r"""
module: model_cache_info
short_description: Tell which models of a list are complete in the host's ModelScope cache
version_added: 0.1.0
description:
  - For each model, checks C(<cache_dir>/models/<Owner>/<Name>/.ascendfleet/complete) (with
    O(layout=revisions), the marker of the revision directory the revision resolved to) against
    the manifest and the requested revision, and the size of every manifest file. Reads no
    model bytes unless O(verify=full) and contacts no hub unless O(resolve=always) - one cheap
    call per host, so a no-op prefetch run stays fast.
  - Also reports the C(modelscope) version installed in O(venv), so the caller installs the
    CLI only when a download is needed and the pinned version is missing.
  - Read-only (on the host and on the hub).
author:
  - ascendfleet maintainers (@ascendfleet)
extends_documentation_fragment:
  - ascendfleet.llm.attributes.read_only
  - ascendfleet.llm.models
options:
  cache_dir:
    description: Cache root (C(<cache_dir>/models/<Owner>/<Name>), or C(<cache_dir>/revisions/...)).
    type: path
    required: true
  layout:
    description:
      - C(flat) reads C(<cache_dir>/models/<Owner>/<Name>), one copy per model.
      - C(revisions) reads the revision each model's C(revision) resolved to when it was last
        fetched (C(<cache_dir>/revisions/<Owner>/<Name>/refs.json), or the commit id itself) in its
        own directory C(<cache_dir>/revisions/<Owner>/<Name>/<key>); RV(models) then also carry
        C(key) and C(commit). A model only in the flat layout is missing here (the fetch moves it
        in by hard links, without downloading).
    type: str
    choices: [flat, revisions]
    default: flat
  resolve:
    description:
      - With O(layout=revisions), C(missing) reads only the cache (the revision each name resolved
        to when it was fetched; no hub contacted).
      - C(always) asks the hub (O(endpoint), one file list request per model, nothing downloaded)
        what each revision resolves to now, and reads the cache for that revision. A model is
        missing when that revision is not complete here or the name is not recorded as resolving to
        it yet (a moved branch). The only case where this module contacts a hub.
    type: str
    choices: [missing, always]
    default: missing
  endpoint:
    description: With O(resolve=always), the hub (or an internal mirror speaking its API).
    type: str
    default: https://www.modelscope.cn
  token:
    description: With O(resolve=always), the access token for private models (never logged).
    type: str
  verify:
    description: C(quick) (marker + sizes) or C(full) (also re-hash every file).
    type: str
    choices: [quick, full]
    default: quick
  venv:
    description: Virtualenv of the C(modelscope) CLI whose installed version to report.
    type: path
  deployment_states:
    description:
      - Also return, per requested model, what M(ascendfleet.llm.vllm_model_info) returns for it
        (completeness, the C(config.json) values the deployment checks read, the weights' size), in
        RV(states). model_prefetch hands them to vllm_compose as the fact C(ascendfleet_models) when
        it changed nothing on the host, so the cache is read once per run.
    type: bool
    default: false
seealso:
  - module: ascendfleet.llm.model_fetch
"""

EXAMPLES = r"""
# Which planned models still need fetching on this host
- name: Read the model cache
  ascendfleet.llm.model_cache_info:
    cache_dir: /mnt/disk2/modelscope
    models:
      - model: Qwen/Qwen3.5-27B
        revision: v1.0
    venv: /opt/ascendfleet/modelscope-venv
  register: __model_prefetch_cache
"""

RETURN = r"""
models:
  description: One entry per requested model, in order.
  returned: always
  type: list
  elements: dict
  contains:
    model:
      description: Model id.
      type: str
      sample: Qwen/Qwen3.5-27B
    revision:
      description: Requested revision.
      type: str
      sample: v1.0
    model_dir:
      description: Model directory.
      type: str
      sample: /mnt/disk2/modelscope/models/Qwen/Qwen3.5-27B
    complete:
      description: Whether a valid marker for this revision vouches for every file.
      type: bool
      sample: true
    reasons:
      description: Why not complete.
      type: list
      elements: str
      sample: ["no completion marker"]
    key:
      description: With O(layout=revisions), the revision directory the revision resolved to (null when never fetched).
      type: str
      sample: 360167a01ba11562e3ea220a57ed6999be13ab9c
    commit:
      description: With O(layout=revisions), the hub's commit id of that revision.
      type: str
      sample: 360167a01ba11562e3ea220a57ed6999be13ab9c
    current:
      description: With O(resolve=always), whether the revision is recorded as what the name resolves to here.
      type: bool
      sample: true
missing:
  description:
    - The requested entries (model, revision, include, exclude) that are not complete (with
      O(resolve=always), not complete or not current).
  returned: always
  type: list
  elements: dict
  sample: [{"model": "Qwen/Qwen3.5-27B", "revision": "v1.0", "include": [], "exclude": []}]
states:
  description:
    - With O(deployment_states), C(<model>@<revision>) to the model's state as
      M(ascendfleet.llm.vllm_model_info) returns it in its C(models) for the same O(layout)
      (with O(layout=revisions), the revision directory vllm_compose mounts).
  returned: when O(deployment_states)
  type: dict
cli_version:
  description: Version of the C(modelscope) distribution installed in O(venv), null when absent.
  returned: always
  type: str
  sample: 1.40.2
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ascendfleet.llm.plugins.module_utils._host_read import MODEL_CACHE_ARGS, CacheReadError, cache_info


def main():
    module = AnsibleModule(argument_spec=MODEL_CACHE_ARGS, supports_check_mode=True)
    try:
        result = cache_info(module.params)
    except CacheReadError as exc:
        module.fail_json(msg=str(exc), model=exc.model)
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
