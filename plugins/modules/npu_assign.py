#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).

from __future__ import annotations

DOCUMENTATION = r"""
module: npu_assign
short_description: Give a deployment its own free Ascend NPU chips, and keep them
version_added: 0.1.0
description:
  - Picks O(count) NPU chips for the deployment O(owner) that nobody else uses, records
    them in a JSON ledger on the host, and returns their device ids and C(/dev/davinciN)
    paths.
  - Sticky - an owner that already holds O(count) usable chips keeps them with
    C(changed=false), even while its own vLLM occupies them.
  - With O(state=absent) the owner's chips are released from the ledger.
  - Reads the chips with C(npu-smi info) (see M(ascendfleet.llm.npu_info)).
author:
  - ascendfleet maintainers (@ascendfleet)
extends_documentation_fragment:
  - ascendfleet.llm.npu_smi
  - ascendfleet.llm.ledger
attributes:
  check_mode:
    support: full
    description: Computes the same assignment and reports it without writing the ledger.
  diff_mode:
    support: full
    description: Shows the ledger before and after.
  idempotent:
    support: full
    description: A second run with the same options returns the same chips with C(changed=false).
options:
  owner:
    description:
      - Name of the deployment the chips are for. The vllm_compose role names each compose
        project after its deployment, so this is also the compose project name.
      - Lower-case letters, digits, C(-) and C(_), starting with a letter or digit (the
        Docker Compose project name rule).
    type: str
    required: true
  count:
    description:
      - Number of NPU chips, a power of two from 1 to 16 (tensor-parallel group sizes).
      - Required with O(state=present).
    type: int
  state:
    description:
      - V(present) assigns (or keeps) O(count) chips; V(absent) releases every chip of O(owner).
    type: str
    choices: [present, absent]
    default: present
  device_ids:
    description:
      - Give O(owner) exactly these device ids instead of choosing O(count) chips - a rollback
        gives back the chips the restored version runs on, so that the ledger matches the
        running containers.
      - Refused, naming the holder, when another owner holds one of them in the ledger. Their
        health and processes are not checked (the restored container was running on them);
        O(exclude) does not apply.
      - Mutually exclusive with O(count); only with O(state=present).
    type: list
    elements: int
  exclude:
    description: Device ids (N of C(/dev/davinciN)) never to give out, for example chips under repair.
    type: list
    elements: int
    default: []
  owner_label:
    description:
      - Container label whose value names the deployment a container belongs to. Busy chips
        whose processes run in containers with this label equal to O(owner) count as the
        owner's own.
    type: str
    default: com.docker.compose.project
  docker_executable:
    description:
      - C(docker) program used to read container labels (C(docker inspect)). When it is
        missing, processes cannot be attributed and the module warns.
    type: str
    default: docker
  proc_root:
    description:
      - Where the host's C(/proc) is mounted. Change it only when the module runs in a
        container with the host C(/proc) mounted elsewhere, or in tests.
    type: path
    default: /proc
notes:
  - "A chip is unavailable to O(owner), with the first matching reason, when it is: held in
    the ledger by another owner (C(held by qwen-coder)); listed in O(exclude)
    (C(excluded)); not healthy (C(health Warning)); busy with a process that is not the
    owner's (C(busy, pid 1316014)); or, with no visible process, using more device memory
    than O(idle_threshold_pct) (C(45% of HBM used, no visible process)). When too few chips
    are usable the module fails and lists every unavailable chip this way."
  - "Own processes: npu-smi lists host PIDs. For each, C(/proc/PID/cgroup) gives the Docker
    container id, and one C(docker inspect) gives the container's O(owner_label) label. A
    process whose label equals O(owner) is the owner's, so a chip busy only with the owner's
    containers can be given to it (for example after the ledger was lost). On chips the
    owner holds in the ledger, processes that cannot be attributed are presumed its own;
    only a process attributed to another compose project makes a held chip busy."
  - "Vanished processes: a chip in the ledger stays its owner's until O(state=absent)
    releases it, even when the owner's processes are gone and even when memory they left
    behind exceeds O(idle_threshold_pct). A held chip is given up (and replaced, with
    C(changed=true)) only when it is no longer listed by npu-smi, is not healthy, is in
    O(exclude), or is busy with another deployment's process."
  - "Topology: counts are powers of two. On A3 and 310P Duo an even count takes whole NPUs
    (both chips of each card); a count of 1 prefers a chip whose sibling is already in
    use. On 910A, counts up to 4 stay inside one HCCS ring (davinci0-3 or davinci4-7),
    choosing the ring with the fewest usable chips that fits. 910B chips are fully meshed;
    A5 (Ascend 950, one chip per NPU ID) is taken as fully meshed too (no topology rule is
    known for it here).
    Chips the owner holds are kept first, then chips its own containers occupy, then the
    lowest device ids."
seealso:
  - module: ascendfleet.llm.npu_info
"""

EXAMPLES = r"""
# Give the deployment qwen-chat two free NPU chips (the same ones on every run)
- name: Assign NPU chips to qwen-chat
  ascendfleet.llm.npu_assign:
    owner: qwen-chat
    count: 2
  register: __vllm_compose_npus

# Use them: the device files the compose service is given
- name: Show the assigned devices
  ansible.builtin.debug:
    msg: "qwen-chat gets {{ __vllm_compose_npus.device_paths | join(', ') }} (ids {{ __vllm_compose_npus.device_ids | join(',') }})"

# Keep a faulty chip out of every assignment
- name: Assign four NPU chips, never davinci7
  ascendfleet.llm.npu_assign:
    owner: qwen-coder
    count: 4
    exclude: [7]

# Give back the chips a restored version runs on (a rollback)
- name: Give qwen-chat its last-known-good chips back
  ascendfleet.llm.npu_assign:
    owner: qwen-chat
    device_ids: [4, 5]

# Release the chips when the deployment is removed
- name: Release the NPU chips of qwen-chat
  ascendfleet.llm.npu_assign:
    owner: qwen-chat
    state: absent
"""

RETURN = r"""
device_ids:
  description:
    - The owner's device ids, sorted. Each is the N of C(/dev/davinciN), the device file a
      container is given, not the npu-smi NPU id - they differ on A3 (Phy-ID column) and 310P
      (Device column).
    - Empty after O(state=absent).
  returned: always
  type: list
  elements: int
  sample: [4, 5]
device_paths:
  description: C(/dev/davinciN) for each of RV(device_ids), in the same order.
  returned: always
  type: list
  elements: str
  sample: [/dev/davinci4, /dev/davinci5]
previous_device_ids:
  description: The owner's device ids in the ledger before this run (empty when it held none).
  returned: always
  type: list
  elements: int
  sample: []
family:
  description: Chip family detected from npu-smi (see M(ascendfleet.llm.npu_info)); null when unknown.
  returned: when O(state=present) without O(device_ids)
  type: str
  sample: "910B"
unavailable:
  description:
    - When the module fails for lack of chips, every chip it could not give, with the reason.
  returned: failure
  type: list
  elements: dict
  sample: [{"device_id": 3, "device_path": "/dev/davinci3", "reason": "busy, pid 1316014"}]
"""

import contextlib
import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ascendfleet.llm.plugins.module_utils import _npu_ledger as ledger_io
from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_assign import (
    NotEnoughNpus,
    NpuAssignError,
    assign,
    check_count,
    device_path,
    give_back,
)
from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_containers import pid_owners
from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import DEPLOYMENT_NAME_FORM, is_deployment_name
from ansible_collections.ascendfleet.llm.plugins.module_utils._host_tools import check_idle_threshold, npu_smi_info, tool_runner
from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_smi import (
    DEFAULT_IDLE_THRESHOLD_PCT,
    detect_family,
)


def _decide(module, assignments):
    """Device ids the owner should hold (fails the module when impossible)."""
    params = module.params
    owner = params["owner"]
    info, dummy = npu_smi_info(module, params["executable"])
    family = detect_family(info)
    present = set(c.device_id for c in info.chips)
    gone = [d for d in assignments.get(owner, []) if d not in present]
    if gone:
        module.warn("%s held by %s not listed by npu-smi any more; replacing them"
                    % (", ".join(device_path(d) for d in gone), owner))
    pids = [p.pid for c in info.chips for p in c.processes]
    owners = {}
    if pids:
        run, docker = tool_runner(module, params["docker_executable"])
        owners, warnings = pid_owners(pids, run, params["owner_label"], params["proc_root"],
                                      docker)
        for warning in warnings:
            module.warn(warning)
    try:
        ids = assign(info.chips, family, owner, params["count"], assignments,
                     params["exclude"], params["idle_threshold_pct"], owners)
    except NotEnoughNpus as exc:
        module.fail_json(
            msg="cannot give %d NPU chip(s) to %s: %s. To fix: stop what occupies a chip, "
                "release another deployment's chips (state=absent), exclude fewer chips, or "
                "ask for fewer" % (params["count"], owner, exc),
            family=family,
            unavailable=[dict(device_id=d, device_path=device_path(d), reason=r)
                         for d, r in exc.unavailable])
    except NpuAssignError as exc:
        module.fail_json(msg="cannot give NPU chips to %s: %s" % (owner, exc), family=family)
    return ids, family


def main():
    module = AnsibleModule(
        argument_spec=dict(
            owner=dict(type="str", required=True),
            count=dict(type="int"),
            device_ids=dict(type="list", elements="int"),
            state=dict(type="str", default="present", choices=["present", "absent"]),
            ledger_path=dict(type="path", default=ledger_io.DEFAULT_PATH),
            exclude=dict(type="list", elements="int", default=[]),
            owner_label=dict(type="str", default="com.docker.compose.project"),
            docker_executable=dict(type="str", default="docker"),
            proc_root=dict(type="path", default="/proc"),
            executable=dict(type="str", default="npu-smi"),
            idle_threshold_pct=dict(type="float", default=DEFAULT_IDLE_THRESHOLD_PCT),
        ),
        mutually_exclusive=[("count", "device_ids")],
        supports_check_mode=True,
    )
    params = module.params
    owner = params["owner"]
    if not is_deployment_name(owner):
        module.fail_json(msg="owner %r is not a valid deployment name: use %s" % (owner, DEPLOYMENT_NAME_FORM))
    if params["device_ids"] is not None and params["state"] != "present":
        module.fail_json(msg="device_ids gives chips to %s: it goes with state=present, not state=absent" % owner)
    if params["state"] == "present" and params["device_ids"] is None:
        if params["count"] is None:
            module.fail_json(msg="count is required with state=present: how many NPU chips "
                                 "the deployment needs (1, 2, 4, 8 or 16)")
        try:
            check_count(params["count"])
        except NpuAssignError as exc:
            module.fail_json(msg=str(exc))
    check_idle_threshold(module, params["idle_threshold_pct"])
    path = params["ledger_path"]
    if params["state"] == "absent" and not os.path.exists(path):
        # Nothing recorded, nothing to release: leave no lock file behind either.
        module.exit_json(changed=False, device_ids=[], device_paths=[], previous_device_ids=[])

    # Check mode writes nothing, not even the lock file.
    lock = contextlib.nullcontext() if module.check_mode else ledger_io.Lock(path)
    result = dict(changed=False)
    try:
        with lock:
            before = ledger_io.read(path)
            previous = list(before.get(owner, []))
            after = dict(before)
            if params["state"] == "absent":
                after.pop(owner, None)
                ids = []
            elif params["device_ids"] is not None:
                ids = give_back(owner, params["device_ids"], before)
                after[owner] = ids
            else:
                ids, family = _decide(module, before)
                result["family"] = family
                after[owner] = ids
            changed = previous != ids or (params["state"] == "absent" and owner in before)
            if changed and not module.check_mode:
                ledger_io.write(path, after)
    except ledger_io.LedgerError as exc:
        module.fail_json(msg=str(exc))
    except NpuAssignError as exc:
        module.fail_json(msg=str(exc))
    except (IOError, OSError) as exc:
        module.fail_json(msg="cannot lock or write the NPU ledger %s: %s (run with become, or "
                             "set ledger_path to a writable place)" % (path, exc))
    result.update(changed=changed, device_ids=ids, device_paths=[device_path(d) for d in ids],
                  previous_device_ids=previous)
    if module._diff:
        result["diff"] = dict(before=ledger_io.dumps(before), after=ledger_io.dumps(after),
                              before_header=path, after_header=path)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
