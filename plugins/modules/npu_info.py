#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).

from __future__ import annotations

DOCUMENTATION = r"""
module: npu_info
short_description: Read the Ascend NPU chips of a host from C(npu-smi info)
version_added: 0.1.0
description:
  - Runs C(npu-smi info) and returns every chip in table order with its ids, health,
    power, temperature, AI Core use, memory, processes and whether it is idle.
  - Reads every known layout - 910B and 910A (one chip per NPU), A3 / Ascend910_93 (two
    chips per NPU, C(Chip Phy-ID) column), 310, 310B and 310P / 300I Duo (C(Chip Device)
    column) - from npu-smi 20.x to 26.x, by table structure rather than column offsets; and the
    table npu-smi prints on an Ascend 950 (A5 - C(NPU ID | Name | Health), one chip per NPU ID), read
    from npu-smi's source as no captured output of a 950 was found.
  - Also returns the chip RV(family) the host has, for roles that pick an image variant or
    topology.
  - Read-only; changes nothing.
author:
  - ascendfleet maintainers (@ascendfleet)
extends_documentation_fragment:
  - ascendfleet.llm.attributes.read_only
  - ascendfleet.llm.npu_smi
notes:
  - A chip is C(idle) when its health is C(OK), no row of the process table names it, and
    its device memory use is at most O(idle_threshold_pct).
  - Chip family rule - the Ascend 950 layout whose Name column reads C(950...) (C(950PR_9599),
    C(950DT_...), C(Ascend950...)) is C(A5), and C(/dev/davinciN) is taken to be N = the NPU ID
    (an assumption until a real 950's output is at hand); C(Chip Phy-ID) layout is C(A3); C(Chip Device) layout is C(310P),
    C(310B) or C(310) from the Name column; one chip per NPU with an HBM column is C(910A)
    when the chips also report on-card DDR in Memory-Usage (C(1867 / 15077)) and C(910B)
    when Memory-Usage is C(0 / 0). The Name column decides only when memory cannot, because
    some 910A servers print C(910B) there.
seealso:
  - module: ascendfleet.llm.npu_assign
"""

EXAMPLES = r"""
# Read the NPUs of every Ascend server (also in check mode)
- name: Read the NPU chips
  ascendfleet.llm.npu_info:
  register: __npu_verify_npus

# Fail early when a chip is unhealthy
- name: Ensure every NPU chip is healthy
  ansible.builtin.assert:
    that: __npu_verify_npus.chips | rejectattr('health', 'equalto', 'OK') | list | length == 0
    fail_msg: "Unhealthy NPU chips: {{ __npu_verify_npus.chips | rejectattr('health', 'equalto', 'OK') | map(attribute='device_path') | join(', ') }}"

# npu-smi installed outside PATH, stricter idle rule
- name: Read the NPU chips with a custom npu-smi path
  ascendfleet.llm.npu_info:
    executable: /usr/local/sbin/npu-smi
    idle_threshold_pct: 10
  register: __npu_verify_npus
"""

RETURN = r"""
npu_smi_version:
  description: Version printed in the first line of the table (C(npu-smi 25.2.1)).
  returned: success
  type: str
  sample: "25.2.1"
driver_version:
  description: The C(Version:) value of the same line (the driver version npu-smi reports).
  returned: success
  type: str
  sample: "25.2.1"
family:
  description:
    - Chip family of the host, C(910B), C(910A), C(A3), C(A5), C(310P), C(310B) or C(310); null
      when the table does not tell.
  returned: success
  type: str
  sample: "910B"
has_process_table:
  description: Whether npu-smi printed a process table; without one, processes are unknown.
  returned: success
  type: bool
  sample: true
chips:
  description:
    - One entry per chip, in table order.
    - C(device_id) is the N of C(/dev/davinciN) (the device file a container is given), not
      the npu-smi NPU id.
  returned: success
  type: list
  elements: dict
  contains:
    npu_id:
      description: NPU id from npu-smi (on 310P cards large values such as C(1792)).
      type: int
      sample: 0
    chip_id:
      description: Chip index within the NPU.
      type: int
      sample: 0
    device_id:
      description: N of C(/dev/davinciN) - Phy-ID on A3, Device on 310/310P, else the NPU id.
      type: int
      sample: 4
    device_path:
      description: C(/dev/davinciN) for RV(chips[].device_id).
      type: str
      sample: /dev/davinci4
    name:
      description: The Name column as printed (may be anonymised, e.g. C(xxx)).
      type: str
      sample: 910B2
    health:
      description: C(OK), C(Warning), C(Alarm) or C(Critical).
      type: str
      sample: OK
    bus_id:
      description: PCIe bus id; null when npu-smi prints C(NA).
      type: str
      sample: "0000:81:00.0"
    power_w:
      description: Power in watts; null when not reported (C(-) on A3 chip 1, C(NA) on 310P).
      type: float
      sample: 97.8
    temp_c:
      description: Temperature in degrees Celsius.
      type: float
      sample: 41.0
    aicore_pct:
      description: AI Core utilisation in percent.
      type: float
      sample: 0.0
    memory_used_mb:
      description: Memory-Usage used, MB (on-card DDR; C(0) on 910B and A3).
      type: int
      sample: 0
    memory_total_mb:
      description: Memory-Usage total, MB.
      type: int
      sample: 0
    hbm_used_mb:
      description: HBM-Usage used, MB; null when the table has no HBM column (310, 310P).
      type: int
      sample: 3390
    hbm_total_mb:
      description: HBM-Usage total, MB; null when the table has no HBM column.
      type: int
      sample: 65536
    processes:
      description:
        - Processes npu-smi lists on this chip (host PIDs). Processes in other PID
          namespaces are not listed.
        - Each has C(pid), C(name) (may be empty), C(memory_mb) and C(pid_in_container)
          (the C(Process id in container) column of npu-smi 26.0 and later, else null).
      type: list
      elements: dict
      sample: [{"pid": 1316011, "name": "VLLMWorker_TP", "memory_mb": 60891, "pid_in_container": null}]
    idle:
      description: Health OK, no process, device memory use at most O(idle_threshold_pct).
      type: bool
      sample: true
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ascendfleet.llm.plugins.module_utils._host_tools import check_idle_threshold, npu_info_result, npu_smi_info
from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_smi import DEFAULT_IDLE_THRESHOLD_PCT


def main():
    module = AnsibleModule(
        argument_spec=dict(
            executable=dict(type="str", default="npu-smi"),
            idle_threshold_pct=dict(type="float", default=DEFAULT_IDLE_THRESHOLD_PCT),
        ),
        supports_check_mode=True,
    )
    threshold = module.params["idle_threshold_pct"]
    check_idle_threshold(module, threshold)
    info, dummy = npu_smi_info(module, module.params["executable"])
    module.exit_json(changed=False, **npu_info_result(info, threshold))


if __name__ == "__main__":
    main()
