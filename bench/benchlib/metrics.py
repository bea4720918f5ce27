"""Arithmetic of the benchmark figures: ratios, percentiles, outages and fleet capacity.

Pure functions (standard library only), unit-tested in tests/unit/bench/. Times are seconds on
any one clock (the harness uses time.monotonic()).
"""

import math


def ratio(value, floor):
    """``value / floor``, or None when either is missing or the floor is not positive."""
    if value is None or floor is None:
        return None
    if floor <= 0:
        return None
    return value / floor


def percentile(values, pct):
    """The ``pct`` percentile (0-100) of ``values`` with linear interpolation between the two
    closest ranks (numpy's default, "linear"); None for no values."""
    if not 0 <= pct <= 100:
        raise ValueError("percentile %r is outside 0..100" % (pct,))
    data = sorted(v for v in values if v is not None)
    if not data:
        return None
    pos = (len(data) - 1) * pct / 100.0
    low = math.floor(pos)
    high = math.ceil(pos)
    if low == high:
        return float(data[low])
    return data[low] + (data[high] - data[low]) * (pos - low)


def summary(values):
    """n, min, median, p90, max and mean of ``values`` (None entries ignored)."""
    data = [v for v in values if v is not None]
    if not data:
        return {"n": 0, "min": None, "median": None, "p90": None, "max": None, "mean": None}
    return {
        "n": len(data),
        "min": min(data),
        "median": percentile(data, 50),
        "p90": percentile(data, 90),
        "max": max(data),
        "mean": sum(data) / len(data),
    }


def added_latency(direct, through, pcts=(50, 99)):
    """Latency a proxy adds: per percentile of ``pcts``, the percentile of the request times
    ``through`` it minus the same percentile of the times ``direct`` (seconds; None entries, the
    requests that failed, left out). ``{"direct": {"p50": s, ...}, "through": {...}, "added": {...},
    "n": {"direct": n, "through": n}}``; a percentile is None when either side has no time."""
    out = {"direct": {}, "through": {}, "added": {},
           "n": {"direct": sum(1 for v in direct if v is not None), "through": sum(1 for v in through if v is not None)}}
    for pct in pcts:
        key = "p%d" % pct
        d, t = percentile(direct, pct), percentile(through, pct)
        out["direct"][key], out["through"][key] = d, t
        out["added"][key] = None if d is None or t is None else t - d
    return out


def overlapping(spans, windows):
    """How many of ``spans`` ([(start, end), ...], e.g. the requests that failed) overlap one of
    ``windows`` at least (e.g. the outages of the hosts' own endpoints); ends included."""
    return sum(1 for a, b in spans if any(a <= end and start <= b for start, end in windows))


def outages(samples):
    """Outages of one endpoint from its poll samples ``[(t, ok), ...]`` (any order).

    An outage runs from the last good answer before one or more bad answers to the first good
    answer after them (the figure the issue asks for: last good -> first good). Each outage is
    ``{"start", "end", "seconds", "open", "from_start"}``:
    - ``open``: no good answer came back before the samples end (end = last sample's time);
    - ``from_start``: the endpoint was not good at the first sample (start = first sample's time).
    """
    data = sorted(samples, key=lambda s: s[0])
    found = []
    last_good = None
    down_since = None      # start of the current outage
    from_start = False
    for index, (t, ok) in enumerate(data):
        if ok:
            if down_since is not None:
                found.append({"start": down_since, "end": t, "seconds": t - down_since,
                              "open": False, "from_start": from_start})
                down_since = None
                from_start = False
            last_good = t
        elif down_since is None:
            if last_good is None:
                down_since = t
                from_start = index == 0
            else:
                down_since = last_good
    if down_since is not None:
        end = data[-1][0]
        found.append({"start": down_since, "end": end, "seconds": end - down_since,
                      "open": True, "from_start": from_start})
    return found


def unavailability(samples):
    """Total seconds one endpoint was unavailable (sum of its outages), the longest outage, the
    number of outages and whether one is still open at the end."""
    found = outages(samples)
    return {
        "seconds": sum(o["seconds"] for o in found),
        "longest": max((o["seconds"] for o in found), default=0.0),
        "outages": len(found),
        "open": any(o["open"] for o in found),
    }


def capacity(timelines):
    """Fleet capacity from per-endpoint samples ``{name: [(t, ok), ...]}``.

    The capacity at a time is the number of endpoints whose latest answer was good. It is
    counted once every endpoint has answered at least once (before that it is unknown).
    Returns ``{"endpoints", "min", "min_at", "max"}``; min/max None without samples.
    """
    events = sorted((t, name, ok) for name, samples in timelines.items() for t, ok in samples)
    state = {}
    lowest = highest = lowest_at = None
    for t, name, ok in events:
        state[name] = ok
        if len(state) < len(timelines):
            continue
        up = sum(1 for v in state.values() if v)
        if lowest is None or up < lowest:
            lowest, lowest_at = up, t
        if highest is None or up > highest:
            highest = up
    return {"endpoints": len(timelines), "min": lowest, "min_at": lowest_at, "max": highest}


def batch_size(serial, hosts):
    """Hosts per batch for an Ansible ``serial`` value (int, "N" or "P%") over ``hosts`` hosts,
    as Ansible computes it (a percentage rounds down, but a batch has at least one host)."""
    if hosts < 1:
        raise ValueError("a rollout needs at least one host, got %r" % (hosts,))
    text = str(serial).strip()
    if text.endswith("%"):
        size = int(hosts * float(text[:-1]) / 100.0)
    else:
        size = int(text)
    if size < 1:
        size = 1
    return min(size, hosts)


def parse_size(text):
    """Bytes from "2GiB", "512MiB", "1.5G" (binary units) or a plain integer."""
    units = {"": 1, "k": 1 << 10, "ki": 1 << 10, "m": 1 << 20, "mi": 1 << 20,
             "g": 1 << 30, "gi": 1 << 30, "t": 1 << 40, "ti": 1 << 40}
    raw = str(text).strip()
    body = raw.lower()
    if body.endswith("b"):
        body = body[:-1]
    number = body.rstrip("kmgti")
    unit = body[len(number):]
    try:
        value = float(number)
    except ValueError:
        value = None
    if value is None or unit not in units or value < 0:
        raise ValueError("size %r: expected a number with an optional unit KiB, MiB, GiB or TiB "
                         "(e.g. 2GiB)" % (raw,))
    return int(value * units[unit])


def parse_counts(text):
    """Host counts from "1,4,8" (positive integers, order kept, duplicates dropped)."""
    counts = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        if not part.isdigit() or int(part) < 1:
            raise ValueError("host count %r in %r: expected positive integers separated by "
                             "commas (e.g. 1,4,8)" % (part, text))
        if int(part) not in counts:
            counts.append(int(part))
    if not counts:
        raise ValueError("no host counts in %r: expected e.g. 1,4,8" % (text,))
    return counts


def parse_rollouts(text):
    """Rollouts from "1@4,25%@8": (serial, hosts) pairs, serial an integer or a percentage."""
    found = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        serial, sep, hosts = part.partition("@")
        serial = serial.strip()
        ok_serial = serial.isdigit() and int(serial) > 0 or (
            serial.endswith("%") and serial[:-1].isdigit() and 0 < int(serial[:-1]) <= 100)
        if not sep or not ok_serial or not hosts.strip().isdigit() or int(hosts) < 1:
            raise ValueError("rollout %r in %r: expected SERIAL@HOSTS, SERIAL a positive integer or "
                             "a percentage 1-100%%, HOSTS a positive integer (e.g. 1@4,25%%@8)" % (part, text))
        found.append((serial, int(hosts)))
    if not found:
        raise ValueError("no rollouts in %r: expected e.g. 1@4,25%%@8" % (text,))
    return found
