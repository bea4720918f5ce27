#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).

from __future__ import annotations

DOCUMENTATION = r"""
module: vllm_lock
short_description: Hold the rollout lock of a vLLM deployment on a host, one run at a time
version_added: 0.1.0
description:
  - Taken by the vllm_compose role before a deployment's cards and released after its
    last-known-good is recorded or restored, so that two runs (two operators, a CI job and a
    person) never change one deployment at once - each would replace the other's container in
    the middle of its health gate.
  - The lock is the file C(<project_root>/.locks/<name>.lock) on the host; it names its holder -
    the control node, the pid of its C(ansible-playbook), the user, since when and what it does.
    A free lock is an empty file.
  - The action on the control node waits up to O(timeout) seconds for another run's lock, then
    fails naming the holder. A lock left by a run of this control node that has ended (stopped
    by Ctrl-C, killed, its host lost) is taken over at once; a lock of a run on another control
    node is never judged gone from here.
  - The ledger of cards and the model cache keep their own locks; this one spans the rollout.
author:
  - ascendfleet maintainers (@ascendfleet)
attributes:
  check_mode:
    support: full
    description: Reports the holder, takes and gives up nothing.
  diff_mode:
    support: none
    description: Nothing of the deployment changes.
  idempotent:
    support: full
    description:
      - Always reports no change - the lock is bookkeeping of the run, given up by the same run;
        taking a lock this run holds already is a no-op.
  action:
    support: full
    description: The action on the control node names the holder and waits.
options:
  name:
    description: The deployment (its project directory is C(<project_root>/<name>)).
    type: str
    required: true
  project_root:
    description: The project root of the deployments on the host (C(vllm_compose_project_root)).
    type: path
    required: true
  state:
    description: V(present) takes the lock (waiting for it), V(absent) gives up this run's lock.
    type: str
    choices: [present, absent]
    default: present
  timeout:
    description:
      - Seconds to wait for another run to give the lock up before failing (C(vllm_compose_lock_timeout)).
      - Handled by the action on the control node.
    type: int
    default: 60
  poll:
    description: Seconds between two looks at a busy lock (handled by the action).
    type: int
    default: 2
  what:
    description: What this run does to the deployment, written into the lock for the next run's message.
    type: str
    default: ""
  holder:
    description:
      - The holder this run writes; set by the action (control node, pid, process token, user,
        since, what). Do not set.
    type: dict
  take_over:
    description: The holder of a run that is gone, whose lock is replaced; set by the action. Do not set.
    type: dict
seealso:
  - module: ascendfleet.llm.npu_assign
  - module: ascendfleet.llm.vllm_last_good
"""

EXAMPLES = r"""
- name: Hold the rollout lock of qwen
  ascendfleet.llm.vllm_lock:
    name: qwen
    project_root: /opt/ascendfleet
    timeout: 60
    what: roll out quay.io/ascend/vllm-ascend:v0.18.0rc1-openeuler

- name: Give up the rollout lock of qwen
  ascendfleet.llm.vllm_lock:
    name: qwen
    project_root: /opt/ascendfleet
    state: absent
"""

RETURN = r"""
path:
  description: The lock file.
  returned: always
  type: str
  sample: /opt/ascendfleet/.locks/qwen.lock
acquired:
  description: With O(state=present) - the lock is this run's (in check mode always false).
  returned: always
  type: bool
released:
  description: With O(state=absent) - this run's lock was given up (false when it held none).
  returned: always
  type: bool
holder:
  description: Who holds the lock after the task (empty when free) - the current holder when another run's.
  returned: always
  type: dict
  sample: {controller: ops1, pid: 41234, user: ops, since: "2026-12-03T09:12:44Z", what: roll out qwen}
took_over:
  description: The holder of a run that had ended whose lock this run took over, or null.
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_lock import acquire, lock_path, release


def main():
    module = AnsibleModule(
        argument_spec=dict(
            name=dict(type="str", required=True),
            project_root=dict(type="path", required=True),
            state=dict(type="str", choices=["present", "absent"], default="present"),
            timeout=dict(type="int", default=60),
            poll=dict(type="int", default=2),
            what=dict(type="str", default=""),
            holder=dict(type="dict"),
            take_over=dict(type="dict"),
        ),
        supports_check_mode=True,
    )
    params = module.params
    if not params["holder"]:
        module.fail_json(msg="vllm_lock: holder is set by the collection's action on the control node; "
                             "run this module as ascendfleet.llm.vllm_lock (not through a different action)")
    path = lock_path(params["project_root"], params["name"])
    result = dict(changed=False, path=path, acquired=False, released=False, holder={}, took_over=None)
    try:
        if params["state"] == "present":
            result.update(acquire(path, params["holder"], params["take_over"], module.check_mode))
        else:
            result.update(release(path, params["holder"], module.check_mode))
    except (IOError, OSError) as exc:
        module.fail_json(msg="cannot use the rollout lock %s of deployment %s: %s (fix the permissions or "
                             "space of %s and re-run)" % (path, params["name"], exc, params["project_root"]),
                         path=path)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
