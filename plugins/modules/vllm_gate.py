#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).

from __future__ import annotations

DOCUMENTATION = r"""
module: vllm_gate
short_description: Health gate of a vLLM deployment that watches its container and proves who answers
version_added: 0.1.0
description:
  - Waits until the vLLM deployment in compose project O(project) is healthy, the way the
    vllm_compose role gates a change - and fails as soon as it cannot become healthy.
  - Every O(interval) seconds it reads the deployment's container (C(docker inspect)) and asks
    C(/health) on C(127.0.0.1:<port>). The gate fails at once when the container has exited,
    is restarting, was restarted since the change (Docker resets the restart count when compose
    creates or starts a container, see O(fresh)) or was replaced, so a crash-looping container
    is seen within one interval instead of holding the gate until O(timeout).
  - It passes only when the answer is proven to come from this deployment's own container -
    the process listening on the port (C(/proc/net/tcp), C(/proc/<pid>/fd), its cgroup) belongs
    to the container, C(/v1/models) lists O(served_model_name) served from O(model_root) - and the
    container is still the one first seen, running and not restarted. Another container or
    process answering on the port fails the gate, naming it.
  - With O(smoke_test), once healthy it runs the seed's manual checks as the last step of the
    gate - a chat completion that must return a choice and, with O(smoke_tool_call), a tool call
    that must come back as a C(get_weather) call in C(tool_calls) - each request at most
    O(smoke_timeout) seconds. Their failure fails the gate the same way, with the container log.
  - On failure the message leads with vLLM's own error (the last line of each traceback,
    C(ERROR) lines), followed by the container log's tail without uvicorn's access-log lines,
    which are counted.
author:
  - ascendfleet maintainers (@ascendfleet)
extends_documentation_fragment:
  - ascendfleet.llm.attributes.read_only
  - ascendfleet.llm.vllm_host
options:
  project:
    description: The compose project of the deployment (vllm_compose names it after the deployment).
    type: str
    required: true
  service:
    description: The compose service running vLLM.
    type: str
    default: vllm-ascend
  port:
    description: The port vLLM serves on the host (C(--port); the container uses the host network).
    type: int
    required: true
  served_model_name:
    description: The name C(/v1/models) must list.
    type: str
    required: true
  model_root:
    description:
      - The model path the served name must be served from (C(root) in C(/v1/models)); empty to
        skip that comparison.
    type: str
    default: ""
  api_key:
    description: Bearer token for C(/v1/models) (C(vllm_compose_api_key)); empty for none.
    type: str
    default: ""
  timeout:
    description: Seconds the deployment may take to become healthy (loading a large model takes minutes).
    type: int
    default: 1800
  interval:
    description: Seconds between two looks at the container and C(/health).
    type: int
    default: 10
  fresh:
    description:
      - The change created, recreated or started the container, so any restart counted by Docker
        is a crash since the change. False when the container was left running; restarts then
        count from the gate's first look.
    type: bool
    default: true
  log_tail:
    description: Lines of the container log (access-log lines not counted) shown on failure.
    type: int
    default: 40
  request_timeout:
    description: Seconds each HTTP request of the health checks may take.
    type: int
    default: 10
  smoke_test:
    description: After the health checks passed, smoke-test a chat completion (C(vllm_compose_smoke_test)).
    type: bool
    default: false
  smoke_tool_call:
    description:
      - With O(smoke_test), also smoke-test a tool call (set when the deployment has a tool call parser).
    type: bool
    default: false
  smoke_timeout:
    description: Seconds each smoke-test request may take (C(vllm_compose_smoke_timeout); a first answer can be slow).
    type: int
    default: 120
seealso:
  - module: ascendfleet.llm.vllm_host_info
  - module: ascendfleet.llm.vllm_status
"""

EXAMPLES = r"""
- name: Gate the deployment qwen on port 8000
  ascendfleet.llm.vllm_gate:
    project: qwen
    port: 8000
    served_model_name: Qwen
    model_root: /root/.cache/modelscope/hub/models/Qwen/Qwen3.5-27B
    timeout: 1800
    interval: 10
    api_key: "{{ vllm_compose_api_key }}"
    smoke_test: true
    smoke_tool_call: true
  no_log: true
"""

RETURN = r"""
container:
  description: The deployment's container as the gate last saw it (name, full id, image, state, restarts, start time).
  returned: always
  type: dict
  sample: {"name": "qwen-vllm-ascend-1", "state": "running", "restarts": 0, "image": "quay.io/ascend/vllm-ascend:v0.17.0rc1"}
holders:
  description: The processes listening on the port when the gate decided (pid, command, container id and name, compose project).
  returned: always
  type: list
  elements: dict
elapsed:
  description: Seconds the gate took.
  returned: always
  type: float
  sample: 6.2
smoke:
  description: The smoke tests that passed (V(chat), V(tool)), in order.
  returned: always
  type: list
  elements: str
  sample: [chat, tool]
reason:
  description: Why the gate failed (the container's state, who answers instead, or the failed smoke test); empty when it passed.
  returned: always
  type: str
  sample: "the container is crash-looping: restarting after exit code 1, 1 restart(s) since the change"
vllm_errors:
  description: vLLM's own error lines from the container log, root cause first (on failure).
  returned: always
  type: list
  elements: str
  sample: ["RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}"]
log_tail:
  description: The last O(log_tail) lines of the container log without access-log lines (on failure).
  returned: always
  type: list
  elements: str
log_report:
  description: RV(vllm_errors) and RV(log_tail) as text for a failure message (on failure; empty when the gate passed).
  returned: always
  type: str
access_lines_omitted:
  description: Access-log lines left out of RV(log_tail).
  returned: always
  type: int
  sample: 38
"""

import datetime
import json
import time

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.urls import open_url

from ansible_collections.ascendfleet.llm.plugins.module_utils._http import json_body, request
from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_gate import (
    HOST_ARGS,
    container_problem,
    digest_log,
    holder_problem,
    log_report,
    models_problem,
    port_holders,
    smoke_problem,
    smoke_request,
)
from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_status import (
    PROJECT_LABEL,
    StatusParseError,
    parse_containers,
)

SERVICE_LABEL = "com.docker.compose.service"


def _open(url, data, headers, timeout, method):
    return open_url(url, data=data, headers=headers, timeout=timeout, validate_certs=False,
                    follow_redirects="none", use_proxy=False, method=method)


def _get(url, headers, timeout, data=None):
    """The Answer of a GET, or of a POST of ``data`` (JSON) when given; never raises (``_http.request``)."""
    if data is not None:
        headers = dict(headers, **{"Content-Type": "application/json"})
        data = json.dumps(data).encode("utf-8")
    return request(url, timeout, headers=headers, data=data, opener=_open)


class Gate(object):
    def __init__(self, module):
        self.module = module
        self.p = module.params
        self.docker = module.get_bin_path(self.p["docker_executable"], required=True)
        self.started = time.monotonic()
        self.container = None
        self.holders = []
        self.smoke = []

    def run(self, argv):
        return self.module.run_command(argv)

    def read_container(self):
        p = self.p
        rc, out, err = self.run([self.docker, "ps", "--all", "--quiet", "--no-trunc",
                                 "--filter", "label=%s=%s" % (PROJECT_LABEL, p["project"]),
                                 "--filter", "label=%s=%s" % (SERVICE_LABEL, p["service"])])
        if rc != 0:
            self.module.fail_json(msg="docker ps failed (rc %d): %s" % (rc, (err or out).strip()), **self.result())
        ids = out.split()
        if not ids:
            return None
        rc, out, err = self.run([self.docker, "inspect", "--type", "container"] + ids)
        try:
            projects = parse_containers(out, datetime.datetime.now(datetime.timezone.utc))
        except StatusParseError as exc:
            self.module.fail_json(msg="docker inspect: %s" % exc, **self.result())
        containers = projects.get(p["project"], [])
        running = [c for c in containers if c.get("state") == "running"]
        return (running or containers or [None])[0]

    def result(self, reason="", digest=None):
        digest = digest or {}
        container = dict(self.container or {})
        return dict(
            changed=False,
            container=container,
            holders=self.holders,
            smoke=self.smoke,
            elapsed=round(time.monotonic() - self.started, 1),
            reason=reason,
            vllm_errors=digest.get("errors", []),
            log_tail=digest.get("tail", []),
            access_lines_omitted=digest.get("access_lines_omitted", 0),
            log_report=digest.get("report", ""),
        )

    def fail(self, reason):
        p = self.p
        digest = {}
        if self.container and self.container.get("full_id"):
            rc, out, err = self.run([self.docker, "logs", "--tail", str(max(p["log_tail"], 1) * 25),
                                     self.container["full_id"]])
            # vLLM logs to stdout and stderr; the order between them is Docker's.
            digest = digest_log((out or "") + (err or ""), p["log_tail"])
            digest["report"] = log_report(digest, p["log_tail"])
        head = ("vLLM's error: %s\n" % digest["errors"][0]) if digest.get("errors") else ""
        where = "health gate of deployment %s on port %d, %.0f s in" % (
            p["project"], p["port"], time.monotonic() - self.started)
        msg = "%s%s (%s)\n%s" % (head, reason, where, digest.get("report", ""))
        self.module.fail_json(msg=msg.rstrip(), **self.result(reason, digest))

    def holders_of_port(self):
        holders = port_holders([self.p["port"]], self.run, self.p["proc_root"], self.docker)
        self.holders = holders.get(self.p["port"], [])
        return self.holders

    def smoke_tests(self, base, headers):
        p = self.p
        kinds = (["chat"] + (["tool"] if p["smoke_tool_call"] else [])) if p["smoke_test"] else []
        for kind in kinds:
            answer = _get(base + "/v1/chat/completions", headers, p["smoke_timeout"],
                          data=smoke_request(kind, p["served_model_name"]))
            problem = smoke_problem(kind, answer.status, answer.body, answer.error)
            if problem:
                self.fail(problem)
            self.smoke.append(kind)

    def gate(self):
        p = self.p
        headers = {"Authorization": "Bearer " + p["api_key"]} if p["api_key"] else {}
        base = "http://127.0.0.1:%d" % p["port"]
        deadline = self.started + p["timeout"]
        baseline = None
        last = "no answer yet"
        while True:
            tick = time.monotonic()
            self.container = self.read_container()
            problem = container_problem(self.container, baseline, p["fresh"])
            if problem:
                self.fail(problem)
            if baseline is None:
                baseline = dict(self.container)
            health = _get(base + "/health", {}, p["request_timeout"])
            if health.answered:
                # Something answers on the port (HTTP or not): it must be this deployment's container.
                problem = holder_problem(p["port"], self.holders_of_port(), self.container.get("full_id"), p["project"])
                if problem:
                    self.fail(problem + ("; /health: %s" % health.error if health.error else ""))
            if health.ok:
                answer = _get(base + "/v1/models", headers, p["request_timeout"])
                if answer.error or answer.status != 200:
                    last = "/v1/models: %s" % (answer.error or "answered HTTP %d" % answer.status)
                else:
                    models, problem = json_body(answer)
                    problem = problem or models_problem(p["port"], models, p["served_model_name"], p["model_root"] or None)
                    if problem is None:
                        # Still the same container, running, not restarted: the answer was its own.
                        self.container = self.read_container()
                        problem = container_problem(self.container, baseline, p["fresh"])
                        if problem:
                            self.fail(problem)
                        self.smoke_tests(base, headers)
                        self.module.exit_json(**self.result())
                    last = problem
            else:
                last = "/health: %s" % (health.error or "answered HTTP %d" % health.status)
            now = time.monotonic()
            if now >= deadline:
                self.fail("not healthy within %d s: %s" % (p["timeout"], last))
            time.sleep(max(0.0, min(p["interval"] - (now - tick), deadline - now)))


def main():
    module = AnsibleModule(
        argument_spec=dict(
            project=dict(type="str", required=True),
            service=dict(type="str", default="vllm-ascend"),
            port=dict(type="int", required=True),
            served_model_name=dict(type="str", required=True),
            model_root=dict(type="str", default=""),
            api_key=dict(type="str", default="", no_log=True),
            timeout=dict(type="int", default=1800),
            interval=dict(type="int", default=10),
            fresh=dict(type="bool", default=True),
            log_tail=dict(type="int", default=40),
            request_timeout=dict(type="int", default=10),
            smoke_test=dict(type="bool", default=False),
            smoke_tool_call=dict(type="bool", default=False),
            smoke_timeout=dict(type="int", default=120),
            **HOST_ARGS
        ),
        supports_check_mode=True,
    )
    for key in ("timeout", "interval", "port", "smoke_timeout"):
        if module.params[key] < 1:
            module.fail_json(msg="%s must be a positive integer, got %d" % (key, module.params[key]))
    Gate(module).gate()


if __name__ == "__main__":
    main()
