#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).

from __future__ import annotations

DOCUMENTATION = r"""
module: npu_host_facts
short_description: Read what an Ascend host offers to a vllm-ascend container, in one call
version_added: 0.1.0
description:
  - Gathers in one module execution the host facts a readiness check of an Ascend NPU server
    needs and, with O(npu_smi), the chips themselves (what M(ascendfleet.llm.npu_info) returns).
  - Driver and firmware C(version.info), C(/etc/ascend_install.info), the host's CANN toolkit
    version (C(<toolkit>/<arch>-linux/ascend_toolkit_install.info), else C(version.cfg)),
    the C(/dev/davinciN) and control device nodes, any other paths (what the compose service
    mounts), Docker Engine and Compose v2 versions, the CANN inside a vllm-ascend image that is
    already on the host, the model cache disk (mount point, free space, writable, completed
    models) and, optionally, the RoCE link and address of each chip from C(hccn_tool).
  - Read-only. Every problem it meets (file absent or unreadable, Docker CLI absent, Engine not
    reachable, image absent) is returned as data, never as a module failure, so that the
    caller decides the verdict. Only invalid options fail the module.
author:
  - ascendfleet maintainers (@ascendfleet)
extends_documentation_fragment:
  - ascendfleet.llm.attributes.read_only
  - ascendfleet.llm.models
options:
  driver_dir:
    description: Ascend driver directory; C(version.info) in it is read.
    type: path
    default: /usr/local/Ascend/driver
  firmware_dir:
    description: Ascend firmware directory; C(version.info) in it is read.
    type: path
    default: /usr/local/Ascend/firmware
  install_info:
    description: The driver installer's record of user, group and install paths.
    type: path
    default: /etc/ascend_install.info
  toolkit_dirs:
    description:
      - Directories where a host CANN toolkit may be installed, tried in order; the first with
        a version file wins. Each is searched for C(*-linux/ascend_toolkit_install.info), then
        C(version.cfg).
      - A host needs no toolkit of its own to run vllm-ascend (CANN lives in the image).
    type: list
    elements: path
    default: [/usr/local/Ascend/ascend-toolkit/latest, /usr/local/Ascend/cann]
  npu_smi:
    description:
      - Whether to read the chips with C(npu-smi info) first (returned as RV(npu)). The device node
        of every chip it lists is then reported (besides O(device_ids)), O(hccn) reads their
        RoCE ports and O(images) picks the image by their family.
    type: bool
    default: false
  npu_smi_executable:
    description: The C(npu-smi) binary, as for M(ascendfleet.llm.npu_info)'s O(ascendfleet.llm.npu_info#module:executable).
    type: str
    default: npu-smi
  idle_threshold_pct:
    description: As for M(ascendfleet.llm.npu_info) (the C(idle) verdict of the chips in RV(npu)), with O(npu_smi).
    type: float
    default: 15.0
  device_ids:
    description: N of each C(/dev/davinciN) that must exist (the chips' device ids).
    type: list
    elements: int
    default: []
  control_devices:
    description: Names of the control device nodes under C(/dev) every NPU container needs.
    type: list
    elements: str
    default: [davinci_manager, devmm_svm, hisi_hdc]
  paths:
    description: Further host paths to report on (for example what the compose service mounts).
    type: list
    elements: path
    default: []
  docker:
    description: Whether to query Docker Engine and Compose v2 through the C(docker) CLI.
    type: bool
    default: true
  docker_executable:
    description: The C(docker) CLI, as a name looked up in E(PATH) or as a path.
    type: str
    default: docker
  image:
    description:
      - A vllm-ascend image (C(repository:tag)) whose CANN version to read, when the image is
        already on the host. The image's toolkit files are printed by a throw-away container
        (C(docker run --rm --pull never --network none --entrypoint /bin/sh)); the server
        never starts and nothing is pulled.
      - Empty to skip (or to take the image from O(images)).
    type: str
    default: ""
  image_record:
    description:
      - What an earlier read of the image found, C({id, cann_version, source}) (for example the
        npu_verify fleet report, filter P(ascendfleet.llm.npu_verify_image_record#filter)). When the
        image on the host has this ID (the digest of its content, so the same toolkit files), its
        CANN is taken from here and no probe container is started.
      - Empty, or another ID, to read the image.
    type: dict
    default: {}
  images:
    description:
      - With O(npu_smi) and O(image) empty, the image to read per chip family (C(910B), C(A3),
        C(310P) and so on). The one of the family npu-smi reports is read, none when the family has none.
    type: dict
    default: {}
  cache_dir:
    description: The model cache directory to report on (empty to skip).
    type: path
    default: ""
  layout:
    description:
      - The cache layout of O(cache_dir) (C(ascendfleet_cache_layout)) whose completeness C(cache.models) reports.
      - C(revisions) reads the revision directory each revision last resolved to (no hub asked); a copy complete
        only in the flat layout counts as complete, since the first run of the revisions layout moves it in by
        hard links.
    type: str
    choices: [flat, revisions]
    default: flat
  hccn_device_ids:
    description: Device ids to query with C(hccn_tool -i N -link -g) and C(-ip -g) (empty to skip).
    type: list
    elements: int
    default: []
  hccn:
    description: With O(npu_smi), also query C(hccn_tool) for every chip npu-smi lists (as O(hccn_device_ids)).
    type: bool
    default: false
  hccn_tool:
    description: Path of C(hccn_tool).
    type: path
    default: /usr/local/Ascend/driver/tools/hccn_tool
  model_cache:
    description:
      - Also read the model cache as M(ascendfleet.llm.model_cache_info) does with these options
        (the same read, the same code), returned in RV(model_cache). The deploy playbook asks
        it here for model_prefetch, so that each host is read once per run (issue 30).
      - Unset to skip.
    type: dict
    suboptions:
      cache_dir:
        description: As M(ascendfleet.llm.model_cache_info)'s O(ascendfleet.llm.model_cache_info#module:cache_dir).
        type: path
        required: true
      models:
        description: As M(ascendfleet.llm.model_cache_info)'s O(ascendfleet.llm.model_cache_info#module:models).
        type: list
        elements: dict
        default: []
        suboptions:
          model:
            description: As in O(models).
            type: str
            required: true
          revision:
            description: As in O(models).
            type: str
            default: master
          include:
            description: As in O(models).
            type: list
            elements: str
          exclude:
            description: As in O(models).
            type: list
            elements: str
      verify:
        description: As M(ascendfleet.llm.model_cache_info)'s O(ascendfleet.llm.model_cache_info#module:verify).
        type: str
        choices: [quick, full]
        default: quick
      venv:
        description: As M(ascendfleet.llm.model_cache_info)'s O(ascendfleet.llm.model_cache_info#module:venv).
        type: path
      deployment_states:
        description: As M(ascendfleet.llm.model_cache_info)'s O(ascendfleet.llm.model_cache_info#module:deployment_states).
        type: bool
        default: false
      layout:
        description: As M(ascendfleet.llm.model_cache_info)'s O(ascendfleet.llm.model_cache_info#module:layout).
        type: str
        choices: [flat, revisions]
        default: flat
      resolve:
        description: As M(ascendfleet.llm.model_cache_info)'s O(ascendfleet.llm.model_cache_info#module:resolve).
        type: str
        choices: [missing, always]
        default: missing
      endpoint:
        description: As M(ascendfleet.llm.model_cache_info)'s O(ascendfleet.llm.model_cache_info#module:endpoint).
        type: str
        default: https://www.modelscope.cn
      token:
        description: As M(ascendfleet.llm.model_cache_info)'s O(ascendfleet.llm.model_cache_info#module:token) (never logged).
        type: str
  vllm_host:
    description:
      - Also read what runs on the host as M(ascendfleet.llm.vllm_host_info) does with these
        options (the same read, the same code), returned in RV(vllm_host). The deploy playbook
        asks it here for vllm_compose's plan.
      - With O(npu_smi), O(vllm_host.planned_by_family) gives the planned deployments per chip
        family (their image depends on it); those of the family npu-smi reports are read, none
        when it reports none. O(vllm_host.exclude_unhealthy) excludes the chips npu-smi reports
        unhealthy (as the role's O(ascendfleet.llm.vllm_host_info#module:exclude)).
      - Unset to skip.
    type: dict
    suboptions:
      host:
        description: As M(ascendfleet.llm.vllm_host_info)'s O(ascendfleet.llm.vllm_host_info#module:host).
        type: str
        required: true
      planned:
        description: As M(ascendfleet.llm.vllm_host_info)'s O(ascendfleet.llm.vllm_host_info#module:planned).
        type: list
        elements: dict
        default: []
      planned_by_family:
        description: With O(npu_smi), chip family to O(vllm_host.planned) (used instead of it).
        type: dict
      exclude_unhealthy:
        description: With O(npu_smi), add the chips npu-smi does not report C(OK) to O(vllm_host.exclude).
        type: bool
        default: false
      names:
        description: As M(ascendfleet.llm.vllm_host_info)'s O(ascendfleet.llm.vllm_host_info#module:names).
        type: list
        elements: str
        default: []
      project_root:
        description: As M(ascendfleet.llm.vllm_host_info)'s O(ascendfleet.llm.vllm_host_info#module:project_root).
        type: path
        default: /opt/ascendfleet
      ledger_path:
        description: As M(ascendfleet.llm.vllm_host_info)'s O(ascendfleet.llm.vllm_host_info#module:ledger_path).
        type: path
        default: /var/lib/ascendfleet/npu-assignments.json
      cache_dir:
        description: As M(ascendfleet.llm.vllm_host_info)'s O(ascendfleet.llm.vllm_host_info#module:cache_dir).
        type: path
      read_state:
        description: As M(ascendfleet.llm.vllm_host_info)'s O(ascendfleet.llm.vllm_host_info#module:read_state).
        type: bool
        default: false
      exclude:
        description: As M(ascendfleet.llm.vllm_host_info)'s O(ascendfleet.llm.vllm_host_info#module:exclude).
        type: list
        elements: int
        default: []
      npu_smi_executable:
        description: As M(ascendfleet.llm.vllm_host_info)'s O(ascendfleet.llm.vllm_host_info#module:npu_smi_executable).
        type: str
        default: npu-smi
      env_content:
        description: As M(ascendfleet.llm.vllm_host_info)'s O(ascendfleet.llm.vllm_host_info#module:env_content) (never logged).
        type: str
      docker_executable:
        description: As M(ascendfleet.llm.vllm_host_info)'s O(ascendfleet.llm.vllm_host_info#module:docker_executable).
        type: str
        default: docker
      proc_root:
        description: As M(ascendfleet.llm.vllm_host_info)'s O(ascendfleet.llm.vllm_host_info#module:proc_root).
        type: path
        default: /proc
notes:
  - Version files are parsed by the same code as M(ascendfleet.llm.npu_info) uses.
  - The image probe needs C(/bin/sh) and C(cat) in the image, which every vllm-ascend image has.
seealso:
  - module: ascendfleet.llm.npu_info
  - module: ascendfleet.llm.model_cache_info
  - module: ascendfleet.llm.vllm_host_info
"""

EXAMPLES = r"""
# Everything the ascendfleet.llm.npu_verify role checks, in one call: the chips, their device
# nodes, the image for their family
- name: Read chips, driver, firmware, CANN, devices, Docker and cache disk facts
  ascendfleet.llm.npu_host_facts:
    npu_smi: true
    images:
      910B: quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler
      A3: quay.io/ascend/vllm-ascend:v0.17.0rc1-a3-openeuler
    cache_dir: /mnt/disk2/modelscope
  register: __npu_verify_host

# The chips read before (ascendfleet.llm.npu_info), one image
- name: Read driver, firmware, CANN, devices, Docker and cache disk facts
  ascendfleet.llm.npu_host_facts:
    device_ids: "{{ __npu_info.chips | map(attribute='device_id') | list }}"
    paths:
      - /usr/local/dcmi
      - /usr/local/Ascend/driver/lib64
    image: quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler
    cache_dir: /mnt/disk2/modelscope
    models:
      - model: Qwen/Qwen3.5-27B
        revision: master
  register: __npu_verify_host

# The deploy playbook's one read per host: also the model cache (as model_cache_info reads it)
# and what runs on the host (as vllm_host_info reads it, for the deployments of the chips' family)
- name: Read the host once for npu_verify, model_prefetch and vllm_compose's plan
  ascendfleet.llm.npu_host_facts:
    npu_smi: true
    model_cache:
      cache_dir: /mnt/disk2/modelscope
      models: [{model: Qwen/Qwen3.5-27B, revision: master}]
      deployment_states: true
    vllm_host:
      host: "{{ inventory_hostname }}"
      names: [qwen]
      read_state: true
      exclude_unhealthy: true
      planned_by_family:
        910B: [{name: qwen, port: 8000, devices: null, card_count: 2, image: "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler",
                model: Qwen/Qwen3.5-27B, revision: master}]
  register: __npu_verify_host

# Multi-node groups: the RoCE link and address of each chip as well
- name: Read the chip network of a multi-node host
  ascendfleet.llm.npu_host_facts:
    docker: false
    hccn_device_ids: [0, 1, 2, 3, 4, 5, 6, 7]
  register: __npu_verify_host
"""

RETURN = r"""
npu:
  description:
    - What M(ascendfleet.llm.npu_info) returns (C(npu_smi_version), C(driver_version), C(family),
      C(has_process_table), C(chips)); when npu-smi cannot be read, C(msg) (npu_info's error
      message) and, when it ran, C(rc), C(stdout) and C(stderr) instead.
  returned: when O(npu_smi) is true
  type: dict
  sample: {"npu_smi_version": "25.2.1", "driver_version": "25.2.1", "family": "910B", "has_process_table": true,
           "chips": [{"npu_id": 0, "chip_id": 0, "device_id": 0, "device_path": "/dev/davinci0", "name": "910B3",
                      "health": "OK", "idle": true}]}
python:
  description: The Python running the module.
  returned: always
  type: dict
  sample: {"version": "3.11.2", "executable": "/usr/bin/python3"}
driver:
  description:
    - The driver C(version.info). C(version) is C(Version=) (else C(package_version=)).
    - C(error) says why nothing was read (absent, unreadable, not key=value).
  returned: always
  type: dict
  sample: {"path": "/usr/local/Ascend/driver/version.info", "exists": true, "version": "25.0.rc1.1",
           "package_version": "25.0.rc1.1", "values": {"Version": "25.0.rc1.1"}, "error": null}
firmware:
  description: The firmware C(version.info), same keys as RV(driver).
  returned: always
  type: dict
  sample: {"path": "/usr/local/Ascend/firmware/version.info", "exists": true, "version": "7.7.0.1.231",
           "package_version": "25.0.rc1.1", "values": {}, "error": null}
install_info:
  description: C(/etc/ascend_install.info) as key/value pairs.
  returned: always
  type: dict
  sample: {"path": "/etc/ascend_install.info", "exists": true, "values": {"UserName": "HwHiAiUser"}, "error": null}
host_cann:
  description:
    - The host's CANN toolkit. C(found) false (and C(version) null) when none is installed.
    - C(source) is the file the version came from.
  returned: always
  type: dict
  sample: {"found": true, "version": "8.3.RC2", "arch": "aarch64",
           "source": "/usr/local/Ascend/ascend-toolkit/latest/aarch64-linux/ascend_toolkit_install.info", "error": null}
devices:
  description:
    - One entry per C(/dev/davinciN) of O(device_ids) and per O(control_devices), in that order.
    - C(type) is C(char) for a device node, C(null) when absent.
  returned: always
  type: list
  elements: dict
  sample: [{"name": "davinci0", "path": "/dev/davinci0", "exists": true, "type": "char"}]
paths:
  description: One entry per O(paths) with C(exists) and C(type) (C(file), C(directory), C(char), ...).
  returned: always
  type: list
  elements: dict
  sample: [{"path": "/usr/local/dcmi", "exists": true, "type": "directory"}]
docker:
  description:
    - Docker CLI, Engine and Compose v2. C(cli) is the CLI's path, null when absent.
    - C(reachable) is true when the Engine answered (C(server_version) set); else C(error) holds
      what the CLI printed.
    - C(compose_version) is null when C(docker compose version) failed; C(compose_error) says why.
  returned: when O(docker) is true
  type: dict
  sample: {"cli": "/usr/bin/docker", "client_version": "20.10.24+dfsg1", "server_version": "20.10.24+dfsg1",
           "reachable": true, "error": null, "compose_version": "2.40.3", "compose_error": null}
image:
  description:
    - The vllm-ascend image of O(image) (or of O(images)). C(present) false when it is not on the host yet.
    - C(cann_version) is null when the image holds no toolkit version file (C(error) says so).
    - C(recorded) is true when C(cann_version) and C(source) come from O(image_record) (same image ID).
  returned: when O(image) is set, or O(images) names an image for the chips' family
  type: dict
  sample: {"name": "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler", "present": true, "id": "sha256:0a1b",
           "cann_version": "8.5.0", "source": "/usr/local/Ascend/cann/aarch64-linux/ascend_toolkit_install.info",
           "error": null, "recorded": false}
cache:
  description:
    - The cache directory; when it does not exist yet, C(mount_point), C(free_bytes), C(total_bytes)
      and C(writable) are those of C(probed_path), its nearest existing ancestor.
    - C(models) holds, for each O(models) entry, C(model), C(revision), C(marker), C(complete) and
      C(reasons) (why not complete), and with O(layout=revisions) C(key) (the revision directory) and
      C(migrates) (complete only in the flat layout, moved in by hard links on the first run).
  returned: when O(cache_dir) is set
  type: dict
  sample: {"path": "/mnt/disk2/modelscope", "exists": true, "type": "directory",
           "probed_path": "/mnt/disk2/modelscope", "mount_point": "/mnt/disk2", "free_bytes": 1099511627776,
           "total_bytes": 3298534883328, "writable": true,
           "models": [{"model": "Qwen/Qwen3.5-27B", "revision": "master", "complete": false,
                       "reasons": ["no completion marker"],
                       "marker": "/mnt/disk2/modelscope/models/Qwen/Qwen3.5-27B/.ascendfleet/complete"}]}
hccn:
  description:
    - One entry per O(hccn_device_ids) - C(link) (C(UP), C(DOWN)), C(ipaddr), C(netmask), and
      C(error) with what C(hccn_tool) printed when it failed.
  returned: when O(hccn_device_ids) is not empty (or O(hccn) and npu-smi lists chips)
  type: list
  elements: dict
  sample: [{"device_id": 0, "link": "UP", "ipaddr": "29.1.112.213", "netmask": "255.255.0.0", "error": null}]
model_cache:
  description:
    - With O(model_cache), what M(ascendfleet.llm.model_cache_info) returns for those options
      (C(models), C(missing), C(cli_version), C(states)); when it could not read the cache, C(error)
      (its failure message) and C(model) instead.
  returned: when O(model_cache) is set
  type: dict
  sample: {"models": [], "missing": [], "cli_version": "1.40.2"}
vllm_host:
  description:
    - With O(vllm_host), what M(ascendfleet.llm.vllm_host_info) returns for those options
      (C(orphans), C(errors), C(port_holders), C(problems), C(deployments)), C(planned), the planned
      deployments it read (those of the chips' family), and C(exclude), the device ids it excluded;
      C(error) instead when it did not read (no planned deployments for the chips' family, or the
      read failed).
  returned: when O(vllm_host) is set
  type: dict
  sample: {"orphans": [], "errors": [], "port_holders": {}, "problems": [], "planned": [], "exclude": []}
"""

import concurrent.futures
import glob
import os
import platform
import sys

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import (
    MODEL_ID_FORM, TOOLKIT_DIRS, CacheReads, model_id_parts, models_option)
from ansible_collections.ascendfleet.llm.plugins.module_utils._host_read import (
    MODEL_CACHE_ARGS, VLLM_HOST_ARGS, CacheReadError, cache_info, host_info, image_id_argv)
from ansible_collections.ascendfleet.llm.plugins.module_utils._host_tools import check_idle_threshold, find_tool, npu_info_read, run_tool
from ansible_collections.ascendfleet.llm.plugins.module_utils._model_revisions import cache_state
from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_host import (
    TOOLKIT_GLOBS,
    HostFactsError,
    disk_facts,
    first_lines,
    image_probe_script,
    list_devices,
    parse_compose_version,
    parse_docker_version,
    parse_hccn_ip,
    parse_hccn_link,
    path_facts,
    split_marked_files,
    toolkit_version_from_files,
)
from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_smi import (
    DEFAULT_IDLE_THRESHOLD_PCT,
    NpuSmiParseError,
    parse_install_info,
    parse_version_info,
)


def _read(path):
    with open(path, "r") as handle:
        return handle.read()


def version_file(path):
    result = {"path": path, "exists": os.path.exists(path), "version": None,
              "package_version": None, "values": {}, "error": None}
    if not result["exists"]:
        result["error"] = "%s does not exist" % path
        return result
    try:
        parsed = parse_version_info(_read(path), path)
    except (OSError, UnicodeDecodeError, NpuSmiParseError) as exc:
        result["error"] = str(exc)
        return result
    result.update(version=parsed["version"], package_version=parsed["package_version"],
                  values=parsed["values"])
    return result


def install_info(path):
    result = {"path": path, "exists": os.path.exists(path), "values": {}, "error": None}
    if not result["exists"]:
        result["error"] = "%s does not exist" % path
        return result
    try:
        result["values"] = parse_install_info(_read(path), path)
    except (OSError, UnicodeDecodeError, NpuSmiParseError) as exc:
        result["error"] = str(exc)
    return result


def host_cann(dirs):
    result = {"found": False, "version": None, "arch": None, "source": None, "error": None}
    for root in dirs:
        files = {}
        for pattern in TOOLKIT_GLOBS:
            for path in sorted(glob.glob(pattern.format(root=root))):
                try:
                    files[path] = _read(path)
                except (OSError, UnicodeDecodeError) as exc:
                    result["error"] = "cannot read %s: %s" % (path, exc)
        if not files:
            continue
        try:
            parsed = toolkit_version_from_files(files)
        except HostFactsError as exc:
            result["error"] = str(exc)
            return result
        result.update(found=True, version=parsed["version"], arch=parsed["arch"],
                      source=parsed["source"], error=None)
        return result
    return result


def docker_facts(module, executable):
    result = {"cli": None, "client_version": None, "server_version": None, "reachable": False,
              "error": None, "compose_version": None, "compose_error": None}
    cli = find_tool(module, executable)
    if not cli:
        result["error"] = "the docker CLI (%s) is not installed" % executable
        result["compose_error"] = result["error"]
        return result
    result["cli"] = cli
    rc, out, err = run_tool(module, [cli, "version", "--format", "{{json .}}"])
    try:
        result.update(parse_docker_version(out))
    except HostFactsError as exc:
        result["error"] = "%s (%s)" % (first_lines(err) or "docker version failed", exc)
    if result["server_version"]:
        result["reachable"] = True
    elif not result["error"]:
        result["error"] = first_lines(err) or "docker version exited %d without an Engine version" % rc
    rc, out, err = run_tool(module, [cli, "compose", "version"])
    if rc == 0:
        try:
            result["compose_version"] = parse_compose_version(out)
        except HostFactsError as exc:
            result["compose_error"] = str(exc)
    else:
        result["compose_error"] = first_lines(err + "\n" + out) or "docker compose version exited %d" % rc
    return result


def image_facts(module, cli, image, record=None, inspected=None):
    """C(image); ``inspected``: the job of image_id_argv() of ``image`` the execution started (the
    read of what runs on the host takes the same answer)."""
    result = {"name": image, "present": False, "id": None, "cann_version": None, "source": None,
              "error": None, "recorded": False}
    if not cli:
        result["error"] = "the docker CLI is not installed"
        return result
    rc, out, err = inspected.result() if inspected else run_tool(module, image_id_argv(cli, image))
    if rc != 0:
        result["error"] = first_lines(err) or "docker image inspect exited %d" % rc
        return result
    result.update(present=True, id=out.strip() or None)
    record = record or {}
    if result["id"] and record.get("id") == result["id"] and record.get("cann_version") and record.get("source"):
        # The same content as when the record was made: the same toolkit files.
        result.update(cann_version=str(record["cann_version"]), source=str(record["source"]), recorded=True)
        return result
    rc, out, err = run_tool(module, [cli, "run", "--rm", "--pull", "never", "--network", "none", "--entrypoint",
                                     "/bin/sh", image, "-c", image_probe_script()])
    if rc != 0:
        result["error"] = "reading the toolkit files of %s failed (rc %d): %s" % (
            image, rc, first_lines(err + "\n" + out) or "no output")
        return result
    try:
        parsed = toolkit_version_from_files(split_marked_files(out))
    except HostFactsError as exc:
        result["error"] = str(exc)
        return result
    if parsed is None:
        result["error"] = "no CANN toolkit version file in %s (looked for %s)" % (
            image, ", ".join(g.format(root=r) for r in TOOLKIT_DIRS for g in TOOLKIT_GLOBS))
        return result
    result.update(cann_version=parsed["version"], source=parsed["source"])
    return result


def hccn_facts(module, tool, device_ids):
    results = []
    present = os.access(tool, os.X_OK)
    for device in device_ids:
        entry = {"device_id": device, "link": None, "ipaddr": None, "netmask": None, "error": None}
        results.append(entry)
        if not present:
            entry["error"] = "%s is not an executable file" % tool
            continue
        rc, out, err = run_tool(module, [tool, "-i", str(device), "-link", "-g"])
        try:
            if rc != 0:
                raise HostFactsError(first_lines(out + "\n" + err) or "exit %d" % rc)
            entry["link"] = parse_hccn_link(out)
            rc, out, err = run_tool(module, [tool, "-i", str(device), "-ip", "-g"])
            if rc != 0:
                raise HostFactsError(first_lines(out + "\n" + err) or "exit %d" % rc)
            entry.update(parse_hccn_ip(out))
        except HostFactsError as exc:
            entry["error"] = "hccn_tool -i %d: %s" % (device, exc)
    return results


def model_cache_facts(options, reads):
    """model_cache_info's result for ``options`` (its failure as data: C(error), C(model))."""
    try:
        return cache_info(options, reads)
    except CacheReadError as exc:
        return {"error": str(exc), "model": exc.model}


def vllm_host_options(options, npu):
    """vllm_host_info's options from O(vllm_host) and the chips read (``npu``, None without
    O(npu_smi)): the planned deployments of the chips' family, the unhealthy chips excluded; a
    dict with C(error) when there is nothing to read; {} without O(vllm_host)."""
    if not options:
        return {}
    options = dict(options)
    by_family = options.pop("planned_by_family")
    unhealthy = options.pop("exclude_unhealthy")
    if by_family is not None or unhealthy:
        if npu is None or "chips" not in npu:
            return {"error": "planned_by_family and exclude_unhealthy need the chips (npu_smi), which were not read"}
    if by_family is not None:
        family = npu.get("family")
        if family not in by_family or not isinstance(by_family[family], list):
            return {"error": "no planned deployments for the chips' family %s" % family}
        options["planned"] = [d for d in by_family[family] if isinstance(d, dict)]
    if unhealthy:
        bad = [chip["device_id"] for chip in npu["chips"] if chip.get("health") != "OK"]
        options["exclude"] = list(options["exclude"]) + [d for d in bad if d not in options["exclude"]]
    return options


def vllm_host_facts(module, options, reads, npu_smi_read, image_jobs):
    """vllm_host_info's result for ``options``, with the deployments it read (the family's, as given)
    and the device ids it excluded (a read that failed is data, C(error): npu_verify's checks do not
    depend on it, the role then reads itself)."""
    try:
        return dict(host_info(module, options, reads, npu_smi_read, image_jobs), planned=options["planned"],
                    exclude=options["exclude"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return {"error": "reading what runs on the host failed: %s" % exc}


def disk_count(p, reads):
    """C(cache): the cache disk and, for each O(models) entry, whether it is complete (npu_verify's
    disk count: a copy counts whatever globs it was fetched with, and with O(layout=revisions) a
    copy the first run migrates counts as complete)."""
    cache = disk_facts(p["cache_dir"])
    revisions = p["layout"] == "revisions"
    keys = ("model", "revision", "marker", "complete", "reasons") + (("key", "migrates") if revisions else ())
    cache["models"] = []
    for m in p["models"]:
        state = cache_state(p["cache_dir"], m["model"], m["revision"], p["layout"], m["include"], m["exclude"],
                            migrates=revisions, reads=reads)
        cache["models"].append(dict((k, state.get(k)) for k in keys))
    return cache


def main():
    module = AnsibleModule(
        argument_spec=dict(
            driver_dir=dict(type="path", default="/usr/local/Ascend/driver"),
            firmware_dir=dict(type="path", default="/usr/local/Ascend/firmware"),
            install_info=dict(type="path", default="/etc/ascend_install.info"),
            toolkit_dirs=dict(type="list", elements="path", default=list(TOOLKIT_DIRS)),
            npu_smi=dict(type="bool", default=False),
            npu_smi_executable=dict(type="str", default="npu-smi"),
            idle_threshold_pct=dict(type="float", default=DEFAULT_IDLE_THRESHOLD_PCT),
            device_ids=dict(type="list", elements="int", default=[]),
            control_devices=dict(type="list", elements="str",
                                 default=["davinci_manager", "devmm_svm", "hisi_hdc"]),
            paths=dict(type="list", elements="path", default=[]),
            docker=dict(type="bool", default=True),
            docker_executable=dict(type="str", default="docker"),
            image=dict(type="str", default=""),
            images=dict(type="dict", default={}),
            image_record=dict(type="dict", default={}),
            cache_dir=dict(type="path", default=""),
            layout=dict(type="str", choices=["flat", "revisions"], default="flat"),
            models=models_option(),
            hccn_device_ids=dict(type="list", elements="int", default=[]),
            hccn=dict(type="bool", default=False),
            hccn_tool=dict(type="path", default="/usr/local/Ascend/driver/tools/hccn_tool"),
            model_cache=dict(type="dict", options=MODEL_CACHE_ARGS),
            vllm_host=dict(type="dict", options=dict(
                VLLM_HOST_ARGS, planned_by_family=dict(type="dict"), exclude_unhealthy=dict(type="bool", default=False))),
        ),
        supports_check_mode=True,
    )
    p = module.params
    for name in p["control_devices"]:
        if not name or "/" in name:
            module.fail_json(msg="control_devices takes names under /dev such as davinci_manager, "
                                 "not %r" % name)
    for device in p["device_ids"] + p["hccn_device_ids"]:
        if device < 0:
            module.fail_json(msg="device ids are the N of /dev/davinciN (0 or more), not %d" % device)
    for entry in p["models"]:
        if model_id_parts(entry["model"]) is None:
            module.fail_json(msg="models[].model must be Owner/Name, not %r: give %s" % (entry["model"], MODEL_ID_FORM))
    if p["models"] and not p["cache_dir"]:
        module.fail_json(msg="models needs cache_dir (where the models are kept)")
    check_idle_threshold(module, p["idle_threshold_pct"])

    result = dict(changed=False)
    image, device_ids, hccn_device_ids = p["image"], list(p["device_ids"]), list(p["hccn_device_ids"])
    npu_smi_read = None
    if p["npu_smi"]:
        # First: the chips say which device nodes, RoCE ports and image the other reads are about
        # (and the read of what runs on the host parses the same output: npu-smi runs once).
        result["npu"], npu_smi_read = npu_info_read(module, p["npu_smi_executable"], p["idle_threshold_pct"])
        listed = [chip["device_id"] for chip in result["npu"].get("chips", [])]
        device_ids += [d for d in listed if d not in device_ids]
        if p["hccn"]:
            hccn_device_ids += [d for d in listed if d not in hccn_device_ids]
        if not image:
            image = p["images"].get(result["npu"].get("family") or "") or ""
    result.update(
        python={"version": "%d.%d.%d" % sys.version_info[:3], "executable": sys.executable,
                "implementation": platform.python_implementation()},
        driver=version_file(os.path.join(p["driver_dir"], "version.info")),
        firmware=version_file(os.path.join(p["firmware_dir"], "version.info")),
        install_info=install_info(p["install_info"]),
        host_cann=host_cann(p["toolkit_dirs"]),
        devices=list_devices(["davinci%d" % d for d in device_ids] + p["control_devices"]),
        paths=[path_facts(path) for path in p["paths"]],
    )
    # The Docker, image and hccn_tool reads each wait on a CLI (the image's a container start): they
    # run side by side, the files (what runs on the host, the model cache) are read meanwhile.
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=4)
    cli = find_tool(module, p["docker_executable"]) if p["docker"] else None
    jobs, image_jobs = {}, {}
    if p["docker"]:
        jobs["docker"] = pool.submit(docker_facts, module, p["docker_executable"])
    if image:
        # One docker image inspect of the image for this read and the read of what runs on the
        # host (submitted before the job that waits for it: the pool runs jobs in order).
        if cli:
            image_jobs[(cli, image)] = pool.submit(run_tool, module, image_id_argv(cli, image))
        jobs["image"] = pool.submit(image_facts, module, cli, image, p["image_record"], image_jobs.get((cli, image)))
    if hccn_device_ids:
        jobs["hccn"] = pool.submit(hccn_facts, module, p["hccn_tool"], hccn_device_ids)
    # What runs on the host: in this thread (its warnings are the module's), while the pool works;
    # its slow CLI reads run side by side in its own pool.
    # The model cache's files are read once for every question about them (the disk count, model_cache,
    # the deployments' model states): the module writes nothing.
    reads = CacheReads()
    vllm_host = vllm_host_options(p["vllm_host"], result.get("npu"))
    if vllm_host:
        result["vllm_host"] = vllm_host if "error" in vllm_host else vllm_host_facts(module, vllm_host, reads, npu_smi_read, image_jobs)
    if p["model_cache"]:
        result["model_cache"] = model_cache_facts(p["model_cache"], reads)
    if p["cache_dir"]:
        result["cache"] = disk_count(p, reads)
    for key, job in jobs.items():
        result[key] = job.result()
    pool.shutdown()
    module.exit_json(**result)


if __name__ == "__main__":
    main()
