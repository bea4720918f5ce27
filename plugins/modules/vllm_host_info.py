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
    type: path
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
problems:
  description: What could not be read (Docker not answering, an unreadable ledger).
  returned: always
  type: list
  elements: str
"""

import datetime
import json
import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_ledger import LedgerError, read as read_ledger
from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import model_completeness
from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_gate import (
    HOST_ARGS,
    device_ids,
    last_good_problems,
    port_holders,
    read_text,
    survey,
)
from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_status import (
    DEPLOYMENT_LABEL,
    StatusParseError,
    parse_containers,
)


def read_projects(module, docker, problems):
    """compose project -> this collection's containers, each with device_ids."""
    rc, out, err = module.run_command([docker, "ps", "--all", "--quiet", "--no-trunc", "--filter", "label=" + DEPLOYMENT_LABEL])
    if rc != 0:
        problems.append("docker ps: %s" % (err or out).strip())
        return {}
    ids = out.split()
    if not ids:
        return {}
    rc, out, err = module.run_command([docker, "inspect", "--type", "container"] + ids)
    try:
        projects = parse_containers(out, datetime.datetime.now(datetime.timezone.utc))
        raw = json.loads(out)
    except (StatusParseError, ValueError) as exc:
        problems.append("docker inspect: %s" % exc)
        return {}
    devices = dict((item.get("Id"), device_ids((item.get("HostConfig") or {}).get("Devices"))) for item in raw)
    for containers in projects.values():
        for container in containers:
            container["device_ids"] = devices.get(container.get("full_id"), [])
    return projects


def main():
    module = AnsibleModule(
        argument_spec=dict(
            host=dict(type="str", required=True),
            planned=dict(type="list", elements="dict", default=[]),
            names=dict(type="list", elements="str", default=[]),
            project_root=dict(type="path", default="/opt/ascendfleet"),
            ledger_path=dict(type="path", default="/var/lib/ascendfleet/npu-assignments.json"),
            cache_dir=dict(type="path"),
            **HOST_ARGS
        ),
        supports_check_mode=True,
    )
    p = module.params
    problems = []
    docker = module.get_bin_path(p["docker_executable"], required=False)
    projects = read_projects(module, docker, problems) if docker else {}
    if not docker:
        problems.append("docker: %s not found" % p["docker_executable"])
    try:
        ledger = read_ledger(p["ledger_path"])
    except LedgerError as exc:
        problems.append(str(exc))
        ledger = {}
    dirs = []
    if os.path.isdir(p["project_root"]):
        for entry in sorted(os.listdir(p["project_root"])):
            if os.path.isfile(os.path.join(p["project_root"], entry, "compose.yaml")):
                dirs.append(entry)
    planned = [d for d in p["planned"] if isinstance(d.get("name"), str) and isinstance(d.get("port"), int)]
    holders = port_holders([d["port"] for d in planned], module.run_command if docker else None, p["proc_root"],
                           docker or "docker")
    found = survey(p["host"], projects, planned, p["names"], ledger, holders, dirs)
    if p["cache_dir"]:
        last_good = {}
        for dep in planned:
            try:
                last_good[dep["name"]] = json.loads(read_text(os.path.join(p["project_root"], dep["name"], "last-good", "state.json")))
            except ValueError:
                continue
        found["errors"] = found["errors"] + last_good_problems(
            p["host"], planned, last_good, lambda model, revision: model_completeness(p["cache_dir"], model, revision))
    module.exit_json(changed=False, problems=problems, **found)


if __name__ == "__main__":
    main()
