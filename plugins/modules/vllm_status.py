#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).

from __future__ import annotations

DOCUMENTATION = r"""
module: vllm_status
short_description: Read the state of a host's NPUs and vLLM deployments, without changing anything
version_added: 0.1.0
description:
  - One read-only pass over an Ascend host for C(playbooks/status.yml) - the NPU chips
    (C(npu-smi info)) joined with the M(ascendfleet.llm.npu_assign) ledger, the containers of
    every compose project (one C(docker ps) and one C(docker inspect)), the last-known-good
    state the vllm_compose role records, the model cache completion markers, and for every
    running deployment its C(/health), C(/v1/models) and C(/metrics) on the host.
  - Problems (no npu-smi, Docker not answering, an unreadable ledger) are returned in
    RV(problems) rather than failing the module, so a status run always reports every host.
  - Deployments are the ones named in O(deployments) plus every compose project whose
    containers carry the label C(io.ascendfleet.llm.deployment) (so deployments missing from
    the inventory show up too).
author:
  - ascendfleet maintainers (@ascendfleet)
extends_documentation_fragment:
  - ascendfleet.llm.attributes.read_only
  - ascendfleet.llm.npu_smi
  - ascendfleet.llm.ledger
options:
  deployments:
    description:
      - The host's deployments, as in C(ascendfleet_deployments). Only C(name), C(model),
        C(revision) (default V(master)) and C(state) are read here.
    type: list
    elements: dict
    default: []
  project_root:
    description: Where vllm_compose keeps one directory per deployment (C(<root>/<name>/last-good/)).
    type: path
    default: /opt/ascendfleet
  cache_dir:
    description: The model cache model_prefetch fills (C(<cache>/models/<Owner>/<Name>/.ascendfleet/complete)).
    type: path
    default: /var/lib/ascendfleet/modelscope
  cache_layout:
    description:
      - How the cache keeps models (C(ascendfleet_cache_layout)) - C(flat) or C(revisions) (the
        revision directory each deployment's revision resolved to, as M(ascendfleet.llm.vllm_model_info)
        reads it with its C(layout)).
    type: str
    choices: [flat, revisions]
    default: flat
  api_key:
    description: Bearer token for the OpenAI endpoints (C(vllm_compose_api_key)); empty for none.
    type: str
    default: ""
  timeout:
    description: Seconds each HTTP probe may take.
    type: int
    default: 5
  docker_executable:
    description: C(docker) program.
    type: str
    default: docker
  proc_root:
    description: Where the host's C(/proc) is (for C(/proc/uptime) and process cgroups).
    type: path
    default: /proc
notes:
  - A chip is C(unhealthy) when npu-smi's health is not C(OK), C(busy) when a process runs on it,
    C(idle) when it is healthy, unused and below O(idle_threshold_pct), else C(used) (memory taken
    with no visible process, e.g. a process in another PID namespace).
  - Probes go to C(http://127.0.0.1:<port>) on the host, the port taken from the running
    container's C(--port) argument, so they need no firewall opening.
seealso:
  - module: ascendfleet.llm.npu_info
  - module: ascendfleet.llm.npu_assign
"""

EXAMPLES = r"""
# What runs on each host and how it is doing (playbooks/status.yml does this, then renders a report)
- name: Read the state of the NPUs and deployments
  ascendfleet.llm.vllm_status:
    deployments: "{{ ascendfleet_deployments | default([]) }}"
  register: __status_host

# With an API key and the reference procedure's model cache directory
- name: Read the state with the endpoint key
  ascendfleet.llm.vllm_status:
    deployments: "{{ ascendfleet_deployments }}"
    cache_dir: /mnt/disk2/modelscope
    api_key: "{{ vllm_compose_api_key }}"
  no_log: true
"""

RETURN = r"""
family:
  description: Chip family from npu-smi (C(910B), C(A3), C(310P), ...); null when npu-smi could not be read.
  returned: always
  type: str
  sample: 910B
chip_name:
  description: The Name column of the first chip.
  returned: always
  type: str
  sample: 910B2
npu_smi_version:
  description: npu-smi version; null when it could not be read.
  returned: always
  type: str
  sample: 25.2.1
chips:
  description:
    - One row per chip. C(device_id) is the N of C(/dev/davinciN). C(state) is C(unhealthy),
      C(busy), C(idle) or C(used); C(holder) the deployment the ledger gives the chip to;
      C(processes) the deployments (compose projects) whose processes run on it (C(?) when
      unknown); C(hbm_used_pct) device memory use.
  returned: always
  type: list
  elements: dict
  sample: [{"device_id": 0, "health": "OK", "state": "busy", "holder": "qwen", "processes": ["qwen"], "hbm_used_pct": 93.1}]
ledger:
  description: The npu_assign ledger, owner to device ids (empty when there is none).
  returned: always
  type: dict
  sample: {"qwen": [0, 1]}
deployments:
  description:
    - One entry per deployment named in O(deployments) or found running. C(containers) as
      C(docker inspect) shows them (image reference, state, health, restarts, start time,
      uptime, port and served model name from the vLLM arguments, and C(revision_key), the
      revision directory it mounts, with the revisions cache layout); C(cards) from the ledger;
      C(last_good) (C(exists), C(image), C(port), C(device_ids) and, with the revisions cache
      layout, C(revision_key) from C(last-good/state.json)) and
      C(previous) (the same from C(previous/), the healthy version before the last rollout);
      C(cache) (C(prefetched), C(revision), C(reason)); C(probe) (C(port), C(health_status),
      C(health_error), C(models), C(models_error), C(metrics) with C(requests_running),
      C(requests_waiting), C(kv_cache_usage_pct), C(engines), C(model_names)).
  returned: always
  type: list
  elements: dict
models:
  description:
    - What the model cache holds for each model of O(deployments), keyed by C(Owner/Name), in
      the shape the C(ascendfleet.llm.vllm_compose_plan) filter reads.
  returned: always
  type: dict
uptime_seconds:
  description: Seconds since the host booted.
  returned: always
  type: int
  sample: 350735
problems:
  description: What could not be read, each naming the source and the fix.
  returned: always
  type: list
  elements: str
  sample: ["docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"]
"""

import datetime
import json
import os

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.urls import open_url

from ansible_collections.ascendfleet.llm.plugins.module_utils._host_tools import find_npu_smi, find_tool, run_tool
from ansible_collections.ascendfleet.llm.plugins.module_utils._http import request
from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_containers import pid_containers
from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_ledger import DEFAULT_PATH as DEFAULT_LEDGER, LedgerError, read as read_ledger
from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_smi import NpuSmiParseError, detect_family, parse_info
from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_deploy import model_state
from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_status import (
    PROJECT_LABEL,
    StatusParseError,
    chip_rows,
    parse_containers,
    parse_metrics,
    parse_models,
    uptime_seconds,
)


def _text(err, out):
    return " ".join(x.strip() for x in (err, out) if x and x.strip()) or "no output"


def read_npus(module, problems):
    """(npu-smi info, family) or (None, None) with a problem recorded."""
    path, problem = find_npu_smi(module, module.params["executable"])
    if problem:
        problems.append("npu-smi: %s" % problem)
        return None, None
    rc, out, err = run_tool(module, [path, "info"])
    if rc != 0:
        problems.append("npu-smi: %s info failed (rc %d): %s" % (path, rc, _text(err, out)))
        return None, None
    try:
        info = parse_info(out, module.warn)
    except NpuSmiParseError as exc:
        problems.append("npu-smi: cannot read the output of %s info: %s" % (path, exc))
        return None, None
    return info, detect_family(info)


def read_containers(module, problems, now):
    """compose project -> containers (one `docker ps` + one `docker inspect`), and docker ids."""
    docker = find_tool(module, module.params["docker_executable"])
    if not docker:
        problems.append("docker: %s not found; install Docker Engine (npu_verify checks it)"
                        % module.params["docker_executable"])
        return {}
    rc, out, err = run_tool(module, [docker, "ps", "--all", "--quiet", "--no-trunc", "--filter", "label=" + PROJECT_LABEL])
    if rc != 0:
        problems.append("docker: %s" % _text(err, out))
        return {}
    ids = out.split()
    if not ids:
        return {}
    rc, out, err = run_tool(module, [docker, "inspect", "--type", "container"] + ids)
    if rc != 0 and not out.strip():
        problems.append("docker inspect: %s" % _text(err, out))
        return {}
    try:
        return parse_containers(out, now)
    except StatusParseError as exc:
        problems.append("docker inspect: %s" % exc)
        return {}


def _open(url, data, headers, timeout, method):
    return open_url(url, data=data, headers=headers, timeout=timeout, validate_certs=False, follow_redirects="none",
                    use_proxy=False, method=method)


def _get(url, headers, timeout):
    """(status, body text, error text); never raises (``_http.request``): a port that answers
    something else than HTTP, or breaks off, is an error naming the port and what came back."""
    answer = request(url, timeout, headers=headers, opener=_open)
    if answer.error:
        return None, "", answer.error
    if answer.status >= 300:
        return answer.status, "", "HTTP %d" % answer.status
    return answer.status, answer.body, None


def probe(port, headers, timeout):
    result = {"port": port, "health_status": None, "health_error": None, "models": None,
              "models_error": None, "metrics": {}, "metrics_error": None}
    base = "http://127.0.0.1:%d" % port
    status, dummy, error = _get(base + "/health", headers, timeout)
    result["health_status"], result["health_error"] = status, error
    if status is None:
        return result
    status, body, error = _get(base + "/v1/models", headers, timeout)
    if error:
        result["models_error"] = error
    else:
        try:
            result["models"] = parse_models(body)
        except StatusParseError as exc:
            result["models_error"] = str(exc)
    status, body, error = _get(base + "/metrics", headers, timeout)
    if error:
        result["metrics_error"] = error
    else:
        try:
            result["metrics"] = parse_metrics(body)
        except StatusParseError as exc:
            result["metrics_error"] = str(exc)
    return result


def read_last_good(root, name, kind="last-good"):
    """What vllm_compose recorded in <root>/<name>/<kind>/ (last-good, or previous)."""
    directory = os.path.join(root, name, kind)
    out = {"exists": os.path.isfile(os.path.join(directory, "compose.yaml")), "image": None, "port": None,
           "device_ids": None, "error": None}
    try:
        with open(os.path.join(directory, "state.json"), "r") as handle:
            state = json.load(handle)
        if isinstance(state, dict):
            for key in ("image", "port", "device_ids"):
                out[key] = state.get(key)
            if state.get("revision_key"):
                out["revision_key"] = state["revision_key"]
    except (IOError, OSError):
        pass
    except ValueError as exc:
        out["error"] = "%s/state.json is not JSON (%s)" % (directory, exc)
    return out


def main():
    module = AnsibleModule(
        argument_spec=dict(
            deployments=dict(type="list", elements="dict", default=[]),
            project_root=dict(type="path", default="/opt/ascendfleet"),
            cache_dir=dict(type="path", default="/var/lib/ascendfleet/modelscope"),
            cache_layout=dict(type="str", choices=["flat", "revisions"], default="flat"),
            ledger_path=dict(type="path", default=DEFAULT_LEDGER),
            api_key=dict(type="str", default="", no_log=True),
            timeout=dict(type="int", default=5),
            executable=dict(type="str", default="npu-smi"),
            docker_executable=dict(type="str", default="docker"),
            idle_threshold_pct=dict(type="float", default=15.0),
            proc_root=dict(type="path", default="/proc"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    problems = []
    now = datetime.datetime.now(datetime.timezone.utc)

    info, family = read_npus(module, problems)
    try:
        ledger = read_ledger(p["ledger_path"])
    except LedgerError as exc:
        problems.append(str(exc))
        ledger = {}
    projects = read_containers(module, problems, now)

    # Which deployment each NPU process belongs to: its cgroup names the container.
    by_container = {}
    for project, containers in projects.items():
        for container in containers:
            if container.get("full_id"):
                by_container[container["full_id"]] = project
    chips = []
    if info is not None:
        raw = [chip.to_dict(p["idle_threshold_pct"]) for chip in info.chips]
        cids = pid_containers([proc["pid"] for chip in raw for proc in chip.get("processes") or []], p["proc_root"])
        chips = chip_rows(raw, ledger, dict((pid, by_container.get(cid)) for pid, cid in cids.items()))

    wanted = []
    for dep in p["deployments"]:
        if isinstance(dep, dict) and isinstance(dep.get("name"), str):
            wanted.append(dep)
    names = [d["name"] for d in wanted]
    for project, containers in sorted(projects.items()):
        if project not in names and any(c.get("deployment") for c in containers):
            names.append(project)
    headers = {"Authorization": "Bearer " + p["api_key"]} if p["api_key"] else {}

    models = {}
    deployments = []
    for name in names:
        spec = next((d for d in wanted if d["name"] == name), {})
        containers = projects.get(name, [])
        for container in containers:
            container.pop("full_id", None)
        model = spec.get("model")
        revision = spec.get("revision") or "master"
        if not model and containers and containers[0].get("model"):
            model, dummy, revision = containers[0]["model"].partition("@")
        cache = {"prefetched": False, "revision": None, "reason": "model unknown"}
        if model:
            state = model_state(p["cache_dir"], model, revision, layout=p["cache_layout"])
            if spec.get("state", "present") == "present" and spec.get("model"):
                models[model] = state
            cache = {"prefetched": state["prefetched"], "revision": state["revision"], "reason": state["reason"]}
        running = [c for c in containers if c["state"] == "running" and c.get("port")]
        deployments.append({
            "name": name,
            "model": model,
            "revision": revision,
            "in_inventory": bool(spec),
            "compose_file": os.path.isfile(os.path.join(p["project_root"], name, "compose.yaml")),
            "containers": containers,
            "cards": ledger.get(name, []),
            "last_good": read_last_good(p["project_root"], name),
            "previous": read_last_good(p["project_root"], name, "previous"),
            "cache": cache,
            "probe": probe(running[0]["port"], headers, p["timeout"]) if running else {},
        })

    try:
        with open(os.path.join(p["proc_root"], "uptime"), "r") as handle:
            uptime = uptime_seconds(handle.read())
    except (IOError, OSError, StatusParseError) as exc:
        problems.append("uptime: %s" % exc)
        uptime = None

    module.exit_json(
        changed=False,
        family=family,
        chip_name=info.chips[0].name if info is not None and info.chips else None,
        npu_smi_version=info.version if info is not None else None,
        chips=chips,
        ledger=ledger,
        deployments=deployments,
        models=models,
        uptime_seconds=uptime,
        problems=problems,
    )


if __name__ == "__main__":
    main()
