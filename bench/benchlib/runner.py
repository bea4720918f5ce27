"""Run a command and measure it from the outside: wall time, CPU seconds of the whole process
tree (os.wait4 rusage: the command plus every descendant it waited for, e.g. ansible's forked
workers and the `docker exec` clients of the docker connection), and the peak of the tree's
summed memory, sampled from /proc every ``interval`` seconds (RSS, which counts pages shared
by forked workers once per process, and PSS, which splits them fairly). Linux only.
"""

import os
import subprocess
import time

PAGE = os.sysconf("SC_PAGE_SIZE")


def _children_map():
    kids = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry, "rb") as handle:
                raw = handle.read()
        except OSError:
            continue
        # pid (comm) state ppid ...; comm may hold spaces and parentheses.
        rest = raw[raw.rfind(b")") + 2:].split()
        if len(rest) > 1:
            kids.setdefault(int(rest[1]), []).append(int(entry))
    return kids


def tree(pid):
    """``pid`` and all its descendants alive now."""
    kids = _children_map()
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(kids.get(p, []))
    return found


def _rss(pid):
    try:
        with open("/proc/%d/statm" % pid) as handle:
            return int(handle.read().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


def _pss(pid):
    try:
        with open("/proc/%d/smaps_rollup" % pid) as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    return 0


def run(argv, log_path, env=None, cwd=None, interval=0.2):
    """Run ``argv`` with stdout+stderr to ``log_path``; return the measurements and exit code."""
    start = time.monotonic()
    peak_rss = peak_pss = 0
    peak_procs = 0
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=cwd)  # pylint: disable=consider-using-with
        status = usage = None
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid == proc.pid:
                break
            pids = tree(proc.pid)
            peak_procs = max(peak_procs, len(pids))
            peak_rss = max(peak_rss, sum(_rss(p) for p in pids))
            peak_pss = max(peak_pss, sum(_pss(p) for p in pids))
            time.sleep(interval)
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - start
    return {
        "rc": proc.returncode,
        "wall_s": wall,
        "cpu_user_s": usage.ru_utime,
        "cpu_sys_s": usage.ru_stime,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_bytes": peak_rss,
        "peak_pss_bytes": peak_pss,
        "peak_processes": peak_procs,
    }
