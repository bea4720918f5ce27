"""A table of bad inputs through the real planner (vllm_compose_plan) and the real argument specs
(input_errors, reading roles/*/meta/argument_specs.yml): each is refused with a message naming the
host, the variable and the fix. Issue 19, section 4.
"""
import pytest

from ansible_collections.ascendfleet.llm.plugins.filter.inputs import input_errors, role_options
from ansible_collections.ascendfleet.llm.plugins.filter.vllm_compose import vllm_compose_plan
from ansible_collections.ascendfleet.llm.plugins.module_utils._inputs import RULES

HOST = "gpu-07"
CHIPS = [{"device_id": d, "health": "OK", "hbm_total_mb": 65536} for d in range(8)]
MODELS = {"Qwen/Qwen3.5-27B": {"prefetched": True, "revision": "master", "weights_bytes": 0,
                               "config": {"text_config": {"max_position_embeddings": 262144}, "vision_config": {}}}}
IMAGE = {"repository": "quay.io/ascend/vllm-ascend", "version": "v0.17.0rc1", "os": "openeuler", "variant": None,
         "image": "", "digest": "", "mirror": ""}
GOOD = {"name": "qwen", "preset": "qwen3.5-27b", "model": "Qwen/Qwen3.5-27B"}


def shared(fact, value, *roles):
    """The variables of a host whose inventory sets ascendfleet_<fact> and leaves the role variables to it."""
    values = {"ascendfleet_" + fact: value}
    values.update(("%s_%s" % (role, fact), value) for role in roles)
    return values


# (id, role/play variables, variable named in the message, a piece of the fix)
VARIABLES = [
    ("serial-word", {"vllm_compose_serial": "half"}, "vllm_compose_serial", "'25%'"),
    ("serial-zero", {"vllm_compose_serial": 0}, "vllm_compose_serial", "batch size"),
    ("serial-percent-over", {"vllm_compose_serial": "150%"}, "vllm_compose_serial", "batch size"),
    ("serial-list-bad-item", {"vllm_compose_serial": [1, "x"]}, "vllm_compose_serial", "batch size"),
    ("max-fail-over-100", {"vllm_compose_max_fail_percentage": 150}, "vllm_compose_max_fail_percentage", "0"),
    ("max-fail-word", {"vllm_compose_max_fail_percentage": "some"}, "vllm_compose_max_fail_percentage", "whole number"),
    ("digest-short", {"vllm_compose_image_digest": "abc"}, "vllm_compose_image_digest", "sha256:<64"),
    ("digest-upper", {"vllm_compose_image_digest": "sha256:" + "A" * 64}, "vllm_compose_image_digest", "sha256:<64"),
    ("image-os", {"vllm_compose_image_os": "debian"}, "vllm_compose_image_os", "'openeuler'"),
    ("image-variant", {"vllm_compose_image_variant": "a3"}, "vllm_compose_image_variant", "'-a3'"),
    ("image-source", {"vllm_compose_image_source": "registry"}, "vllm_compose_image_source", "'pull'"),
    ("image-version", {"vllm_compose_image_version": "latest"}, "vllm_compose_image_version", "v0.18.0rc1"),
    ("image-repo-empty", {"vllm_compose_image_repository": " "}, "vllm_compose_image_repository", "give a value"),
    ("health-timeout-zero", {"vllm_compose_health_timeout": 0}, "vllm_compose_health_timeout", "seconds"),
    ("health-timeout-word", {"vllm_compose_health_timeout": "10m"}, "vllm_compose_health_timeout", "whole number"),
    ("health-interval-neg", {"vllm_compose_health_interval": -5}, "vllm_compose_health_interval", "seconds"),
    ("smoke-test-word", {"vllm_compose_smoke_test": "maybe"}, "vllm_compose_smoke_test", "true or false"),
    ("rollback-word", {"vllm_compose_rollback": "sometimes"}, "vllm_compose_rollback", "true or false"),
    ("rollback-target", {"vllm_compose_rollback_target": "last"}, "vllm_compose_rollback_target", "'last-good'"),
    ("log-tail-neg", {"vllm_compose_log_tail": -1}, "vllm_compose_log_tail", "log lines"),
    ("project-root-relative", {"vllm_compose_project_root": "opt/ascendfleet"}, "vllm_compose_project_root", "absolute path"),
    ("host-mounts-string", {"vllm_compose_host_mounts": "/usr/local/dcmi"}, "vllm_compose_host_mounts", "YAML list"),
    ("deployments-mapping", {"vllm_compose_deployments": {"name": "qwen"}}, "vllm_compose_deployments", "YAML list"),
    ("deployments-item-string", {"vllm_compose_deployments": ["qwen"]}, "vllm_compose_deployments[0]", "dict"),
    ("shm-size", {"vllm_compose_shm_size": "lots"}, "vllm_compose_shm_size", "1g"),
    ("cache-dir-relative", {"model_prefetch_cache_dir": "cache/modelscope"}, "model_prefetch_cache_dir", "absolute path"),
    ("prefetch-source", {"model_prefetch_source": "s3"}, "model_prefetch_source", "'hub'"),
    ("prefetch-verify", {"model_prefetch_verify": "sha"}, "model_prefetch_verify", "'quick'"),
    ("prefetch-attempts-zero", {"model_prefetch_attempts": 0}, "model_prefetch_attempts", "attempts"),
    ("prefetch-fanout-port", {"model_prefetch_fanout_port": 70000}, "model_prefetch_fanout_port", "65535"),
    ("prefetch-endpoint", {"model_prefetch_endpoint": "modelscope.cn"}, "model_prefetch_endpoint", "https://"),
    ("prefetch-fanout-word", {"model_prefetch_fanout": "auto"}, "model_prefetch_fanout", "true or false"),
    ("prefetch-models-string", {"model_prefetch_models": "Qwen/Qwen3.5-27B"}, "model_prefetch_models", "YAML list"),
    ("verify-idle-percent-sign", {"npu_verify_idle_threshold_pct": "5%"}, "npu_verify_idle_threshold_pct", "number"),
    ("verify-idle-over", {"npu_verify_idle_threshold_pct": 250}, "npu_verify_idle_threshold_pct", "0 to 100"),
    ("verify-min-chips-neg", {"npu_verify_min_healthy_chips": -1}, "npu_verify_min_healthy_chips", "chips"),
    ("verify-max-fail", {"npu_verify_max_fail_percentage": 101}, "npu_verify_max_fail_percentage", "percentage"),
    ("verify-cache-relative", {"npu_verify_cache_dir": "./cache"}, "npu_verify_cache_dir", "absolute path"),
    ("verify-docker-version", {"npu_verify_docker_min_version": "new"}, "npu_verify_docker_min_version", "version"),
    ("verify-sizes-list", {"npu_verify_model_sizes_gb": [54]}, "npu_verify_model_sizes_gb", "YAML mapping"),
    # A shared inventory input as the roles see it: each role variable holds the value of its
    # ascendfleet_ input, and the message names the input the user set.
    ("shared-cache-dir", shared("cache_dir", "cache", "npu_verify", "model_prefetch", "vllm_compose"),
     "ascendfleet_cache_dir", "absolute path"),
    ("shared-digest", shared("image_digest", "abc", "npu_verify", "vllm_compose"), "ascendfleet_image_digest", "sha256:<64"),
    ("shared-version", shared("image_version", "latest", "npu_verify", "vllm_compose"), "ascendfleet_image_version", "v0.18.0rc1"),
    ("shared-deployments", shared("deployments", {"name": "qwen"}, "vllm_compose"), "ascendfleet_deployments", "YAML list"),
    # A shared input alone, as the control node's first play sees a host's vars (no role defaults).
    ("shared-digest-alone", {"ascendfleet_image_digest": "abc"}, "ascendfleet_image_digest", "sha256:<64"),
    ("shared-cache-dir-alone", {"ascendfleet_cache_dir": "cache"}, "ascendfleet_cache_dir", "absolute path"),
    ("shared-source-alone", {"ascendfleet_image_source": "registry"}, "ascendfleet_image_source", "'pull'"),
    ("shared-deployments-alone", {"ascendfleet_deployments": "qwen"}, "ascendfleet_deployments", "YAML list"),
    # A role's own variable that reads a shared input is checked by the shared rule too.
    ("verify-digest", {"npu_verify_image_digest": "abc"}, "npu_verify_image_digest", "sha256:<64"),
    # Issue 28: every format matches the whole value (`$` matched before a trailing newline).
    ("digest-newline", {"vllm_compose_image_digest": "sha256:" + "a" * 64 + "\n"}, "vllm_compose_image_digest", "sha256:<64"),
    ("shared-version-newline", shared("image_version", "v0.17.0rc1\n", "npu_verify", "vllm_compose"),
     "ascendfleet_image_version", "v0.18.0rc1"),
    ("docker-version-space", {"npu_verify_docker_min_version": "24.0.0 "}, "npu_verify_docker_min_version", "version"),
    ("endpoint-space", {"model_prefetch_endpoint": "https://x y"}, "model_prefetch_endpoint", "no spaces"),
    ("pip-index-newline", {"model_prefetch_pip_index_url": "https://pypi.example/simple\n"},
     "model_prefetch_pip_index_url", "no spaces or line breaks"),
    ("mirror-no-host", {"model_prefetch_mirror_url": "https:///models"}, "model_prefetch_mirror_url", "a host"),
    ("shm-size-newline", {"vllm_compose_shm_size": "1g\n"}, "vllm_compose_shm_size", "1g"),
    ("serial-newline", {"vllm_compose_serial": "25%\n"}, "vllm_compose_serial", "batch size"),
    ("cache-dir-newline", shared("cache_dir", "/srv/cache\n", "npu_verify", "model_prefetch", "vllm_compose"),
     "ascendfleet_cache_dir", "one line"),
    # Issue 28: a boolean is read as Ansible reads one (2 is not 1), and a secret is a string.
    ("smoke-test-two", {"vllm_compose_smoke_test": 2}, "vllm_compose_smoke_test", "true or false"),
    ("verify-fail-hosts-word", {"npu_verify_fail_hosts": "maybe"}, "npu_verify_fail_hosts", "true or false"),
    ("api-key-number", {"vllm_compose_api_key": 12345}, "vllm_compose_api_key", "quote it"),
    ("api-key-float", {"vllm_compose_api_key": 1.5}, "vllm_compose_api_key", "Ansible Vault as a string"),
    ("api-key-list", {"vllm_compose_api_key": ["k"]}, "vllm_compose_api_key", "quote it"),
    ("api-key-null", {"vllm_compose_api_key": None}, "vllm_compose_api_key", "'' for none"),
    ("api-key-bool", {"vllm_compose_api_key": True}, "vllm_compose_api_key", "quote it"),
    ("token-number", {"model_prefetch_token": 4242}, "model_prefetch_token", "quote it"),
    ("registry-password-number", {"vllm_compose_image_registry_password": 1234}, "vllm_compose_image_registry_password",
     "quote it"),
]

# (id, deployments, defaults/image overrides, variable named in the message, a piece of the fix)
DEPLOYMENTS = [
    ("model-no-owner", [{"name": "qwen", "model": "Qwen3-0.6B"}], {}, "model", "Owner/Name"),
    # Issue 28: the name reached the NPU ledger and /opt/ascendfleet/<name>/; "a/.." passed the model rule.
    ("name-newline", [dict(GOOD, name="qwen\n")], {}, "name", "lower-case"),
    ("name-embedded-newline", [dict(GOOD, name="qwen\nx")], {}, "name", "lower-case"),
    ("model-newline", [dict(GOOD, model="Qwen/Qwen3.5-27B\n")], {}, "model", "Owner/Name"),
    ("model-dotdot", [dict(GOOD, model="a/..")], {}, "model", "no '..'"),
    ("model-space", [dict(GOOD, model="Qwen/Qwen3.5 27B")], {}, "model", "Owner/Name"),
    ("model-two-slashes", [dict(GOOD, model="Qwen/Qwen3.5-27B/x")], {}, "model", "exactly one '/'"),
    ("name-upper", [{"name": "Qwen", "model": "Qwen/Qwen3.5-27B"}], {}, "name", "lower-case"),
    ("unknown-key", [dict(GOOD, max_num_seq=4)], {}, "max_num_seq", "spelling"),
    ("unknown-preset", [dict(GOOD, preset="qwen4")], {}, "preset", "known presets"),
    ("state-word", [dict(GOOD, state="gone")], {}, "state", "state: absent"),
    ("tp-string", [dict(GOOD, tensor_parallel_size="two")], {}, "tensor_parallel_size", "whole number"),
    ("tp-three", [dict(GOOD, tensor_parallel_size=3)], {}, "tensor_parallel_size x data_parallel_size", "powers of two"),
    ("port-high", [dict(GOOD, port=70000)], {}, "port", "between 1 and 65535"),
    ("gmu-percent", [dict(GOOD, gpu_memory_utilization=95)], {}, "gpu_memory_utilization", "0.90"),
    ("auto-tool-no-parser", [dict(GOOD, tool_call_parser=None)], {}, "enable_auto_tool_choice", "tool_call_parser"),
    ("reasoning-parser", [dict(GOOD, reasoning_parser="qwen")], {}, "reasoning_parser", "did you mean qwen3"),
    ("tool-parser", [dict(GOOD, tool_call_parser="qwen3-coder")], {}, "tool_call_parser", "did you mean qwen3_coder"),
    ("extra-flag-typo", [dict(GOOD, extra_args=["--max-num-seq", "8"])], {}, "extra_args[0]", "did you mean --max-num-seqs"),
    ("extra-flag-later", [dict(GOOD, extra_args=["--distributed-timeout-seconds", "60"])], {}, "extra_args[0]",
     "ascendfleet_image_version"),
    ("extra-flag-one-item", [dict(GOOD, extra_args=["--max-num-seqs 8"])], {}, "extra_args[0]", "two items"),
    ("cudagraph-mode", [dict(GOOD, compilation_config={"cudagraph_mode": "FULL_DECODE"})], {},
     "compilation_config.cudagraph_mode", "FULL_DECODE_ONLY"),
    ("cc-key-value", [dict(GOOD, compilation_config="cudagraph_mode:FULL")], {}, "compilation_config", "JSON"),
    ("devices-count", [dict(GOOD, devices=[0])], {}, "devices", "exactly"),
    ("max-model-len-over", [dict(GOOD, max_model_len=300000)], {}, "max_model_len", "262144 or less"),
    ("not-prefetched", [{"name": "q8", "model": "Qwen/Qwen3-8B", "preset": "qwen3-8b"}], {}, "model", "prefetch"),
    ("port-collision", [GOOD, dict(GOOD, name="qwen-b", devices=[6, 7])], {}, "port", "its own port"),
    # Issue 28: the boolean keys (truthiness read "maybe" as true and added the flag).
    ("trust-remote-code-word", [dict(GOOD, trust_remote_code="maybe")], {}, "trust_remote_code", "write true"),
    ("trust-remote-code-two", [dict(GOOD, trust_remote_code=2)], {}, "trust_remote_code", "or false"),
    ("auto-tool-choice-word", [dict(GOOD, enable_auto_tool_choice="maybe")], {}, "enable_auto_tool_choice", "or false"),
    ("async-scheduling-two", [dict(GOOD, async_scheduling=2)], {}, "async_scheduling", "or false"),
    ("prefix-caching-word", [dict(GOOD, enable_prefix_caching="maybe")], {}, "enable_prefix_caching", "unset/null"),
    ("vision-word", [dict(GOOD, vision="maybe")], {}, "vision", "unset/null"),
]


def names_everything(messages, variable, fix):
    hit = [m for m in messages if m.startswith(HOST + ": ") and (": %s: " % variable) in m and "Fix: " in m]
    assert hit, "no message names host %s and variable %s:\n%s" % (HOST, variable, "\n".join(messages))
    assert any(fix in m.split("Fix: ", 1)[1] for m in hit), "the fix does not say %r:\n%s" % (fix, "\n".join(hit))


@pytest.mark.parametrize("values, variable, fix", [c[1:] for c in VARIABLES], ids=[c[0] for c in VARIABLES])
def test_bad_variable_is_refused_naming_host_variable_fix(values, variable, fix):
    names_everything(input_errors(values, HOST), variable, fix)


@pytest.mark.parametrize("deployments, extra, variable, fix", [c[1:] for c in DEPLOYMENTS], ids=[c[0] for c in DEPLOYMENTS])
def test_bad_deployment_is_refused_naming_host_variable_fix(deployments, extra, variable, fix):
    plan = vllm_compose_plan(deployments, HOST, family="910B", healthy_device_ids=list(range(8)), chips=CHIPS,
                             models=MODELS, defaults={}, image=dict(IMAGE, **extra))
    names_everything(plan["errors"], variable, fix)
    assert all(m.startswith(HOST + ": deployment ") for m in plan["errors"])


def test_the_table_is_at_least_40():
    assert len(VARIABLES) + len(DEPLOYMENTS) >= 40


def test_the_defaults_pass():
    """Every role default (what an untouched inventory gives) is accepted, so no valid run is refused."""
    import yaml
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[4]
    for role in ("npu_verify", "model_prefetch", "vllm_compose", "fleet_monitoring"):
        defaults = yaml.safe_load((root / "roles" / role / "defaults" / "main.yml").read_text()) or {}
        plain = {k: v for k, v in defaults.items() if not (isinstance(v, str) and "{{" in v)}
        assert input_errors(plain, HOST) == [], role


def test_good_play_knobs_pass():
    for serial in (1, "2", "25%", "100%", [1, "50%"]):
        assert input_errors({"vllm_compose_serial": serial}, HOST) == [], serial
    assert input_errors({"vllm_compose_max_fail_percentage": "0", "vllm_compose_image_digest": ""}, HOST) == []


def test_a_shared_input_is_named_once_and_a_role_override_by_its_own_name():
    messages = input_errors(shared("cache_dir", "cache", "npu_verify", "model_prefetch", "vllm_compose"), HOST)
    assert len(messages) == 1 and ": ascendfleet_cache_dir: " in messages[0], messages
    # The role variable set apart from the shared input is what to fix.
    values = dict(shared("cache_dir", "/srv/cache", "npu_verify", "vllm_compose"), model_prefetch_cache_dir="cache")
    messages = input_errors(values, HOST)
    assert len(messages) == 1 and ": model_prefetch_cache_dir: " in messages[0], messages


def test_a_role_alone_checks_its_variables_that_read_a_shared_input():
    """npu_verify's own pre-flight (roles=[npu_verify]) knows the digest rule without vllm_compose's spec."""
    messages = input_errors(shared("image_digest", "abc", "npu_verify"), HOST, roles=["npu_verify"])
    assert len(messages) == 1 and ": ascendfleet_image_digest: 'abc' is not an image digest" in messages[0], messages


def test_every_shared_rule_is_an_input_a_role_reads():
    from ansible_collections.ascendfleet.llm.plugins.module_utils._inputs import SHARED_RULES, shared_inputs
    assert set(SHARED_RULES) <= set(shared_inputs(role_options()).values())


def test_every_rule_names_a_spec_variable_or_a_play_knob():
    options = role_options()
    assert set(RULES) - set(options) == set(), "a rule for a variable no role declares"


def test_a_boolean_input_is_read_as_ansible_reads_one():
    """Ansible's strict boolean (convert_bool.boolean): what the roles' `| bool` and module options accept."""
    from ansible_collections.ascendfleet.llm.plugins.module_utils._inputs import convert
    for value in ("yes", "no", "on", "off", "true", "False", "y", "n", "t", "f", "1", "0", 1, 0, 1.0, 0.0, True, False):
        assert input_errors({"vllm_compose_smoke_test": value, "npu_verify_fail_hosts": value}, HOST) == [], value
    assert convert("no", "bool") == (True, False) and convert("Off", "bool") == (True, False)
    assert convert(" yes ", "bool") == (True, True) and convert(1, "bool") == (True, True)
    for value in ("maybe", 2, -1, 0.5, "", [True], {}):
        assert convert(value, "bool") == (False, None), value


def test_a_secret_number_is_refused_without_showing_it():
    messages = input_errors({"vllm_compose_api_key": 987654}, HOST)
    assert messages == ["gpu-07: vllm_compose_api_key: is a number (value hidden, no_log), not a string. Fix: quote it "
                        "('...') in the inventory or extra-vars, or keep it in Ansible Vault as a string "
                        "(ansible-vault encrypt_string); leave it unset or '' for none"], messages
    assert "987654" not in messages[0]


def test_a_secret_string_passes():
    for value in ("", "0123", "sk-abc", "12345"):
        assert input_errors({"vllm_compose_api_key": value, "model_prefetch_token": value,
                             "vllm_compose_image_registry_password": value}, HOST) == [], value
