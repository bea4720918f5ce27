#!/usr/bin/env python3
"""Fault injection for the vllm_compose rollout (test infrastructure, never shipped; stdlib only,
imports nothing of the collection).

On one simulated host (a molecule instance, its deployment qwen deployed and healthy), each case
starts a roll-forward with ``ansible-playbook`` and stops it at one state boundary - SIGINT to the
playbook's process group, as Ctrl-C does, when the task named by the banner starts (optionally a
few seconds into it), or the host lost (its container stopped, then started again) - then re-runs
the same roll-forward to its end and checks what an operator relies on:

- the re-run ends healthy on the new version (recorded as last-known-good), or, for a
  never-healthy tag, rolled back, gated and healthy on last-known-good, and fails the host;
- a re-run that reports ``unchanged`` only does so for a live compose file equal to
  last-known-good whose container answers /health;
- a host broken under last-known-good (nothing to render) is gated, its restore gated too, and
  the run fails without calling it unchanged or healthy again;
- the NPU ledger's cards for qwen are the cards its container runs on, and
  last-good/state.json names the image that runs (when the re-run passed).

Every run is bounded in time (``--run-timeout``); the whole is bounded by the number of cases.
Exit status 0 when every case holds; each case prints one line, a failure its evidence.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

PROJECT = "qwen"
CONTAINER = "qwen-vllm-ascend-1"
GOOD, OTHER, BROKEN = "v0.17.0rc1", "v0.18.0rc1", "v0.18.0rc1-broken"

LOCK = "/opt/ascendfleet/.locks/qwen.lock"
TOOK_OVER = "took over the rollout lock of a run that has ended"
GATE = "Wait until the deployment's own container answers on port 8000"
# (name, (banner of the task at which the run is stopped, its occurrence, seconds into it), fault,
# tag to roll to). The restore's gate is the run's second gate task.
CASES = [
    ("after cards", ("Ensure the project directory exists for qwen", 1, 0), "sigint", OTHER),
    ("after render", ("Ensure the compose project is up for qwen", 1, 0), "sigint", GOOD),
    ("after up", (GATE, 1, 0), "sigint", OTHER),
    ("mid-gate", (GATE, 1, 3), "sigint", GOOD),
    ("after record", ("Report qwen", 1, 0), "sigint", OTHER),
    ("mid-restore", (GATE, 2, 2), "sigint", BROKEN),
    ("host lost mid-gate", (GATE, 1, 3), "host", GOOD),
    # The never-healthy tag stopped in its gate: its re-run finds nothing to render or start anew.
    ("mid-gate never-healthy", (GATE, 1, 3), "sigint", BROKEN),
]


def sh(argv, timeout=60):
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


def on_host(host, *argv):
    return sh(["docker", "exec", host] + list(argv))


def host_state(host):
    """What runs on the host: the container's image, cards and health, the ledger's cards, the
    live and last-known-good compose files and the last-known-good state."""
    out = {}
    inspect = on_host(host, "docker", "inspect", "--format",
                      "{{.Config.Image}}|{{.State.Status}}|{{json .HostConfig.Devices}}", CONTAINER)
    if inspect.returncode == 0:
        image, status, devices = inspect.stdout.strip().split("|", 2)
        out["image"], out["status"] = image, status
        out["cards"] = sorted(int(d["PathOnHost"][len("/dev/davinci"):]) for d in json.loads(devices)
                              if d["PathOnHost"][len("/dev/davinci"):].isdigit())
    ledger = on_host(host, "cat", "/var/lib/ascendfleet/npu-assignments.json")
    out["ledger"] = json.loads(ledger.stdout).get("assignments", {}).get(PROJECT) if ledger.returncode == 0 else None
    out["live"] = on_host(host, "cat", "/opt/ascendfleet/qwen/compose.yaml").stdout
    out["last_good"] = on_host(host, "cat", "/opt/ascendfleet/qwen/last-good/compose.yaml").stdout
    state = on_host(host, "cat", "/opt/ascendfleet/qwen/last-good/state.json")
    out["lkg_image"] = json.loads(state.stdout).get("image") if state.returncode == 0 else None
    health = on_host(host, "python3", "-c",
                     "import urllib.request as u\ntry:\n print(u.urlopen('http://127.0.0.1:8000/health', timeout=5).status)\n"
                     "except Exception as e:\n print(getattr(e, 'code', 0))")
    out["healthy"] = health.stdout.strip() == "200"
    lock = on_host(host, "cat", LOCK)
    out["lock"] = lock.stdout.strip() if lock.returncode == 0 else None
    return out


def command(args, tag, *extra):
    """The ansible-playbook command line of a roll-forward to ``tag``."""
    beside = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    return ([beside if os.path.exists(beside) else "ansible-playbook", "-i", args.inventory, args.playbook,
             "-e", "vllm_compose_image_version=" + tag] + list(extra))


def playbook(args, tag, stop=None, kind=None):
    """Run the roll-forward to ``tag``; with ``stop`` ((banner, occurrence, delay)) and ``kind``
    (sigint, host) stop it there. Returns (rc, output, stopped)."""
    proc = subprocess.Popen(command(args, tag), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    lines, stopped, seen = [], threading.Event(), [0]

    def fault(delay, kind):
        time.sleep(delay)
        if kind == "sigint":
            os.killpg(proc.pid, signal.SIGINT)
        else:
            # The host is lost: its container stops under the run (and comes back for the re-run).
            sh(["docker", "stop", "-t", "2", args.host], timeout=60)
        stopped.set()

    timer = threading.Timer(args.run_timeout, lambda: os.killpg(proc.pid, signal.SIGKILL))
    timer.start()
    try:
        for line in proc.stdout:
            lines.append(line)
            # A role's task banner: "TASK [ascendfleet.llm.vllm_compose : <name>] ***".
            if stop and line.startswith("TASK [") and (stop[0] + "]") in line:
                seen[0] += 1
                if seen[0] == stop[1]:
                    threading.Thread(target=fault, args=(stop[2], kind), daemon=True).start()
        proc.wait()
    finally:
        timer.cancel()
    if stop and kind == "host":
        stopped.wait(60)
        sh(["docker", "start", args.host], timeout=60)
        wait_for_host(args.host)
    return proc.returncode, "".join(lines), stopped.is_set()


def wait_for_host(host, seconds=120):
    end = time.time() + seconds
    while time.time() < end:
        if on_host(host, "docker", "info").returncode == 0:
            return
        time.sleep(2)
    raise SystemExit("%s: its Docker Engine did not come back within %d s" % (host, seconds))


def recap_status(output):
    """qwen's status as the run reports it (faults/rollout.yml prints "qwen status: <status>"), or ""."""
    found = ""
    for line in output.splitlines():
        if "qwen status: " in line:
            found = line.split("qwen status: ", 1)[1].strip().strip("'\"")
    return found


def judge(tag, rc, output, st, prefix):
    """The problems of one re-run's outcome, [] when it holds."""
    problems = []
    if st.get("ledger") != st.get("cards"):
        problems.append("ledger cards %s, container runs on %s" % (st.get("ledger"), st.get("cards")))
    if not st.get("healthy"):
        problems.append("the endpoint does not answer /health 200")
    if st.get("live") != st.get("last_good"):
        problems.append("the live compose file is not last-known-good after the re-run")
    if st.get("lock"):
        problems.append("the rollout lock is still held after the re-run: %s" % st.get("lock"))
    if tag == BROKEN:
        if rc == 0 or "Rolled back to last-known-good" not in output:
            problems.append("the never-healthy tag was not failed and rolled back (rc %d)" % rc)
        if BROKEN in (st.get("image") or ""):
            problems.append("the never-healthy tag still runs")
    else:
        if rc != 0:
            problems.append("the re-run failed (rc %d)" % rc)
        if prefix + tag not in (st.get("image") or "") or prefix + tag not in (st.get("lkg_image") or ""):
            problems.append("runs %s, last-known-good %s, not %s" % (st.get("image"), st.get("lkg_image"), tag))
    return problems


def two_runs(args, tag):
    """Two runs change qwen at once: run A rolls to ``tag`` and is frozen (SIGSTOP to its process
    group) right after it took the rollout lock; run B, to the same tag with a short lock wait,
    must fail naming A (control node, pid) and change nothing on the host; A, resumed, must end
    deployed and healthy, and give the lock up. Returns the number of failures (0 or 1)."""
    start = time.time()
    proc = subprocess.Popen(command(args, tag), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    timer = threading.Timer(args.run_timeout, lambda: os.killpg(proc.pid, signal.SIGKILL))
    timer.start()
    lines, problems, frozen, b = [], [], False, None
    try:
        for line in proc.stdout:
            lines.append(line)
            if not frozen and line.startswith("TASK [") and "Assign NPU cards to qwen]" in line:
                frozen = True
                os.killpg(proc.pid, signal.SIGSTOP)
                try:
                    before = host_state(args.host)
                    b = subprocess.run(command(args, tag, "-e", "vllm_compose_lock_timeout=4"), capture_output=True,
                                       text=True, timeout=args.run_timeout)
                    after = host_state(args.host)
                finally:
                    os.killpg(proc.pid, signal.SIGCONT)
                held = "is being changed by another run: control node %s, pid %d" % (socket.gethostname(), proc.pid)
                said = b.stdout + b.stderr  # the failure goes to stderr
                if b.returncode == 0 or held not in said or "nothing of the deployment was changed" not in said:
                    problems.append("run B was not refused naming run A (%r) (rc %d)" % (held, b.returncode))
                for key in ("image", "cards", "ledger", "live", "last_good"):
                    if before.get(key) != after.get(key):
                        problems.append("run B changed %s on the host while A held the lock" % key)
        proc.wait()
    finally:
        timer.cancel()
    out = "".join(lines)
    st = host_state(args.host)
    if not frozen:
        problems.append("run A never reached [Assign NPU cards to qwen] (rc %d)" % proc.returncode)
    else:
        problems += judge(tag, proc.returncode, out, st, "quay.io/ascend/vllm-ascend:")
        if recap_status(out) != "deployed":
            problems.append("run A ended %r, not deployed" % recap_status(out))
    if problems:
        print("FAIL two runs at once (to %s): %s\nstate: %s\n--- run A (end) ---\n%s\n--- run B (end) ---\n%s"
              % (tag, "; ".join(problems), json.dumps({k: v for k, v in st.items() if k not in ("live", "last_good")}),
                 out[-4000:], ((b.stdout + b.stderr)[-4000:] if b else "")))
        return 1
    print("ok   two runs at once (A frozen holding the lock, B refused naming A and changing nothing; A resumed: "
          "deployed, %s on %s) in %ds" % (st.get("image"), st.get("cards"), time.time() - start))
    sys.stdout.flush()
    return 0


SOC = "/usr/local/Ascend/driver/lib64/ascendfleet_sim_soc"


def broken_under_last_good(args, tag):
    """The host breaks under last-known-good (its driver surface empty, the container restarted: it
    cannot start again) and a run to the tag that runs (``tag``) finds nothing to render: its gate
    must still run and fail, the restore (which changes nothing) must be gated and fail too, and the
    run must fail without calling the deployment unchanged or healthy again. Then the host mended,
    a re-run ends healthy on ``tag``. Returns the number of failures (0 or 1)."""
    start = time.time()
    problems = []
    soc = on_host(args.host, "cat", SOC).stdout
    on_host(args.host, "sh", "-c", ": > " + SOC)
    try:
        on_host(args.host, "docker", "restart", "-t", "2", CONTAINER)
        rc, out, dummy = playbook(args, tag)
        if rc == 0:
            problems.append("the run on a broken host ended rc 0 (status %r)" % recap_status(out))
        if "Rolled back to last-known-good" in out or recap_status(out) == "unchanged":
            problems.append("the run on a broken host called it unchanged or rolled back healthy")
        if "rollback to last-known-good failed too" not in out:
            problems.append("the restore was not gated (no 'rollback to last-known-good failed too')")
    finally:
        # Mended as an operator does: the driver surface back, the crash-looping container removed.
        on_host(args.host, "sh", "-c", "printf %s '" + soc.strip() + "' > " + SOC)
        on_host(args.host, "docker", "rm", "-f", CONTAINER)
    rc2, out2, dummy = playbook(args, tag)
    st = host_state(args.host)
    problems += judge(tag, rc2, out2, st, "quay.io/ascend/vllm-ascend:")
    if problems:
        print("FAIL broken under last-known-good (to %s): %s\nstate: %s\n--- broken run (end) ---\n%s\n--- mended re-run (end) ---\n%s"
              % (tag, "; ".join(problems), json.dumps({k: v for k, v in st.items() if k not in ("live", "last_good")}),
                 out[-4000:], out2[-3000:]))
        return 1
    print("ok   broken under last-known-good (gate and restore gated and failed, rc %d; mended: %s, %s on %s) in %ds"
          % (rc, recap_status(out2), st.get("image"), st.get("cards"), time.time() - start))
    sys.stdout.flush()
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inventory", required=True)
    parser.add_argument("--playbook", required=True)
    parser.add_argument("--host", required=True, help="the molecule instance (container) name")
    parser.add_argument("--run-timeout", type=int, default=400)
    parser.add_argument("--only", action="append", help="run only the case(s) of this name")
    args = parser.parse_args(argv)
    failures = 0
    tag = last = None
    for name, stop, kind, tag in CASES:
        if args.only and name not in args.only:
            continue
        banner, dummy, delay = stop
        start = time.time()
        last = last if tag == BROKEN else tag
        rc1, out1, stopped = playbook(args, tag, stop, kind)
        if not stopped:
            print("FAIL %s: the run never reached [%s] (rc %d)\n%s" % (name, banner, rc1, out1[-4000:]))
            failures += 1
            continue
        # What the stopped run left in the lock: a run gone with the lock held, taken over by the re-run.
        left = on_host(args.host, "cat", LOCK).stdout.strip()
        rc, out, dummy = playbook(args, tag)
        st = host_state(args.host)
        problems = judge(tag, rc, out, st, "quay.io/ascend/vllm-ascend:")
        if left and TOOK_OVER not in out:
            problems.append("the re-run did not take over the lock the stopped run left (%s)" % left)
        summary = recap_status(out)
        if summary == "unchanged" and (st.get("live") != st.get("last_good") or not st.get("healthy")):
            problems.append("reported unchanged on a config that is not a healthy last-known-good")
        if problems:
            failures += 1
            print("FAIL %s (%s at [%s] +%ds, then re-run to %s): %s\nstate: %s\n--- re-run output (end) ---\n%s"
                  % (name, kind, banner, delay, tag, "; ".join(problems),
                     json.dumps({k: v for k, v in st.items() if k not in ("live", "last_good")}), out[-6000:]))
        else:
            print("ok   %s (%s at [%s] +%ds, then re-run to %s: %s, %s on %s) in %ds"
                  % (name, kind, banner, delay, tag, summary or "rc %d" % rc, st.get("image"), st.get("cards"),
                     time.time() - start))
        sys.stdout.flush()
    if not args.only or "two runs at once" in args.only:
        # To the tag that does not run now (the converge deployed GOOD).
        last = GOOD if last == OTHER else OTHER
        failures += two_runs(args, last)
    if not args.only or "broken under last-known-good" in args.only:
        failures += broken_under_last_good(args, last or GOOD)
    if last is not None and not args.only:
        # Idempotent at the end: a last run to the last tag that passed its gate changes nothing.
        rc, out, dummy = playbook(args, last)
        if rc != 0 or recap_status(out) != "unchanged" or " changed=0 " not in out:
            failures += 1
            print("FAIL a last run to %s was not a no-op (rc %d, status %r)\n%s" % (last, rc, recap_status(out), out[-4000:]))
        else:
            print("ok   a last run to %s changes nothing" % last)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
