# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).

from __future__ import annotations


class ModuleDocFragment(object):
    # Shared by ascendfleet.llm.vllm_gate and ascendfleet.llm.vllm_host_info (read-only: they also
    # extend attributes.read_only), which read the host's containers through docker and its sockets and processes through /proc.
    DOCUMENTATION = r"""
options:
  docker_executable:
    description: C(docker) program.
    type: str
    default: docker
  proc_root:
    description:
      - Where the host's C(/proc) is - the listening TCP sockets (C(net/tcp), C(net/tcp6)), the
        processes holding them (C(<pid>/fd)) and their containers (C(<pid>/cgroup)).
      - Reading other processes' C(fd) needs root, as the role runs.
    type: path
    default: /proc
"""
