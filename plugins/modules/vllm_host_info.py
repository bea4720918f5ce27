#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).

from __future__ import annotations

DOCUMENTATION = r"""
module: vllm_host_info
short_description: Read what actually runs on a vLLM host against what the inventory plans
version_added: 0.1.0
description:
  - Pre-flight of the vllm_compose role. Reads the host's compose projects and containers that
    carry this collection's label C(io.ascendfleet.llm.deployment), the deployment directories
    under O(project_root), the M(ascendfleet.llm.npu_assign) ledger and the processes
    listening on the ports of O(planned).
  - Deployments found on the host that O(names) does not name are orphans (typically a
    deployment renamed in the inventory while the old one keeps running). An orphan holding a
    planned port or card, or any other process holding a planned port, is returned in
    RV(errors) with the host, the deployment, what holds what and the fix; the role refuses
    the run before any change. Every orphan is returned in RV(orphans) for the run's summary.
  - With O(cache_dir), a deployment whose last-known-good could not start again (its model is
    damaged or gone from the cache) is refused the same way.
author:
  - ascendfleet maintainers (@ascendfleet)
extends_documentation_fragment:
  - ascendfleet.llm.attributes.read_only
  - ascendfleet.llm.vllm_host
options:
  host:
    description: The host's inventory name, used in the messages.
    type: str
    required: true
  planned:
    description:
      - The present deployments of the run, each with C(name), C(port) and C(devices) (explicit
        cards or null); C(model) and C(revision) for the last-known-good check.
    type: list
    elements: dict
    default: []
  names:
    description: Every deployment name the inventory gives for the host, present or absent.
    type: list
    elements: str
    default: []
  project_root:
    description: Where vllm_compose keeps one directory per deployment.
    type: path
    default: /opt/ascendfleet
  ledger_path:
    description: The npu_assign ledger (owner to device ids).
    type: path
    default: /var/lib/ascendfleet/npu-assignments.json
  cache_dir:
    description:
      - The model cache. When set, a planned deployment whose last-known-good
        (C(<project_root>/<name>/last-good/state.json)) serves another model or revision than
        the plan, and that model is not complete in the cache (the collection's one
        completeness reader, quick - every manifest file at its size), is returned in RV(errors) -
        a failed change could not roll back to it.
      - A last-known-good that mounts a revision directory (its state names a C(revision_key), the
        revisions cache layout) is judged on that directory, C(<cache_dir>/revisions/<Owner>/<Name>/<key>).
    type: path
  read_state:
    description:
      - Also read, per deployment of O(planned) (each with C(name), C(image), C(card_count) and
        C(devices)), what the vllm_compose rollout would compare - its compose file and modes, whether
        its C(vllm.env) holds O(env_content), its containers (state, compose config hash, image), compose's own
        config hash of the file on disk, the image the tag names now and the cards
        M(ascendfleet.llm.npu_assign) would give it - returned in RV(deployments). The deploy
        playbook's plan judges from it which hosts have nothing to change (their rollout is skipped).
    type: bool
    default: false
  exclude:
    description: With O(read_state), device ids npu_assign must not give out (as its O(ascendfleet.llm.npu_assign#module:exclude)).
    type: list
    elements: int
    default: []
  npu_smi_executable:
    description: With O(read_state), the npu-smi to read the chips with.
    type: str
    default: npu-smi
  env_content:
    description:
      - With O(read_state), the C(vllm.env) the role would write (the API key line). Compared on the
        host with each deployment's C(vllm.env); only whether they are equal comes back
        (C(env_matches)), never the file, its content or a digest of it (a digest of a key is a
        test for guesses). Not logged.
      - Omitted, C(env_matches) is null.
    type: str
seealso:
  - module: ascendfleet.llm.vllm_gate
  - module: ascendfleet.llm.vllm_status
"""

EXAMPLES = r"""
- name: Read what runs on the host
  ascendfleet.llm.vllm_host_info:
    host: "{{ inventory_hostname }}"
    planned: [{name: qwen, port: 8000, devices: null}]
    names: [qwen, old-qwen]
  register: __vllm_compose_host

- name: Refuse orphans and foreign processes on planned ports
  ansible.builtin.assert:
    that: __vllm_compose_host.errors | length == 0
    fail_msg: "{{ __vllm_compose_host.errors | join('\n') }}"
"""

RETURN = r"""
orphans:
  description:
    - Deployments of this collection on the host that O(names) does not name - C(name),
      C(containers), C(states), C(image), C(ports), C(cards) (from the containers' devices and the
      ledger), C(project_dir) (a directory under O(project_root)) and C(summary) (one line with the fix).
  returned: always
  type: list
  elements: dict
  sample: [{"name": "qwen-old", "containers": ["qwen-old-vllm-ascend-1"], "ports": [8000], "cards": [4, 5]}]
errors:
  description: Refusals, each naming the host, the deployment, the variable, what holds it and the fix.
  returned: always
  type: list
  elements: str
port_holders:
  description: Planned port (as a string) to the processes listening on it (pid, command, container id and name, compose project).
  returned: always
  type: dict
deployments:
  description:
    - With O(read_state), deployment name to C(compose) (the file's text, null when missing),
      C(compose_mode), C(env_matches) (whether C(vllm.env) holds O(env_content) exactly; null without
      O(env_content)), C(env_mode), C(last_good_mode), C(last_good_compose) (the text of
      C(last-good/compose.yaml), null when missing), C(image_id) (null when the image is
      not on the host), C(image_error) (why C(docker image inspect) failed, other than an absent image),
      C(containers) (C(service), C(status), C(config_hash), C(image_label), C(image_id)),
      C(config_hashes) (service to compose's hash of the file on disk), C(config_hash_error) (why compose
      could not hash it), C(cards) (what npu_assign would give), C(cards_changed) and C(cards_error).
  returned: when O(read_state)
  type: dict
problems:
  description: What could not be read (Docker not answering, an unreadable ledger).
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ascendfleet.llm.plugins.module_utils._host_read import VLLM_HOST_ARGS, host_info


def main():
    module = AnsibleModule(argument_spec=VLLM_HOST_ARGS, supports_check_mode=True)
    module.exit_json(changed=False, **host_info(module, module.params))


if __name__ == "__main__":
    main()
