#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).

from __future__ import annotations

DOCUMENTATION = r"""
module: fleet_gateway_server
short_description: Read, drain or enable a deployment's server on a gateway through HAProxy's runtime API
version_added: 0.4.0
description:
  - Talks to the HAProxy of the fleet_gateway role on this host through its stats socket (runtime API,
    level admin), without a reload.
  - Reads C(show stat) and C(show servers state) and returns every pool's servers with their state
    (C(up), C(draining), C(down), C(maint)) and current sessions, or those of O(server) only.
  - With O(state), sets O(server) to C(drain), C(ready) or C(maint) in every pool it is in (or in
    O(backends)), only where it is not already, and with O(wait) waits until its current sessions
    are 0 (at most O(timeout) seconds, then it fails naming the sessions left).
  - A socket that cannot be reached fails before anything is set.
author:
  - ascendfleet maintainers (@ascendfleet)
attributes:
  check_mode:
    support: full
    description: Reads the states and reports what it would set; sets nothing and does not wait.
  diff_mode:
    support: full
    description: Shows each server's admin state before and after.
  idempotent:
    support: full
    description: A server already in the wanted state is not set again; O(save_state) is written only when it changed.
options:
  socket:
    description: Path of HAProxy's stats socket on this host (the role's C(<fleet_gateway_runtime_dir>/admin.sock)).
    type: path
    required: true
  server:
    description:
      - The server to read or set, C(<host>:<deployment>) (ascendfleet.llm.fleet_gateway_server names it).
      - Required with O(state).
    type: str
  backends:
    description: Only in these pools (HAProxy backends); all pools holding O(server) when empty.
    type: list
    elements: str
    default: []
  state:
    description:
      - C(drain) - no new requests, those in flight finish; C(ready) - back in its pools (the health checks
        still decide whether it takes traffic); C(maint) - no traffic at all.
      - Omitted, the module only reads.
    type: str
    choices: [drain, ready, maint]
  wait:
    description:
      - After C(drain) or C(maint), wait until the server has no current session.
      - After C(ready), wait until it is C(up) in every pool (its health checks pass).
    type: bool
    default: false
  timeout:
    description: Seconds to wait (O(wait)); also bounds the socket's timeout per command.
    type: float
    default: 300
  interval:
    description: Seconds between two reads while waiting.
    type: float
    default: 1
  missing_ok:
    description: A O(server) that is in no pool is not an error (nothing to set; RV(servers) is empty).
    type: bool
    default: false
  save_state:
    description:
      - Write HAProxy's C(show servers state) answer to this file (mode 0600, replaced only when it changed),
        the server-state file HAProxy reads back on a reload, so drained servers stay drained.
      - The fleet_gateway role does this before every reload.
    type: path
notes:
  - HAProxy forgets runtime states on a reload unless they were saved to its server-state file; the fleet_gateway
    role saves them before every reload.
seealso:
  - module: community.general.haproxy
"""

EXAMPLES = r"""
- name: Drain qwen on sim-a at this gateway and wait until its requests in flight are done
  ascendfleet.llm.fleet_gateway_server:
    socket: /run/ascendfleet-gateway/admin.sock
    server: "{{ 'qwen' | ascendfleet.llm.fleet_gateway_server('sim-a') }}"
    state: drain
    wait: true
    timeout: 600

- name: Put it back
  ascendfleet.llm.fleet_gateway_server:
    socket: /run/ascendfleet-gateway/admin.sock
    server: sim-a:qwen
    state: ready

- name: Keep the runtime states across the reload that follows
  ascendfleet.llm.fleet_gateway_server:
    socket: /run/ascendfleet-gateway/admin.sock
    save_state: /run/ascendfleet-gateway/server-state

- name: Read every pool's servers
  ascendfleet.llm.fleet_gateway_server:
    socket: /run/ascendfleet-gateway/admin.sock
  register: gateway
"""

RETURN = r"""
servers:
  description: The servers read (after the change), sorted by pool and server.
  returned: always
  type: list
  elements: dict
  contains:
    backend:
      description: The pool (HAProxy backend), for example C(model:Qwen).
      type: str
    server:
      description: The server, C(<host>:<deployment>).
      type: str
    state:
      description: C(up), C(draining), C(down) (its health checks fail) or C(maint).
      type: str
    admin:
      description: What the runtime API last set, C(ready), C(drain) or C(maint).
      type: str
    status:
      description: HAProxy's own status word, for example C(UP), C(DRAIN), C(DOWN 1/2) or C(MAINT).
      type: str
    check:
      description: The last health check's status and description.
      type: str
    sessions:
      description: Current sessions (requests in flight).
      type: int
    last_change:
      description: Seconds since the server's state last changed (HAProxy's C(lastchg)).
      type: int
  sample:
    - {backend: "model:Qwen", server: "sim-a:qwen", state: draining, admin: drain, status: DRAIN,
       check: "L7OK Layer7 check passed", sessions: 0, last_change: 12}
commands:
  description: The runtime API commands sent (or, in check mode, that would be).
  returned: always
  type: list
  elements: str
  sample: ["set server model:Qwen/sim-a:qwen state drain"]
saved:
  description: Whether O(save_state) was written (false when it held the same states already, and in check mode).
  returned: always
  type: bool
  sample: true
waited:
  description: Seconds waited for the sessions to end.
  returned: always
  type: float
  sample: 2.5
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ascendfleet.llm.plugins.module_utils._files import write_if_changed
from ansible_collections.ascendfleet.llm.plugins.module_utils._fleet_gateway import (
    GatewayError,
    RuntimeApi,
    all_up,
    no_sessions,
    plan_states,
    wait_until,
)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            socket=dict(type="path", required=True),
            server=dict(type="str"),
            backends=dict(type="list", elements="str", default=[]),
            state=dict(type="str", choices=["drain", "ready", "maint"]),
            wait=dict(type="bool", default=False),
            timeout=dict(type="float", default=300),
            interval=dict(type="float", default=1),
            missing_ok=dict(type="bool", default=False),
            save_state=dict(type="path"),
        ),
        required_if=[("state", "drain", ["server"]), ("state", "ready", ["server"]), ("state", "maint", ["server"])],
        supports_check_mode=True,
    )
    p = module.params
    api = RuntimeApi(p["socket"], timeout=min(max(p["timeout"], 1.0), 30.0))
    where = "server %s" % p["server"] if p["server"] else "the servers"
    try:
        before = api.view(server=p["server"], backends=p["backends"] or None)
    except GatewayError as exc:
        module.fail_json(msg="cannot read %s: %s" % (where, exc))
    if p["server"] and not before and not p["missing_ok"]:
        module.fail_json(msg="server %s is in no pool%s of this gateway (socket %s). Fix: run playbooks/gateway.yml so "
                             "the gateway knows the deployment, or check the deployment and host names"
                         % (p["server"], (" of " + ", ".join(p["backends"])) if p["backends"] else "", p["socket"]),
                         servers=before)
    saved = False
    if p["save_state"]:
        try:
            text = api.command("show servers state")
            if not module.check_mode:
                saved = bool(write_if_changed(p["save_state"], text.encode("utf-8"), mode=0o600))
        except GatewayError as exc:
            module.fail_json(msg="cannot save the server states: %s" % exc)
        except (IOError, OSError) as exc:
            module.fail_json(msg="cannot write the server-state file %s: %s" % (p["save_state"], exc))
    commands = plan_states(before, p["state"]) if p["state"] else []
    after, waited = before, 0.0
    if not module.check_mode:
        try:
            for command in commands:
                api.set_state(command)
            if p["wait"] and p["state"] and before:
                done_when = all_up if p["state"] == "ready" else no_sessions
                after, waited, done = wait_until(api, p["server"], done_when, backends=p["backends"] or None,
                                                 timeout=p["timeout"], interval=p["interval"])
                if not done and p["state"] == "ready":
                    left = ", ".join("%s/%s: %s (%s)" % (s["backend"], s["server"], s["state"], s["check"])
                                     for s in after if s["state"] != "up")
                    module.fail_json(msg="%s is not up after %.0f s (%s): its health checks do not pass. It is ready "
                                         "and takes requests as soon as they do" % (where, waited, left),
                                     servers=after, commands=commands, waited=waited, changed=bool(commands))
                if not done:
                    left = ", ".join("%s/%s: %d" % (s["backend"], s["server"], s["sessions"]) for s in after if s["sessions"])
                    module.fail_json(msg="%s still has sessions after %.0f s (%s). It stays %s; raise the drain timeout, "
                                         "or set it ready again" % (where, waited, left, p["state"]),
                                     servers=after, commands=commands, waited=waited, changed=bool(commands))
            elif commands:
                after = api.view(server=p["server"], backends=p["backends"] or None)
        except GatewayError as exc:
            module.fail_json(msg="%s: %s" % (where, exc), commands=commands, changed=bool(commands))
    result = dict(changed=bool(commands) or saved, servers=after, commands=commands, saved=saved, waited=round(waited, 1))
    if module._diff and commands:
        result["diff"] = dict(
            before="".join("%s/%s %s\n" % (s["backend"], s["server"], s["admin"]) for s in before),
            after="".join("%s/%s %s\n" % (s["backend"], s["server"], p["state"]) for s in before))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
