"""Issue 29 on four simulated hosts: a model revision rolls out like an image tag.

Four hosts (inventory order h1..h4, cache layout revisions) serve revision A of Qwen/Qwen3.5-27B
(the stand-in hub's master moved to its older commit). The hub's master moves to B, whose
config.json declares a shorter context (seq_length 163840, hub config latest_config) and whose
last shard differs. A re-run of playbooks/deploy-qwen.yml:
  - prefetches B beside A on every host while every container keeps serving A: each endpoint is
    polled (bounded in count and time) from the start of the run until the rollout's plan starts,
    and no request fails; A's files are unchanged by sha256 on every host after the run;
  - rolls B out two hosts at a time (vllm_compose_serial=2): h1, h2, then h3, h4;
  - h4 serves a longer context (max_model_len 200000, below A's max_position_embeddings, so the
    pre-flight lets it through) that B's config no longer allows: the stand-in vLLM refuses B at
    start-up as vLLM does (derived max_model_len is the smallest of the config's length keys), the
    gate fails and h4 is back on A by itself; h1-h3 serve B.
Then h4 is fixed (max_model_len 163840) and master moves to C (B's files under a new commit id):
every host rolls to C, and A is removed where nothing needs it any more - kept on h3
(ascendfleet_cache_keep_revisions: 3) and on h4 (its rollback target). A re-run changes nothing.
Marked `fleet` (pytest.ini): the CI runs it in its pytest-fleet job beside the molecule scenarios.
"""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from sim_ready import sim_ready  # noqa: E402  pylint: disable=wrong-import-position

TOP = pathlib.Path(__file__).resolve().parents[2]
SIM_INVENTORY = TOP / "inventories" / "sim"
FLEET = TOP / "tests" / "sim" / "fleet.sh"
BIN = pathlib.Path(sys.executable).parent
ENV = dict(os.environ, PATH="%s:%s" % (BIN, os.environ.get("PATH", "")), ANSIBLE_CONFIG=str(TOP / "ansible.cfg"),
           ANSIBLE_FORCE_COLOR="0", ANSIBLE_CALLBACKS_ENABLED="ansible.posix.profile_tasks")
PREFIX = "fleetci-rev"
HOSTS = ["%s-h%d" % (PREFIX, i) for i in range(1, 5)]
H1, H2, H3, H4 = HOSTS
HUB = PREFIX + "-hub"
MODEL = "Qwen/Qwen3.5-27B"
# The commit the hub's "revisions" adds with the latest commit's files (C: B's files, a new commit id).
REV_C = "c29e0f1a2b3c4d5e6f708192a3b4c5d6e7f80912"
SEQ_LENGTH_B = 163840
ROOT = "/var/lib/ascendfleet/modelscope/revisions/" + MODEL
MOUNT = "/root/.cache/modelscope/hub/models/" + MODEL
COMPOSE = "/opt/ascendfleet/qwen/compose.yaml"
# The poll during the prefetch: every POLL_S per host, at most POLL_MAX requests or POLL_DEADLINE_S.
POLL_S, POLL_MAX, POLL_DEADLINE_S = 0.25, 4000, 900
RUN_TIMEOUT_S = 900


def deployment(max_model_len=None):
    dep = {"name": "qwen", "preset": "qwen3.5-27b", "model": MODEL, "revision": "master", "served_model_name": "Qwen",
           "port": 8000, "extra_env": {"ASCENDFLEET_SIM_STARTUP_SECONDS": "1"}}
    if max_model_len:
        dep["max_model_len"] = max_model_len
    return [dep]


def write_inventory(inv, work):
    """The sim inventory's group_vars (connection, compose, prefetch, sim), four hosts of their own,
    this test's hub and report directory, the revisions cache layout."""
    shutil.copytree(SIM_INVENTORY / "group_vars" / "ascend_servers", inv / "group_vars" / "ascend_servers")
    (inv / "group_vars" / "ascend_servers" / "revisions.yml").write_text(
        "---\n" + json.dumps({
            "model_prefetch_endpoint": "http://%s:8080" % HUB,
            "ascendfleet_report_dir": str(work / "reports"),
            "ascendfleet_cache_layout": "revisions",
            # Ask the hub what master resolves to on every run, so a moved branch is fetched.
            "model_prefetch_resolve": "always",
            "vllm_compose_health_timeout": 30,
            "ascendfleet_deployments": deployment(),
        }, indent=1) + "\n")
    (inv / "host_vars").mkdir()
    (inv / "host_vars" / ("%s.yml" % H3)).write_text("---\nascendfleet_cache_keep_revisions: 3\n")
    set_h4_max_model_len(inv, 200000)
    hosts = {"ascend_servers": {"hosts": {h: {"ascendfleet_sim_profile": "idle-910b3"} for h in HOSTS}},
             "control": {"hosts": {"localhost": {"ansible_connection": "local",
                                                 "ansible_python_interpreter": "{{ ansible_playbook_python }}"}}}}
    (inv / "hosts.yml").write_text("---\n" + json.dumps(hosts, indent=1) + "\n")


def set_h4_max_model_len(inv, value):
    (inv / "host_vars" / ("%s.yml" % H4)).write_text(
        "---\n" + json.dumps({"ascendfleet_deployments": deployment(value)}, indent=1) + "\n")


def fleet_env(work):
    return dict(ENV, ASCENDFLEET_SIM_INVENTORY=str(work / "inventory" / "hosts.yml"), ASCENDFLEET_SIM_NETWORK=PREFIX + "-net",
                ASCENDFLEET_SIM_HUB_NAME=HUB, ASCENDFLEET_SIM_HUB_PORT="", ASCENDFLEET_SIM_HUB_CONFIG=str(work / "hub.json"),
                ASCENDFLEET_SIM_WITH_REGISTRY="0")


def address(name):
    out = subprocess.run(["docker", "inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", name],
                         capture_output=True, text=True, timeout=30, check=True).stdout.strip()
    assert out, name
    return out


def on_host(host, script):
    result = subprocess.run(["docker", "exec", host, "sh", "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, (host, script, result.stderr)
    return result.stdout


def hub_call(hub, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request("http://%s:8080%s" % (hub, path), data=data, method="GET" if body is None else "POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


def hashes(host, key):
    """sha256 of every file of revision ``key`` on ``host`` (the manifest and marker too)."""
    out = on_host(host, "cd %s/%s && find . -type f | sort | xargs sha256sum" % (ROOT, key))
    return dict(reversed(line.split(None, 1)) for line in out.splitlines())


def revision_dirs(host):
    """The revision directories of the model on ``host`` (refs.json and the like left out)."""
    return sorted(n for n in on_host(host, "ls %s" % ROOT).split() if re.fullmatch(r"[0-9a-f]{40}", n))


def live_key(host):
    match = re.search(re.escape(ROOT) + r"/([0-9a-f]{40}):" + re.escape(MOUNT) + ":ro", on_host(host, "cat %s" % COMPOSE))
    assert match, on_host(host, "cat %s" % COMPOSE)
    return match.group(1)


def answers(ip):
    body = json.dumps({"model": "Qwen", "prompt": "ping", "max_tokens": 1}).encode()
    request = urllib.request.Request("http://%s:8000/v1/completions" % ip, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=3) as answer:
            return answer.status == 200, None
    except (OSError, urllib.error.URLError) as exc:
        return False, str(exc)


class Poller:
    """One thread per host asking its endpoint for a completion every POLL_S until stopped,
    POLL_MAX requests or POLL_DEADLINE_S seconds; failures are kept with their time."""

    def __init__(self, ips):
        self.stop = threading.Event()
        self.counts = {h: 0 for h in ips}
        self.failures = []
        self.threads = [threading.Thread(target=self._run, args=(h, ip), daemon=True) for h, ip in ips.items()]

    def _run(self, host, ip):
        deadline = time.monotonic() + POLL_DEADLINE_S
        while not self.stop.is_set() and self.counts[host] < POLL_MAX and time.monotonic() < deadline:
            ok, error = answers(ip)
            self.counts[host] += 1
            if not ok:
                self.failures.append((host, time.strftime("%H:%M:%S"), error))
            self.stop.wait(POLL_S)

    def __enter__(self):
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=10)


def playbook(work, log, *extra, until=None):
    """ansible-playbook deploy-qwen.yml on the four hosts; ``until`` (an Event) is set when the
    rollout's plan starts (the prefetch is over on every host). Returns (rc, output)."""
    cmd = [str(BIN / "ansible-playbook"), str(TOP / "playbooks" / "deploy-qwen.yml"), "-i", str(work / "inventory" / "hosts.yml"),
           "-e", "vllm_compose_serial=2", "-e", "vllm_compose_max_fail_percentage=50", *extra]
    lines = []
    started = time.monotonic()
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ENV, cwd=str(TOP)) as proc:
        timer = threading.Timer(RUN_TIMEOUT_S, proc.kill)
        timer.start()
        try:
            for line in proc.stdout:
                lines.append(line)
                if until is not None and line.startswith("PLAY [Plan the rollout"):
                    until.set()
        finally:
            timer.cancel()
        rc = proc.wait()
    out = "".join(lines)
    (work / log).write_text(out)
    print("%s: rc %d in %ds" % (log, rc, time.monotonic() - started))
    return rc, out


def recap(out):
    found = re.findall(r"^(\S+)\s+:\s+ok=\d+\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", out, re.MULTILINE)
    return {h: (int(c), int(u), int(f)) for h, c, u, f in found}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    if not sim_ready():
        pytest.skip("needs Docker and the sim's assets (make sim-assets)")
    work = tmp_path_factory.mktemp("revisions")
    write_inventory(work / "inventory", work)
    (work / "hub.json").write_text(json.dumps({"models": {MODEL: {
        "weights_bytes": 65536, "shards": 2, "revisions": [REV_C],
        "latest_config": {"text_config": {"seq_length": SEQ_LENGTH_B}}}}}))
    env = fleet_env(work)
    try:
        up = subprocess.run([str(FLEET), "up"], env=env, capture_output=True, text=True, timeout=600, check=False)
        assert up.returncode == 0, up.stdout[-3000:] + up.stderr[-3000:]
        yield work
    finally:
        subprocess.run([str(FLEET), "down"], env=env, capture_output=True, timeout=600, check=False)


@pytest.mark.fleet
def test_a_moved_branch_rolls_out_like_an_image_tag_on_four_hosts(fleet):
    work = fleet
    t_start = time.monotonic()
    hub = address(HUB)
    ips = {h: address(h) for h in HOSTS}
    repo = hub_call(hub, "/_sim/repos")[MODEL]
    rev_a, rev_b = repo["tags"]["v0.9"], repo["tags"]["v1.0"]

    # ---- A on every host.
    hub_call(hub, "/_sim/branches", {MODEL: {"master": rev_a}})
    rc, out = playbook(work, "a.log")
    assert rc == 0, out[-6000:]
    assert {h: live_key(h) for h in HOSTS} == dict.fromkeys(HOSTS, rev_a)
    assert all(answers(ip)[0] for ip in ips.values())
    a_files = {h: hashes(h, rev_a) for h in HOSTS}
    # The model's files are the same everywhere (the seed fetched them, its fan-out peers copied
    # them); the manifest and marker under .ascendfleet/ name each host's source.
    weights = [{p: d for p, d in a_files[h].items() if not p.startswith("./.ascendfleet/")} for h in HOSTS]
    assert all(w == weights[0] for w in weights), weights
    assert len([p for p in weights[0] if p.endswith(".safetensors")]) == 2, weights[0]

    # ---- master moves to B: prefetched beside A under load, then rolled out two hosts at a time.
    hub_call(hub, "/_sim/reset", {})  # zero the counters (and master back to its latest commit, B)
    hub_call(hub, "/_sim/branches", {MODEL: {"master": rev_b}})
    with Poller(ips) as poll:
        rc, out = playbook(work, "b.log", until=poll.stop)
        prefetch_polls = dict(poll.counts)
        assert poll.stop.is_set(), "the run never reached the rollout's plan"
    print("requests polled per host during the prefetch of B, none failed: %s" % prefetch_polls)
    assert not poll.failures, poll.failures[:20]
    # Every endpoint was asked all along the prefetch (a restart keeps the port closed for seconds).
    assert min(prefetch_polls.values()) >= 8, prefetch_polls
    assert rc != 0, out[-6000:]
    assert {h: f for h, (_c, u, f) in recap(out).items() if u or f} == {H4: 1}, out[-4000:]
    # The prefetch ran before any rollout, and the rollout went in two batches: h1 h2, then h3 h4.
    assert out.index("PLAY [Prefetch the model weights]") < out.index("PLAY [Deploy vLLM-Ascend, batch by batch]")
    batches = out.split("PLAY [Deploy vLLM-Ascend, batch by batch]")[1:]
    assert len(batches) == 2, len(batches)
    assert H1 in batches[0] and H2 in batches[0] and H3 not in batches[0].split("PLAY [")[0], batches[0][:2000]
    assert H3 in batches[1] and H4 in batches[1]
    # h4 refused B as vLLM does and is back on A by itself; the others serve B.
    # vLLM's error (the digest of the failed container's log): max_model_len above what B's config allows.
    assert "ValidationError: 1 validation error for ModelConfig" in out, out[-6000:]
    assert "greater than the derived max_model_len (seq_length=%d" % SEQ_LENGTH_B in out, out[-6000:]
    assert "Rolled back to last-known-good" in out
    assert {h: live_key(h) for h in HOSTS} == {H1: rev_b, H2: rev_b, H3: rev_b, H4: rev_a}
    assert all(answers(ip)[0] for ip in ips.values())
    # B beside A on every host (h4 too: fetched before its rollout failed); A's files unchanged.
    for host in HOSTS:
        assert {rev_a, rev_b} <= set(revision_dirs(host)), host
        assert hashes(host, rev_a) == a_files[host], host
    summary = (work / "reports" / "vllm_compose.md").read_text()
    assert "revision master: %s -> %s" % (rev_a[:12], rev_b[:12]) in summary, summary

    # ---- h4 fixed, master moves to C (B's files, a new commit): every host on C, A removed but where needed.
    set_h4_max_model_len(work / "inventory", SEQ_LENGTH_B)
    hub_call(hub, "/_sim/branches", {MODEL: {"master": REV_C}})
    rc, out = playbook(work, "c.log")
    assert rc == 0, out[-6000:]
    assert {h: live_key(h) for h in HOSTS} == dict.fromkeys(HOSTS, REV_C)
    assert all(answers(ip)[0] for ip in ips.values())
    assert {h: revision_dirs(h) for h in HOSTS} == {
        H1: sorted([rev_b, REV_C]), H2: sorted([rev_b, REV_C]),
        H3: sorted([rev_a, rev_b, REV_C]),   # ascendfleet_cache_keep_revisions: 3
        H4: sorted([rev_a, REV_C]),          # A is h4's rollback target (previous/); B, never served, is gone
    }
    assert hashes(H3, rev_a) == a_files[H3] and hashes(H4, rev_a) == a_files[H4]

    # ---- a re-run changes nothing.
    rc, out = playbook(work, "again.log")
    assert rc == 0, out[-6000:]
    assert recap(out) and all(c == 0 and u == 0 and f == 0 for c, u, f in recap(out).values()), out[-4000:]
    print("fleet revisions test: %ds after the sim was up" % (time.monotonic() - t_start))

