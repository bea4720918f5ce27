#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).

from __future__ import annotations

DOCUMENTATION = r"""
module: vllm_model_info
short_description: Read what the model cache holds for vLLM deployments
version_added: 0.1.0
description:
  - For each model, reads the completion marker that the model_prefetch role writes last
    (C(<cache>/models/<Owner>/<Name>/.ascendfleet/complete)), checks it names the model and
    revision and that C(.ascendfleet/manifest.json) still has the recorded sha256, then reads
    C(config.json) (context length, C(text_config), whether a C(vision_config) exists) and the
    total size of the C(*.safetensors) weights.
  - One call answers for every deployment of a host, so the vllm_compose role needs a single
    module run to validate them all.
  - Read-only; changes nothing.
author:
  - ascendfleet maintainers (@ascendfleet)
extends_documentation_fragment:
  - ascendfleet.llm.attributes.read_only
  - ascendfleet.llm.models
options:
  cache_dir:
    description: The model cache, laid out as C(<cache_dir>/models/<Owner>/<Name>).
    type: path
    required: true
  layout:
    description:
      - C(flat) reads C(<cache_dir>/models/<Owner>/<Name>), one copy per model.
      - C(revisions) reads the revision directory each model's C(revision) resolved to when it was
        fetched (C(<cache_dir>/revisions/<Owner>/<Name>/refs.json), or the commit id itself),
        C(<cache_dir>/revisions/<Owner>/<Name>/<key>); RV(models) then also carry C(key), C(commit)
        and C(mount_source), the directory a deployment mounts read-only. No hub is asked.
    type: str
    choices: [flat, revisions]
    default: flat
seealso:
  - module: ascendfleet.llm.npu_info
"""

EXAMPLES = r"""
# Check that Qwen3.5-27B is prefetched and read its context length
- name: Read the cached models
  ascendfleet.llm.vllm_model_info:
    cache_dir: /mnt/disk2/modelscope
    models:
      - model: Qwen/Qwen3.5-27B
        revision: master
  register: __vllm_compose_models
"""

RETURN = r"""
models:
  description: One entry per model id.
  returned: always
  type: dict
  sample:
    Qwen/Qwen3.5-27B:
      path: /mnt/disk2/modelscope/models/Qwen/Qwen3.5-27B
      prefetched: true
      revision: master
      reason: null
      weights_bytes: 55826350080
      config:
        model_type: qwen3_5
        text_config: {max_position_embeddings: 262144}
        vision_config: {}
  contains:
    path:
      description: The model directory.
      type: str
      sample: /mnt/disk2/modelscope/models/Qwen/Qwen3.5-27B
    prefetched:
      description: Whether a valid completion marker for the requested revision is present.
      type: bool
      sample: true
    revision:
      description: The revision the marker names; null without a readable marker.
      type: str
      sample: master
    reason:
      description: Why the model does not count as prefetched; null when it does.
      type: str
      sample: no completion marker /mnt/disk2/modelscope/models/Qwen/Qwen3.5-27B/.ascendfleet/complete
    config:
      description: >-
        Selected keys of C(config.json) (C(max_position_embeddings), C(model_type),
        C(architectures), C(torch_dtype), C(linear_conv_kernel_dim)), the same keys of
        C(text_config), and an empty C(vision_config) when the model has one.
      type: dict
      sample: {text_config: {max_position_embeddings: 262144}, vision_config: {}}
    weights_bytes:
      description: Sum of the sizes of the C(*.safetensors) files in the model directory.
      type: int
      sample: 55826350080
    key:
      description: With O(layout=revisions), the revision key (commit id) the revision resolved to; null when never fetched.
      type: str
      returned: with O(layout=revisions)
      sample: 3f9a0c1e2d4b5a6978877665544332211ffeeddc
    commit:
      description: With O(layout=revisions), the hub's commit id of that revision (null for a content key).
      type: str
      returned: with O(layout=revisions)
      sample: 3f9a0c1e2d4b5a6978877665544332211ffeeddc
    mount_source:
      description: With O(layout=revisions), the revision directory a deployment mounts read-only; null while not complete.
      type: str
      returned: with O(layout=revisions)
      sample: /mnt/disk2/modelscope/revisions/Qwen/Qwen3.5-27B/3f9a0c1e2d4b5a6978877665544332211ffeeddc
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import MODEL_ID_FORM, model_id_parts, models_option
from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_deploy import model_state


def main():
    module = AnsibleModule(
        argument_spec=dict(
            cache_dir=dict(type="path", required=True),
            layout=dict(type="str", choices=["flat", "revisions"], default="flat"),
            models=models_option(),
        ),
        supports_check_mode=True,
    )
    result = {}
    for item in module.params["models"]:
        model = item["model"]
        if model_id_parts(model) is None:
            module.fail_json(msg="models: %r has no model id of the form Owner/Name; give each item a model key "
                                 "holding %s" % (item, MODEL_ID_FORM))
        result[model] = model_state(module.params["cache_dir"], model, item["revision"],
                                    layout=module.params["layout"])
    module.exit_json(changed=False, models=result)


if __name__ == "__main__":
    main()
