"""Helpers shared by tests/sim/test_npu_sim_*.py (test code, not part of a sim host)."""

import json
import os
import subprocess
import sys

NPU_DIR = os.path.dirname(os.path.abspath(__file__))
SIM = os.path.join(NPU_DIR, "ascend_sim.py")
HOST_INIT = os.path.join(NPU_DIR, "host-init")
PROFILES = os.path.join(NPU_DIR, "..", "profiles")
FIXTURES = os.path.join(NPU_DIR, "fixtures")
SAMPLES = os.path.join(FIXTURES, "samples")
FIXTURE_PROFILES = os.path.join(FIXTURES, "profiles")


def sample(name):
    with open(os.path.join(SAMPLES, name), encoding="utf-8") as fh:
        return fh.read()


def profile_file(name):
    for base in (PROFILES, FIXTURE_PROFILES):
        path = os.path.join(base, name + ".json")
        if os.path.exists(path):
            return path
    raise FileNotFoundError(name)


def load(name):
    with open(profile_file(name), encoding="utf-8") as fh:
        return json.load(fh)


def save(tmp_path, data, name="profile.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def run(tool, args, profile_path, tmp_path, fake=None, env=None):
    """Run the simulator as `tool` with a profile; no Docker unless asked."""
    if fake is None:
        fake_path = tmp_path / "no-containers.json"
        fake_path.write_text("[]", encoding="utf-8")
    else:
        fake_path = tmp_path / "containers.json"
        fake_path.write_text(json.dumps(fake), encoding="utf-8")
    full_env = dict(os.environ)
    full_env.update({"ASCENDFLEET_SIM_TOOL": tool,
                     "ASCENDFLEET_SIM_NPU_PROFILE": profile_path,
                     "ASCENDFLEET_SIM_ROOT": str(tmp_path / "root"),
                     "ASCENDFLEET_SIM_DOCKER_FAKE": str(fake_path)})
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-IS", SIM] + list(args), env=full_env,
                          capture_output=True, text=True, timeout=30, check=False)


def host_init(tmp_path, profile, exec_program="", args=(), env=None):
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    full_env = dict(os.environ)
    full_env.update({"ASCENDFLEET_SIM_ROOT": str(root), "ASCENDFLEET_SIM_EXEC": exec_program,
                     "ASCENDFLEET_SIM_PROFILE": profile})
    full_env.update(env or {})
    proc = subprocess.run([sys.executable, HOST_INIT] + list(args), env=full_env,
                          capture_output=True, text=True, timeout=30, check=False)
    return proc, root
