# -*- coding: utf-8 -*-
"""Expected values for every ``npu-smi info`` sample in fixtures/npu_smi/, written by hand
from the sample text (not from parser output).

Provenance of each fixture (host model, driver, command, source) is in
fixtures/npu_smi/SOURCES.md, a verbatim copy of ../shared/npu-smi-samples/SOURCES.md.
Duplicates: the two A3 24.1.rc3.x samples share a layout but differ in every reading.

Chip tuple: (npu_id, chip_id, device_id, name, health, bus_id, power_w, temp_c,
aicore_pct, memory_used_mb, memory_total_mb, hbm_used_mb, hbm_total_mb, idle)
with idle at the default 15% threshold. Processes: {device_id: [(pid, name, memory_mb)]}.
"""

N = None


def _same(npu_rows, name, health="OK", **kw):
    """Expand compact rows for one-chip-per-NPU tables (device = NPU id, chip 0)."""
    out = []
    for row in npu_rows:
        npu, bus, power, temp, aicore, mu, mt, hu, ht, idle = row[:10]
        hl = row[10] if len(row) > 10 else health
        out.append((npu, 0, npu, name, hl, bus, power, temp, aicore, mu, mt, hu, ht, idle))
    return out


def _a3(rows):
    """A3 rows: (npu, chip, phy_id, bus, power, temp, hbm_used); name Ascend910, 64 GB HBM."""
    return [(n, c, d, "Ascend910", "OK", bus, p, t, 0.0, 0, 0, hu, 65536, True)
            for n, c, d, bus, p, t, hu in rows]


HLT = "hlt_host_devmm_"

# 910B3-25.2.0-8cards-one-python-process.txt, read by hand; the DERIVED A5 sample keeps these readings.
ROWS_910B3_PYTHON = [
    (0, "0000:C1:00.0", 94.8, 36.0, 0.0, 0, 0, 3407, 65536, True),
    (1, "0000:C2:00.0", 90.5, 34.0, 0.0, 0, 0, 3398, 65536, True),
    (2, "0000:81:00.0", 90.6, 33.0, 0.0, 0, 0, 3400, 65536, True),
    (3, "0000:82:00.0", 98.8, 35.0, 0.0, 0, 0, 3400, 65536, True),
    (4, "0000:01:00.0", 139.7, 45.0, 25.0, 0, 0, 21784, 65536, False),
    (5, "0000:02:00.0", 95.8, 37.0, 0.0, 0, 0, 3400, 65536, True),
    (6, "0000:41:00.0", 97.8, 38.0, 0.0, 0, 0, 3401, 65536, True),
    (7, "0000:42:00.0", 90.8, 39.0, 0.0, 0, 0, 3413, 65536, True),
]

CASES = [
    dict(
        id="310-20.2.0-4chips-npu215",
        fixture="310-20.2.0-atlas800-3000-4chips-npu215-doc.txt",
        version="20.2.0", driver="20.2.0", layout="device", family="310", proc_table=False,
        # Idle Ascend 310 shows 2703 of 8192 MB (33%) in Memory-Usage: not idle at 15%.
        chips=[
            (215, 0, 0, "310", "OK", "0000:DA:00.0", 12.8, 56.0, 0.0, 2703, 8192, N, N, False),
            (215, 1, 1, "310", "OK", "0000:DC:00.0", 12.8, 57.0, 0.0, 2703, 8192, N, N, False),
            (215, 2, 2, "310", "OK", "0000:DD:00.0", 12.8, 57.0, 0.0, 2703, 8192, N, N, False),
            (215, 3, 3, "310", "OK", "0000:DB:00.0", 12.8, 55.0, 0.0, 2703, 8192, N, N, False),
        ],
        processes={}, warnings=0,
    ),
    dict(
        id="310-21.0.4-4chips-hugepages-devices-3-6",
        fixture="310-21.0.4-atlas800-3000-4chips-hugepages-doc.txt",
        version="21.0.4", driver="21.0.4.B030", layout="device", family="310", proc_table=False,
        chips=[
            (6, 0, 3, "310", "OK", "0000:89:00.0", 12.8, 73.0, 0.0, 2703, 8192, N, N, False),
            (6, 1, 4, "310", "OK", "0000:8A:00.0", 12.8, 74.0, 0.0, 2867, 8192, N, N, False),
            (6, 2, 5, "310", "OK", "0000:8B:00.0", 12.8, 70.0, 0.0, 2867, 8192, N, N, False),
            (6, 3, 6, "310", "OK", "0000:8C:00.0", 12.8, 65.0, 0.0, 2867, 8192, N, N, False),
        ],
        processes={}, warnings=0,
    ),
    dict(
        id="310B4-23.0.rc3-bus-id-NA",
        fixture="310B4-23.0.rc3-devboard-bus-id-NA.txt",
        version="23.0.rc3", driver="23.0.rc3", layout="device", family="310B", proc_table=False,
        chips=[(0, 0, 0, "310B4", "OK", N, 7.2, 37.0, 0.0, 1797, 3513, N, N, False)],
        processes={}, warnings=0,
    ),
    dict(
        id="310P3-24.1.0.1-1chip-idle",
        fixture="310P3-24.1.0.1-1chip-kylin-idle.txt",
        version="24.1.0.1", driver="24.1.0.1", layout="device", family="310P", proc_table=True,
        chips=[(1, 0, 0, "310P3", "OK", "0000:01:00.0", N, 47.0, 0.0, 1894, 44215, N, N, True)],
        processes={}, warnings=0,
    ),
    dict(
        id="310P3-25.2.3-npu-id-224-no-process-table",
        fixture="310P3-25.2.3-1chip-npu-id-224-no-process-table.txt",
        version="25.2.3", driver="25.2.3", layout="device", family="310P", proc_table=False,
        chips=[(224, 0, 0, "310P3", "OK", "0000:04:00.0", N, 71.0, 0.0, 1263, 44280, N, N, True)],
        processes={}, warnings=0,
    ),
    dict(
        id="310P3-duo-24.1.rc2-npu-id-1792",
        fixture="310P3-duo-24.1.rc2-1card-2chips-npu-id-1792-container.txt",
        version="24.1.rc2", driver="24.1.rc2", layout="device", family="310P", proc_table=True,
        chips=[
            (1792, 0, 0, "310P3", "OK", "0000:07:00.0", N, 36.0, 0.0, 1821, 44280, N, N, True),
            (1792, 1, 1, "310P3", "OK", "0000:07:00.0", N, 36.0, 0.0, 1041, 43693, N, N, True),
        ],
        processes={}, warnings=0,
    ),
    dict(
        id="310P3-duo-25.2.0-npu-ids-64-32832",
        fixture="310P3-duo-25.2.0-2cards-4chips-idle-npu-ids-64-32832.txt",
        version="25.2.0", driver="25.2.0", layout="device", family="310P", proc_table=True,
        chips=[
            (64, 0, 0, "310P3", "OK", "0000:03:00.0", N, 32.0, 0.0, 1526, 44280, N, N, True),
            (64, 1, 1, "310P3", "OK", "0000:03:00.0", N, 32.0, 0.0, 1429, 43693, N, N, True),
            (32832, 0, 2, "310P3", "OK", "0000:83:00.0", N, 31.0, 0.0, 1623, 44280, N, N, True),
            (32832, 1, 3, "310P3", "OK", "0000:83:00.0", N, 31.0, 0.0, 1308, 43693, N, N, True),
        ],
        processes={}, warnings=0,
    ),
    dict(
        id="910-23.0.5-Warning-breaks-alignment-elided",
        fixture="910-23.0.5-8cards-one-Warning-doc-handedited-elided.txt",
        version="23.0.5", driver="23.0.5", layout="npu", family="910A", proc_table=True,
        chips=_same([
            (0, "0000:61:00.0", 73.1, 37.0, 0.0, 920, 13553, 0, 32768, False, "Warning"),
            (7, "0000:3D:00.0", 67.0, 38.0, 0.0, 2346, 15567, 0, 32768, True),
        ], "xxx"),
        processes={}, warnings=2,  # the two "..." elisions
    ),
    dict(
        id="910A-22.0.3.1-8cards-idle-width-93",
        fixture="910A-22.0.3.1-8cards-idle-doc.txt",
        version="22.0.3.1", driver="22.0.3.1", layout="npu", family="910A", proc_table=False,
        chips=_same([
            (0, "0000:61:00.0", 67.2, 43.0, 0.0, 1867, 15077, 0, 32768, True),
            (1, "0000:DB:00.0", 63.3, 38.0, 0.0, 1867, 15077, 0, 32768, True),
            (2, "0000:B2:00.0", 64.8, 34.0, 0.0, 1868, 15077, 0, 32768, True),
            (3, "0000:3E:00.0", 191.7, 42.0, 0.0, 1866, 15077, 0, 32768, True),
            (4, "0000:60:00.0", 66.4, 44.0, 0.0, 1867, 15077, 0, 32768, True),
            (5, "0000:DA:00.0", 62.7, 33.0, 0.0, 1865, 15077, 0, 32768, True),
            (6, "0000:B1:00.0", 64.5, 35.0, 0.0, 1865, 15077, 0, 32768, True),
            (7, "0000:3D:00.0", 191.4, 40.0, 0.0, 1866, 15077, 0, 32768, True),
        ], "910A"),
        processes={}, warnings=0,
    ),
    dict(
        id="910A-24.1.RC2-Warning-4-pids-per-chip",
        fixture="910A-24.1.RC2-8cards-warning-health-hlt-processes-doc.txt",
        version="24.1.RC2", driver="24.1.RC2", layout="npu", family="910A", proc_table=True,
        chips=_same([
            (0, "0000:C1:00.0", 70.5, 42.0, 0.0, 4252, 15137, 0, 32768, False),
            (1, "0000:81:00.0", 71.2, 36.0, 0.0, 4666, 15137, 0, 32768, False),
            (2, "0000:41:00.0", 69.0, 35.0, 0.0, 4317, 15137, 0, 32768, False),
            (3, "0000:01:00.0", 206.9, 39.0, 0.0, 3616, 15039, 0, 32768, False, "Warning"),
            (4, "0000:C2:00.0", 70.2, 39.0, 0.0, 3708, 15137, 0, 32768, False),
            (5, "0000:82:00.0", 64.9, 37.0, 0.0, 4346, 15137, 0, 32768, False),
            (6, "0000:42:00.0", 69.4, 40.0, 0.0, 4261, 15137, 0, 32768, False),
            (7, "0000:02:00.0", 203.2, 42.0, 0.0, 4521, 15039, 0, 32768, False, "Warning"),
        ], "xxx"),
        processes={
            0: [(37656, HLT, 686), (37664, HLT, 686), (37640, HLT, 686), (37648, HLT, 686)],
            1: [(37665, HLT, 686), (37641, HLT, 686), (37649, HLT, 686), (37657, HLT, 686)],
            2: [(37658, HLT, 686), (37650, HLT, 686), (37666, HLT, 686), (37642, HLT, 686)],
            3: [(37643, HLT, 686), (37651, HLT, 686), (37659, HLT, 686), (37667, HLT, 686)],
            4: [(37668, HLT, 686), (37644, HLT, 686), (37652, HLT, 686), (37660, HLT, 686)],
            5: [(37653, HLT, 686), (37661, HLT, 686), (37669, HLT, 686), (37645, HLT, 686)],
            6: [(37646, HLT, 686), (37654, HLT, 686), (37662, HLT, 686), (37670, HLT, 686)],
            7: [(37671, HLT, 686), (37647, HLT, 686), (37655, HLT, 686), (37663, HLT, 686)],
        },
        warnings=0,
    ),
    dict(
        id="910A-named-910B-24.1.0-ddr-decides",
        fixture="910A-named-910B-24.1.0-8cards-32GB-idle.txt",
        version="24.1.0", driver="24.1.0", layout="npu", family="910A", proc_table=False,
        chips=_same([
            (0, "0000:C1:00.0", 70.0, 34.0, 0.0, 1197, 13553, 1365, 32768, True),
            (1, "0000:81:00.0", 66.9, 34.0, 0.0, 2411, 15665, 4, 32768, True),
            (2, "0000:41:00.0", 69.8, 34.0, 0.0, 2306, 15665, 4, 32768, True),
            (3, "0000:01:00.0", 67.2, 33.0, 0.0, 2472, 15567, 3, 32768, True),
            (4, "0000:C2:00.0", 68.9, 33.0, 0.0, 2904, 13553, 3, 32768, True),
            (5, "0000:82:00.0", 66.3, 34.0, 0.0, 1694, 15665, 5, 32768, True),
            (6, "0000:42:00.0", 70.1, 34.0, 0.0, 1987, 15665, 5, 32768, True),
            (7, "0000:02:00.0", 65.6, 33.0, 0.0, 1777, 15567, 4, 32768, True),
        ], "910B"),
        processes={}, warnings=0,
    ),
    dict(
        id="910B1-23.0.rc2-elided-by-author",
        fixture="910B1-23.0.rc2-8cards-idle-elided-by-author.txt",
        version="23.0.rc2", driver="23.0.rc2", layout="npu", family="910B", proc_table=False,
        chips=_same([
            (0, "0000:C1:00.0", 88.4, 46.0, 0.0, 0, 0, 4175, 65536, True),
            (1, "0000:01:00.0", 92.1, 47.0, 0.0, 0, 0, 4175, 65536, True),
            (7, "0000:42:00.0", 92.7, 48.0, 0.0, 0, 0, 4174, 65536, True),
        ], "910B1"),
        processes={}, warnings=1,
    ),
    dict(
        id="910B2-25.2.1-seed-4busy-no-space-before-slash",
        fixture="910B2-25.2.1-8cards-4busy-vllm-tp-from-seed.txt",
        version="25.2.1", driver="25.2.1", layout="npu", family="910B", proc_table=True,
        chips=_same([
            (0, "0000:C1:00.0", 97.2, 41.0, 0.0, 0, 0, 64231, 65536, False),
            (1, "0000:01:00.0", 93.3, 43.0, 0.0, 0, 0, 64231, 65536, False),
            (2, "0000:C2:00.0", 93.5, 39.0, 0.0, 0, 0, 64231, 65536, False),
            (3, "0000:02:00.0", 102.5, 43.0, 0.0, 0, 0, 64231, 65536, False),
            (4, "0000:81:00.0", 97.8, 41.0, 0.0, 0, 0, 3390, 65536, True),
            (5, "0000:41:00.0", 97.5, 43.0, 0.0, 0, 0, 3390, 65536, True),
            (6, "0000:82:00.0", 88.6, 40.0, 0.0, 0, 0, 3390, 65536, True),
            (7, "0000:42:00.0", 97.5, 43.0, 0.0, 0, 0, 3390, 65536, True),
        ], "910B2"),
        processes={
            0: [(1316011, "VLLMWorker_TP", 60891)],
            1: [(1316012, "VLLMWorker_TP", 60891)],
            2: [(1316013, "VLLMWorker_TP", 60891)],
            3: [(1316014, "VLLMWorker_TP", 60891)],
        },
        warnings=0,
    ),
    dict(
        id="910B3-25.2.0-one-python-process",
        fixture="910B3-25.2.0-8cards-one-python-process.txt",
        version="25.2.0", driver="25.2.0", layout="npu", family="910B", proc_table=True,
        chips=_same(ROWS_910B3_PYTHON, "910B3"),
        processes={4: [(1601114, "python", 18429)]},
        warnings=0,
    ),
    # DERIVED, not captured (SOURCES.md): the 910B3 sample above re-laid out with the printf formats
    # of the Ascend 950 npu-smi (NPU_SMI_V2), Name 950PR_9599 assumed. Same readings as the 910B3 case,
    # written by hand from the derived text: Memory-Usage 0 / 0, NPU Util in the AICore place.
    dict(
        id="DERIVED-A5-950PR-v2-layout",
        fixture="DERIVED-A5-950PR-v2-layout-from-910B3-25.2.0-one-python-process.txt",
        version="25.2.0", driver="25.2.0", layout="npu-id", family="A5", proc_table=True,
        chips=_same(ROWS_910B3_PYTHON, "950PR_9599"),
        processes={4: [(1601114, "python", 18429)]},
        warnings=0,
    ),
    dict(
        id="910B4-24.1.rc3-one-nearly-full-no-process-table",
        fixture="910B4-24.1.rc3-8cards-one-card-nearly-full-no-process-table.txt",
        version="24.1.rc3", driver="24.1.rc3", layout="npu", family="910B", proc_table=False,
        chips=_same([
            (0, "0000:C1:00.0", 88.2, 36.0, 0.0, 0, 0, 2825, 32768, True),
            (1, "0000:01:00.0", 84.8, 36.0, 0.0, 0, 0, 2825, 32768, True),
            (2, "0000:C2:00.0", 86.6, 36.0, 0.0, 0, 0, 2829, 32768, True),
            (3, "0000:02:00.0", 86.6, 35.0, 0.0, 0, 0, 2840, 32768, True),
            (4, "0000:81:00.0", 88.8, 34.0, 0.0, 0, 0, 31859, 32768, False),
            (5, "0000:41:00.0", 85.0, 36.0, 0.0, 0, 0, 2824, 32768, True),
            (6, "0000:82:00.0", 86.2, 35.0, 0.0, 0, 0, 2840, 32768, True),
            (7, "0000:42:00.0", 86.3, 36.0, 0.0, 0, 0, 2830, 32768, True),
        ], "910B4"),
        processes={}, warnings=0,
    ),
    dict(
        id="910B4-25.0.rc1.1-idle",
        fixture="910B4-25.0.rc1.1-8cards-idle-fresh-driver-install.txt",
        version="25.0.rc1.1", driver="25.0.rc1.1", layout="npu", family="910B", proc_table=True,
        chips=_same([
            (0, "0000:C1:00.0", 87.2, 33.0, 0.0, 0, 0, 2654, 32768, True),
            (1, "0000:C2:00.0", 82.7, 33.0, 0.0, 0, 0, 2654, 32768, True),
            (2, "0000:81:00.0", 82.7, 33.0, 0.0, 0, 0, 2654, 32768, True),
            (3, "0000:82:00.0", 89.1, 34.0, 0.0, 0, 0, 2654, 32768, True),
            (4, "0000:01:00.0", 84.5, 39.0, 0.0, 0, 0, 2654, 32768, True),
            (5, "0000:02:00.0", 84.8, 37.0, 0.0, 0, 0, 2654, 32768, True),
            (6, "0000:41:00.0", 87.1, 38.0, 0.0, 0, 0, 2654, 32768, True),
            (7, "0000:42:00.0", 81.6, 37.0, 0.0, 0, 0, 2653, 32768, True),
        ], "910B4"),
        processes={}, warnings=0,
    ),
    dict(
        id="910B4-64GB-25.0.rc1.1-bus-id-anonymised",
        fixture="910B4-64GB-25.0.rc1.1-first-card-only-busid-anonymized.txt",
        version="25.0.rc1.1", driver="25.0.rc1.1", layout="npu", family="910B", proc_table=False,
        chips=_same([(0, "xxxx:xx:xx.x", 105.5, 39.0, 5.0, 0, 0, 6154, 65536, True)], "910B4"),
        processes={}, warnings=0,
    ),
    dict(
        id="A3-24.1.rc3.5-16chips-phy-id",
        fixture="A3-910_93-24.1.rc3.5-16chips-idle-no-processes.txt",
        version="24.1.rc3.5", driver="24.1.rc3.5", layout="phy-id", family="A3", proc_table=True,
        chips=_a3([
            (0, 0, 0, "0000:9D:00.0", 180.2, 38.0, 3430), (0, 1, 1, "0000:9F:00.0", N, 37.0, 3188),
            (1, 0, 2, "0000:99:00.0", 185.9, 39.0, 3430), (1, 1, 3, "0000:9B:00.0", N, 37.0, 3188),
            (2, 0, 4, "0000:95:00.0", 173.4, 36.0, 3427), (2, 1, 5, "0000:97:00.0", N, 37.0, 3187),
            (3, 0, 6, "0000:91:00.0", 176.2, 36.0, 3425), (3, 1, 7, "0000:93:00.0", N, 36.0, 3191),
            (4, 0, 8, "0000:8D:00.0", 178.3, 36.0, 3414), (4, 1, 9, "0000:8F:00.0", N, 36.0, 3201),
            (5, 0, 10, "0000:89:00.0", 178.4, 37.0, 3415), (5, 1, 11, "0000:8B:00.0", N, 37.0, 3203),
            (6, 0, 12, "0000:85:00.0", 176.0, 36.0, 3413), (6, 1, 13, "0000:87:00.0", N, 37.0, 3201),
            (7, 0, 14, "0000:81:00.0", 181.1, 38.0, 3427), (7, 1, 15, "0000:83:00.0", N, 36.0, 3187),
        ]),
        processes={}, warnings=0,
    ),
    dict(
        id="A3-24.1.rc3.7-16chips-phy-id",
        fixture="A3-910_93-24.1.rc3.7-16chips-idle-no-processes.txt",
        version="24.1.rc3.7", driver="24.1.rc3.7", layout="phy-id", family="A3", proc_table=True,
        chips=_a3([
            (0, 0, 0, "0000:9D:00.0", 178.5, 36.0, 3416), (0, 1, 1, "0000:9F:00.0", N, 36.0, 3189),
            (1, 0, 2, "0000:99:00.0", 188.2, 36.0, 3413), (1, 1, 3, "0000:9B:00.0", N, 35.0, 3185),
            (2, 0, 4, "0000:95:00.0", 176.6, 36.0, 3412), (2, 1, 5, "0000:97:00.0", N, 37.0, 3186),
            (3, 0, 6, "0000:91:00.0", 178.5, 36.0, 3412), (3, 1, 7, "0000:93:00.0", N, 36.0, 3185),
            (4, 0, 8, "0000:8D:00.0", 180.9, 37.0, 3402), (4, 1, 9, "0000:8F:00.0", N, 36.0, 3198),
            (5, 0, 10, "0000:89:00.0", 188.7, 36.0, 3399), (5, 1, 11, "0000:8B:00.0", N, 36.0, 3201),
            (6, 0, 12, "0000:85:00.0", 183.0, 37.0, 3400), (6, 1, 13, "0000:87:00.0", N, 36.0, 3200),
            (7, 0, 14, "0000:81:00.0", 186.4, 36.0, 3413), (7, 1, 15, "0000:83:00.0", N, 37.0, 3188),
        ]),
        processes={}, warnings=0,
    ),
    dict(
        id="A3-softshare-process-id-in-container-column",
        fixture="A3-unknown-softshare-container-2dies-proc-in-container-column-doc-handedited.txt",
        version="xxx.xxx.xxx", driver="xxx.xxx.xxx", layout="phy-id", family="A3",
        proc_table=True,
        # The doc shows both dies with Phy-ID 0 (one die mounted, two shown): a warning.
        chips=[
            (0, 0, 0, "xxx", "OK", "0000:9D:00.0", 157.3, 32.0, 0.0, 0, 0, 3130, 65536, True),
            (0, 1, 0, "xxx", "OK", "0000:9D:00.0", N, 32.0, 0.0, 0, 0, 3130, 65536, True),
        ],
        processes={}, warnings=1,
    ),
]

VERSION_CASES = [
    # (fixture, version, package_version, Innerversion or firmware_version)
    ("driver-version.info-23.0.7-910A.txt", "23.0.7", "23.0.7",
     ("Innerversion", "V100R001C15SPC012B220")),
    ("driver-version.info-24.1.rc1-no-package_version-doc.txt", "24.1.rc1", N,
     ("Innerversion", "V100R001C15SPC006B220")),
    ("driver-version.info-24.1.rc2.2.txt", "24.1.rc2.2", "24.1.rc2.2",
     ("ascendhal_version", "7.35.23")),
    ("driver-version.info-25.0.rc1.1-910B.txt", "25.0.rc1.1", "25.0.rc1.1",
     ("compatible_version_fw", "[7.0.0,7.7.99]")),
    ("driver-version.info-25.3.rc1.txt", "25.3.rc1", "25.3.rc1",
     ("Innerversion", "V100R001C23SPC002B212")),
    ("firmware-version.info-7.1.0.11.220-910A.txt", "7.1.0.11.220", "23.0.7",
     ("compatible_version_drv", "[23.0.rc3,23.0.rc3.],[23.0.0,23.0.0.]")),
    ("firmware-version.info-7.7.0.1.231-910B.txt", "7.7.0.1.231", "25.0.rc1.1",
     ("firmware_version", "1.0")),
]

INSTALL_CASES = [
    ("etc-ascend_install.info-driver-firmware-full-HwHiAiUser.txt", {
        "UserName": "HwHiAiUser", "UserGroup": "HwHiAiUser", "Driver_Install_Type": "full",
        "Driver_Install_Path_Param": "/usr/local/Ascend", "Driver_Install_For_All": "yes",
        "Driver_Install_Mode": "normal", "Firmware_Install_Type": "full",
        "Firmware_Install_Path_Param": "/usr/local/Ascend"}),
    ("etc-ascend_install.info-firmware-first-variant.txt", {
        "UserName": "HwHiAiUser", "UserGroup": "HwHiAiUser", "Firmware_Install_Type": "full",
        "Firmware_Install_Path_Param": "/usr/local/Ascend", "Driver_Install_Type": "full",
        "Driver_Install_Path_Param": "/usr/local/Ascend", "Driver_Install_For_All": "yes"}),
]
