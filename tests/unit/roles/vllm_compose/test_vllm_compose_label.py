"""The compose file vllm_compose writes (templates/opt/ascendfleet/deployment/compose.yaml.j2),
rendered by Ansible's templar with the role's defaults and vars: nothing in it depends on the API
key (issue 28: a label held the unsalted sha256 of the key line, in a 0644 file, in --diff and in
``docker inspect``, so anyone reading it could test guesses of the key offline). A changed key is
still a change: vllm.env differs (the plan's verdict, test__vllm_noop.py) and compose reads the
env file into the service's environment, so its config hash changes and ``up`` recreates.

The render runs in a child interpreter: the collection's filters (ascendfleet.llm.fleet_fact) need
Ansible's collection loader installed, which must not leak into the other tests' imports."""
import hashlib
import json
import pathlib
import subprocess
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[4]

RENDER = r"""
import json, pathlib, sys
import yaml
root = pathlib.Path(sys.argv[1])
from ansible.plugins.loader import init_plugin_loader
init_plugin_loader([str(root / ".collections")])
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
role = root / "roles" / "vllm_compose"
variables = yaml.safe_load((role / "defaults" / "main.yml").read_text())
variables.update(yaml.safe_load((role / "vars" / "main.yml").read_text()))
variables.update(json.loads(sys.argv[2]))
variables = {k: trust_as_template(v) if isinstance(v, str) else v for k, v in variables.items()}
templar = Templar(loader=DataLoader(), variables=variables)
src = (role / "templates" / "opt" / "ascendfleet" / "deployment" / "compose.yaml.j2").read_text()
sys.stdout.write(templar.template(trust_as_template(src)))
"""

DEP = {"name": "qwen", "model": "Qwen/Qwen3.5-27B", "revision": "master", "port": 8000,
       "image": "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler", "environment": {"OMP_NUM_THREADS": "1"},
       "command": ["vllm", "serve", "/root/.cache/modelscope/hub/models/Qwen/Qwen3.5-27B"]}


def render(api_key, **dep):
    settings = {"ansible_managed": "Ansible managed", "vllm_compose_api_key": api_key,
                "__vllm_compose_device_ids": [4, 5], "__vllm_compose_dep": dict(DEP, **dep)}
    return subprocess.run([sys.executable, "-c", RENDER, str(ROOT), json.dumps(settings)], check=True,
                          capture_output=True, text=True).stdout


def test_nothing_in_the_compose_file_depends_on_the_key():
    first, second = render("sim-key-3b9f"), render("another-key-71c2")
    assert first == second
    for key in ("sim-key-3b9f", "another-key-71c2"):
        line = "VLLM_API_KEY=%s\n" % key
        for digest in (hashlib.sha256(line.encode()).hexdigest(), hashlib.sha256(key.encode()).hexdigest()):
            assert digest not in first
        assert key not in first
    service = yaml.safe_load(first)["services"]["vllm-ascend"]
    # The labels say what runs, nothing about the key; the key reaches vLLM from the 0600 env file.
    assert service["labels"] == {"io.ascendfleet.llm.deployment": "qwen", "io.ascendfleet.llm.model": "Qwen/Qwen3.5-27B@master"}
    assert service["env_file"] == [{"path": "/opt/ascendfleet/qwen/vllm.env", "format": "raw"}]


def test_without_a_key_no_env_file():
    service = yaml.safe_load(render(""))["services"]["vllm-ascend"]
    assert "env_file" not in service
    assert service["labels"] == {"io.ascendfleet.llm.deployment": "qwen", "io.ascendfleet.llm.model": "Qwen/Qwen3.5-27B@master"}


def test_stop_grace_period_only_where_vllm_drains():
    # The planner sets stop_grace_period (--shutdown-timeout + 30 s) on releases with the flag
    # (test__vllm_deploy_shutdown.py); compose must then wait that long before it kills vLLM.
    service = yaml.safe_load(render("", shutdown_timeout=120, stop_grace_period=150))["services"]["vllm-ascend"]
    assert service["stop_grace_period"] == "150s"
    for dep in ({}, {"shutdown_timeout": None, "stop_grace_period": None}):
        assert "stop_grace_period" not in yaml.safe_load(render("", **dep))["services"]["vllm-ascend"]
