#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).

from __future__ import annotations

DOCUMENTATION = r"""
module: vllm_image_pull
short_description: Pull a container image through the Docker Engine API, writing its progress to a file
version_added: 0.1.0
description:
  - Pulls O(image) the way C(docker pull) does (C(POST /images/create) of the Docker Engine API on
    the host's socket) and reads the daemon's JSON progress messages as they come - layers done of
    how many, bytes downloaded of how many, the rate.
  - Meant to run in the background (C(async), C(poll 0)); it replaces O(progress_file) at most once
    a second with that progress, which M(ascendfleet.llm.vllm_image_pull_wait) reads and prints while
    a 10-20 GB vllm-ascend image arrives.
  - Credentials - O(registry_username) and O(registry_password) when given; otherwise what the
    connecting user's C(~/.docker/config.json) holds for the registry (a C(docker login), also through
    a credential helper); otherwise an anonymous pull.
  - Standard library only on the host (no Python C(docker) or C(requests) library).
author:
  - ascendfleet maintainers (@ascendfleet)
attributes:
  check_mode:
    support: full
    description: Reports whether the image would be pulled; pulls nothing and writes no file.
  diff_mode:
    support: none
    description: An image has no diff.
  idempotent:
    support: full
    description: A pull of an image the host holds at the registry's digest reports no change.
options:
  image:
    description: The image reference, C(<repository>:<tag>) or C(<repository>[:<tag>]@sha256:<digest>).
    type: str
    required: true
  registry:
    description:
      - The registry the image is pulled from (C(docker.io) for Docker Hub), for the credentials.
    type: str
    required: true
  registry_username:
    description: The user to pull as; empty for the docker config's login or an anonymous pull.
    type: str
    default: ""
  registry_password:
    description: The password of O(registry_username).
    type: str
    default: ""
  progress_file:
    description:
      - The file (JSON) the progress is written to, replaced atomically; its directory is created
        when missing. Omitted, no progress is written.
    type: path
  docker_host:
    description: The Docker Engine's socket, C(unix:///path).
    type: str
    default: unix:///var/run/docker.sock
  read_timeout:
    description:
      - Seconds without any message from the daemon after which the pull is given up (the daemon
        sends progress several times a second while bytes arrive).
    type: int
    default: 600
notes:
  - The overall time limit is the task's C(async) value; the vllm_compose role sets it to
    C(vllm_compose_image_pull_timeout).
seealso:
  - module: ascendfleet.llm.vllm_image_pull_wait
"""

EXAMPLES = r"""
- name: Start pulling the image
  ascendfleet.llm.vllm_image_pull:
    image: quay.io/ascend/vllm-ascend:v0.18.0rc1-openeuler
    registry: quay.io
    progress_file: /opt/ascendfleet/.image-pull/qwen.json
  async: 3600
  poll: 0
  register: pull_job

- name: Wait for it, printing its progress
  ascendfleet.llm.vllm_image_pull_wait:
    jid: "{{ pull_job.ansible_job_id }}"
    image: quay.io/ascend/vllm-ascend:v0.18.0rc1-openeuler
    progress_file: /opt/ascendfleet/.image-pull/qwen.json
    timeout: 3600
    interval: 10
"""

RETURN = r"""
image_id:
  description: The image's ID on the host after the pull.
  type: str
  returned: success, not in check mode
  sample: sha256:ab1436e3f4c8cce86c58aa9603f37015853c7694b49c7b492d5d943175c7ece9
progress:
  description: The last progress (what O(progress_file) holds) - C(layers), C(layers_done),
    C(layers_present), C(bytes_done), C(bytes_total), C(rate), C(status), C(error), C(up_to_date).
  type: dict
  returned: always
  sample: {"layers": 3, "layers_done": 3, "layers_present": 0, "bytes_done": 30309848, "bytes_total": 30309848,
           "rate": 41000000.0, "status": "Status: Downloaded newer image for quay.io/ascend/vllm-ascend:v0.18.0rc1",
           "error": null, "up_to_date": false}
msg:
  description: What happened, or the daemon's error.
  type: str
  returned: always
  sample: "pulled quay.io/ascend/vllm-ascend:v0.18.0rc1-openeuler: 3/3 layers, 30.3 MB of 30.3 MB (100%)"
"""

import http.client as http_client
import json
import os
import socket
import subprocess
import time
from urllib.parse import quote, urlencode

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ascendfleet.llm.plugins.module_utils._files import atomic_write
from ansible_collections.ascendfleet.llm.plugins.module_utils._image_pull import (
    PullProgress, describe, login_of, registry_auth, split_reference)


class UnixConnection(http_client.HTTPConnection):
    """HTTP over the Docker Engine's unix socket."""

    def __init__(self, path, timeout):
        http_client.HTTPConnection.__init__(self, "localhost", timeout=timeout)
        self.socket_path = path

    def connect(self):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self.socket_path)
        self.sock = sock


def _socket_path(module, docker_host):
    if not docker_host.startswith("unix://"):
        module.fail_json(msg="docker_host %r: only a unix socket (unix:///var/run/docker.sock) is supported" % docker_host)
    return docker_host[len("unix://"):]


def _credentials(module, registry):
    """The X-Registry-Auth header for the pull, or None (anonymous)."""
    p = module.params
    if p["registry_username"]:
        return registry_auth(p["registry_username"], p["registry_password"], registry)
    # Where the docker CLI keeps it: $DOCKER_CONFIG, else ~/.docker of the user the module runs as.
    path = os.path.join(os.environ.get("DOCKER_CONFIG") or os.path.join(os.environ.get("HOME") or "/", ".docker"),
                        "config.json")
    try:
        with open(path) as handle:
            config = json.load(handle)
    except (IOError, OSError, ValueError):
        return None
    login = login_of(config, registry)
    if login is None:
        return None
    if login[0] == "auth":
        return registry_auth(login[1], login[2], registry)
    helper = "docker-credential-%s" % login[1]
    try:
        proc = subprocess.run([helper, "get"], input=registry.encode("utf-8"), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=30, check=False)
        answer = json.loads(proc.stdout.decode("utf-8")) if proc.returncode == 0 else None
    except (OSError, ValueError, subprocess.SubprocessError):
        answer = None
    if not isinstance(answer, dict) or not answer.get("Secret"):
        return None
    return registry_auth(answer.get("Username", ""), answer["Secret"], registry)


def _image_id(path, ref, timeout):
    conn = UnixConnection(path, timeout)
    try:
        conn.request("GET", "/images/%s/json" % quote(ref, safe=""))
        resp = conn.getresponse()
        body = resp.read()
        if resp.status != 200:
            return None
        return json.loads(body.decode("utf-8")).get("Id")
    except (OSError, ValueError, http_client.HTTPException):
        return None
    finally:
        conn.close()


def main():
    module = AnsibleModule(
        argument_spec=dict(
            image=dict(type="str", required=True),
            registry=dict(type="str", required=True),
            registry_username=dict(type="str", default=""),
            registry_password=dict(type="str", default="", no_log=True),
            progress_file=dict(type="path"),
            docker_host=dict(type="str", default="unix:///var/run/docker.sock"),
            read_timeout=dict(type="int", default=600),
        ),
        supports_check_mode=True,
    )
    p = module.params
    path = _socket_path(module, p["docker_host"])
    image = p["image"]
    progress = PullProgress()
    if module.check_mode:
        present = _image_id(path, image, 30) is not None
        module.exit_json(changed=not present, progress=progress.snapshot(),
                         msg="%s is on the host" % image if present else "would pull %s" % image)

    started = time.monotonic()
    last_write = [0.0]

    def write(final=False):
        now = time.monotonic()
        progress.sample(now)
        if not p["progress_file"] or (not final and now - last_write[0] < 1.0):
            return
        last_write[0] = now
        snap = dict(progress.snapshot(), image=image, elapsed=round(now - started, 1), finished=final)
        try:
            atomic_write(p["progress_file"], (json.dumps(snap, sort_keys=True) + "\n").encode("utf-8"), 0o644)
        except (IOError, OSError) as exc:
            module.warn("cannot write the pull progress to %s: %s" % (p["progress_file"], exc))
            p["progress_file"] = None

    write(final=False)
    name, tag = split_reference(image)
    headers = {}
    auth = _credentials(module, p["registry"])
    if auth:
        headers["X-Registry-Auth"] = auth
    conn = UnixConnection(path, p["read_timeout"])
    try:
        try:
            conn.request("POST", "/images/create?" + urlencode({"fromImage": name, "tag": tag}), headers=headers)
            resp = conn.getresponse()
            if resp.status != 200:
                body = resp.read().decode("utf-8", "replace")
                try:
                    message = json.loads(body).get("message") or body
                except (ValueError, AttributeError):
                    message = body
                progress.error = "Error response from daemon: %s" % message.strip()
            else:
                while True:
                    line = resp.readline()
                    if not line:
                        break
                    if progress.feed(line):
                        break
                    write()
        except socket.timeout:
            progress.error = "the Docker daemon sent nothing for %d s (read_timeout)" % p["read_timeout"]
        except (OSError, http_client.HTTPException) as exc:
            progress.error = "cannot talk to the Docker daemon at %s: %s" % (p["docker_host"], exc)
    finally:
        conn.close()
    write(final=True)
    snap = progress.snapshot()
    text = describe(snap)
    if progress.error:
        module.fail_json(msg=progress.error, progress=snap, changed=False)
    image_id = _image_id(path, image, 60)
    if image_id is None:
        module.fail_json(msg="the daemon reported the pull of %s done but has no such image (last status: %s)"
                         % (image, progress.status), progress=snap, changed=False)
    module.exit_json(changed=not progress.up_to_date, image_id=image_id, progress=snap,
                     msg="%s %s: %s" % ("have" if progress.up_to_date else "pulled", image, text))


if __name__ == "__main__":
    main()
