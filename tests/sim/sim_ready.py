"""Whether this machine can run a simulated fleet: Docker answers and the sim's assets are built
(tests/sim/assets.sh --check). Used by the end-to-end fleet tests to skip, not fail, without them."""

import pathlib
import subprocess

TOP = pathlib.Path(__file__).resolve().parents[2]


def sim_ready():
    try:
        if subprocess.run(["docker", "info"], capture_output=True, timeout=20, check=False).returncode != 0:
            return False
    except (OSError, subprocess.TimeoutExpired):
        return False
    return subprocess.run([str(TOP / "tests" / "sim" / "assets.sh"), "--check"], capture_output=True, check=False).returncode == 0
