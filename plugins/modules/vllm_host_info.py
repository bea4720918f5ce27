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

import concurrent.futures
import datetime
import hmac
import json
import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ascendfleet.llm.plugins.module_utils._files import file_mode
from ansible_collections.ascendfleet.llm.plugins.module_utils._host_tools import find_npu_smi, run_tool, tool_runner
from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_assign import NpuAssignError, assign
from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_containers import pid_owners
from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_ledger import LedgerError, read as read_ledger
from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_smi import (
    DEFAULT_IDLE_THRESHOLD_PCT,
    NpuSmiParseError,
    detect_family,
    parse_info,
)
from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_noop import config_hashes, project_containers
from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import model_completeness
from ansible_collections.ascendfleet.llm.plugins.module_utils._model_revisions import revision_completeness
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
    """(compose project -> this collection's containers, each with device_ids; the raw inspect list)."""
    rc, out, err = module.run_command([docker, "ps", "--all", "--quiet", "--no-trunc", "--filter", "label=" + DEPLOYMENT_LABEL])
    if rc != 0:
        problems.append("docker ps: %s" % (err or out).strip())
        return {}, []
    ids = out.split()
    if not ids:
        return {}, []
    rc, out, err = module.run_command([docker, "inspect", "--type", "container"] + ids)
    try:
        projects = parse_containers(out, datetime.datetime.now(datetime.timezone.utc))
        raw = json.loads(out)
    except (StatusParseError, ValueError) as exc:
        problems.append("docker inspect: %s" % exc)
        return {}, []
    devices = dict((item.get("Id"), device_ids((item.get("HostConfig") or {}).get("Devices"))) for item in raw)
    for containers in projects.values():
        for container in containers:
            container["device_ids"] = devices.get(container.get("full_id"), [])
    return projects, raw


def _mode(path):
    mode = file_mode(path)
    return None if mode is None else "%04o" % mode


def _failure(rc, out, err):
    """What a failed CLI said (its last 300 characters), for the plan's reason."""
    return (err or out or "rc %d" % rc).strip()[-300:]


def _cards(module, p, ledger, planned, npu_smi):
    """name -> (device ids npu_assign would give, whether its ledger entry would change, error);
    ``npu_smi``: (path or None, problem, job running ``npu-smi info``)."""
    out = {}
    wanted = [d for d in planned if d.get("devices") is None]
    if not wanted:
        return out
    path, problem, job = npu_smi
    info = None
    if not problem:
        rc, text, _err = job.result()
        try:
            info = parse_info(text, lambda _w: None) if rc == 0 else None
        except NpuSmiParseError as exc:
            problem = str(exc)
        if rc != 0:
            problem = "npu-smi info failed (rc %d)" % rc
    if info is None:
        return dict((d["name"], ([], True, problem or "npu-smi unreadable")) for d in wanted)
    pids = [proc.pid for chip in info.chips for proc in chip.processes]
    owners = {}
    if pids:
        run, docker = tool_runner(module, p["docker_executable"])
        owners = pid_owners(pids, run, "com.docker.compose.project", p["proc_root"], docker)[0]
    family = detect_family(info)
    for dep in wanted:
        try:
            ids = assign(info.chips, family, dep["name"], int(dep.get("card_count") or 0), ledger, p["exclude"],
                         DEFAULT_IDLE_THRESHOLD_PCT, owners)
            out[dep["name"]] = (ids, list(ledger.get(dep["name"], [])) != ids, None)
        except (NpuAssignError, ValueError, TypeError) as exc:
            out[dep["name"]] = ([], True, str(exc))
    return out


def start_state_reads(module, docker, p, planned, pool):
    """The slow reads of read_state(), started at once in ``pool`` (each a CLI taking a good part of a
    second): npu-smi, the image of each tag, compose's config hash of each compose file."""
    npu_smi = (None, None, None)
    if any(d.get("devices") is None for d in planned):
        path, problem = find_npu_smi(module, p["npu_smi_executable"])
        npu_smi = (path, problem, None if problem else pool.submit(run_tool, module, [path, "info"]))
    images, hashes, composes = {}, {}, {}
    for dep in planned:
        image = dep.get("image")
        if docker and image and image not in images:
            images[image] = pool.submit(module.run_command, [docker, "image", "inspect", "--format", "{{.Id}}", image])
        compose_path = os.path.join(p["project_root"], dep["name"], "compose.yaml")
        if os.path.isfile(compose_path):
            composes[dep["name"]] = read_text(compose_path)
            if docker:
                hashes[dep["name"]] = pool.submit(compose_config_hash, module, docker, compose_path, dep["name"],
                                                  composes[dep["name"]])
    return npu_smi, images, hashes, composes


def compose_config_hash(module, docker, compose_path, project, text):
    """(rc, text, err) of ``docker compose config --hash '*'`` as ``up`` labels the containers.

    ``up`` hashes a service with its env_file entries read into its environment and dropped;
    ``config --hash`` keeps them in the hash (Compose v2.40, seen on the sim: a container created
    from a file with env_file never matched it). For such a file, the hash is taken of the file's
    resolved JSON form (``config --format json``, which drops them as ``up`` does), fed back on stdin.
    ``text``: the compose file as read."""
    argv = [docker, "compose", "-f", compose_path, "config"]
    if "env_file" not in (text or ""):
        return module.run_command(argv + ["--hash", "*"])
    rc, resolved, err = module.run_command(argv + ["--format", "json"])
    if rc != 0:
        return rc, resolved, err
    return module.run_command([docker, "compose", "-p", project, "--project-directory", os.path.dirname(compose_path),
                               "-f", "-", "config", "--hash", "*"], data=resolved, binary_data=True)


def _same_bytes(path, text):
    """Whether the file ``path`` holds exactly ``text`` (UTF-8); False when it is missing or unreadable.
    Only this yes or no leaves the host: no digest of a secret file is returned."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except (IOError, OSError):
        return False
    return hmac.compare_digest(data, text.encode("utf-8"))


def _read_or_none(path):
    """A file's text, None when it is missing."""
    return read_text(path) if os.path.isfile(path) else None


def read_state(module, p, planned, ledger, raw, jobs):
    """vllm_host_info's RV(deployments): what the rollout of each planned deployment compares."""
    npu_smi, image_jobs, hash_jobs, composes = jobs
    cards = _cards(module, p, ledger, planned, npu_smi)
    image_ids = {}
    image_errors = {}
    for image, job in image_jobs.items():
        rc, text, err = job.result()
        image_ids[image] = text.strip() if rc == 0 and text.strip() else None
        # Absent is "No such image"; any other failure is a read that did not work.
        if rc != 0 and "no such image" not in (err or "").lower():
            image_errors[image] = _failure(rc, text, err)
    out = {}
    for dep in planned:
        name = dep["name"]
        pdir = os.path.join(p["project_root"], name)
        compose_path = os.path.join(pdir, "compose.yaml")
        env_path = os.path.join(pdir, "vllm.env")
        compose = composes.get(name)
        env_matches = None if p["env_content"] is None else _same_bytes(env_path, p["env_content"])
        image = dep.get("image")
        hashes, hash_error = {}, None
        if compose is not None and name in hash_jobs:
            rc, text, err = hash_jobs[name].result()
            hashes = config_hashes(text) if rc == 0 else {}
            hash_error = None if rc == 0 else _failure(rc, text, err)
        ids, changed, error = cards.get(name, (dep.get("devices") or [], False, None))
        out[name] = {
            "compose": compose, "compose_mode": _mode(compose_path), "env_matches": env_matches, "env_mode": _mode(env_path),
            "last_good_mode": _mode(os.path.join(pdir, "last-good")) if os.path.isdir(os.path.join(pdir, "last-good")) else None,
            "last_good_compose": _read_or_none(os.path.join(pdir, "last-good", "compose.yaml")),
            "image_id": image_ids.get(image), "image_error": image_errors.get(image),
            "containers": project_containers(raw, name), "config_hashes": hashes, "config_hash_error": hash_error,
            "cards": ids, "cards_changed": changed, "cards_error": error,
        }
    return out


def main():
    module = AnsibleModule(
        argument_spec=dict(
            host=dict(type="str", required=True),
            planned=dict(type="list", elements="dict", default=[]),
            names=dict(type="list", elements="str", default=[]),
            project_root=dict(type="path", default="/opt/ascendfleet"),
            ledger_path=dict(type="path", default="/var/lib/ascendfleet/npu-assignments.json"),
            cache_dir=dict(type="path"),
            read_state=dict(type="bool", default=False),
            exclude=dict(type="list", elements="int", default=[]),
            npu_smi_executable=dict(type="str", default="npu-smi"),
            env_content=dict(type="str", no_log=True),
            **HOST_ARGS
        ),
        supports_check_mode=True,
    )
    p = module.params
    problems = []
    docker = module.get_bin_path(p["docker_executable"], required=False)
    planned = [d for d in p["planned"] if isinstance(d.get("name"), str) and isinstance(d.get("port"), int)]
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=8) if p["read_state"] else None
    jobs = start_state_reads(module, docker, p, planned, pool) if pool else None
    projects, raw = read_projects(module, docker, problems) if docker else ({}, [])
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
            p["host"], planned, last_good, lambda model, revision, key: (
                revision_completeness(p["cache_dir"], model, key) if key
                else model_completeness(p["cache_dir"], model, revision)))
    if p["read_state"]:
        found["deployments"] = read_state(module, p, planned, ledger, raw, jobs)
        pool.shutdown()
    module.exit_json(changed=False, problems=problems, **found)


if __name__ == "__main__":
    main()
