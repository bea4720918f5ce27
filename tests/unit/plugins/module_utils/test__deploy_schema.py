"""The declared deployment schema (_deploy_schema, issue 28), by hand and property-based.

For every key of the schema, Hypothesis generates wrong types, shapes, control characters, huge
values and path tricks (and values that are fine) inside an otherwise good deployment, plans it as
vllm_compose does, and asserts one of two outcomes: refused with a message naming the host, the
deployment and the key; or accepted, and the compose file rendered from the role's real template
(Ansible's Templar) parses to exactly the keys the role writes, the environment and command the
plan made (nothing injected). Fixed seed (derandomize) and a bounded number of examples.
"""
import os
import pathlib
import shutil
import subprocess

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.ascendfleet.llm.plugins.module_utils import _deploy_schema as schema
from ansible_collections.ascendfleet.llm.plugins.module_utils import _vllm_deploy as vd
from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import fleet_fact

ROOT = pathlib.Path(__file__).resolve().parents[4]
TEMPLATE = ROOT / "roles" / "vllm_compose" / "templates" / "opt" / "ascendfleet" / "deployment" / "compose.yaml.j2"
HOST = "npu-07"
QWEN = "Qwen/Qwen3-8B"
MODELS = {QWEN: {"prefetched": True, "revision": "master", "reason": None, "weights_bytes": 0,
                 "config": {"max_position_embeddings": 40960}}}
IMAGE = {"repository": "quay.io/ascend/vllm-ascend", "version": "v0.18.0rc1", "os": "openeuler"}
GOOD = {"name": "q", "model": QWEN, "port": 8000}
SERVICE_KEYS = {"image", "network_mode", "shm_size", "restart", "labels", "environment", "devices", "volumes", "command"}
LABELS = {"io.ascendfleet.llm.deployment", "io.ascendfleet.llm.model"}


def plan(dep, **extra):
    return vd.plan([dep], host=HOST, family="910B", healthy_device_ids=list(range(8)), hbm_per_card_mb=65536,
                   models=MODELS, image=IMAGE, **extra)


_TEMPLAR = {}


def render(dep, device_ids):
    """The role's compose.yaml.j2 rendered for ``dep`` with Ansible's Templar (as the template action does)."""
    if not _TEMPLAR:
        from ansible.parsing.dataloader import DataLoader
        from ansible.template import Templar, trust_as_template

        header, body = TEMPLATE.read_text().split("\n", 1)
        assert header == "#jinja2: trim_blocks:True, lstrip_blocks:True"
        # The collection's own filter is not loadable here (the tests import the collection as a
        # plain package): its one call is replaced by the value it returns.
        call = "('container_models' | ascendfleet.llm.fleet_fact)"
        assert body.count(call) == 1 and "| ascendfleet.llm." not in body.replace(call, "")
        body = body.replace(call, repr(fleet_fact("container_models")))
        _TEMPLAR.update(body=trust_as_template(body), Templar=Templar, loader=DataLoader())
    variables = {
        "__vllm_compose_dep": dep, "__vllm_compose_device_ids": device_ids, "ansible_managed": "Ansible managed",
        "vllm_compose_shm_size": "1g", "vllm_compose_api_key": "", "vllm_compose_control_devices": ["/dev/davinci_manager"],
        "vllm_compose_host_mounts": ["/usr/local/dcmi"], "vllm_compose_cache_dir": "/var/lib/ascendfleet/modelscope",
        "vllm_compose_project_root": "/opt/ascendfleet", "__vllm_compose_service": "vllm-ascend",
        "__vllm_compose_env_content": "",
    }
    templar = _TEMPLAR["Templar"](loader=_TEMPLAR["loader"], variables=variables)
    return templar.template(_TEMPLAR["body"], overrides={"trim_blocks": True, "lstrip_blocks": True})


def assert_exact(text, dep, device_ids):
    """The rendered file holds exactly what the role writes (no key injected, nothing lost)."""
    data = yaml.safe_load(text)
    assert set(data) == {"name", "services"}
    assert data["name"] == dep["name"]
    assert set(data["services"]) == {"vllm-ascend"}
    service = data["services"]["vllm-ascend"]
    assert set(service) == SERVICE_KEYS
    assert set(service["labels"]) == LABELS
    assert {k: v.encode("utf-16", "surrogatepass").decode("utf-16") for k, v in service["environment"].items()} == {
        k: v.replace("$", "$$") for k, v in dep["environment"].items()}
    # PyYAML leaves a JSON surrogate pair (a character beyond U+FFFF) as two halves: join them.
    assert [a.encode("utf-16", "surrogatepass").decode("utf-16") for a in service["command"]] == [
        a.replace("$", "$$") for a in dep["command"]]
    assert service["devices"] == ["/dev/davinci%d:/dev/davinci%d" % (i, i) for i in device_ids] + [
        "/dev/davinci_manager:/dev/davinci_manager"]
    # The comment lines stay comments: every line is a comment, blank, or part of the YAML above.
    assert all(not line.startswith(" ") for line in text.splitlines() if line.startswith("#"))
    return data


# -- by hand -------------------------------------------------------------------------------------

INJECTION = "X: y\n    privileged: true\n    pid"


def test_the_issue_s_injected_env_key_is_refused_naming_key_and_fix():
    result = plan(dict(GOOD, extra_env={INJECTION: "host"}))
    assert result["deployments"] == []
    assert result["errors"] == [
        "%s: deployment q: extra_env: the key %r is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*, at most 256 characters). "
        "Fix: give extra environment variables as a mapping of NAME: value" % (HOST, INJECTION)]


def test_the_template_alone_writes_an_odd_env_key_as_one_quoted_key():
    # Without the schema (a planned deployment edited afterwards): the key stays one string key.
    dep = plan(GOOD)["deployments"][0]
    dep["environment"] = dict(dep["environment"], **{INJECTION: "host", "*a": "1", "has space": "2", "7": "3"})
    dep["name"] = "q\nservices: {}"
    service = yaml.safe_load(render(dep, [0]))["services"]["vllm-ascend"]
    assert "privileged" not in service and "pid" not in service
    assert service["environment"][INJECTION] == "host"
    assert service["environment"]["*a"] == "1" and service["environment"]["has space"] == "2"
    assert service["environment"]["7"] == "3"


@pytest.mark.parametrize("key, value, fragment", [
    ("extra_env", {"has space": "1"}, "the key 'has space' is not an environment variable name"),
    ("extra_env", {"*a": "1"}, "the key '*a' is not an environment variable name"),
    ("extra_env", {"1X": "1"}, "the key '1X' is not an environment variable name"),
    ("extra_env", {"ASCEND_RT_VISIBLE_DEVICES": "0,1"}, "ASCEND_RT_VISIBLE_DEVICES is set by the collection"),
    ("extra_env", {"VLLM_API_KEY": "k"}, "VLLM_API_KEY is set by the collection: set vllm_compose_api_key"),
    ("extra_env", {"A": None}, "A: None is a null, not a string"),
    ("extra_env", {"A": ["x"]}, "A: ['x'] is a list, not a string"),
    ("extra_env", {"A": "x\ry"}, "holds a line break"),
    ("extra_env", {"A": "\U0001f600"}, "holds a character beyond U+FFFF"),
    ("extra_env", {"A" * 257: "1"}, "at most 256 characters"),
    ("extra_env", "A=1", "is a str, not a mapping"),
    ("extra_args", "--seed 1", "is a str, not a list"),
    ("extra_args", ["--port", "9000"], "item 0 '--port' is a flag the collection renders from port"),
    ("extra_args", ["--max-model-len=4096"], "is a flag the collection renders from max_model_len"),
    ("extra_args", ["--seed", None], "item 1 None is not a string"),
    ("extra_args", ["--seed", "1\n2"], "holds a line break"),
    ("revision", "../../etc", "is not a branch, tag or commit"),
    ("revision", "master\n", "holds a line break"),
    ("revision", ["master"], "is a list, not a string"),
    ("served_model_name", " padded", "is not a name of 1 to 200 characters without blanks at either end"),
    ("image", "quay.io/x:v1 --privileged", "is not an image reference without spaces"),
    ("image_version", "v0.18.0rc1\n", "holds a line break"),
    ("reasoning_parser", "qwen3;rm", "is not a parser name"),
    ("devices", [0, "1"], "item 1 '1' is not a whole number"),
    ("devices", [64], "item 0 64 is outside the range 0 to 63"),
    ("devices", "0,1", "is a str, not a list"),
    ("data_parallel_rpc_port", 0, "0 is outside the range 1 to 65535"),
    ("port", "8000", "'8000' is not a TCP port"),
    ("port", True, "True is not a TCP port"),
    ("max_model_len", 10 ** 30, "is not a positive integer"),
    ("gpu_memory_utilization", float("nan"), "nan is outside (0, 1]"),
])
def test_bad_keys_are_refused_naming_host_deployment_key_and_fix(key, value, fragment):
    result = plan(dict(GOOD, **{key: value}))
    assert result["deployments"] == []
    assert len(result["errors"]) == 1, result["errors"]
    message = result["errors"][0]
    assert message.startswith("%s: deployment q: %s: " % (HOST, key)), message
    assert fragment in message, message
    assert message.endswith("Fix: " + schema.SCHEMA[key]["fix"]), message


@pytest.mark.parametrize("key, value, planned", [
    ("extra_env", {"A": 1, "B": True, "C": False, "D": 0.5, "_x": "$HOME"}, {"A": "1", "B": "1", "C": "0", "D": "0.5", "_x": "$HOME"}),
    ("extra_args", ["--seed", 1024], ["--seed", "1024"]),
    ("served_model_name", 1, "1"),
    ("trust_remote_code", "no", False),
    ("enable_prefix_caching", "off", False),
])
def test_accepted_values_are_converted_as_ansible_converts_them(key, value, planned):
    result = plan(dict(GOOD, **{key: value}))
    assert result["errors"] == []
    dep = result["deployments"][0]
    if key == "extra_env":
        assert {k: dep["environment"][k] for k in planned} == planned
    elif key == "extra_args":
        assert dep["command"][-2:] == planned
    else:
        assert dep[key] == planned


def test_bad_defaults_are_refused_naming_the_variable():
    result = plan(GOOD, defaults={"extra_env": {"a b": "1"}, "port": "x"})
    assert result["errors"] == [
        "%s: vllm_compose_deployment_defaults: extra_env: the key 'a b' is not an environment variable name "
        "([A-Za-z_][A-Za-z0-9_]*, at most 256 characters). Fix: give extra environment variables as a mapping of NAME: value" % HOST,
        "%s: vllm_compose_deployment_defaults: port: 'x' is not a TCP port. Fix: use a port between 1 and 65535" % HOST]


def test_the_schema_declares_every_key_the_planner_knows():
    assert set(schema.SCHEMA) == set(vd.BASE) | {"name", "model", "preset"}


# -- property-based ------------------------------------------------------------------------------

# Text that tries to break a line, a YAML key, a shell or a path.
NASTY = st.sampled_from(["\n", "\r", "\x00", "\t", "\x85", "\u2028", ": ", "#", "{", "}", "[", "]", "*", "&", "!", "|",
                         ">", "'", '"', "$", "$$", "${X}", "%", "@", "`", "\\", "/", "..", "../", "~", " ", "-", "--",
                         "=", ",", "é", "\U0001f600", "\ufeff", "A", "a", "0", "_", "."])
TEXT = st.one_of(st.text(max_size=12), st.lists(NASTY, max_size=8).map("".join),
                 st.integers(1, 6).map(lambda n: "a" * (n * 1000)))
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70), st.floats(allow_nan=True), TEXT,
                   st.sampled_from(["no", "yes", "off", "8000", "0.9", "present", "absent", "Qwen/Qwen3-8B", "a/..",
                                    "master", "qwen3", "hermes", "--port", "--seed", "1", "-1", "0"]))
ANY = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                   st.dictionaries(st.one_of(TEXT, st.integers()), inner, max_size=4)),
                   max_leaves=8)
# Values of the right shape, so that acceptance (and the rendering) is reached often.
PLAUSIBLE = {
    "extra_env": st.dictionaries(st.one_of(st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_]{0,8}\Z"), TEXT),
                                 st.one_of(TEXT, st.integers(), st.booleans()), max_size=4),
    "extra_args": st.lists(st.one_of(TEXT, st.integers(), st.sampled_from(["--seed", "--max-num-seqs", "--port"])),
                           max_size=4),
    "devices": st.lists(st.integers(-2, 70), max_size=2),
    "members": st.lists(st.one_of(st.just(HOST), TEXT), max_size=3),
}


@pytest.mark.parametrize("key", sorted(schema.SCHEMA))
@settings(max_examples=12, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_key_is_refused_naming_it_or_rendered_without_injection(key, data):
    value = data.draw(st.one_of(ANY, PLAUSIBLE.get(key, ANY)), label=key)
    dep = dict(GOOD, **{key: value})
    result = plan(dep)
    if result["errors"]:
        label = "#1" if key == "name" else None
        for message in result["errors"]:
            assert message.startswith("%s: deployment " % HOST), message
            assert ". Fix: " in message, message
        assert any((": %s" % key) in m.split(". Fix: ")[0] or (label and m.startswith("%s: deployment #1: name" % HOST))
                   for m in result["errors"]), (key, value, result["errors"])
        return  # any error refuses the host's whole plan (preflight.yml)
    if not result["deployments"]:
        # state absent, or a multi-node deployment this host is not a member of: nothing rendered.
        assert result["absent"] or result["multinode"] or HOST not in (value if key == "members" else [])
        return
    planned = result["deployments"][0]
    device_ids = planned["devices"] if planned["devices"] is not None else list(range(planned["card_count"]))
    assert_exact(render(planned, device_ids), planned, device_ids)


# -- docker compose config on a small fixed sample -----------------------------------------------

SAMPLE = [
    GOOD,
    dict(GOOD, extra_env={"A": "x: $y # z", "B": 1, "C": True, "D": "'\"{}[]", "E": "é\u00ff"}),
    dict(GOOD, extra_args=["--seed", 1024, "--additional-config", '{"a": "$b"}'], revision="v1.0", served_model_name="q:8b"),
]


def _compose():
    docker = shutil.which("docker")
    if not docker:
        return None
    probe = subprocess.run([docker, "compose", "version"], capture_output=True, text=True, check=False)
    return docker if probe.returncode == 0 else None


@pytest.mark.parametrize("dep", SAMPLE, ids=["plain", "env", "args"])
def test_docker_compose_config_accepts_rendered_files(dep, tmp_path):
    docker = _compose()
    if docker is None:
        pytest.skip("docker compose is not available")
    planned = plan(dep)["deployments"][0]
    path = tmp_path / "compose.yaml"
    path.write_text(render(planned, [0]))
    env = dict(os.environ, COMPOSE_PROJECT_NAME="", DOCKER_CONTEXT="default")
    out = subprocess.run([docker, "compose", "-f", str(path), "config", "--format", "json"], capture_output=True,
                         text=True, check=False, env=env, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    import json

    service = json.loads(out.stdout)["services"]["vllm-ascend"]
    # compose config prints the file's values ($$ stays $$; the container gets $).
    assert service["environment"] == {k: v.replace("$", "$$") for k, v in planned["environment"].items()}
    assert service["command"] == [a.replace("$", "$$") for a in planned["command"]]
