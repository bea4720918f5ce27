# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""The host reads of model_cache_info and vllm_host_info, once each: their modules call them, and
npu_host_facts calls them too (its ``model_cache`` and ``vllm_host`` options), so that the deploy
playbook reads each host once (one module execution) for npu_verify, model_prefetch and
vllm_compose (issue 30). The options of each read are declared here once (``MODEL_CACHE_ARGS``,
``VLLM_HOST_ARGS``): the same question whichever module asks it.

``question(planned)``: the part of a planned deployment vllm_host_info reads (name, port, cards,
image, model), what the control node compares to trust a combined read made before the plan.
"""

from __future__ import annotations

import concurrent.futures
import datetime
import glob
import hmac
import json
import os
import re

from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import ModelCacheError, model_completeness, models_option
from ansible_collections.ascendfleet.llm.plugins.module_utils._files import file_mode
from ansible_collections.ascendfleet.llm.plugins.module_utils._host_tools import find_npu_smi, run_tool, tool_runner
from ansible_collections.ascendfleet.llm.plugins.module_utils._model_revisions import cache_state, revision_completeness
from ansible_collections.ascendfleet.llm.plugins.module_utils._modelscope import validate_model_id, validate_revision
from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_assign import NpuAssignError, assign
from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_containers import pid_owners
from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_ledger import LedgerError, read as read_ledger
from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_smi import (
    DEFAULT_IDLE_THRESHOLD_PCT,
    NpuSmiParseError,
    detect_family,
    parse_info,
)
from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_deploy import model_state
from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_gate import (
    HOST_ARGS,
    device_ids,
    last_good_problems,
    port_holders,
    read_text,
    survey,
)
from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_noop import config_hashes, project_containers
from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_status import (
    DEPLOYMENT_LABEL,
    StatusParseError,
    parse_containers,
)

# model_cache_info's options.
MODEL_CACHE_ARGS = dict(
    cache_dir=dict(type="path", required=True),
    models=models_option(),
    verify=dict(type="str", choices=["quick", "full"], default="quick"),
    venv=dict(type="path"),
    deployment_states=dict(type="bool", default=False),
    layout=dict(type="str", choices=["flat", "revisions"], default="flat"),
    resolve=dict(type="str", choices=["missing", "always"], default="missing"),
    endpoint=dict(type="str", default="https://www.modelscope.cn"),
    token=dict(type="str", no_log=True),
)

# vllm_host_info's options.
VLLM_HOST_ARGS = dict(
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
)

# What vllm_host_info reads of a planned deployment (survey, last_good_problems, read_state).
QUESTION_KEYS = ("name", "port", "devices", "card_count", "image", "model", "revision")


def question(planned):
    """The part of each planned deployment that vllm_host_info reads, in order: two plans with the
    same question get the same answer from the same host."""
    return [dict((key, dep.get(key)) for key in QUESTION_KEYS) for dep in planned or [] if isinstance(dep, dict)]


def installed_version(venv):
    """Version of the ``modelscope`` dist in ``venv`` (dist-info name), without running it."""
    if not venv or not os.access(os.path.join(venv, "bin", "modelscope"), os.X_OK):
        return None
    for path in glob.glob(os.path.join(venv, "lib", "python3*", "site-packages", "modelscope-*.dist-info")):
        match = re.fullmatch(r"modelscope-([^-]+)\.dist-info", os.path.basename(path))
        if match:
            return match.group(1)
    return None


class CacheReadError(Exception):
    """A model the cache read could not read: the message and the model."""

    def __init__(self, msg, model):
        super(CacheReadError, self).__init__(msg)
        self.model = model


def cache_info(p, reads=None):
    """model_cache_info's result (without ``changed``) for its options ``p``; raises CacheReadError.
    ``reads``: a ``_facts.CacheReads`` shared with the other questions of the execution."""
    out = []
    for item in p["models"]:
        try:
            out.append(_cache_state(p, item, reads))
        except ModelCacheError as exc:
            raise CacheReadError(str(exc), item["model"])
        except (IOError, OSError) as exc:
            raise CacheReadError("%s: cannot read the cache (%s)" % (item["model"], exc), item["model"])
    missing = [dict(item, include=item["include"] or [], exclude=item["exclude"] or [])
               for item, state in zip(p["models"], out) if not state["complete"]]
    result = dict(models=out, missing=missing, cli_version=installed_version(p["venv"]))
    if p["deployment_states"]:
        result["states"] = dict(("%s@%s" % (item["model"], item["revision"]),
                                 model_state(p["cache_dir"], item["model"], item["revision"], layout=p["layout"], reads=reads))
                                for item in p["models"])
    return result


def _cache_state(p, item, reads):
    """The state of one ``models`` entry, as the options ``p`` ask (the id checked first, in every
    layout): the hub's answer with ``resolve=always``, else the cache's own (``_model_revisions.cache_state``)."""
    validate_model_id(item["model"])
    validate_revision(item["revision"])
    include, exclude = item["include"] or [], item["exclude"] or []
    if p["layout"] == "revisions" and p["resolve"] == "always":
        # Imported here: only this question asks the hub (model_cache_info with resolve=always).
        from ansible_collections.ascendfleet.llm.plugins.module_utils._model_cache import hub_resolution

        state = hub_resolution(p["cache_dir"], item["model"], item["revision"], include, exclude, p["endpoint"],
                               p["token"], p["verify"])
        if state["complete"] and not state["current"]:
            state.update(complete=False, reasons=["%s now resolves to %s on the hub, not recorded here yet"
                                                  % (item["revision"], state["key"])])
        return state
    return cache_state(p["cache_dir"], item["model"], item["revision"], p["layout"], include, exclude, p["verify"],
                       reads=reads)


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


def _cards(module, p, ledger, planned, npu_smi, raw):
    """name -> (device ids npu_assign would give, whether its ledger entry would change, error);
    ``npu_smi``: (path or None, problem, job running ``npu-smi info``); ``raw``: the containers
    inspected (their labels name the deployment of an NPU process)."""
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
        owners = pid_owners(pids, run, "com.docker.compose.project", p["proc_root"], docker, inspected=raw)[0]
    family = detect_family(info)
    for dep in wanted:
        try:
            ids = assign(info.chips, family, dep["name"], int(dep.get("card_count") or 0), ledger, p["exclude"],
                         DEFAULT_IDLE_THRESHOLD_PCT, owners)
            out[dep["name"]] = (ids, list(ledger.get(dep["name"], [])) != ids, None)
        except (NpuAssignError, ValueError, TypeError) as exc:
            out[dep["name"]] = ([], True, str(exc))
    return out


def _done(value):
    """A job already done, with ``value``."""
    job = concurrent.futures.Future()
    job.set_result(value)
    return job


def image_id_argv(docker, image):
    """``docker image inspect`` of one image's ID (vllm_host_info's and npu_host_facts' image read)."""
    return [docker, "image", "inspect", "--format", "{{.Id}}", image]


def start_state_reads(module, docker, p, planned, pool, npu_smi_read=None, image_jobs=None):
    """The slow reads of read_state(), started at once in ``pool`` (each a CLI taking a good part of a
    second): npu-smi, the image of each tag, compose's config hash of each compose file.
    ``npu_smi_read``: (path, stdout) of the ``npu-smi info`` the execution already ran (parsed
    again when it is the same npu-smi); ``image_jobs``: (docker, image) -> job of image_id_argv()
    the execution already started."""
    npu_smi = (None, None, None)
    if any(d.get("devices") is None for d in planned):
        path, problem = find_npu_smi(module, p["npu_smi_executable"])
        if problem:
            job = None
        elif npu_smi_read and npu_smi_read[0] == path:
            job = _done((0, npu_smi_read[1], ""))
        else:
            job = pool.submit(run_tool, module, [path, "info"])
        npu_smi = (path, problem, job)
    images, hashes, composes = {}, {}, {}
    for dep in planned:
        image = dep.get("image")
        if docker and image and image not in images:
            images[image] = (image_jobs or {}).get((docker, image)) or pool.submit(run_tool, module, image_id_argv(docker, image))
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
    cards = _cards(module, p, ledger, planned, npu_smi, raw)
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


def host_info(module, p, reads=None, npu_smi_read=None, image_jobs=None):
    """vllm_host_info's result (without ``changed``) for its options ``p``. What the execution
    already read, for npu_host_facts: ``reads``, a ``_facts.CacheReads`` shared with the other
    questions; ``npu_smi_read`` and ``image_jobs``, see start_state_reads()."""
    problems = []
    docker = module.get_bin_path(p["docker_executable"], required=False)
    planned = [d for d in p["planned"] if isinstance(d.get("name"), str) and isinstance(d.get("port"), int)]
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=8) if p["read_state"] else None
    jobs = start_state_reads(module, docker, p, planned, pool, npu_smi_read, image_jobs) if pool else None
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
                           docker or "docker", inspected=raw)
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
                revision_completeness(p["cache_dir"], model, key, reads=reads) if key
                else model_completeness(p["cache_dir"], model, revision, reads=reads)))
    if p["read_state"]:
        found["deployments"] = read_state(module, p, planned, ledger, raw, jobs)
        pool.shutdown()
    return dict(problems=problems, **found)
