"""The one declared schema of what a user can set outside a deployment: every role variable and
shared ``ascendfleet_`` input (issue 28), by hand and property-based.

Two declarations make it, each said once: the roles' meta/argument_specs.yml (type, element type,
choices, suboptions; what ansible-doc and docs/roles/*.md read) and _inputs.RULES / SHARED_RULES
(ranges, anchored formats, play keywords). ``_inputs.schema_problems`` cross-checks them and must
find nothing on the real specs, and must find each kind of disagreement on a spec changed here.
Values are validated with Ansible's ArgumentSpecValidator under the collection's shape check and
rules; the property test throws wrong types, shapes, control characters, huge values and path
tricks at every entry (fixed seed, bounded examples).
"""
import copy
import math

import pytest
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.ascendfleet.llm.plugins.filter.inputs import ROLES, fleet_input_errors, input_errors, role_options
from ansible_collections.ascendfleet.llm.plugins.filter.vllm_compose import vllm_compose_plan
from ansible_collections.ascendfleet.llm.plugins.module_utils import _deploy_schema
from ansible_collections.ascendfleet.llm.plugins.module_utils import _inputs as inputs
from ansible_collections.ascendfleet.llm.plugins.module_utils._shared_inputs import readers as shared_readers

HOST = "npu-07"
OPTIONS = role_options()
SCHEMA = inputs.schema(OPTIONS)


def role_of(name):
    return next((r for r in ROLES if name.startswith(r + "_")), None)


# -- the two declarations agree -----------------------------------------------------------------

def test_the_specs_and_the_rules_agree():
    assert inputs.schema_problems(OPTIONS) == []


def _changed(name, **changes):
    options = copy.deepcopy(OPTIONS)
    options[name].update(changes)
    for key, value in list(changes.items()):
        if value is None:
            del options[name][key]
    return options


@pytest.mark.parametrize("options, problem", [
    # a reader of a shared input declares other choices than the other reader
    (_changed("npu_verify_image_os", choices=["openeuler"]),
     "npu_verify_image_os and vllm_compose_image_os read ascendfleet_image_os but declare different choices"),
    (_changed("npu_verify_image_source", choices=None),
     "npu_verify_image_source and vllm_compose_image_source read ascendfleet_image_source but declare different choices"),
    # another type than the other readers, and than its rule takes
    (_changed("vllm_compose_cache_dir", type="str"), "vllm_compose_cache_dir: rule abspath needs type path"),
    (_changed("npu_verify_mount_paths", elements="str"), "npu_verify_mount_paths: rule abspath needs elements path"),
    # a range on a string, a rule beside choices
    (_changed("vllm_compose_health_timeout", type="str"), "vllm_compose_health_timeout: rule range needs type int or float"),
    (_changed("vllm_compose_shm_size", choices=["1g"]), "vllm_compose_shm_size: has choices and a rule size"),
    # a default its own rule refuses
    (_changed("vllm_compose_log_tail", default=-1), "vllm_compose_log_tail: its own default is refused"),
    (_changed("model_prefetch_venv", default="venv"), "model_prefetch_venv: its own default is refused"),
], ids=["choices-differ", "choices-missing", "type-differs", "elements-differ", "range-on-str", "choices-and-rule",
        "default-out-of-range", "default-relative"])
def test_a_disagreement_is_found(options, problem):
    problems = inputs.schema_problems(options)
    assert any(p.startswith(problem) for p in problems), problems


def test_a_rule_for_an_undeclared_variable_or_a_reader_is_found(monkeypatch):
    monkeypatch.setitem(inputs.RULES, "vllm_compose_no_such_thing", {"kind": "range", "min": 1})
    monkeypatch.setitem(inputs.RULES, "model_prefetch_cache_dir", {"kind": "abspath"})
    monkeypatch.setitem(inputs.RULES, "vllm_compose_log_tail", {"kind": "range", "min": 0, "type": "int"})
    problems = inputs.schema_problems(OPTIONS)
    assert "vllm_compose_no_such_thing: a rule for a variable no role declares" in problems
    assert ("model_prefetch_cache_dir: reads ascendfleet_cache_dir, whose rule in SHARED_RULES is its only rule: "
            "remove it from RULES") in problems
    assert "vllm_compose_log_tail: the rule declares type, which the argument spec says (or nothing does)" in problems


def test_every_variable_of_every_role_and_every_shared_input_is_in_the_schema():
    assert set(SCHEMA) == set(OPTIONS) | set(shared_readers(OPTIONS)) | set(inputs.RULES)
    assert {role_of(n) for n in OPTIONS} == set(ROLES)
    for name in shared_readers(OPTIONS):
        assert SCHEMA[name]["readers"], name


def test_the_deployment_variables_are_the_roles():
    lists = {n for n, s in OPTIONS.items() if n.startswith("vllm_compose_deployment")}
    shared = {inputs.shared_inputs(OPTIONS)[n] for n in lists}
    assert set(_deploy_schema.VARIABLES) == lists | shared


# -- by hand: what Ansible's validator adds, and the rules on top --------------------------------

@pytest.mark.parametrize("values, message", [
    # suboptions of model_prefetch_models (ArgumentSpecValidator: unknown and missing keys)
    ({"model_prefetch_models": [{"model": "Qwen/Qwen3-8B"}, {"model": "a/b", "revison": "v1"}]},
     "npu-07: model_prefetch_models[1]: holds an unknown key (revison). Fix: give each item of model_prefetch_models "
     "as a mapping with the keys exclude, include, model, revision (model required)"),
    ({"model_prefetch_models": [{"revision": "master"}]},
     "npu-07: model_prefetch_models[0]: lacks the required key(s) model. Fix: give each item of model_prefetch_models "
     "as a mapping with the keys exclude, include, model, revision (model required)"),
    # path tricks: the validator would expand ~ and $HOME on the control node; a '..' step
    ({"model_prefetch_venv": "~/venv"},
     "npu-07: model_prefetch_venv: '~/venv' is not an absolute path. Fix: give an absolute path starting with /, "
     "e.g. /var/lib/ascendfleet/modelscope"),
    ({"vllm_compose_project_root": "$HOME/opt"},
     "npu-07: vllm_compose_project_root: '$HOME/opt' is not an absolute path. Fix: give an absolute path starting with /, "
     "e.g. /var/lib/ascendfleet/modelscope"),
    ({"ascendfleet_cache_dir": "/var/lib/../../etc"},
     "npu-07: ascendfleet_cache_dir: '/var/lib/../../etc' holds a '..' step (it names another directory than it says). "
     "Fix: give the absolute path without '..' steps, e.g. /var/lib/ascendfleet/modelscope"),
    ({"ascendfleet_host_mounts": ["/usr/local/dcmi", "usr/local/bin/npu-smi"]},
     "npu-07: ascendfleet_host_mounts[1]: 'usr/local/bin/npu-smi' is not an absolute path. Fix: give every host path "
     "as an absolute path, e.g. /usr/local/dcmi"),
    # numbers that are not finite, or absurdly large
    ({"npu_verify_idle_threshold_pct": float("nan")},
     "npu-07: npu_verify_idle_threshold_pct: nan is outside the range from 0 to 100. Fix: give a percentage from 0 to 100"),
    ({"npu_verify_idle_threshold_pct": "inf"},
     "npu-07: npu_verify_idle_threshold_pct: 'inf' is outside the range from 0 to 100. Fix: give a percentage from 0 to 100"),
    ({"vllm_compose_health_timeout": 10 ** 30},
     "npu-07: vllm_compose_health_timeout: %d is outside the range from 1 to 31536000. Fix: give the health gate's "
     "time-out in seconds, e.g. 1800" % 10 ** 30),
    # text on one line, whatever the variable (it reaches command lines, files, environments)
    ({"model_prefetch_cli_version": "1.40.2\n--index-url=http://evil"},
     "npu-07: model_prefetch_cli_version: '1.40.2\\n--index-url=http://evil' holds a line break or another control "
     "character. Fix: give the value on one line without control characters"),
    ({"vllm_compose_summary_hosts": ["npu-01", "npu-02\r"]},
     "npu-07: vllm_compose_summary_hosts[1]: 'npu-02\\r' holds a line break or another control character. Fix: give the "
     "value on one line without control characters"),
    ({"vllm_compose_api_key": "sk-1\nX=1"},
     "npu-07: vllm_compose_api_key: the value (hidden, no_log) holds a line break or another control character. Fix: "
     "give the value on one line without control characters"),
    # shared inputs with a format of their own now
    ({"ascendfleet_image": "quay.io/x:v1 --privileged"},
     "npu-07: ascendfleet_image: 'quay.io/x:v1 --privileged' is not an image reference without spaces. Fix: give an "
     "image reference such as quay.io/ascend/vllm-ascend:v0.18.0rc1, or leave it empty"),
    ({"npu_verify_image_os": "debian"},
     "npu-07: npu_verify_image_os: 'debian' is not one of 'openeuler', 'ubuntu'. Fix: use one of 'openeuler', 'ubuntu'"),
    # the cache layout: the shared input, checked as the role variable that reads it declares it
    ({"ascendfleet_cache_layout": "revision"},
     "npu-07: ascendfleet_cache_layout: 'revision' is not one of 'flat', 'revisions'. Fix: use one of 'flat', 'revisions'"),
    ({"model_prefetch_resolve": "sometimes"},
     "npu-07: model_prefetch_resolve: 'sometimes' is not one of 'missing', 'always'. Fix: use one of 'missing', 'always'"),
    # fleet_monitoring is in the schema too
    ({"fleet_monitoring_prometheus_port": 0},
     "npu-07: fleet_monitoring_prometheus_port: 0 is outside the range from 1 to 65535. Fix: give a TCP port between 1 "
     "and 65535, e.g. 9090, or null for none"),
    ({"fleet_monitoring_npu_exporter_scheme": "ftp"},
     "npu-07: fleet_monitoring_npu_exporter_scheme: 'ftp' is not one of 'http', 'https'. Fix: use one of 'http', 'https'"),
], ids=["sub-unknown", "sub-missing", "tilde", "dollar", "dotdot", "mount-relative", "nan", "inf", "huge", "cli-version",
        "summary-hosts", "api-key", "image", "npu-verify-os", "cache-layout", "resolve", "prometheus-port", "exporter-scheme"])
def test_refused_with_the_collection_s_message(values, message):
    assert input_errors(values, HOST) == [message]


def test_a_secret_is_never_shown():
    for value in ("sk-1\nX=1", "sk-2\x00"):
        for text in input_errors({"vllm_compose_api_key": value, "model_prefetch_token": value}, HOST):
            assert "sk-" not in text, text


@pytest.mark.parametrize("values", [
    {"model_prefetch_models": [{"model": "Qwen/Qwen3-8B", "revision": "v1", "include": ["*.json"], "exclude": []}]},
    {"ascendfleet_cache_dir": "/mnt/disk2/modelscope/", "ascendfleet_host_mounts": ["/usr/local/dcmi"]},
    {"ascendfleet_image": "registry.local:5000/ascend/vllm-ascend:v0.18.0rc1@sha256:" + "a" * 64},
    {"ascendfleet_image_mirror": "mirror.example:5000/proxy", "npu_verify_idle_threshold_pct": "15"},
    {"vllm_compose_project_root": "/mnt/my disk/opt", "vllm_compose_health_timeout": "1800"},
    {"fleet_monitoring_prometheus_port": None, "fleet_monitoring_dir": "/srv/monitoring"},
], ids=["models", "paths", "image", "mirror", "project-root", "monitoring"])
def test_valid_values_pass(values):
    assert input_errors(values, HOST) == []


def test_one_call_judges_every_host_of_the_run_and_names_each_bad_one():
    """Issue 30: the check of every host at once (one run_once task) gives each host's own messages,
    in the order of the run's hosts; a host --limit leaves out is not judged."""
    hostvars = {"npu-01": {"vllm_compose_health_timeout": 0},
                "npu-02": {"ascendfleet_cache_dir": "/mnt/disk2/modelscope/"},
                "npu-03": {"npu_verify_image_os": "debian", "vllm_compose_health_timeout": "1800"},
                "npu-04": {"npu_verify_image_os": "debian"}}
    assert fleet_input_errors(["npu-03", "npu-02", "npu-01"], hostvars, shared=True) == [
        "npu-03: npu_verify_image_os: 'debian' is not one of 'openeuler', 'ubuntu'. Fix: use one of 'openeuler', 'ubuntu'",
        "npu-01: vllm_compose_health_timeout: 0 is outside the range from 1 to 31536000. Fix: give the health gate's "
        "time-out in seconds, e.g. 1800"]
    assert fleet_input_errors(["npu-02"], hostvars) == [] and fleet_input_errors([], hostvars) == []


# -- deployments on the control node: the planner's words, before any host changes ---------------

QWEN = {"name": "q", "model": "Qwen/Qwen3-8B", "preset": "qwen3-8b"}
BAD_DEPLOYMENTS = [
    [dict(QWEN, port="abc")],
    [dict(QWEN, extra_env={"X: y\n    privileged: true\n    pid": "host"})],
    [dict(QWEN, name="q\n")],
    [dict(QWEN, max_num_seq=4), dict(QWEN, name="r", devices="0,1")],
    [dict(QWEN, trust_remote_code="maybe", extra_args=["--port", "9000"])],
]


@pytest.mark.parametrize("deployments", BAD_DEPLOYMENTS, ids=["port", "env-key", "name", "two", "bool-flag"])
def test_a_bad_deployment_key_is_refused_on_the_control_node_as_the_planner_refuses_it(deployments):
    image = {"repository": "quay.io/ascend/vllm-ascend", "version": "v0.18.0rc1", "os": "openeuler"}
    plan = vllm_compose_plan(deployments, HOST, family="910B", healthy_device_ids=list(range(8)),
                             chips=[{"device_id": d, "health": "OK", "hbm_total_mb": 65536} for d in range(8)],
                             models={}, defaults={}, image=image)
    assert plan["errors"]
    for variable in ("ascendfleet_deployments", "vllm_compose_deployments"):
        assert input_errors({variable: deployments}, HOST) == plan["errors"]
    # each role's own pre-flight refuses them too (the prefetch would otherwise fetch first)
    for role in ("model_prefetch", "npu_verify"):
        assert input_errors({"ascendfleet_deployments": deployments}, HOST, roles=[role]) == plan["errors"], role


def test_bad_deployment_defaults_are_refused_naming_the_variable_set():
    assert input_errors({"ascendfleet_deployment_defaults": {"port": "x", "trust_remote_code": "maybe"}}, HOST) == [
        "npu-07: ascendfleet_deployment_defaults: port: 'x' is not a TCP port. Fix: use a port between 1 and 65535"]


def test_good_deployments_pass_on_the_control_node():
    deployments = [QWEN, dict(QWEN, name="r", port=8001, trust_remote_code="no", extra_env={"A": 1}, devices=[2, 3])]
    assert input_errors({"ascendfleet_deployments": deployments,
                         "ascendfleet_deployment_defaults": {"gpu_memory_utilization": 0.9}}, HOST) == []


# -- property-based -------------------------------------------------------------------------------

NASTY = st.sampled_from(["\n", "\r", "\x00", "\t", "\x85", "\u2028", ": ", "#", "{{ x }}", "{", "*", "&", "'", '"', "$",
                         "${HOME}", "%", "`", "\\", "/", "..", "../", "~", "~/", " ", "-", "--", "=", ",", "é",
                         "\U0001f600", "A", "a", "0", "_", "."])
TEXT = st.one_of(st.text(max_size=12), st.lists(NASTY, max_size=8).map("".join),
                 st.integers(1, 5).map(lambda n: "/" + "a" * (n * 2000)))
PATHS = st.lists(st.sampled_from(["/", "..", ".", "~", "$HOME", "opt", "a b", "x\n", "", "//"]), max_size=5).map("/".join)
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70), st.floats(allow_nan=True), TEXT, PATHS,
                   st.sampled_from(["no", "yes", "maybe", "1", "0", "-1", "25%", "150%", "1e400", "nan", "inf",
                                    "v0.18.0rc1", "sha256:" + "a" * 64, "https://x y", "http://h/p", "/opt/x",
                                    "pull", "openeuler", "auto", "-a3", "hub", "quick", "http"]))
ANY = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                   st.dictionaries(st.one_of(TEXT, st.integers()), inner, max_size=4)),
                   max_leaves=8)


def _raw_spec_validator(spec):
    """ansible-core's own role argument validation of one variable (the spec as the role declares it)."""
    return ArgumentSpecValidator({"x": inputs.validator_spec(spec)})


def _names_it(message, name):
    head = message.split(". Fix: ", 1)[0]
    return head.startswith("%s: %s: " % (HOST, name)) or head.startswith("%s: %s[" % (HOST, name)) or (
        name in _deploy_schema.VARIABLES and (head.startswith("%s: deployment " % HOST)
                                              or head.startswith("%s: %s: " % (HOST, name))))


@pytest.mark.parametrize("name", sorted(SCHEMA))
@settings(max_examples=8, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_variable_is_refused_naming_it_or_accepted_as_ansible_and_its_rule_accept_it(name, data):
    entry = SCHEMA[name]
    spec, rule = entry["spec"], entry["rule"]
    value = data.draw(ANY, label=name)
    messages = input_errors({name: value}, HOST)
    if messages:
        for message in messages:
            assert message.startswith(HOST + ": ") and ". Fix: " in message, message
            assert _names_it(message, name), (name, value, messages)
            if spec.get("no_log") and isinstance(value, str) and len(value) > 3:
                assert repr(value) not in message, message
    else:
        # ansible-core's role argument validation would not fail after ours passed
        assert not _raw_spec_validator(spec).validate({"x": value}).errors.errors, (name, value)
        kind = spec.get("type", "raw")
        texts = [value] if kind in ("str", "path") else (value or []) if kind == "list" and spec.get("elements") in ("str", "path") else []
        for text in texts:
            assert not isinstance(text, str) or not inputs.CONTROL_RE.search(text), (name, value)
        if value is not None and rule and rule["kind"] == "range":
            number = float(value)
            assert math.isfinite(number) and rule["min"] <= number <= rule.get("max", number), (name, value)
        if value not in (None, "") and rule and rule["kind"] == "abspath":
            for path in ((value or []) if rule.get("each") else [value]):
                assert path.startswith("/") and ".." not in path.split("/"), (name, value)
    # one schema wherever it is checked: the shared input and each role variable reading it, the
    # control node (every role) and the role's own pre-flight (its role alone) refuse alike
    for reader in entry["readers"] if name in shared_readers(OPTIONS) and shared_readers(OPTIONS)[name]["direct"] else []:
        if reader in shared_readers(OPTIONS)[name]["direct"]:
            assert bool(input_errors({reader: value}, HOST)) == bool(messages), (name, reader, value)
    role = role_of(name)
    if role:
        assert bool(input_errors({name: value}, HOST, roles=[role])) == bool(messages), (name, role, value)


# -- where it runs: first in every role, and in the first play of the playbooks -------------------

def test_every_role_checks_its_inputs_first():
    """The first task of each role's pre-flight (imported first by tasks/main.yml) runs input_errors
    on every variable of the role (input_names), so nothing on a host changes before it."""
    import pathlib

    import yaml

    root = pathlib.Path(__file__).resolve().parents[4]
    for role in ROLES:
        main = yaml.safe_load((root / "roles" / role / "tasks" / "main.yml").read_text())
        if main[0].get("ansible.builtin.import_tasks") == "verify.yml":
            # npu_verify: main.yml is ansible-core's argument spec task and verify.yml, the table of
            # contents the deploy playbook enters without that task (tasks_from: verify).
            assert role == "npu_verify" and len(main) == 1, (role, main)
            main = yaml.safe_load((root / "roles" / role / "tasks" / "verify.yml").read_text())
        first = main[0]
        block = first.get("block", [first])[0] if "block" in first else first
        assert block.get("ansible.builtin.import_tasks") == "preflight.yml", (role, first)
        task = yaml.safe_load((root / "roles" / role / "tasks" / "preflight.yml").read_text())[0]
        assert "'%s' | ascendfleet.llm.input_names" % role in task["vars"]["__ascendfleet_input_names"], role
        called = " ".join(task["vars"]["__ascendfleet_input_errors"].split())
        # vllm_compose leaves the deployments' keys to its planner, the next task (same schema, every
        # refusal at once); the other roles check them here too.
        assert ("ascendfleet.llm.input_errors(inventory_hostname, roles=['%s']%s)"
                % (role, ", deployments=false" if role == "vllm_compose" else "")) in called, role
    # check_inputs.yml: one task for every host of the run (issue 30), each host on its own variables.
    play = yaml.safe_load((root / "playbooks" / "check_inputs.yml").read_text())[0]
    assert play["tasks"][0]["run_once"] is True
    assert ("ansible_play_hosts | ascendfleet.llm.fleet_input_errors(hostvars, shared=true)"
            in play["tasks"][0]["vars"]["__ascendfleet_input_errors"])


def test_vllm_composes_preflight_leaves_the_deployment_keys_to_its_planner():
    # Two bad deployments, one a schema refusal (gpu_memory_utilization 1.2), one the planner's (not
    # JSON): the role's first check does not stop on the first, so the planner names both at once.
    from ansible_collections.ascendfleet.llm.plugins.filter.inputs import input_errors

    deps = [{"name": "gmu", "model": "Qwen/Qwen3.5-27B", "port": 8100, "gpu_memory_utilization": 1.2}]
    assert input_errors({"vllm_compose_deployments": deps}, "h", roles=["vllm_compose"], deployments=False) == []
    assert any("gpu_memory_utilization" in e for e in input_errors({"vllm_compose_deployments": deps}, "h",
                                                                   roles=["vllm_compose"]))


class _CountingList(list):
    """A list that counts how often it is read whole, as Ansible's lazy containers template their
    items on every such read."""
    reads = 0

    def __iter__(self):
        type(self).reads += 1
        return super().__iter__()


class _CountingVars(dict):
    reads = {}

    def __getitem__(self, name):
        self.reads[name] = self.reads.get(name, 0) + 1
        return super().__getitem__(name)


def test_each_variable_is_read_once():
    """Issue 30: each host's input check read every variable, and every item of a list, many times:
    on Ansible's lazy containers each read templates again (~0.5 s of control-node CPU per host and
    check). The values are made plain data once, then checked; the verdict is the same."""
    matrix = [{"cann": "8.5.1", "driver_min": "25.5.0"}, {"cann": "x", "driver_min": "25.2.0"}]
    variables = _CountingVars(npu_verify_driver_matrix=_CountingList(matrix), npu_verify_min_healthy_chips=_CountingList([1]))
    errors = input_errors(variables, HOST, roles=["npu_verify"])
    assert errors == input_errors({"npu_verify_driver_matrix": matrix, "npu_verify_min_healthy_chips": [1]}, HOST, roles=["npu_verify"])
    assert [e.split(":")[1].strip() for e in errors] == ["npu_verify_min_healthy_chips"], errors
    assert _CountingList.reads == 2 and set(variables.reads.values()) == {1}, (_CountingList.reads, variables.reads)
