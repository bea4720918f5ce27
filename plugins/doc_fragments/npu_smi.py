# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).

from __future__ import annotations


class ModuleDocFragment(object):
    # Options shared by ascendfleet.llm.npu_info and ascendfleet.llm.npu_assign.
    DOCUMENTATION = r"""
options:
  executable:
    description:
      - The C(npu-smi) program to run, as a name looked up in E(PATH) plus C(/usr/local/bin)
        and C(/usr/local/sbin) (where the Ascend driver installs it), or as a path.
      - The module runs C(<executable> info) with C(LC_ALL=C); no other subcommand is needed.
    type: str
    default: npu-smi
  idle_threshold_pct:
    description:
      - A chip with health C(OK) and no process in the npu-smi process table counts as idle
        while its device memory use is at most this percentage of its total.
      - Device memory is HBM where the table has an HBM column with a non-zero total, else
        Memory-Usage (310, 310P, 310B).
      - Idle 910B and A3 chips show 4-10% (driver and runtime reservations); a chip whose
        process runs in another PID namespace is invisible to npu-smi, so memory is the only
        sign it is busy. Ascend 310 and 310B report their device OS in Memory-Usage (33-51%
        when idle), so raise this value on those hosts.
    type: float
    default: 15.0
notes:
  - Device ids are the N of C(/dev/davinciN) - the C(Phy-ID) column on A3 (Ascend910_93),
    the C(Device) column on 310 and 310P, otherwise the NPU id. They name the device files a
    container is given (compose C(devices:) entries, C(docker run --device /dev/davinciN)).
    NPU ids on 310P cards (for example C(1792) or C(32832)) are not device numbers.
"""
