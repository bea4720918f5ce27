# -*- coding: utf-8 -*-
"""NPU selection rules: plain data in, device ids (or a clear error) out."""

import os

import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils import _npu_smi as npu_smi
from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_assign import (
    NotEnoughNpus,
    NpuAssignError,
    assign,
    check_count,
)
from ansible_collections.ascendfleet.llm.plugins.module_utils._npu_smi import Chip, Process

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "npu_smi")


def chip(dev, npu=None, chip_id=0, health="OK", hbm=(3390, 65536), pids=()):
    return Chip(npu_id=dev if npu is None else npu, chip_id=chip_id, device_id=dev,
                name="910B2", health=health, bus_id=None, power_w=None, temp_c=None,
                aicore_pct=None, memory_used_mb=0, memory_total_mb=0,
                hbm_used_mb=hbm[0], hbm_total_mb=hbm[1],
                processes=tuple(Process(p, "VLLMWorker_TP", 60891) for p in pids))


def b910(busy=None, **over):
    """Eight fully meshed 910B chips; busy maps device -> pids."""
    busy = busy or {}
    return [over.get(d) or chip(d, pids=busy.get(d, ()),
                                hbm=(64231, 65536) if d in busy else (3390, 65536))
            for d in range(8)]


def a3(busy=()):
    """A3: 8 NPUs x 2 chips, Phy-ID = device 0-15."""
    return [chip(d, npu=d // 2, chip_id=d % 2, pids=(100 + d,) if d in busy else ())
            for d in range(16)]


def parsed(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return npu_smi.parse_info(handle.read())


# --- the seed host -------------------------------------------------------------------

def test_seed_910b2_gives_free_cards_4_to_7():
    info = parsed("910B2-25.2.1-8cards-4busy-vllm-tp-from-seed.txt")
    assert assign(info.chips, "910B", "q", 2, {}) == [4, 5]
    assert assign(info.chips, "910B", "q", 4, {}) == [4, 5, 6, 7]


def test_seed_910b2_not_enough_lists_every_busy_chip():
    info = parsed("910B2-25.2.1-8cards-4busy-vllm-tp-from-seed.txt")
    with pytest.raises(NotEnoughNpus) as err:
        assign(info.chips, "910B", "q", 8, {"other": [6]})
    assert err.value.unavailable == [
        (0, "busy, pid 1316011"), (1, "busy, pid 1316012"), (2, "busy, pid 1316013"),
        (3, "busy, pid 1316014"), (6, "held by other")]
    assert str(err.value) == (
        "not enough free NPU chips: 8 requested, 3 usable. Unavailable: "
        "/dev/davinci0: busy, pid 1316011; /dev/davinci1: busy, pid 1316012; "
        "/dev/davinci2: busy, pid 1316013; /dev/davinci3: busy, pid 1316014; "
        "/dev/davinci6: held by other")


def test_every_reason_in_the_message():
    chips = b910(busy={3: (1316014,)})
    chips[6] = chip(6, health="Warning")
    chips[2] = chip(2, hbm=(29491, 65536))  # 45.0% of HBM
    chips[7] = chip(7, hbm=(0, 0))
    chips[7] = Chip(**dict(chips[7].__dict__, memory_used_mb=2703, memory_total_mb=8192))
    with pytest.raises(NotEnoughNpus) as err:
        assign(chips, "910B", "q", 8, {"qwen-coder": [5]}, exclude=[1])
    message = str(err.value)
    for part in ("/dev/davinci3: busy, pid 1316014", "/dev/davinci5: held by qwen-coder",
                 "/dev/davinci6: health Warning",
                 "/dev/davinci2: 45% of HBM used, no visible process",
                 "/dev/davinci1: excluded",
                 "/dev/davinci7: 33% of memory used, no visible process"):
        assert part in message
    assert "/dev/davinci0" not in message and "/dev/davinci4" not in message


def test_several_pids_and_known_foreign_project():
    chips = b910(busy={0: (11, 12, 11)})
    with pytest.raises(NotEnoughNpus) as err:
        assign(chips, "910B", "q", 8, {}, pid_owners={11: "qwen-coder", 12: None})
    assert (0, "busy, pids 11, 12 (compose project qwen-coder)") in err.value.unavailable


# --- sticky ownership ------------------------------------------------------------------

def test_sticky_owner_keeps_cards_its_processes_occupy():
    chips = b910(busy={0: (1,), 1: (2,)})
    # Unattributed processes on held chips are presumed the owner's.
    assert assign(chips, "910B", "q", 2, {"q": [0, 1]}) == [0, 1]
    # Attributed to the owner: same.
    assert assign(chips, "910B", "q", 2, {"q": [0, 1]}, pid_owners={1: "q", 2: "q"}) == [0, 1]


def test_sticky_after_processes_vanished_even_with_memory_left():
    chips = b910()
    chips[0] = chip(0, hbm=(64231, 65536))  # no process, memory still used
    assert assign(chips, "910B", "q", 2, {"q": [0, 1]}) == [0, 1]
    # The same chip is not given to anyone else.
    assert assign(chips, "910B", "r", 2, {"q": [0, 1]}) == [2, 3]
    # Without the ledger entry it is memory-busy for everybody.
    assert assign(chips, "910B", "q", 2, {}) == [1, 2]


def test_held_card_taken_by_another_project_is_replaced():
    chips = b910(busy={0: (1,)})
    assert assign(chips, "910B", "q", 2, {"q": [0, 1]}, pid_owners={1: "intruder"}) == [1, 2]


def test_held_card_unhealthy_or_excluded_or_gone_is_replaced():
    chips = b910()
    chips[1] = chip(1, health="Alarm")
    assert assign(chips, "910B", "q", 2, {"q": [0, 1]}) == [0, 2]
    assert assign(b910(), "910B", "q", 2, {"q": [0, 1]}, exclude=[0]) == [1, 2]
    assert assign(b910()[:7], "910B", "q", 2, {"q": [6, 9]}) == [0, 6]


def test_busy_with_own_containers_is_recognised_without_ledger():
    chips = b910(busy={0: (1,), 1: (2,), 2: (3,), 3: (4,)})
    owners = {1: "q", 2: "q", 3: "q", 4: "q"}
    assert assign(chips, "910B", "q", 4, {}, pid_owners=owners) == [0, 1, 2, 3]
    # Another owner still sees them busy.
    assert assign(chips, "910B", "r", 4, {}, pid_owners=owners) == [4, 5, 6, 7]
    # One of the four is someone else's: only the owner's own three are preferred.
    owners[4] = "r"
    assert assign(chips, "910B", "q", 4, {}, pid_owners=owners) == [0, 1, 2, 4]


def test_count_changes_keep_held_cards():
    # Held first, then the lowest free ids (910B is fully meshed).
    assert assign(b910(), "910B", "q", 4, {"q": [4, 5]}) == [0, 1, 4, 5]
    assert assign(b910(), "910B", "q", 2, {"q": [4, 5, 6, 7]}) == [4, 5]


def test_never_gives_cards_of_another_owner():
    assert assign(b910(), "910B", "q", 4, {"a": [0, 1], "b": [2]}) == [3, 4, 5, 6]


# --- counts and topology --------------------------------------------------------------

@pytest.mark.parametrize("count", [0, 3, 5, 6, 12, 32, -2])
def test_count_must_be_power_of_two(count):
    with pytest.raises(NpuAssignError) as err:
        check_count(count)
    assert "power of two" in str(err.value)


@pytest.mark.parametrize("count", [1, 2, 4, 8, 16])
def test_power_of_two_counts_accepted(count):
    check_count(count)


def test_910b_is_fully_meshed():
    assert assign(b910(busy={1: (1,), 3: (3,)}), "910B", "q", 4, {}) == [0, 2, 4, 5]


def test_a3_even_count_takes_whole_npus():
    assert assign(a3(busy=(0,)), "A3", "q", 2, {}) == [2, 3]
    assert assign(a3(busy=(0, 3)), "A3", "q", 4, {}) == [4, 5, 6, 7]


def test_a3_single_chip_prefers_half_used_npu():
    assert assign(a3(busy=(0,)), "A3", "q", 1, {}) == [1]
    assert assign(a3(), "A3", "q", 1, {}) == [0]


def test_a3_no_whole_npu_free():
    with pytest.raises(NotEnoughNpus) as err:
        assign(a3(busy=range(0, 16, 2)), "A3", "q", 2, {})
    message = str(err.value)
    assert message.startswith("8 chip(s) are usable")
    assert "whole NPUs (both chips of a card)" in message
    assert "/dev/davinci14: busy, pid 114" in message


def test_a3_from_sample_16_chips():
    info = parsed("A3-910_93-24.1.rc3.7-16chips-idle-no-processes.txt")
    assert assign(info.chips, "A3", "q", 16, {}) == list(range(16))
    assert assign(info.chips, "A3", "q", 4, {"x": [1]}) == [2, 3, 4, 5]


def test_310p_duo_whole_card():
    info = parsed("310P3-duo-25.2.0-2cards-4chips-idle-npu-ids-64-32832.txt")
    assert assign(info.chips, "310P", "q", 2, {"x": [0]}) == [2, 3]
    assert assign(info.chips, "310P", "q", 1, {"x": [0]}) == [1]
    with pytest.raises(NotEnoughNpus):
        assign(info.chips, "310P", "q", 2, {"x": [0], "y": [3]})


def test_910a_rings():
    info = parsed("910A-22.0.3.1-8cards-idle-doc.txt")
    assert assign(info.chips, "910A", "q", 4, {"x": [0]}) == [4, 5, 6, 7]
    # Tightest fit: ring 0 has exactly two usable chips left.
    assert assign(info.chips, "910A", "q", 2, {"x": [0, 1]}) == [2, 3]
    assert assign(info.chips, "910A", "q", 8, {}) == list(range(8))
    with pytest.raises(NotEnoughNpus) as err:
        assign(info.chips, "910A", "q", 4, {"x": [0], "y": [5]})
    assert "one HCCS ring (davinci0-3 or davinci4-7)" in str(err.value)
    assert "/dev/davinci0: held by x; /dev/davinci5: held by y" in str(err.value)


def test_910a_warning_chips_from_sample_are_unavailable():
    info = parsed("910A-24.1.RC2-8cards-warning-health-hlt-processes-doc.txt")
    with pytest.raises(NotEnoughNpus) as err:
        assign(info.chips, "910A", "q", 1, {})
    assert (3, "health Warning") in err.value.unavailable
    assert (0, "busy, pids 37656, 37664, 37640, 37648") in err.value.unavailable


def test_threshold_is_honoured():
    info = parsed("310-20.2.0-atlas800-3000-4chips-npu215-doc.txt")
    with pytest.raises(NotEnoughNpus) as err:
        assign(info.chips, "310", "q", 1, {})
    assert "/dev/davinci0: 33% of memory used, no visible process" in str(err.value)
    assert assign(info.chips, "310", "q", 2, {}, threshold_pct=40) == [0, 1]
