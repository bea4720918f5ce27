#!/usr/bin/env python3
"""`make bench`: the collection on its own simulated fleet, against floors measured in the same
run. Test infrastructure (never shipped); run through bench/run.sh. Exit 0 whatever the
figures are; non-zero only when the harness itself breaks.

Sections (each says "not measured: ..." and the rest still runs when something is missing):
  noop      no-op re-run of playbooks/deploy-qwen.yml on N hosts with D deployments per host vs
            bench/playbooks/floor.yml on the same deployments (one npu-smi read per host, one
            docker_compose_v2 per deployment), module executions per host
            (bench/callback_plugins/bench_count.py), what the run changed on the hosts and on
            the control node (recap, and files written under the repository and the run's
            working directory)
  prefetch  fan-out of a multi-GiB model: hub bytes, wall vs hub GET + parallel rsync;
            cached no-op vs parallel sha256sum and vs the floor playbook
  rollout   image-tag rollout with each serial: per-host unavailability seen by a polling
            client vs the stand-in's own start-up, fleet capacity vs N - batch
  gateway   the fleet's one endpoint (role fleet_gateway, HAProxy) on a sim host of its own:
            latency it adds per chat request (p50, p99) vs calling a host directly, then
            bounded chat load through it (some streaming, a few workers) during a serial-1
            rollout of N hosts with drain (vllm_compose_gateway_drain) and the same rollout
            without: failed and truncated requests of each
  knobs     (opt-in) forks, strategy free and a fact cache against the stock ansible.cfg: the
            floor and the no-op re-run on the whole fleet per setting (docs/real-fleet.md)
Every playbook run also records the control node's CPU seconds and peak memory.
See docs/benchmarks.md for what each figure means.
"""

import datetime
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(TOP, "tests", "sim"))

from benchlib import chat, inventory, load, metrics, runner  # noqa: E402  pylint: disable=wrong-import-position
from benchlib.poller import Poller  # noqa: E402  pylint: disable=wrong-import-position
import fleet_endpoints  # noqa: E402  pylint: disable=wrong-import-position,import-error

RECAP = re.compile(r"^(\S+)\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)"
                   r"\s+skipped=(\d+)\s+rescued=(\d+)\s+ignored=(\d+)", re.M)
MODEL_DIR = "/var/lib/ascendfleet/modelscope/models"   # ascendfleet_cache_dir of the sim vars
FLOOR_DIR = "/var/tmp/ascendfleet-bench-floor"
FLOOR_COPY = "/var/tmp/ascendfleet-bench-floor-copy"
RSYNCD_DIR = "/var/tmp/ascendfleet-bench-rsyncd"
SIM_COMPOSE_VARS = os.path.join(TOP, "inventories", "sim", "group_vars", "ascend_servers", "compose.yml")
# The second deployment of the two-deployment sections: Qwen3-8B on one card beside the sim's
# Qwen3.5-27B (two cards), as in molecule/fleet_monitoring_prometheus; the bench hub serves it.
SECOND_DEPLOYMENT = {"name": "chat", "preset": "qwen3-8b", "model": "Qwen/Qwen3-8B", "revision": "master", "port": 8001}
SECOND_MODEL = {"weights_bytes": 4 << 20, "shards": 2}
MAX_DEPLOYMENTS = 2
# The stand-in image tags a rollout moves to, (ascendfleet_image_version, ascendfleet_image_os):
# the fleet starts on v0.17.0rc1-openeuler, vllm_compose's default; each rollout section's run
# targets one no host of it runs yet, so every host of the run changes.
ROLLOUT_TARGETS = [("v0.18.0rc1", "openeuler"), ("v0.18.0rc1", "ubuntu"), ("v0.17.0rc1", "ubuntu"), ("v0.17.0rc1", "openeuler")]
# The gateway section's HAProxy health checks: every 2 s (timeout 2 s), out after 2 failed, back
# after 2 passed, as in molecule/fleet_gateway_routing but with the role's fall/rise (the role's
# 10 s interval is for engines that take minutes to start; the stand-in starts in about 5 s).
GATEWAY_VARS = {"fleet_gateway_check_interval": "2s", "fleet_gateway_check_timeout": "2s",
                "fleet_gateway_check_fall": 2, "fleet_gateway_check_rise": 2}
# Directories of the control node the roles may write to (reports go to $PWD/reports, the
# run's working directory), minus the harness's own output; a no-op writes none of them.
SNAPSHOT_SKIP_NAMES = {".git", ".venv", "__pycache__", ".pytest_cache"}


def log(msg):
    print("bench: %s" % msg, flush=True)


def env_str(name, default):
    return os.environ.get(name, "").strip() or default


class Config:
    def __init__(self):
        quick = os.environ.get("BENCH_QUICK", "0") == "1"
        self.quick = quick
        self.noop_hosts = metrics.parse_counts(env_str("BENCH_NOOP_HOSTS", "1,2" if quick else "1,4,8,16"))
        # Deployments per host of each no-op section (the first of DEPLOYMENTS, then both).
        self.noop_deployments = metrics.parse_counts(env_str("BENCH_NOOP_DEPLOYMENTS", "1,2"))
        self.prefetch_hosts = int(env_str("BENCH_PREFETCH_HOSTS", "2" if quick else "4"))
        self.prefetch_bytes = metrics.parse_size(env_str("BENCH_PREFETCH_SIZE", "256MiB" if quick else "2GiB"))
        self.prefetch_shards = int(env_str("BENCH_PREFETCH_SHARDS", "2" if quick else "4"))
        # serial@hosts: serial 1 over 2 hosts, then 50% over 4 (batches of 2: capacity N - 2 is still measured)
        self.rollouts = metrics.parse_rollouts(env_str("BENCH_ROLLOUTS", "1@2" if quick else "1@2,50%@4"))
        self.repeat = int(env_str("BENCH_REPEAT", "1"))
        # The floor is the denominator of every no-op ratio: it runs right before each no-op it is
        # compared with (floor, no-op, floor, no-op, ...), at least BENCH_FLOOR_REPEAT times per
        # N; the median is kept.
        self.floor_repeat = int(env_str("BENCH_FLOOR_REPEAT", "1"))
        # The gateway section: a serial-1 rollout of this many hosts behind the gateway, with drain and
        # without; per rollout at most BENCH_GATEWAY_REQUESTS chat requests from BENCH_GATEWAY_WORKERS
        # workers, each at most one per BENCH_GATEWAY_PACE seconds (every third one streaming); before
        # them BENCH_GATEWAY_LATENCY_ROUNDS requests one at a time through the gateway and as many
        # straight to the hosts.
        self.gateway_hosts = int(env_str("BENCH_GATEWAY_HOSTS", "2" if quick else "4"))
        self.gateway_requests = int(env_str("BENCH_GATEWAY_REQUESTS", "6000"))
        self.gateway_workers = int(env_str("BENCH_GATEWAY_WORKERS", "4"))
        self.gateway_pace = float(env_str("BENCH_GATEWAY_PACE", "0.25"))
        self.gateway_latency_rounds = int(env_str("BENCH_GATEWAY_LATENCY_ROUNDS", "200"))
        self.sections = [s.strip() for s in env_str("BENCH_SECTIONS", "noop,prefetch,rollout,gateway").split(",")]
        self.prefix = env_str("BENCH_PREFIX", "ascendfleet-bench")
        self.network = env_str("BENCH_NETWORK", "ascendfleet-bench")
        self.hub = self.prefix + "-hub"
        # The gateway section's gateway host (a sim host like the others, on the bench network).
        self.gateway = self.prefix + "-gw"
        self.hub_port = int(env_str("BENCH_HUB_PORT", "18180"))
        self.model = env_str("BENCH_PREFETCH_MODEL", "AscendfleetBench/Weights")
        self.keep = os.environ.get("BENCH_KEEP", "0") == "1"
        # Opt-in: a directory holding ansible_mitogen (e.g. an unpacked mitogen wheel); the
        # harness never downloads it.
        self.mitogen = env_str("BENCH_MITOGEN", "")
        self.work = env_str("BENCH_WORK", os.path.join(TOP, ".cache", "bench"))
        self.write_docs = os.environ.get("BENCH_WRITE_DOCS", "0" if quick else "1") == "1"
        for name, value in (("BENCH_PREFETCH_HOSTS", self.prefetch_hosts), ("BENCH_REPEAT", self.repeat), ("BENCH_FLOOR_REPEAT", self.floor_repeat),
                            ("BENCH_PREFETCH_SHARDS", self.prefetch_shards), ("BENCH_GATEWAY_HOSTS", self.gateway_hosts),
                            ("BENCH_GATEWAY_REQUESTS", self.gateway_requests), ("BENCH_GATEWAY_WORKERS", self.gateway_workers),
                            ("BENCH_GATEWAY_LATENCY_ROUNDS", self.gateway_latency_rounds)):
            if value < 1:
                raise SystemExit("bench: %s must be a positive integer, got %r" % (name, value))
        if max(self.noop_deployments) > MAX_DEPLOYMENTS:
            raise SystemExit("bench: BENCH_NOOP_DEPLOYMENTS: 1 or 2 deployments per host, got %s" % self.noop_deployments)
        if self.mitogen and "mitogen" not in self.sections:
            self.sections.append("mitogen")
        if not 0 < self.gateway_pace <= 60:
            raise SystemExit("bench: BENCH_GATEWAY_PACE: seconds between two requests of one worker, above 0 and at most 60, got %r"
                             % self.gateway_pace)
        unknown = set(self.sections) - {"noop", "prefetch", "rollout", "gateway", "mitogen", "knobs"}
        if unknown:
            raise SystemExit("bench: BENCH_SECTIONS: unknown %s; use noop, prefetch, rollout, gateway, knobs" % ", ".join(sorted(unknown)))
        # The fleet is as large as the largest run of the sections asked for (the gateway host aside).
        sizes = {"noop": self.noop_hosts, "prefetch": [self.prefetch_hosts], "rollout": [n for _, n in self.rollouts],
                 "gateway": [self.gateway_hosts], "mitogen": self.noop_hosts,
                 "knobs": self.noop_hosts}
        self.fleet_size = max(n for section in self.sections for n in sizes[section])

    def as_dict(self):
        return {k: v for k, v in vars(self).items() if k not in ("work",)}


def sh(argv, check=True, timeout=None, input_text=None):
    """Run a short command, return its stdout (text)."""
    res = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, input=input_text, check=False)
    if check and res.returncode != 0:
        raise RuntimeError("command failed (%d): %s\n%s%s" % (res.returncode, " ".join(argv), res.stdout[-2000:], res.stderr[-2000:]))
    return res.stdout


def dexec(host, script, check=True, timeout=None, input_text=None):
    argv = ["docker", "exec"] + (["-i"] if input_text is not None else []) + [host, "sh", "-c", script]
    return sh(argv, check=check, timeout=timeout, input_text=input_text)


def http_json(url, data=None, timeout=10):
    req = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.load(resp)


class Bench:
    def __init__(self, cfg):
        self.cfg = cfg
        self.results = {"figures": {}, "not_measured": [], "runs": [], "errors": []}
        self.runs = self.results["runs"]
        self.fleet = inventory.fleet(cfg.fleet_size, cfg.prefix)
        self.inv = {}
        self.fleet_inv = None     # what fleet.sh brings up and down: the largest inventory, and the gateway
        self.gateway_inv = None   # the gateway section's: its hosts and the gateway
        self.playbook_bin = shutil.which("ansible-playbook")
        self.missing = self._missing_parts()
        self.deployed = None   # None: not tried yet; else the deployments per host, False after a failure
        self.deploy_failed = set()
        # (hosts, deployments file, was a no-op) of the last product playbook run: the reports on
        # the control node describe the hosts and what that run did (a deploy reports "deployed",
        # a no-op "unchanged"), so only a no-op right after a no-op of the same inventory and
        # deployments can be held to leaving them as they are.
        self.reports_key = None
        for sub in ("logs", "counts"):
            # Logs of an earlier run would be mistaken for this one's.
            shutil.rmtree(os.path.join(cfg.work, sub), ignore_errors=True)
            os.makedirs(os.path.join(cfg.work, sub))

    # ---------------------------------------------------------------- set-up / tear-down
    def _missing_parts(self):
        missing = {}
        for role in ("npu_verify", "model_prefetch", "vllm_compose", "fleet_gateway"):
            if not os.path.isfile(os.path.join(TOP, "roles", role, "tasks", "main.yml")):
                missing[role] = "role %s missing (roles/%s/tasks/main.yml)" % (role, role)
        for book in ("deploy-qwen.yml", "prefetch.yml", "gateway.yml"):
            if not os.path.isfile(os.path.join(TOP, "playbooks", book)):
                missing[book] = "playbook playbooks/%s missing" % book
        return missing

    def why_not(self, *parts):
        reasons = [self.missing[p] for p in parts if p in self.missing]
        return "; ".join(reasons) if reasons else None

    def not_measured(self, what, why):
        log("NOT MEASURED: %s: %s" % (what, why))
        self.results["not_measured"].append({"what": what, "why": why})

    def write_inventories(self):
        counts = sorted(n for n in set(self.cfg.noop_hosts + [self.cfg.prefetch_hosts, self.cfg.fleet_size] + [n for _, n in self.cfg.rollouts])
                        if n <= self.cfg.fleet_size)
        for n in counts:
            self.inv[n] = self.write_inventory("inv-%d" % n, self.fleet[:n])
        self.fleet_inv = self.inv[self.cfg.fleet_size]
        if "gateway" in self.cfg.sections:
            # Only the gateway section's inventory names the gateway, so no other section's run sets
            # it up or drains on it; fleet.sh starts (and removes) it with the others.
            gateway = [(self.cfg.gateway, inventory.IDLE_PROFILE)]
            self.gateway_inv = self.write_inventory("inv-gateway-%d" % self.cfg.gateway_hosts, self.fleet[:self.cfg.gateway_hosts], gateway)
            self.fleet_inv = self.write_inventory("inv-fleet", self.fleet, gateway)

    def write_inventory(self, name, hosts, gateways=()):
        """An inventory of ``hosts`` (and ``gateways``) with a copy of the sim group_vars; its path."""
        src = os.path.join(TOP, "inventories", "sim", "group_vars")
        d = os.path.join(self.cfg.work, name)
        if os.path.isdir(d):
            shutil.rmtree(d)
        os.makedirs(d)
        with open(os.path.join(d, "hosts.yml"), "w", encoding="utf-8") as handle:
            handle.write(inventory.render(hosts, gateways=gateways))
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(d, "group_vars"))
        return os.path.join(d, "hosts.yml")

    def fleet_env(self):
        env = dict(os.environ)
        env.update({"ASCENDFLEET_SIM_INVENTORY": self.fleet_inv,
                    "ASCENDFLEET_SIM_NETWORK": self.cfg.network, "ASCENDFLEET_SIM_HUB": "0",
                    # The sim vars deliver images as archives: no registry, and the shared
                    # ascendfleet-sim-registry of the demo fleet and molecule is left alone.
                    "ASCENDFLEET_SIM_WITH_REGISTRY": "0"})
        return env

    def start_hub(self):
        cfg = self.cfg
        conf = {"models": {cfg.model: {"weights_bytes": cfg.prefetch_bytes, "shards": cfg.prefetch_shards},
                           SECOND_DEPLOYMENT["model"]: SECOND_MODEL}}
        conf_dir = os.path.join(cfg.work, "hub")
        os.makedirs(conf_dir, exist_ok=True)
        with open(os.path.join(conf_dir, "hub.json"), "w", encoding="utf-8") as handle:
            json.dump(conf, handle)
        subprocess.run(["docker", "rm", "-f", "-v", cfg.hub], capture_output=True, check=False)
        # The hub answers as ascendfleet-sim-hub on the bench network, so the sim group_vars'
        # endpoint (http://ascendfleet-sim-hub:8080) reaches this hub, not the shared one.
        sh(["docker", "run", "-d", "--name", cfg.hub, "--label", "ascendfleet-bench=hub",
            "--network", cfg.network, "--network-alias", "ascendfleet-sim-hub",
            "-p", "127.0.0.1:%d:8080" % cfg.hub_port,
            "-v", "%s:/opt/ascendfleet-sim:ro" % os.path.join(TOP, "tests", "sim"),
            "-v", "%s:/etc/ascendfleet-bench:ro" % conf_dir, "--tmpfs", "/tmp",
            "--mount", "type=volume,source=%s-state,target=/var/lib/ascendfleet-sim-hub" % cfg.hub,
            "ascendfleet-sim/base:latest", "python3", "/opt/ascendfleet-sim/hub/server.py", "--port", "8080",
            "--config", "/etc/ascendfleet-bench/hub.json", "--state-dir", "/var/lib/ascendfleet-sim-hub"])
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline:
            try:
                http_json(self.hub_url("/_sim/health"), timeout=3)
                return
            except OSError:
                state = sh(["docker", "inspect", "-f", "{{.State.Status}}", cfg.hub], check=False).strip()
                if state != "running":
                    raise RuntimeError("hub %s exited: %s" % (cfg.hub, sh(["docker", "logs", "--tail", "20", cfg.hub], check=False)))
                time.sleep(2)
        raise RuntimeError("hub %s did not answer /_sim/health within 900 s (hashing the repos?)" % cfg.hub)

    def hub_url(self, path):
        return "http://127.0.0.1:%d%s" % (self.cfg.hub_port, path)

    def up(self):
        self.write_inventories()
        log("fleet: %d hosts%s on network %s (%s)" % (self.cfg.fleet_size, " and the gateway %s" % self.cfg.gateway if self.gateway_inv else "",
                                                       self.cfg.network, self.fleet_inv))
        # From a clean fleet: a bench that was killed (Ctrl-C, a lost session) leaves its hosts' Docker
        # volumes, whose Engines would start the old deployments again (crash-looping until the
        # prefetch puts their model back), and the first deploy would then measure and judge those.
        res = self.remove()
        if res is not None and res.returncode != 0:
            raise RuntimeError("fleet.sh down (before up) failed: %s" % (res.stdout + res.stderr)[-3000:])
        t0 = time.monotonic()
        res = subprocess.run([os.path.join(TOP, "tests", "sim", "fleet.sh"), "up"], env=self.fleet_env(),
                             capture_output=True, text=True, check=False)
        with open(os.path.join(self.cfg.work, "logs", "fleet-up.log"), "w", encoding="utf-8") as handle:
            handle.write(res.stdout + res.stderr)
        if res.returncode != 0:
            raise RuntimeError("fleet.sh up failed: %s" % (res.stdout + res.stderr)[-3000:])
        self.results["fleet_up_s"] = time.monotonic() - t0
        log("fleet up in %.0fs; starting the bench hub %s (%s of weights)" % (
            self.results["fleet_up_s"], self.cfg.hub, human(self.cfg.prefetch_bytes)))
        t0 = time.monotonic()
        self.start_hub()
        self.results["hub_start_s"] = time.monotonic() - t0
        # fleet.sh up built the modelscope wheelhouse with the rest (tests/sim/assets.sh).

    def remove(self):
        """Remove the hub, its state and the fleet (fleet.sh down, once the inventory is written):
        fleet.sh's result, or None when there was no fleet to take down."""
        subprocess.run(["docker", "rm", "-f", "-v", self.cfg.hub], capture_output=True, check=False)
        subprocess.run(["docker", "volume", "rm", self.cfg.hub + "-state"], capture_output=True, check=False)
        if self.fleet_inv is None:
            return None
        return subprocess.run([os.path.join(TOP, "tests", "sim", "fleet.sh"), "down"], env=self.fleet_env(),
                              capture_output=True, text=True, check=False)

    def down(self):
        if self.cfg.keep:
            log("BENCH_KEEP=1: fleet, hub and network left up")
            return
        res = self.remove()
        if res is not None and res.returncode != 0:
            log("fleet.sh down failed: %s" % (res.stdout + res.stderr)[-1000:])
        log("fleet, hub and network removed")

    # ---------------------------------------------------------------- one measured run
    def playbook(self, label, book, n, extra=(), expect_noop=False, inv=None, env_extra=None):
        cfg = self.cfg
        slug = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")
        seq = len(self.runs) + 1
        count_file = os.path.join(cfg.work, "counts", "%02d-%s.jsonl" % (seq, slug))
        log_file = os.path.join(cfg.work, "logs", "%02d-%s.log" % (seq, slug))
        for path in (count_file,):
            if os.path.exists(path):
                os.unlink(path)
        env = dict(os.environ)
        env.update({
            "ANSIBLE_CONFIG": os.path.join(TOP, "ansible.cfg"),
            "ANSIBLE_COLLECTIONS_PATH": os.path.join(TOP, ".collections"),
            "ANSIBLE_CALLBACK_PLUGINS": os.path.join(HERE, "callback_plugins"),
            "ANSIBLE_CALLBACKS_ENABLED": "bench_count",
            "BENCH_COUNT_FILE": count_file,
            "ANSIBLE_FORCE_COLOR": "0", "ANSIBLE_NOCOLOR": "1",
        })
        env.update(env_extra or {})
        book_path = book if os.path.isabs(book) else os.path.join(TOP, book)
        argv = [self.playbook_bin, "-i", inv or self.inv[n], book_path] + list(extra)
        log("run %-38s N=%d ..." % (label, n))
        roots = [TOP] + ([cfg.work] if not os.path.abspath(cfg.work).startswith(TOP + os.sep) else [])
        skip = {os.path.join(cfg.work, "logs"), os.path.join(cfg.work, "counts")}
        files0 = snapshot(roots, skip) if expect_noop else None
        meas = runner.run(argv, log_file, env=env, cwd=cfg.work)
        files_changed = snapshot_changes(files0, snapshot(roots, skip), TOP) if expect_noop else None
        key = (n, next((x for x in extra if x.startswith("@")), None))
        files_judged = (key, True) == self.reports_key or not book.startswith("playbooks/")
        if book.startswith("playbooks/"):
            self.reports_key = (key, expect_noop)
        with open(log_file, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
        recap = {m.group(1): {"ok": int(m.group(2)), "changed": int(m.group(3)), "unreachable": int(m.group(4)),
                              "failed": int(m.group(5)), "skipped": int(m.group(6))} for m in RECAP.finditer(text)}
        hosts = [h for h, _ in self.fleet[:n]]
        counts = count_lines(count_file, hosts)
        rec = dict(meas, label=label, playbook=book, hosts=n, extra=list(extra), log=os.path.relpath(log_file, TOP),
                   env=env_extra or {},
                   recap=recap, counts=counts, changed_tasks=changed_tasks(text),
                   changed=sum(r["changed"] for h, r in recap.items() if h in hosts),
                   failed=sum(r["failed"] + r["unreachable"] for r in recap.values()),
                   load_avg=os.getloadavg())
        rec["ok"] = meas["rc"] == 0 and rec["failed"] == 0
        rec["changed_hosts"], rec["changed_control"] = changed_split(text)
        # The recap's changed count of the control node's own plays (localhost) and of every host.
        rec["changed_recap_all"] = sum(r["changed"] for r in recap.values())
        rec["control_files_judged"] = files_judged
        rec["control_files_changed"] = files_changed if files_judged else None
        # Written after a deploy or a run on other hosts: the reports rightly change, not judged.
        rec["control_files_unjudged"] = None if files_judged else files_changed
        # A no-op changes nothing anywhere: no host, no control-node task, no control-node file.
        rec["noop_ok"] = rec["ok"] and (not expect_noop or (rec["changed_hosts"] == 0 and rec["changed_control"] == 0
                                                            and rec["changed_recap_all"] == 0 and not rec["control_files_changed"]))
        rec["cpu_s_per_host"] = meas["cpu_s"] / n
        # Tasks each host went through (ok, incl. changed) and skipped ones, from the recap.
        mine = [recap[h] for h in hosts if h in recap]
        rec["tasks_ok_per_host"] = sum(r["ok"] for r in mine) / len(mine) if mine else None
        rec["tasks_skipped_per_host"] = sum(r["skipped"] for r in mine) / len(mine) if mine else None
        self.runs.append(rec)
        log("    %-38s %6.1fs rc=%d changed=%d failed=%d cpu=%.1fs peak_pss=%s modules/host=%s (%s on the host) cmds/module=%s" % (
            label, meas["wall_s"], meas["rc"], rec["changed"], rec["failed"], meas["cpu_s"],
            human(meas["peak_pss_bytes"]), fmt(counts["modules_per_host"]), fmt(counts["modules_on_hosts_per_host"]),
            fmt(counts["commands_per_module"], 2)))
        if expect_noop and rec["changed_tasks"]:
            log("    changed on a no-op: %s" % "; ".join(rec["changed_tasks"]))
        if files_changed:
            log("    control-node files written on a no-op%s: %s" % (
                "" if files_judged else " (not judged: the run before was not a no-op of these hosts)",
                "; ".join("%s (%s)" % tuple(f) for f in files_changed[:10])))
        if not rec["ok"]:
            log("    FAILED: see %s" % rec["log"])
        return rec

    # ---------------------------------------------------------------- sections
    def deployments_extra(self, count, remove_up_to=0):
        """``-e @file`` giving the run's deployments (the first ``count`` of bench_deployments()),
        and, up to ``remove_up_to``, the ones after them with ``state: absent`` (the converge from
        more deployments per host to fewer)."""
        deps = bench_deployments(count)
        gone = [dict(d, state="absent") for d in bench_deployments(remove_up_to)[count:]] if remove_up_to > count else []
        path = os.path.join(self.cfg.work, "deployments-%d%s.json" % (count, "-remove-%d" % remove_up_to if gone else ""))
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"ascendfleet_deployments": deps + gone}, handle)
        return ["-e", "@" + path]

    def floor_extra(self, count):
        names = [d["name"] for d in bench_deployments(count)]
        return ["-e", json.dumps({"bench_floor_projects": names})]

    def ensure_deployed(self, count=1):
        """Converge the whole fleet to ``count`` deployments per host on the default image (set-up,
        not a figure): every host at once (vllm_compose_serial=100%) to save time; the rollouts
        measure the batches. The first such run is reported as the first deploy. Going from more
        deployments to fewer removes the others (``state: absent``) with the deploy phase only
        (``--tags deploy``, as an operator removes a deployment: nothing to verify or prefetch for
        it), which costs far less than a second deploy: the run deploys the most deployments
        first (see run())."""
        if count in self.deploy_failed:
            return False
        if self.deployed != count:
            first = self.deployed is None
            remove = self.deployed or 0   # None (nothing yet) and False (failed) remove nothing
            removal = remove > count   # fewer deployments than deployed: only removals
            label = ("first deploy (deploy-qwen.yml, serial 100%%, %d deployment(s))" % count if first
                     else "converge to %d deployment(s) per host (untimed%s)" % (count, ", --tags deploy" if removal else ""))
            rec = self.playbook(label, "playbooks/deploy-qwen.yml", self.cfg.fleet_size,
                                extra=self.deployments_extra(count, remove_up_to=remove) + ["-e", "vllm_compose_serial=100%"]
                                + (["--tags", "deploy"] if removal else []))
            if first:
                self.results["figures"].setdefault("noop", {})["first_deploy"] = pick(rec)
                self.results["figures"]["noop"]["first_deploy"].update(deployments=count, wall_s_per_host=rec["wall_s"] / rec["hosts"])
            if not rec["ok"]:
                self.not_measured("runs on %d deployment(s) per host" % count, "deploying them failed (see %s)" % rec["log"])
                self.deployed = False
                self.deploy_failed.add(count)
                return False
            self.deployed = count
        return True

    def section_noop(self, count):
        cfg = self.cfg
        figs = self.results["figures"].setdefault("noop", {})
        sec = figs.setdefault("by_deployments", {}).setdefault(str(count), {"deployments": count, "by_hosts": {}})
        sec["names"] = [d["name"] for d in bench_deployments(count)]
        why = self.why_not("npu_verify", "model_prefetch", "vllm_compose", "deploy-qwen.yml")
        if why:
            self.not_measured("no-op re-run of deploy-qwen.yml and its floor, %d deployment(s) per host" % count, why)
            return
        # The floor leaves the deployments' own Compose projects as they are: it needs them.
        if not self.ensure_deployed(count):
            return
        deploy, floor_extra = self.deployments_extra(count), self.floor_extra(count)
        # Largest N first, right after the converge of the whole fleet; the smallest N last and
        # its no-op twice: the second follows a no-op of the same hosts, so its control-node
        # files are judged (see reports_key; every no-op's changes on the hosts are judged).
        for n in sorted(cfg.noop_hosts, reverse=True):
            floors, noops = [], []
            repeat = max(cfg.repeat, 2) if n == min(cfg.noop_hosts) else cfg.repeat
            # floor, no-op, floor, no-op, ...: each no-op right after a floor it is compared with.
            for i in range(max(repeat, cfg.floor_repeat)):
                floors.append(self.playbook("floor (npu-smi + %d compose no-op(s))" % count, "bench/playbooks/floor.yml", n,
                                            extra=floor_extra, expect_noop=True))
                if i < repeat:
                    noops.append(self.playbook("no-op re-run (deploy-qwen.yml, %d deployment(s))" % count, "playbooks/deploy-qwen.yml", n,
                                               extra=deploy, expect_noop=True))
            entry = {"floor": agg(floors), "noop": agg(noops)}
            entry["ratio"] = metrics.ratio(entry["noop"]["wall_s"], entry["floor"]["wall_s"])
            entry["cpu_ratio"] = metrics.ratio(entry["noop"]["cpu_s_per_host"], entry["floor"]["cpu_s_per_host"])
            entry["memory_ratio"] = metrics.ratio(entry["noop"]["peak_pss_bytes"], entry["floor"]["peak_pss_bytes"])
            sec["by_hosts"][str(n)] = entry
        by = sec["by_hosts"]
        lo, hi = str(min(cfg.noop_hosts)), str(max(cfg.noop_hosts))
        # What a 1000-host no-op would cost the control node, from the largest N's CPU per host
        # (issue 30: CPU per host decides a 1000-host run), next to the floor's.
        big = by[hi]
        sec["projected_1000"] = {"from_hosts": int(hi),
                                 "cpu_min": (big["noop"]["cpu_s_per_host"] or 0) * 1000 / 60.0,
                                 "floor_cpu_min": (big["floor"]["cpu_s_per_host"] or 0) * 1000 / 60.0}
        log("  projected control-node CPU of a 1000-host no-op (from N=%s): %.0f CPU-minutes (floor %.0f)" % (
            hi, sec["projected_1000"]["cpu_min"], sec["projected_1000"]["floor_cpu_min"]))
        if lo != hi:
            sec["scaling"] = {"from": int(lo), "to": int(hi),
                              "ratio": metrics.ratio(by[hi]["noop"]["wall_s"], by[lo]["noop"]["wall_s"]),
                              "floor_ratio": metrics.ratio(by[hi]["floor"]["wall_s"], by[lo]["floor"]["wall_s"])}

    def section_prefetch(self):
        cfg = self.cfg
        n = cfg.prefetch_hosts
        figs = self.results["figures"].setdefault("prefetch", {"hosts": n, "model": cfg.model})
        hosts = [h for h, _ in self.fleet[:n]]
        seed = hosts[0]
        files = http_json(self.hub_url("/api/v1/models/%s/repo/files?Revision=master&Recursive=True" % cfg.model))["Data"]["Files"]
        blobs = [f for f in files if f.get("Type") != "tree"]
        model_bytes = sum(int(f["Size"]) for f in blobs)
        figs["model_bytes"] = model_bytes
        figs["files"] = len(blobs)
        log("prefetch: %s, %d files, %s, %d hosts" % (cfg.model, len(blobs), human(model_bytes), n))

        # Floor 1: a plain HTTP GET of every file from the hub onto the seed (no verification).
        http_json(self.hub_url("/_sim/reset"), data=b"{}")
        getter = ("import os, sys, urllib.request, urllib.parse\n"
                  "base, model, dest = sys.argv[1:4]\n"
                  "for path in sys.stdin.read().split('\\n'):\n"
                  "    if not path: continue\n"
                  "    q = urllib.parse.urlencode({'Revision': 'master', 'FilePath': path})\n"
                  "    out = os.path.join(dest, path)\n"
                  "    os.makedirs(os.path.dirname(out), exist_ok=True)\n"
                  "    with urllib.request.urlopen('%s/api/v1/models/%s/repo?%s' % (base, model, q)) as r, open(out, 'wb') as f:\n"
                  "        while True:\n"
                  "            b = r.read(1 << 20)\n"
                  "            if not b: break\n"
                  "            f.write(b)\n")
        dexec(seed, "rm -rf %s %s && mkdir -p %s && cat > %s/get.py" % (FLOOR_DIR, RSYNCD_DIR, RSYNCD_DIR, RSYNCD_DIR), input_text=getter)
        t0 = time.monotonic()
        dexec(seed, "python3 %s/get.py http://ascendfleet-sim-hub:8080 %s %s" % (RSYNCD_DIR, cfg.model, FLOOR_DIR),
              input_text="\n".join(f["Path"] for f in blobs) + "\n")
        figs["floor_hub_get_s"] = time.monotonic() - t0
        got = int(dexec(seed, "du -sb %s | cut -f1" % FLOOR_DIR).strip() or 0)
        figs["floor_hub_get_bytes_on_disk"] = got

        # Floor 2: a plain parallel rsync of those files from the seed to the other hosts.
        if n > 1:
            conf = ("pid file = %s/rsyncd.pid\nport = 8731\nuse chroot = no\nuid = root\ngid = root\n"
                    "[floor]\npath = %s\nread only = yes\n" % (RSYNCD_DIR, FLOOR_DIR))
            dexec(seed, "cat > %s/rsyncd.conf && rsync --daemon --config=%s/rsyncd.conf" % (RSYNCD_DIR, RSYNCD_DIR), input_text=conf)
            time.sleep(0.5)
            t0 = time.monotonic()
            pull = "rm -rf %s && rsync -a rsync://%s:8731/floor/ %s/" % (FLOOR_COPY, seed, FLOOR_COPY)
            procs = [subprocess.Popen(["docker", "exec", h, "sh", "-c", pull],  # pylint: disable=consider-using-with
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for h in hosts[1:]]
            outs = [p.communicate()[0] for p in procs]
            figs["floor_rsync_s"] = time.monotonic() - t0
            bad = [(h, o.decode()[-300:]) for h, p, o in zip(hosts[1:], procs, outs) if p.returncode != 0]
            dexec(seed, "pkill -F %s/rsyncd.pid || true" % RSYNCD_DIR, check=False)
            if bad:
                raise RuntimeError("floor rsync failed: %s" % bad)
        else:
            figs["floor_rsync_s"] = 0.0
        figs["floor_s"] = figs["floor_hub_get_s"] + figs["floor_rsync_s"]
        for h in hosts:
            dexec(h, "rm -rf %s %s %s" % (FLOOR_DIR, FLOOR_COPY, RSYNCD_DIR), check=False)

        why = self.why_not("model_prefetch", "prefetch.yml")
        if why:
            self.not_measured("prefetch fan-out, hub bytes and cached no-op", why)
            return
        extra_file = os.path.join(cfg.work, "prefetch-vars.json")
        with open(extra_file, "w", encoding="utf-8") as handle:
            json.dump({"ascendfleet_deployments": [{"name": "benchweights", "model": cfg.model, "revision": "master", "state": "present"}]}, handle)
        for h in hosts:
            dexec(h, "rm -rf %s/%s" % (MODEL_DIR, cfg.model), check=False)
        http_json(self.hub_url("/_sim/reset"), data=b"{}")
        fan = self.playbook("prefetch fan-out (prefetch.yml)", "playbooks/prefetch.yml", n, extra=["-e", "@" + extra_file])
        stats = http_json(self.hub_url("/_sim/stats"))
        served = ((stats.get("models") or {}).get(cfg.model) or {}).get("bytes", 0)
        marker = "%s/%s/.ascendfleet/complete" % (MODEL_DIR, cfg.model)
        complete = [h for h in hosts
                    if subprocess.run(["docker", "exec", h, "test", "-f", marker], capture_output=True, check=False).returncode == 0]
        figs["fanout"] = pick(fan)
        figs["fanout"]["hosts_complete"] = len(complete)
        figs["hub_bytes"] = served
        figs["hub_models_served"] = served / model_bytes if model_bytes else None
        figs["fanout_ratio"] = metrics.ratio(fan["wall_s"], figs["floor_s"])
        figs["fanout_ratio_rsync_only"] = metrics.ratio(fan["wall_s"], figs["floor_rsync_s"]) if n > 1 else None
        if not fan["ok"] or len(complete) != n:
            self.not_measured("prefetch cached no-op", "the fan-out did not complete on every host (%d of %d; see %s)" % (len(complete), n, fan["log"]))
            return
        cpu0 = hosts_cpu_s(hosts)
        noop = self.playbook("prefetch no-op (prefetch.yml, cached)", "playbooks/prefetch.yml", n,
                             extra=["-e", "@" + extra_file], expect_noop=True)
        figs["noop"] = pick(noop)
        figs["noop_host_cpu_s"] = delta(cpu0, hosts_cpu_s(hosts))
        # Floor: sha256sum of the same files on every host at once (what re-hashing costs).
        cpu0 = hosts_cpu_s(hosts)
        t0 = time.monotonic()
        cmd = "cd %s/%s && find . -type f ! -path './.ascendfleet/*' -print0 | xargs -0 sha256sum >/dev/null" % (MODEL_DIR, cfg.model)
        procs = [subprocess.Popen(["docker", "exec", h, "sh", "-c", cmd]) for h in hosts]  # pylint: disable=consider-using-with
        rcs = [p.wait() for p in procs]
        figs["sha256sum_s"] = time.monotonic() - t0
        figs["sha256sum_host_cpu_s"] = delta(cpu0, hosts_cpu_s(hosts))
        # Model size at which the no-op would be 20x faster than re-hashing, at the measured
        # sha256sum rate (an extrapolation: sha256sum time grows with the bytes, the no-op's not).
        if figs["sha256sum_s"] > 0:
            figs["bytes_for_20x"] = 20 * noop["wall_s"] * model_bytes / figs["sha256sum_s"]
        if any(rcs):
            self.results["errors"].append("sha256sum floor failed on %s" % [h for h, rc in zip(hosts, rcs) if rc])
        figs["sha256sum_speedup"] = metrics.ratio(figs["sha256sum_s"], noop["wall_s"])
        if self.ensure_deployed(1):
            floor = self.playbook("floor (npu-smi + 1 compose no-op)", "bench/playbooks/floor.yml", n, extra=self.floor_extra(1),
                                  expect_noop=True)
            figs["noop_floor"] = pick(floor)
            figs["noop_vs_floor"] = metrics.ratio(noop["wall_s"], floor["wall_s"])
        for h in hosts:
            dexec(h, "rm -rf %s/%s" % (MODEL_DIR, cfg.model), check=False)

    def section_mitogen(self):
        """Mitogen for Ansible (strategy mitogen_linear, its own docker transport, selected by
        ansible_connection=docker) against the stock run, back to back, on the whole fleet."""
        cfg = self.cfg
        strategy_dir = os.path.join(cfg.mitogen, "ansible_mitogen", "plugins", "strategy")
        if not os.path.isdir(strategy_dir):
            self.not_measured("mitogen", "BENCH_MITOGEN=%s has no ansible_mitogen/plugins/strategy" % cfg.mitogen)
            return
        n = cfg.fleet_size
        d = os.path.join(cfg.work, "inv-%d-mitogen" % n)
        if os.path.isdir(d):
            shutil.rmtree(d)
        shutil.copytree(os.path.dirname(self.inv[n]), d)
        inv = os.path.join(d, "hosts.yml")
        with open(inv, "w", encoding="utf-8") as handle:
            handle.write(inventory.render(self.fleet[:n], host_vars={"ansible_connection": "docker"}))
        env = {"ANSIBLE_STRATEGY_PLUGINS": strategy_dir, "ANSIBLE_STRATEGY": "mitogen_linear"}
        figs = self.results["figures"].setdefault("mitogen", {"hosts": n, "path": cfg.mitogen})
        books = []
        if self.why_not("npu_verify", "model_prefetch", "vllm_compose", "deploy-qwen.yml") is None and self.ensure_deployed(1):
            # The rollouts left the fleet on another image: converge back first (not timed), so
            # both measured runs are no-ops.
            self.playbook("converge to the default image (untimed)", "playbooks/deploy-qwen.yml", n,
                          extra=self.deployments_extra(1) + ["-e", "vllm_compose_serial=100%"])
            books = [("floor", "bench/playbooks/floor.yml", self.floor_extra(1)),
                     ("noop", "playbooks/deploy-qwen.yml", self.deployments_extra(1))]
        for key, book, extra in books:
            stock = self.playbook("%s, stock" % key, book, n, extra=extra, expect_noop=True)
            mito = self.playbook("%s, mitogen_linear" % key, book, n, extra=extra, expect_noop=True, inv=inv, env_extra=env)
            # Only two runs that did the same work compare: both succeeded and changed the same.
            same = mito["ok"] and stock["ok"] and mito["changed"] == stock["changed"]
            figs[key] = {"stock": pick(stock), "mitogen": pick(mito),
                         "ratio": metrics.ratio(mito["wall_s"], stock["wall_s"]) if same else None}

    def section_knobs(self):
        """The settings an ops team would try on a large fleet (issue 30), each against the stock
        ansible.cfg, on the whole fleet: the floor playbook and the no-op re-run of one
        deployment per host, back to back, per setting. Opt-in (BENCH_SECTIONS=...,knobs): its
        figures go to docs/real-fleet.md, not to the goals."""
        cfg = self.cfg
        n = cfg.fleet_size
        figs = self.results["figures"].setdefault("knobs", {"hosts": n, "settings": {}})
        if self.why_not("npu_verify", "model_prefetch", "vllm_compose", "deploy-qwen.yml") is not None or not self.ensure_deployed(1):
            self.not_measured("knobs", "the fleet could not be deployed with one deployment per host")
            return
        # The rollouts may have left the fleet on another image: converge back first (not timed).
        self.playbook("converge to the default image (untimed)", "playbooks/deploy-qwen.yml", n,
                      extra=self.deployments_extra(1) + ["-e", "vllm_compose_serial=100%"])
        cache = tempfile.mkdtemp(prefix="ascendfleet-bench-facts-")
        try:
            for name, env in knob_settings(n, cache):
                floor = self.playbook("floor, %s" % name, "bench/playbooks/floor.yml", n, extra=self.floor_extra(1),
                                      expect_noop=True, env_extra=env)
                noop = self.playbook("no-op re-run, %s" % name, "playbooks/deploy-qwen.yml", n, extra=self.deployments_extra(1),
                                     expect_noop=True, env_extra=env)
                figs["settings"][name] = {"env": env, "floor": pick(floor), "noop": pick(noop),
                                          "ratio": metrics.ratio(noop["wall_s"], floor["wall_s"]) if noop["noop_ok"] and floor["ok"] else None}
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        stock = figs["settings"].get("stock") or {}
        for entry in figs["settings"].values():
            # Only runs that did their work compare (a failed run is short, not fast).
            done = {key: (entry.get(key) or {}).get("noop_ok") and (stock.get(key) or {}).get("noop_ok") for key in ("floor", "noop")}
            entry["vs_stock"] = {key: metrics.ratio(entry[key]["wall_s"], stock[key]["wall_s"]) if done[key] else None
                                 for key in ("floor", "noop")}
            entry["cpu_vs_stock"] = (metrics.ratio(entry["noop"]["cpu_s_per_host"], stock["noop"]["cpu_s_per_host"])
                                     if done["noop"] else None)

    def address(self, host):
        """A sim host's address on the bench network."""
        return sh(["docker", "inspect", "-f", '{{with index .NetworkSettings.Networks "%s"}}{{.IPAddress}}{{end}}' % self.cfg.network, host]).strip()

    def endpoints(self, hosts):
        found = {}
        for h in hosts:
            ip = self.address(h)
            raw = dexec(h, 'ids=$(docker ps -q --filter label=com.docker.compose.project); [ -z "$ids" ] || docker inspect $ids')
            for ep in fleet_endpoints.endpoints(json.loads(raw) if raw.strip() else [], ip):
                found[h] = ep
        return found

    def startup_times(self, hosts, eps):
        """Per host: the serving container's own start-up (State.StartedAt -> its log line
        'Application startup complete.'), its image, and that line's time."""
        out = {}
        for h in hosts:
            ep = eps.get(h)
            if not ep:
                continue
            info = json.loads(dexec(h, "docker inspect %s" % ep["container"]))[0]
            started = parse_ts(info["State"]["StartedAt"])
            logs = dexec(h, "docker logs -t %s 2>&1 | grep -m1 'Application startup complete' || true" % ep["container"])
            ready = parse_ts(logs.split()[0]) if logs.strip() else None
            out[h] = {"image": info["Config"]["Image"], "started": started, "ready": ready,
                      "startup_s": (ready - started) if (ready and started) else None}
        return out

    def rollout_run(self, serial, hosts, target, extra=(), inv=None, label_note=""):
        """One measured rollout of ``hosts`` (the first len(hosts) of the fleet) to ``target``
        ((version, flavour)), ``serial`` hosts at a time, with poller.py polling every host's
        endpoint: its figures (per-host unavailability against the stand-in's own start-up, fleet
        capacity against N - batch), None when an endpoint is missing before it. ``extra``: more
        ansible-playbook arguments; ``inv``: another inventory of those hosts."""
        n = len(hosts)
        version, flavour = target
        tag = version + ("-openeuler" if flavour == "openeuler" else "")
        eps = self.endpoints(hosts)
        if len(eps) != n:
            self.not_measured("rollout serial %s%s" % (serial, label_note), "endpoints found on %d of %d hosts" % (len(eps), n))
            return None
        poller = Poller({h: e["url"] for h, e in eps.items()})
        poller.start()
        time.sleep(2)
        t_start = time.time()
        rec = self.playbook("rollout serial %s -> %s%s" % (serial, tag, label_note), "playbooks/deploy-qwen.yml", n,
                            extra=self.deployments_extra(1) + [
                                "-e", "%s=%s" % ("ascendfleet_image_version", version),
                                "-e", "%s=%s" % ("ascendfleet_image_os", flavour),
                                "-e", "vllm_compose_serial=%s" % serial] + list(extra), inv=inv)
        t_end = time.time()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not all(s and s[-1][1] for s in poller.samples.values()):
            time.sleep(0.5)
        time.sleep(1)
        samples = poller.stop()
        after = self.startup_times(hosts, self.endpoints(hosts))
        batch = metrics.batch_size(serial, n)
        cap = metrics.capacity(samples)
        per_host = {}
        for h in hosts:
            un = metrics.unavailability(samples[h])
            st = after.get(h, {})
            per_host[h] = dict(un, startup_s=st.get("startup_s"), image=st.get("image"),
                               overhead_s=(un["longest"] - st["startup_s"]) if (un["outages"] and st.get("startup_s") is not None) else None,
                               samples=len(samples[h]), windows=[[o["start"], o["end"]] for o in metrics.outages(samples[h])])
        r = {
            "serial": serial, "batch": batch, "hosts": n, "target": tag, "run": pick(rec),
            "window_s": t_end - t_start, "window": [t_start, t_end],
            "per_host": per_host,
            "unavailability": metrics.summary([p["longest"] for p in per_host.values()]),
            "startup": metrics.summary([p["startup_s"] for p in per_host.values()]),
            "overhead": metrics.summary([p["overhead_s"] for p in per_host.values()]),
            "hosts_on_target": sum(1 for p in per_host.values() if (p["image"] or "").split(":")[-1] == tag),
            "capacity_min": cap["min"], "capacity_floor": n - batch,
            "capacity_ok": cap["min"] is not None and cap["min"] >= n - batch,
        }
        log("    rollout serial %s%s: unavailability max %s s, start-up median %s s, overhead max %s s, capacity min %s (floor %d)" % (
            serial, label_note, fmt(r["unavailability"]["max"]), fmt(r["startup"]["median"]), fmt(r["overhead"]["max"]), r["capacity_min"], n - batch))
        return r

    def deployed_for(self, what, *parts):
        """Whether the roles and playbooks of a rollout (and ``parts``) exist and the fleet runs one
        deployment per host; else ``what`` is not measured, and why."""
        why = self.why_not("npu_verify", "model_prefetch", "vllm_compose", "deploy-qwen.yml", *parts)
        if why or not self.ensure_deployed(1):
            self.not_measured(what, why or "deploying one deployment per host failed")
            return False
        return True

    def section_rollout(self):
        cfg = self.cfg
        if not self.deployed_for("rolling image-tag rollout"):
            return
        figs = self.results["figures"].setdefault("rollout", {"runs": []})
        # Every run targets an image no host runs yet, so every host of it changes (the fleet
        # starts on v0.17.0rc1-openeuler, vllm_compose's default).
        for i, (serial, n) in enumerate(cfg.rollouts):
            r = self.rollout_run(serial, [h for h, _ in self.fleet[:n]], ROLLOUT_TARGETS[i % len(ROLLOUT_TARGETS)])
            if r is not None:
                figs["runs"].append(r)

    def gateway_up(self, metrics_url, servers, timeout=90):
        """Wait until ``servers`` servers are UP on the gateway (HAProxy's Prometheus endpoint, read
        every second, at most ``timeout`` seconds); the states last read."""
        states = {}
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(metrics_url, timeout=3) as resp:
                    states = chat.server_states(resp.read().decode("utf-8", errors="replace"))
            except OSError:
                states = {}
            if sum(1 for v in states.values() if v == "UP") >= servers:
                break
            time.sleep(1)
        return states

    def section_gateway(self):
        """Issue 31: the fleet's one endpoint during a serial-1 rollout, with drain and without."""
        cfg = self.cfg
        if not self.deployed_for("requests through the gateway during a rollout", "fleet_gateway", "gateway.yml"):
            return
        n = cfg.gateway_hosts
        hosts = [h for h, _ in self.fleet[:n]]
        dep = bench_deployments(1)[0]
        model = dep.get("served_model_name") or dep["model"]
        figs = self.results["figures"].setdefault("gateway", {
            "hosts": n, "gateway": cfg.gateway, "model": model, "settings": dict(GATEWAY_VARS), "workers": cfg.gateway_workers,
            "budget": cfg.gateway_requests, "pace_s": cfg.gateway_pace, "runs": []})
        vars_file = os.path.join(cfg.work, "gateway-vars.json")
        with open(vars_file, "w", encoding="utf-8") as handle:
            json.dump(GATEWAY_VARS, handle)
        gw_extra = ["-e", "@" + vars_file]
        up = self.playbook("gateway up (gateway.yml, untimed)", "playbooks/gateway.yml", n, extra=gw_extra, inv=self.gateway_inv)
        figs["setup"] = pick(up)
        address = self.address(cfg.gateway)
        # fleet_gateway_port of the sim group_vars (ascendfleet_gateways.yml); the role's metrics port.
        url = "http://%s:8080/v1" % address
        metrics_url = "http://%s:8405/metrics" % address
        states = self.gateway_up(metrics_url, n)
        figs["url"] = url
        figs["image"] = sh(["docker", "exec", cfg.gateway, "docker", "ps", "--filter", "label=com.docker.compose.project=ascendfleet-gateway",
                            "--format", "{{.Image}}"], check=False).strip()
        figs["haproxy"] = sh(["docker", "exec", cfg.gateway, "sh", "-c",
                              "docker exec $(docker ps -q --filter label=com.docker.compose.project=ascendfleet-gateway | head -1) haproxy -v"],
                             check=False).split("\n")[0].strip()
        up_count = sum(1 for v in states.values() if v == "UP")
        if not up["ok"] or up_count < n:
            self.not_measured("requests through the gateway during a rollout", "the gateway did not come up with %d servers UP (%d: %s; see %s)" % (
                n, up_count, states, up["log"]))
            return
        eps = self.endpoints(hosts)
        if len(eps) != n:
            self.not_measured("gateway latency", "endpoints found on %d of %d hosts" % (len(eps), n))
            return
        # Latency the gateway adds: one request at a time, through it and straight to a host in turn.
        log("gateway %s (%s): %d rounds of one request through it and one straight to a host" % (url, figs["image"], cfg.gateway_latency_rounds))
        lat = load.latency(url, [eps[h]["url"] for h in hosts], model, cfg.gateway_latency_rounds)
        secs = {k: [a["seconds"] if a["verdict"] == chat.OK else None for a in v] for k, v in lat.items()}
        figs["latency"] = dict(metrics.added_latency(secs["direct"], secs["gateway"]),
                               answers={k: chat.tally(v) for k, v in lat.items()})
        added = figs["latency"]["added"]
        log("    gateway adds p50 %s ms, p99 %s ms per request (direct p50 %s ms)" % (
            fmt(None if added["p50"] is None else added["p50"] * 1000), fmt(None if added["p99"] is None else added["p99"] * 1000),
            fmt(None if figs["latency"]["direct"]["p50"] is None else figs["latency"]["direct"]["p50"] * 1000)))
        # The same serial-1 rollout with drain (the role's default) and without, each to a tag no host runs.
        for drain in (True, False):
            running = {(st.get("image") or "").split(":")[-1] for st in self.startup_times(hosts, self.endpoints(hosts)).values()}
            present = set.intersection(*[set(dexec(h, "docker images --format '{{.Tag}}'", check=False).split()) for h in hosts])
            target = next_target(running, ROLLOUT_TARGETS, present)
            if target is None:
                self.not_measured("gateway rollout, drain %s" % ("on" if drain else "off"), "every stand-in tag already runs on a host: %s" % sorted(running))
                continue
            states = self.gateway_up(metrics_url, n)
            client = load.ChatLoad(url, model, workers=cfg.gateway_workers, budget=cfg.gateway_requests, pace=cfg.gateway_pace,
                                   max_seconds=900)
            client.start()
            r = self.rollout_run("1", hosts, target, inv=self.gateway_inv, label_note=", behind the gateway, drain %s" % ("on" if drain else "off"),
                                 extra=gw_extra + ["-e", json.dumps({"vllm_compose_gateway_drain": drain})])
            budget_left = client.running()
            answers = client.stop()
            if r is None:
                continue
            counts = chat.tally(answers)
            first, last = (answers[0]["t"], answers[-1]["t"]) if answers else (None, None)
            run = {"drain": drain, "rollout": r, "servers_up_before": sum(1 for v in states.values() if v == "UP"), "load": counts,
                   "load_window": [first, last],
                   # The load covered the rollout: sending before the playbook started and still when it ended.
                   "covered": bool(answers) and first <= r["window"][0] and last >= r["window"][1] and budget_left,
                   "bad_at": [round(a["t"] - r["window"][0], 2) for a in answers if a["verdict"] != chat.OK][:50],
                   # Bad answers while a host's own endpoint was out (poller.py): the host the rollout had taken away.
                   "bad_in_outage": metrics.overlapping([(a["t"], a["t"] + a["seconds"]) for a in answers if a["verdict"] != chat.OK],
                                                        [w for p in r["per_host"].values() for w in p["windows"]])}
            figs["runs"].append(run)
            log("    drain %s: %d requests (%d streams): %d failed, %d truncated (%d while a host was out)%s; %s" % (
                "on" if drain else "off", counts["sent"], counts["streams"], counts["failed"], counts["truncated"], run["bad_in_outage"],
                "" if run["covered"] else " (the load did NOT cover the whole rollout)",
                "; ".join("%s x%d" % (k, v) for k, v in counts["reasons"][:4]) or "no bad answer"))

    # ---------------------------------------------------------------- driver
    def run(self):
        cfg = self.cfg
        self.results["machine"] = machine()
        self.results["config"] = cfg.as_dict()
        self.results["started"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        self.results["commit"] = sh(["git", "-C", TOP, "rev-parse", "HEAD"], check=False).strip()
        self.results["note"] = os.environ.get("BENCH_NOTE", "")
        self.results["missing"] = sorted(self.missing.values())
        for why in self.results["missing"]:
            log("missing: %s" % why)
        t0 = time.monotonic()
        try:
            self.up()
            # The no-op sections with the most deployments first (the first deploy deploys them
            # all; each section after it only removes one), then prefetch and rollouts on one
            # deployment per host (the rollouts measure one endpoint per host).
            plan = ([("noop", d) for d in sorted(set(cfg.noop_deployments), reverse=True)]
                    + [("prefetch", None), ("rollout", None), ("gateway", None), ("mitogen", None), ("knobs", None)])
            for section, arg in plan:
                if section not in cfg.sections:
                    continue
                try:
                    getattr(self, "section_" + section)(*([] if arg is None else [arg]))
                except Exception as exc:  # pylint: disable=broad-except
                    # A section that breaks is reported and the others still run.
                    self.results["errors"].append("%s: %s" % (section, exc))
                    self.not_measured("section %s" % section, "harness error: %s" % str(exc)[:500])
        finally:
            self.results["machine"]["load_avg_end"] = os.getloadavg()
            self.down()
        self.results["total_s"] = time.monotonic() - t0
        self.results["control"] = control_cost(self.runs)
        return self.results


# -------------------------------------------------------------------- helpers
def knob_settings(n, cache_dir):
    """(name, environment) of each setting the knobs section compares with the stock ansible.cfg
    (forks 20, strategy linear, no fact cache) on ``n`` hosts: fewer forks than hosts (a
    controller's default is 5), the free strategy, and a fact cache (jsonfile, in ``cache_dir``,
    outside the directories the no-op check watches)."""
    forks = sorted({max(1, n // 4), max(1, n // 2)})
    return ([("stock", {})] + [("forks %d" % f, {"ANSIBLE_FORKS": str(f)}) for f in forks] +
            [("strategy free", {"ANSIBLE_STRATEGY": "free"}),
            ("fact cache jsonfile", {"ANSIBLE_CACHE_PLUGIN": "jsonfile", "ANSIBLE_CACHE_PLUGIN_CONNECTION": cache_dir,
                                     "ANSIBLE_GATHERING": "smart"})])


def next_target(running_tags, targets=tuple(ROLLOUT_TARGETS), present_tags=()):
    """The first (version, flavour) of ``targets`` whose tag (version, plus -openeuler for
    openeuler) none of ``running_tags`` is, so every host of a rollout to it changes; of those,
    the first whose image every host has already (``present_tags``: no archive to copy and load,
    the rollout measures the change itself); None when every one runs somewhere."""
    free = [(v, f) for v, f in targets if v + ("-openeuler" if f == "openeuler" else "") not in running_tags]
    have = [(v, f) for v, f in free if v + ("-openeuler" if f == "openeuler" else "") in present_tags]
    return (have or free or [None])[0]


def snapshot(roots, skip, hash_below=1 << 20):
    """{path: (size, mtime_ns, sha256 or None)} of the regular files under ``roots`` (symlinks not
    followed; files of ``hash_below`` bytes and more are not hashed), leaving out directories
    named in SNAPSHOT_SKIP_NAMES and the absolute paths in ``skip``."""
    out = {}
    for root in roots:
        for top, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in SNAPSHOT_SKIP_NAMES and os.path.join(top, d) not in skip]
            for name in files:
                path = os.path.join(top, name)
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                if os.path.islink(path):
                    continue
                digest = None
                if st.st_size < hash_below:
                    try:
                        with open(path, "rb") as handle:
                            digest = hashlib.sha256(handle.read()).hexdigest()
                    except OSError:
                        pass
                out[path] = (st.st_size, st.st_mtime_ns, digest)
    return out


def snapshot_changes(before, after, rel_to):
    """``[path, how]`` (path relative to ``rel_to``; how: created, removed, changed, or
    "rewritten" with the same bytes) for every file that differs between two snapshot()s."""
    out = []
    for p in sorted(set(before) | set(after)):
        old, new = before.get(p), after.get(p)
        if old == new:
            continue
        how = ("created" if old is None else "removed" if new is None
               else "rewritten" if old[2] is not None and old[:1] + old[2:] == new[:1] + new[2:] else "changed")
        out.append([os.path.relpath(p, rel_to), how])
    return out


def bench_deployments(count, sim_vars=SIM_COMPOSE_VARS):
    """The first ``count`` deployments of the bench: the sim inventory's own (compose.yml), then
    SECOND_DEPLOYMENT."""
    import yaml  # pylint: disable=import-outside-toplevel
    with open(sim_vars, encoding="utf-8") as handle:
        data = yaml.safe_load(handle) or {}
    own = data.get("ascendfleet_deployments") or []
    deps = [dict(d) for d in own if d.get("name") != SECOND_DEPLOYMENT["name"]][:1] + [dict(SECOND_DEPLOYMENT)]
    if count > len(deps):
        raise ValueError("%d deployments per host asked, the bench has %d (%s)" % (count, len(deps), sim_vars))
    return deps[:count]


def count_lines(path, hosts):
    """Per-run counts from the bench_count callback's lines (see its docstring)."""
    on_host, by_module, by_task, tasks = {}, {}, {}, {}
    by_role = {}   # role -> {"ok": n, "skipped": n, "modules": n} over the run's hosts
    total = control = cmds = xfers = 0
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if rec["kind"] == "result":
                    if rec.get("host") in hosts:
                        entry = by_role.setdefault((rec.get("role") or "(playbook)").split(".")[-1], {"ok": 0, "skipped": 0, "modules": 0})
                        entry["skipped" if rec.get("status") == "skipped" else "ok"] += 1
                    continue
                if rec["kind"] == "module":
                    total += 1
                    role = task_role(rec.get("task"))
                    by_role.setdefault(role, {"ok": 0, "skipped": 0, "modules": 0})["modules"] += 1
                    by_module[rec.get("module")] = by_module.get(rec.get("module"), 0) + 1
                    by_task[rec.get("task")] = by_task.get(rec.get("task"), 0) + 1
                    if "local" in (rec.get("connection") or ""):
                        control += 1
                    else:
                        on_host[rec.get("ran_on")] = on_host.get(rec.get("ran_on"), 0) + 1
                elif rec["kind"] == "command":
                    cmds += 1
                elif rec["kind"] == "transfer":
                    xfers += 1
                elif rec["kind"] == "task":
                    tasks[rec["task"]] = tasks.get(rec["task"], 0.0) + rec["seconds"]
    remote = sum(on_host.get(h, 0) for h in hosts)
    return {
        # Everything the controller ran a module for, per host of the play: the figure the
        # issue's goal (<= 15) is about, since each costs controller CPU wherever it runs.
        "modules_per_host": total / len(hosts) if hosts else None,
        "modules_on_hosts_per_host": remote / len(hosts) if hosts else None,
        "modules_on_host_max": max((on_host.get(h, 0) for h in hosts), default=0),
        "modules_on_control_node": control,
        "modules_total": total,
        "remote_commands": cmds,
        "transfers": xfers,
        "commands_per_module": (cmds / total) if total else None,
        "by_module": dict(sorted(by_module.items(), key=lambda kv: -kv[1])),
        "by_task": dict(sorted(by_task.items(), key=lambda kv: -kv[1])),
        "slowest_tasks": sorted(([k, round(v, 2)] for k, v in tasks.items()), key=lambda kv: -kv[1])[:8],
        # Tasks (ok incl. changed and failed, skipped) and module executions per host, per role
        # (issue 30: where a no-op's per-host work goes).
        "by_role_per_host": {role: {k: round(v / len(hosts), 2) for k, v in entry.items()}
                             for role, entry in sorted(by_role.items())} if hosts else {},
    }


def task_role(task):
    """The role of a task name as ansible-core prints it ("<role> : <task>"), else "(playbook)"."""
    role, sep, _ = (task or "").partition(" : ")
    return role.split(".")[-1] if sep else "(playbook)"


def hosts_cpu_s(hosts):
    """CPU seconds used so far by each sim host container (its cgroup: the host's own processes,
    e.g. the modules Ansible runs there and sha256sum; not the inner containers, which the
    inner dockerd puts in cgroups of their own). None where the cgroup cannot be read."""
    out = {}
    for h in hosts:
        out[h] = None
        pid = sh(["docker", "inspect", "-f", "{{.State.Pid}}", h], check=False).strip()
        try:
            with open("/proc/%s/cgroup" % pid, encoding="ascii") as handle:
                lines = handle.read().splitlines()
        except OSError:
            continue
        for line in lines:
            _, controllers, path = line.split(":", 2)
            try:
                if "cpuacct" in controllers.split(","):
                    with open("/sys/fs/cgroup/%s%s/cpuacct.usage" % (controllers, path), encoding="ascii") as handle:
                        out[h] = int(handle.read()) / 1e9
                    break
                if controllers == "":
                    with open("/sys/fs/cgroup%s/cpu.stat" % path, encoding="ascii") as handle:
                        for stat in handle:
                            if stat.startswith("usage_usec"):
                                out[h] = int(stat.split()[1]) / 1e6
                    break
            except OSError:
                continue
    return out


def delta(before, after):
    """Summed CPU seconds between two hosts_cpu_s() readings; None when one is missing."""
    if any(before.get(h) is None or after.get(h) is None for h in before):
        return None
    return sum(after[h] - before[h] for h in before)


def changed_split(text):
    """(changes on the managed hosts, changes made on the control node for them) from the
    'changed: [host]' / 'changed: [host -> localhost]' lines of a default-callback log."""
    on_hosts = control = 0
    for line in text.splitlines():
        if line.startswith("changed: ["):
            if "-> localhost]" in line:
                control += 1
            else:
                on_hosts += 1
    return on_hosts, control


def changed_tasks(text):
    """Task names with a 'changed:' result in a default-callback log."""
    found, task = [], None
    for line in text.splitlines():
        m = re.match(r"^(?:TASK|RUNNING HANDLER) \[(.*)\]", line)
        if m:
            task = m.group(1)
        elif line.startswith("changed:") and task and task not in found:
            found.append(task)
    return found


def pick(rec):
    keys = ("wall_s", "cpu_s", "cpu_s_per_host", "peak_rss_bytes", "peak_pss_bytes", "rc", "ok", "changed", "changed_hosts",
            "changed_control", "changed_recap_all", "control_files_changed", "control_files_judged", "control_files_unjudged", "noop_ok",
            "failed", "hosts", "log", "load_avg", "tasks_ok_per_host", "tasks_skipped_per_host")
    out = {k: rec[k] for k in keys}
    for key in ("modules_per_host", "modules_on_hosts_per_host", "modules_on_control_node", "commands_per_module",
                "transfers", "by_module", "by_task", "slowest_tasks", "by_role_per_host"):
        out[key] = rec["counts"].get(key)
    out["changed_tasks"] = rec["changed_tasks"]
    return out


def agg(recs):
    """Median wall time of repeated runs, with the run closest to it for the other figures."""
    if not recs:
        return None
    wall = metrics.percentile([r["wall_s"] for r in recs], 50)
    best = min(recs, key=lambda r: abs(r["wall_s"] - wall))
    out = pick(best)
    out["wall_s"] = wall
    out["walls"] = [r["wall_s"] for r in recs]
    out["ok"] = all(r["ok"] for r in recs)
    out["noop_ok"] = all(r["noop_ok"] for r in recs)
    # What any of the runs changed (a no-op that changes something once is not a no-op).
    out["changed_tasks"] = sorted({t for r in recs for t in r["changed_tasks"]})
    out["control_files_changed"] = sorted({tuple(f) for r in recs for f in (r["control_files_changed"] or [])})
    out["changed_recap_all"] = max(r["changed_recap_all"] for r in recs)
    out["control_files_judged"] = any(r["control_files_judged"] for r in recs)
    return out


def control_cost(runs):
    measured = [r for r in runs if r["ok"]]
    if not measured:
        return None
    worst = max(measured, key=lambda r: r["peak_pss_bytes"])
    return {
        "peak_pss_bytes": worst["peak_pss_bytes"], "peak_rss_bytes": worst["peak_rss_bytes"],
        "peak_run": worst["label"], "peak_run_hosts": worst["hosts"],
        "by_run": [{"label": r["label"], "hosts": r["hosts"], "cpu_s": r["cpu_s"], "cpu_s_per_host": r["cpu_s_per_host"],
                    "peak_pss_bytes": r["peak_pss_bytes"], "peak_rss_bytes": r["peak_rss_bytes"], "wall_s": r["wall_s"]}
                   for r in measured],
    }


def parse_ts(text):
    """RFC 3339 time from Docker (nanoseconds, Z) -> epoch seconds; None for Docker's zero time."""
    text = text.strip()
    if not text or text.startswith("0001-"):
        return None
    m = re.match(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$", text)
    if not m:
        raise ValueError("unexpected Docker time %r" % text)
    base = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S")
    tz = datetime.timezone.utc if m.group(3) == "Z" else datetime.datetime.strptime(m.group(3).replace(":", ""), "%z").tzinfo
    frac = float("0." + m.group(2)) if m.group(2) else 0.0
    return base.replace(tzinfo=tz).timestamp() + frac


def machine():
    mem = 0
    with open("/proc/meminfo", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) * 1024
    cpu = ""
    with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
        for line in handle:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {
        "hostname": platform.node(), "cores": os.cpu_count(), "cpu": cpu, "memory_bytes": mem,
        "kernel": platform.release(), "load_avg_start": os.getloadavg(),
        "docker": sh(["docker", "version", "-f", "{{.Server.Version}}"], check=False).strip(),
        "ansible_core": sh([shutil.which("ansible-playbook") or "ansible-playbook", "--version"], check=False).split("\n")[0],
        "python": platform.python_version(),
    }


def human(n):
    if n is None:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return ("%.0f %s" if unit == "B" else "%.1f %s") % (n, unit)
        n /= 1024.0
    return str(n)


def fmt(x, digits=1):
    if x is None:
        return "-"
    if isinstance(x, float):
        return "%.*f" % (digits, x)
    return str(x)


def main():
    cfg = Config()
    if not shutil.which("ansible-playbook"):
        raise SystemExit("bench: ansible-playbook not found: run through `make bench` (it puts the venv first on PATH)")
    os.makedirs(cfg.work, exist_ok=True)
    bench = Bench(cfg)
    results = bench.run()
    import report  # pylint: disable=import-outside-toplevel
    previous = None
    try:
        with open(os.path.join(HERE, "results", "latest.json"), encoding="utf-8") as handle:
            previous = json.load(handle)
    except (OSError, ValueError):
        pass
    results["previous_run"] = (previous or {}).get("started")
    results["goals"] = report.goals(results, previous)
    text = report.figures_text(results)
    print(text, flush=True)
    out_json = os.path.join(cfg.work, "latest.json")
    with open(out_json, "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=1, sort_keys=True)
    if cfg.write_docs:
        os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
        shutil.copy(out_json, os.path.join(HERE, "results", "latest.json"))
        with open(os.path.join(TOP, "docs", "benchmarks.md"), "w", encoding="utf-8") as handle:
            handle.write(report.markdown(results))
        log("wrote docs/benchmarks.md and bench/results/latest.json")
    else:
        log("quick mode: results in %s (docs/benchmarks.md not rewritten; BENCH_WRITE_DOCS=1 to force)" % out_json)
    harness_broke = bool(results["errors"])
    return 1 if harness_broke else 0


if __name__ == "__main__":
    sys.exit(main())
