"""The benchmark's arithmetic (bench/benchlib/metrics.py); expected values worked by hand."""
import pytest

from benchlib import metrics


def test_ratio():
    assert metrics.ratio(30.0, 12.0) == pytest.approx(2.5)
    assert metrics.ratio(None, 12.0) is None
    assert metrics.ratio(3.0, None) is None
    assert metrics.ratio(3.0, 0) is None


def test_percentile_linear_interpolation():
    data = [15, 20, 35, 40, 50]
    assert metrics.percentile(data, 0) == 15
    assert metrics.percentile(data, 100) == 50
    assert metrics.percentile(data, 50) == 35
    # rank (5-1)*0.4 = 1.6 -> 20 + 0.6*(35-20) = 29
    assert metrics.percentile(data, 40) == pytest.approx(29.0)
    # unsorted input and None are handled; rank 3*0.9 = 2.7 -> 3 + 0.7*(4-3)
    assert metrics.percentile([4, None, 1, 3, 2], 90) == pytest.approx(3.7)
    assert metrics.percentile([], 50) is None
    with pytest.raises(ValueError):
        metrics.percentile([1], 101)


def test_summary():
    s = metrics.summary([4.0, 1.0, None, 3.0, 2.0])
    assert s == {"n": 4, "min": 1.0, "median": 2.5, "p90": pytest.approx(3.7), "max": 4.0, "mean": 2.5}
    assert metrics.summary([None])["n"] == 0


def timeline(start, pattern, step=0.25):
    """Samples every `step` s from `start`; pattern '+' good, '-' bad."""
    return [(start + i * step, c == "+") for i, c in enumerate(pattern)]


def test_outage_is_last_good_to_first_good():
    # good at 100.00, 100.25; bad 100.50 .. 102.00 (7 samples); good again at 102.25
    samples = timeline(100.0, "++" + "-" * 7 + "++")
    found = metrics.outages(samples)
    assert len(found) == 1
    assert found[0]["start"] == pytest.approx(100.25)
    assert found[0]["end"] == pytest.approx(102.25)
    assert found[0]["seconds"] == pytest.approx(2.0)
    assert not found[0]["open"] and not found[0]["from_start"]
    un = metrics.unavailability(samples)
    assert un == {"seconds": pytest.approx(2.0), "longest": pytest.approx(2.0), "outages": 1, "open": False}


def test_two_outages_and_order_independence():
    samples = timeline(0.0, "+--+++---+")
    samples.reverse()
    found = metrics.outages(samples)
    # 0.0 -> 0.75 and 1.25 -> 2.25
    assert [(o["start"], o["end"]) for o in found] == [(0.0, 0.75), (1.25, 2.25)]
    un = metrics.unavailability(samples)
    assert un["seconds"] == pytest.approx(1.75)
    assert un["longest"] == pytest.approx(1.0)
    assert un["outages"] == 2


def test_open_outage_and_outage_from_start():
    still_down = metrics.outages(timeline(10.0, "++---"))
    assert still_down == [{"start": 10.25, "end": 11.0, "seconds": pytest.approx(0.75), "open": True, "from_start": False}]
    never_up_first = metrics.outages(timeline(10.0, "--++"))
    assert never_up_first == [{"start": 10.0, "end": 10.5, "seconds": pytest.approx(0.5), "open": False, "from_start": True}]
    assert metrics.outages(timeline(0.0, "++++")) == []
    assert metrics.unavailability([]) == {"seconds": 0, "longest": 0.0, "outages": 0, "open": False}


def test_capacity_of_a_rolling_restart():
    # Three endpoints polled at interleaved times; a and b restart one after the other.
    a = [(0.0, True), (1.0, False), (2.0, False), (3.0, True), (4.0, True), (5.0, True)]
    b = [(0.1, True), (1.1, True), (2.1, True), (3.1, True), (4.1, False), (5.1, True)]
    c = [(0.2, True), (1.2, True), (2.2, True), (3.2, True), (4.2, True), (5.2, True)]
    cap = metrics.capacity({"a": a, "b": b, "c": c})
    assert cap == {"endpoints": 3, "min": 2, "min_at": 1.0, "max": 3}
    # b goes down (4.1) after a came back (3.0): never two down at once
    both = metrics.capacity({"a": [(0.0, True), (1.0, False), (2.0, True)],
                             "b": [(0.5, True), (1.5, False), (2.5, True)]})
    assert both["min"] == 0 and both["min_at"] == 1.5


def test_capacity_waits_for_every_endpoint():
    # Until b has answered once, the capacity is unknown, so a's early failure does not count.
    cap = metrics.capacity({"a": [(0.0, False), (1.0, True), (2.0, True)], "b": [(1.5, True), (2.5, True)]})
    assert cap["min"] == 2
    assert metrics.capacity({})["min"] is None


def test_batch_size_like_ansible_serial():
    assert metrics.batch_size(1, 8) == 1
    assert metrics.batch_size("25%", 8) == 2
    assert metrics.batch_size("25%", 4) == 1
    assert metrics.batch_size("25%", 3) == 1      # int(0.75) = 0 -> at least one
    assert metrics.batch_size("30%", 10) == 3
    assert metrics.batch_size("5", 3) == 3
    with pytest.raises(ValueError):
        metrics.batch_size(1, 0)


def test_parse_size_and_counts():
    assert metrics.parse_size("2GiB") == 2 * 1024 ** 3
    assert metrics.parse_size("256MiB") == 256 * 1024 ** 2
    assert metrics.parse_size("1.5G") == 1536 * 1024 ** 2
    assert metrics.parse_size("4096") == 4096
    for bad in ("", "two GiB", "5PB", "-1GiB"):
        with pytest.raises(ValueError, match="expected a number"):
            metrics.parse_size(bad)
    assert metrics.parse_counts("1, 4,8,4") == [1, 4, 8]
    with pytest.raises(ValueError, match="positive integers"):
        metrics.parse_counts("1,0")
    with pytest.raises(ValueError, match="no host counts"):
        metrics.parse_counts(" , ")


def test_parse_rollouts():
    assert metrics.parse_rollouts("1@4, 25%@8") == [("1", 4), ("25%", 8)]
    for bad in ("1", "0@4", "25%@0", "150%@8", "x@2"):
        with pytest.raises(ValueError, match="SERIAL@HOSTS"):
            metrics.parse_rollouts(bad)


def test_added_latency_is_the_difference_of_the_percentiles():
    # p50 of 1..5 ms is 3 ms, of 2..6 ms 4 ms; p99 with linear interpolation: 4.96 and 5.96 ms.
    direct = [0.001, 0.002, 0.003, 0.004, 0.005]
    through = [0.006, 0.002, 0.004, 0.005, 0.003, None]   # None: a request that failed, left out
    out = metrics.added_latency(direct, through)
    assert out["n"] == {"direct": 5, "through": 5}
    assert out["direct"]["p50"] == pytest.approx(0.003) and out["through"]["p50"] == pytest.approx(0.004)
    assert out["added"]["p50"] == pytest.approx(0.001)
    assert out["added"]["p99"] == pytest.approx(0.00596 - 0.00496)
    empty = metrics.added_latency([], through)
    assert empty["added"] == {"p50": None, "p99": None} and empty["through"]["p50"] == pytest.approx(0.004)


def test_overlapping_counts_spans_touching_a_window():
    windows = [(10.0, 15.0), (30.0, 31.0)]
    # inside, straddling the start, touching the end, between two windows, after both
    spans = [(11.0, 11.1), (9.5, 10.0), (15.0, 16.0), (20.0, 20.5), (40.0, 41.0)]
    assert metrics.overlapping(spans, windows) == 3
    assert metrics.overlapping(spans, []) == 0
    assert metrics.overlapping([], windows) == 0
