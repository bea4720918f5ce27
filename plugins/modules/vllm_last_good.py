#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).

from __future__ import annotations

DOCUMENTATION = r"""
module: vllm_last_good
short_description: Record a vLLM deployment that passed its health gate as last-known-good
version_added: 0.1.0
description:
  - Run by the vllm_compose role after a deployment passed its gate - in one call on the host it
    keeps the last-known-good before this change as C(previous/) (with O(keep_previous)), then
    copies the live C(compose.yaml) to C(last-good/compose.yaml) and writes
    C(last-good/state.json) from O(state).
  - C(last-good/) is what an automatic rollback restores; C(previous/) is the target of
    C(playbooks/rollback.yml -e vllm_compose_rollback_target=previous).
  - Each file is replaced atomically and only when its content or mode differ (files 0644,
    directories 0755).
author:
  - ascendfleet maintainers (@ascendfleet)
attributes:
  check_mode:
    support: full
    description: Reports what it would write, writes nothing.
  diff_mode:
    support: full
    description: Shows C(last-good/state.json) before and after.
  idempotent:
    support: partial
    description:
      - A second run with the same O(state) writes nothing and reports no change - without
        O(keep_previous), which copies C(last-good/) over C(previous/) each time (the role sets it
        only when the live compose file is not last-known-good).
options:
  path:
    description: The deployment's project directory (C(<vllm_compose_project_root>/<name>)), holding the live C(compose.yaml).
    type: path
    required: true
  state:
    description:
      - What C(state.json) records - the role passes C(name), C(model), C(revision), C(image),
        C(device_ids), C(port), C(served_model_name) and C(model_root).
    type: dict
    required: true
  keep_previous:
    description: Copy the files of C(last-good/) to C(previous/) first (the change replaced that deployment).
    type: bool
    default: false
seealso:
  - module: ascendfleet.llm.vllm_gate
  - module: ascendfleet.llm.vllm_status
"""

EXAMPLES = r"""
- name: Record last-known-good of qwen
  ascendfleet.llm.vllm_last_good:
    path: /opt/ascendfleet/qwen
    keep_previous: true
    state:
      name: qwen
      model: Qwen/Qwen3.5-27B
      revision: master
      image: quay.io/ascend/vllm-ascend:v0.18.0rc1-openeuler
      device_ids: [4, 5]
      port: 8000
      served_model_name: qwen3.5-27b
      model_root: /models
"""

RETURN = r"""
written:
  description: The files and directories written (or, in check mode, that would be).
  returned: always
  type: list
  elements: str
  sample: [/opt/ascendfleet/qwen/previous/compose.yaml, /opt/ascendfleet/qwen/last-good/state.json]
replaced:
  description:
    - The last-good C(state.json) this record replaced (read before writing), null when there was none
      or it was not JSON.
    - "With the revisions cache layout its C(revision_key) is the revision the deployment served
      before (the fleet summary's C(revision master: <old> -> <new>))."
  returned: always
  type: dict
  sample: {name: qwen, model: Qwen/Qwen3.5-27B, revision: master, revision_key: 3f9a0c1e2d4b5a6978877665544332211ffeeddc}
"""

import json

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_text

from ansible_collections.ascendfleet.llm.plugins.module_utils._files import read_bytes
from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_last_good import apply, plan, state_path


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", required=True),
            state=dict(type="dict", required=True),
            keep_previous=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    path = module.params["path"]
    record = state_path(path)
    before = to_text(read_bytes(record) or b"")
    try:
        writes = plan(path, module.params["state"], module.params["keep_previous"])
        if not module.check_mode:
            apply(writes)
    except (IOError, OSError) as exc:
        module.fail_json(msg="cannot record last-known-good in %s: %s (the deployment passed its gate; "
                             "fix the directory's permissions or space and re-run)" % (path, exc))
    try:
        replaced = json.loads(before) if before else None
    except ValueError:
        replaced = None
    result = dict(changed=bool(writes), written=[w[0] for w in writes],
                  replaced=replaced if isinstance(replaced, dict) else None)
    if module._diff:
        after = next((to_text(data) for p, data, dummy in writes if p == record), before)
        result["diff"] = dict(before=before, after=after, before_header=record, after_header=record)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
