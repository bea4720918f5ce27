"""Pure logic of the vllm_compose role: presets, merge order, command line, env, image, validation.

Expected values are written by hand from /work/shared/seed/README.md (the seed's compose file)
and the issue's validation list; every validation rule has a case asserting its message.
"""
import hashlib
import json
import os

import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils import _vllm_deploy as vd

QWEN = "Qwen/Qwen3.5-27B"
IMAGE = {"repository": "quay.io/ascend/vllm-ascend", "version": "v0.17.0rc1", "os": "openeuler"}
# Qwen3.5-27B: VL model; text_config holds the 262144 positions (seed README: 262,144 native).
QWEN_INFO = {"prefetched": True, "revision": "master", "reason": None, "weights_bytes": 54 * 1024 ** 3,
             "config": {"model_type": "qwen3_5", "text_config": {"max_position_embeddings": 262144}, "vision_config": {}}}
TEXT_INFO = {"prefetched": True, "revision": "master", "reason": None, "weights_bytes": 16 * 1024 ** 3,
             "config": {"model_type": "qwen3", "max_position_embeddings": 40960}}
MODELS = {QWEN: QWEN_INFO, "Qwen/Qwen3-8B": TEXT_INFO}
SEED_DEP = {"name": "qwen", "preset": "qwen3.5-27b", "model": QWEN, "served_model_name": "Qwen", "port": 8000}


def run(deps, **kw):
    args = dict(host="h1", family="910B", healthy_device_ids=[0, 1, 2, 3, 4, 5, 6, 7], hbm_per_card_mb=65536,
                models=MODELS, image=IMAGE)
    args.update(kw)
    return vd.plan(deps, **args)


def only_error(result):
    assert len(result["errors"]) == 1, result["errors"]
    return result["errors"][0]


def test_seed_preset_gives_the_seed_command_line():
    result = run([SEED_DEP])
    assert result["errors"] == [] and result["warnings"] == []
    dep = result["deployments"][0]
    # shared/seed/README.md "command:", model served by its container path (ROLES.md).
    assert dep["command"] == [
        "vllm", "serve", "/root/.cache/modelscope/hub/models/Qwen/Qwen3.5-27B",
        "--host", "0.0.0.0", "--port", "8000", "--tensor-parallel-size", "2",
        "--served-model-name", "Qwen", "--max-model-len", "133000", "--max-num-batched-tokens", "8096",
        "--trust-remote-code", "--gpu-memory-utilization", "0.95", "--reasoning-parser", "qwen3",
        "--tool-call-parser", "qwen3_coder", "--enable-auto-tool-choice", "--async-scheduling",
        "--compilation-config", '{"cudagraph_mode":"FULL_DECODE_ONLY"}',
    ]
    assert dep["card_count"] == 2
    assert dep["image"] == "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler"


def test_seed_environment_and_flashcomm_off_for_vl():
    env = run([SEED_DEP])["deployments"][0]["environment"]
    assert env == {
        "VLLM_USE_MODELSCOPE": "true", "PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True",
        "HCCL_BUFFSIZE": "512", "OMP_PROC_BIND": "false", "OMP_NUM_THREADS": "1", "TASK_QUEUE_ENABLE": "1",
        "VLLM_ASCEND_ENABLE_FLASHCOMM1": "0",
    }


def test_text_preset_has_no_flashcomm_and_its_own_flags():
    dep = run([{"name": "chat", "preset": "qwen3-8b", "model": "Qwen/Qwen3-8B"}])["deployments"][0]
    assert "VLLM_ASCEND_ENABLE_FLASHCOMM1" not in dep["environment"]
    assert dep["is_vl"] is False
    assert dep["served_model_name"] == "Qwen3-8B"
    assert dep["command"][dep["command"].index("--max-model-len") + 1] == "32768"
    assert dep["command"][dep["command"].index("--tool-call-parser") + 1] == "hermes"
    assert "--compilation-config" not in dep["command"]


def test_merge_order_base_preset_defaults_deployment():
    dep = vd.merge({"name": "q", "model": QWEN, "preset": "qwen3.5-27b", "max_model_len": 65536,
                    "extra_env": {"B": "dep"}},
                   defaults={"gpu_memory_utilization": 0.9, "max_model_len": 100000, "port": 9000,
                             "extra_env": {"A": "defaults", "B": "defaults"}})
    assert dep["gpu_memory_utilization"] == 0.9      # role defaults beat the preset's 0.95
    assert dep["max_model_len"] == 65536             # the deployment beats both
    assert dep["port"] == 9000                       # role defaults beat the base
    assert dep["tensor_parallel_size"] == 2          # preset beats the base
    assert dep["extra_env"] == {"A": "defaults", "B": "dep"}
    assert dep["data_parallel_size"] == 1            # base


def test_compilation_config_yaml_data_and_json_string_are_the_same_argument():
    a = run([dict(SEED_DEP, compilation_config={"cudagraph_mode": "FULL_DECODE_ONLY"})])
    b = run([dict(SEED_DEP, compilation_config='{"cudagraph_mode": "FULL_DECODE_ONLY"}')])
    assert a["deployments"][0]["command"] == b["deployments"][0]["command"]


@pytest.mark.parametrize("value, problem", [
    ("cudagraph_mode:FULL_DECODE_ONLY", "'cudagraph_mode:FULL_DECODE_ONLY' is not JSON"),
    (["FULL_DECODE_ONLY"], "is not a mapping"),
    ({"level": float("nan")}, "cannot be rendered as JSON"),
    ({"x": {1, 2}}, "cannot be rendered as JSON"),
])
def test_compilation_config_must_be_json(value, problem):
    msg = only_error(run([dict(SEED_DEP, compilation_config=value)]))
    assert msg.startswith("h1: deployment qwen: compilation_config: ")
    assert problem in msg
    assert "Fix: write it as YAML data, e.g. compilation_config: {cudagraph_mode: FULL_DECODE_ONLY}" in msg


@pytest.mark.parametrize("gmu", [0, -0.1, 1.01, "0.9", True])
def test_gpu_memory_utilization_outside_0_1(gmu):
    msg = only_error(run([dict(SEED_DEP, gpu_memory_utilization=gmu)]))
    assert "h1: deployment qwen: gpu_memory_utilization: " in msg and "is outside (0, 1]" in msg
    assert "Fix: use a fraction of each card's HBM such as 0.90" in msg


def test_gpu_memory_utilization_above_095_warns():
    result = run([dict(SEED_DEP, gpu_memory_utilization=0.98)])
    assert result["errors"] == []
    assert result["warnings"] == [
        "h1: deployment qwen: gpu_memory_utilization: 0.98 is above 0.95; operators report out-of-memory crashes there "
        "('ready to explode' at 0.98). Fix: use 0.95 or lower; on OOM go to 0.90 first"]
    assert run([dict(SEED_DEP, gpu_memory_utilization=1)])["errors"] == []


def test_cards_not_power_of_two():
    msg = only_error(run([dict(SEED_DEP, tensor_parallel_size=3)]))
    assert msg == ("h1: deployment qwen: tensor_parallel_size x data_parallel_size: 3 x 1 = 3 cards is not a power of two. "
                   "Fix: use 1, 2, 4, 8 or 16 cards in total (HCCL groups and npu_assign need powers of two)")
    assert "2 x 3 = 6 cards" in only_error(run([dict(SEED_DEP, data_parallel_size=3)]))


def test_more_cards_than_healthy():
    msg = only_error(run([dict(SEED_DEP, tensor_parallel_size=4, data_parallel_size=2)], healthy_device_ids=[4, 5, 6, 7]))
    assert msg == ("h1: deployment qwen: tensor_parallel_size x data_parallel_size: needs 8 cards but the host has only "
                   "4 healthy card(s) (4, 5, 6, 7). Fix: lower tensor_parallel_size/data_parallel_size or repair the cards")


def test_tp8_on_910b_for_qwen35_warns_with_reason():
    result = run([dict(SEED_DEP, tensor_parallel_size=8)])
    assert result["errors"] == []
    assert len(result["warnings"]) == 1
    warning = result["warnings"][0]
    assert "tensor_parallel_size: 8 on 910B is known to fail for Qwen/Qwen3.5-27B" in warning
    assert "aclnnCausalConv1d failed ... blockDim is invalid" in warning and "not a memory problem" in warning
    # Not on A3, not for a model without the causal-conv1d kernel.
    assert run([dict(SEED_DEP, tensor_parallel_size=8)], family="A3", image=dict(IMAGE))["warnings"] == []
    assert run([{"name": "c", "model": "Qwen/Qwen3-8B", "tensor_parallel_size": 8}])["warnings"] == []


def test_tp8_warning_from_config_key_for_unknown_name():
    info = dict(TEXT_INFO, config={"max_position_embeddings": 40960, "linear_conv_kernel_dim": 4})
    result = run([{"name": "n", "model": "Acme/Hybrid-7B", "tensor_parallel_size": 8}], models={"Acme/Hybrid-7B": info})
    assert len(result["warnings"]) == 1 and "aclnnCausalConv1d" in result["warnings"][0]


def test_two_deployments_on_one_port():
    deps = [SEED_DEP, {"name": "chat", "preset": "qwen3-8b", "model": "Qwen/Qwen3-8B", "port": 8000}]
    assert only_error(run(deps)) == ("h1: deployment chat: port: 8000 is also the port of deployment qwen. "
                                     "Fix: give each deployment on a host its own port")
    assert run([SEED_DEP, dict(deps[1], port=8001)])["errors"] == []


def test_two_deployments_on_one_card():
    deps = [dict(SEED_DEP, devices=[4, 5]), {"name": "chat", "model": "Qwen/Qwen3-8B", "port": 8001, "devices": [5]}]
    assert only_error(run(deps)) == ("h1: deployment chat: devices: card 5 is also given to deployment qwen. "
                                     "Fix: give each deployment its own cards, or drop devices to let npu_assign choose")


def test_devices_must_be_healthy_and_match_count():
    assert "device(s) 3 are not healthy cards" in only_error(run([dict(SEED_DEP, devices=[3, 4])], healthy_device_ids=[4, 5, 6, 7]))
    assert "1 device(s) given for 2 cards" in only_error(run([dict(SEED_DEP, devices=[4])]))


def test_max_model_len_above_max_position_embeddings_text_config_aware():
    msg = only_error(run([dict(SEED_DEP, max_model_len=300000)]))
    assert msg == ("h1: deployment qwen: max_model_len: 300000 is above Qwen/Qwen3.5-27B's max_position_embeddings 262144 "
                   "(config.json). Fix: set max_model_len to 262144 or less")
    # Top-level key for a text model.
    assert "above Qwen/Qwen3-8B's max_position_embeddings 40960" in only_error(
        run([{"name": "c", "model": "Qwen/Qwen3-8B", "max_model_len": 40961}]))


def test_weights_per_card_above_usable_hbm():
    # 54 GiB on one card of 64 GiB x 0.95 = 60.8 GiB fits; at 0.8 (51.2 GiB) it does not.
    assert run([dict(SEED_DEP, tensor_parallel_size=1)])["errors"] == []
    msg = only_error(run([dict(SEED_DEP, tensor_parallel_size=1, gpu_memory_utilization=0.8)]))
    assert msg == ("h1: deployment qwen: tensor_parallel_size: Qwen/Qwen3.5-27B weighs 54.0 GiB, 54.0 GiB per card at "
                   "tensor_parallel_size 1, more than the 51.2 GiB usable per card (65536 MiB HBM x gpu_memory_utilization 0.8). "
                   "Fix: raise tensor_parallel_size (2, 4, ...) or use a smaller or quantised model")


def test_image_variant_against_chip_family():
    msg = only_error(run([SEED_DEP], image=dict(IMAGE, variant="-a3")))
    assert msg == ("h1: deployment qwen: image: quay.io/ascend/vllm-ascend:v0.17.0rc1-a3-openeuler is the A3 image variant "
                   "but the host's chips are 910B. Fix: use the 910B variant (tag suffix '') or leave "
                   "ascendfleet_image_variant unset to choose it from the chips")
    msg = only_error(run([dict(SEED_DEP, image="quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler")], family="A3"))
    assert "is the 910B image variant but the host's chips are A3" in msg and "tag suffix '-a3'" in msg


def test_unknown_family_is_an_error_naming_the_fix():
    msg = only_error(run([SEED_DEP], family="910A"))
    assert "ascendfleet_image_variant: no vllm-ascend image variant for chip family '910A'" in msg


def test_deployment_image_version_overrides_role_version():
    dep = run([dict(SEED_DEP, image_version="v0.18.0rc1")])["deployments"][0]
    assert dep["image"] == "quay.io/ascend/vllm-ascend:v0.18.0rc1-openeuler"


def test_model_not_prefetched():
    info = {"prefetched": False, "reason": "no completion marker /c/models/Qwen/Qwen3.5-27B/.ascendfleet/complete"}
    msg = only_error(run([SEED_DEP], models={QWEN: info}))
    assert msg == ("h1: deployment qwen: model: Qwen/Qwen3.5-27B (revision master) is not prefetched: no completion marker "
                   "/c/models/Qwen/Qwen3.5-27B/.ascendfleet/complete. Fix: fetch the missing files again: run "
                   "playbooks/prefetch.yml (or deploy-qwen.yml --tags prefetch) for this host; nothing was changed, a "
                   "running container is left as it is")
    assert "is not prefetched: no completion marker" in only_error(run([SEED_DEP], models={}))


def test_flashcomm_forced_on_vl_model():
    msg = only_error(run([dict(SEED_DEP, extra_env={"VLLM_ASCEND_ENABLE_FLASHCOMM1": "1"})]))
    assert msg.startswith("h1: deployment qwen: extra_env.VLLM_ASCEND_ENABLE_FLASHCOMM1: FlashComm v1 is forced on for "
                          "Qwen/Qwen3.5-27B, a vision-language model")
    # A text model may turn it on.
    dep = run([{"name": "c", "model": "Qwen/Qwen3-8B", "extra_env": {"VLLM_ASCEND_ENABLE_FLASHCOMM1": 1}}])
    assert dep["errors"] == [] and dep["deployments"][0]["environment"]["VLLM_ASCEND_ENABLE_FLASHCOMM1"] == "1"


@pytest.mark.parametrize("dep, piece", [
    ({"name": "Bad Name", "model": QWEN}, "h1: deployment #1: name: 'Bad Name' is not a valid deployment name"),
    ({"name": "q", "model": "qwen"}, "h1: deployment q: model: 'qwen' is not a model id. Fix: give the ModelScope id as Owner/Name"),
    ({"name": "q", "model": QWEN, "preset": "nope"}, "h1: deployment q: preset: unknown preset 'nope'"),
    ({"name": "q", "model": QWEN, "state": "gone"}, "h1: deployment q: state: 'gone' is neither present nor absent"),
    ({"name": "q", "model": QWEN, "tensor_paralel_size": 2}, "h1: deployment q: tensor_paralel_size: unknown key(s)"),
    ({"name": "q", "model": QWEN, "port": 70000}, "h1: deployment q: port: 70000 is not a TCP port"),
    ({"name": "q", "model": QWEN, "enable_auto_tool_choice": True},
     "h1: deployment q: enable_auto_tool_choice: is true without tool_call_parser"),
])
def test_input_errors(dep, piece):
    errors = run([dep])["errors"]
    assert any(piece in e for e in errors), errors


def test_duplicate_names_and_absent():
    result = run([SEED_DEP, dict(SEED_DEP, port=8001)])
    assert "two deployments are named qwen" in only_error(result)
    result = run([SEED_DEP, {"name": "old", "model": "Qwen/Qwen3-8B", "state": "absent"}])
    assert result["errors"] == [] and result["absent"] == [{"name": "old", "model": "Qwen/Qwen3-8B"}]
    assert [d["name"] for d in result["deployments"]] == ["qwen"]


def test_hbm_per_card_uses_healthy_chips():
    chips = [{"device_id": 0, "hbm_total_mb": 32768}, {"device_id": 4, "hbm_total_mb": 65536},
             {"device_id": 5, "hbm_total_mb": None, "memory_total_mb": 44280}]
    assert vd.hbm_per_card(chips, [4]) == 65536
    assert vd.hbm_per_card(chips) == 32768
    assert vd.hbm_per_card(chips, [5]) == 44280
    assert vd.hbm_per_card([]) is None


# --------------------------------------------------------------------------- model cache reader

def write_model(root, model="Qwen/Qwen3.5-27B", revision="master", config=None, shards=(("a.safetensors", 10), ("b.safetensors", 5)),
                marker=True, manifest_ok=True, marker_model=None):
    path = os.path.join(root, "models", model)
    os.makedirs(os.path.join(path, ".ascendfleet"))
    with open(os.path.join(path, "config.json"), "w") as handle:
        json.dump(config or {"text_config": {"max_position_embeddings": 262144}, "vision_config": {"depth": 27}}, handle)
    for name, size in shards:
        with open(os.path.join(path, name), "wb") as handle:
            handle.write(b"x" * size)
    manifest = json.dumps({"revision": revision, "files": []}).encode()
    with open(os.path.join(path, ".ascendfleet", "manifest.json"), "wb") as handle:
        handle.write(manifest)
    if marker:
        digest = hashlib.sha256(manifest).hexdigest() if manifest_ok else "0" * 64
        with open(os.path.join(path, ".ascendfleet", "complete"), "w") as handle:
            json.dump({"model": marker_model or model, "revision": revision, "manifest_sha256": digest}, handle)
    return path


def test_model_state_prefetched(tmp_path):
    path = write_model(str(tmp_path))
    state = vd.model_state(str(tmp_path), QWEN, "master")
    assert state == {"path": path, "prefetched": True, "revision": "master", "reason": None, "weights_bytes": 15,
                     "config": {"text_config": {"max_position_embeddings": 262144}, "vision_config": {}}}


@pytest.mark.parametrize("kwargs, revision, reason", [
    ({"marker": False}, "master", "no completion marker"),
    ({}, "v2", "marker is for revision 'master', 'v2' requested"),
    ({"manifest_ok": False}, "master", "manifest does not match the marker's manifest_sha256"),
    ({"marker_model": "Qwen/Other"}, "master", "marker is for model 'Qwen/Other'"),
])
def test_model_state_not_prefetched(tmp_path, kwargs, revision, reason):
    write_model(str(tmp_path), **kwargs)
    state = vd.model_state(str(tmp_path), QWEN, revision)
    assert state["prefetched"] is False and reason in state["reason"]


def test_mirror_prefix():
    dep = run([SEED_DEP], image=dict(IMAGE, mirror="mirror.example:5000/"))["deployments"][0]
    assert dep["image"] == "mirror.example:5000/quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler"


def test_model_state_reads_what_model_prefetch_writes(tmp_path):
    """The marker layout of _facts, end to end: model_prefetch's writer, the one reader."""
    from ansible_collections.ascendfleet.llm.plugins.module_utils import _facts as facts
    from ansible_collections.ascendfleet.llm.plugins.module_utils import _modelscope as ms

    path = write_model(str(tmp_path), marker=False)
    raw = facts.dumps_manifest(ms.build_manifest(QWEN, "master", "a" * 40, [], "hub"))
    with open(os.path.join(path, ".ascendfleet", "manifest.json"), "wb") as handle:
        handle.write(raw)
    with open(os.path.join(path, ".ascendfleet", "complete"), "w") as handle:
        json.dump(facts.build_marker(QWEN, "master", raw), handle)
    assert vd.model_state(str(tmp_path), QWEN, "master")["prefetched"] is True
    assert vd.model_state(str(tmp_path), QWEN, "v1.0")["prefetched"] is False


def test_a_shard_gone_since_the_prefetch_refuses_the_deployment(tmp_path):
    """Issue 19 section 3: a weight shard deleted from a complete cache fails the one reader
    (quick: every manifest file at its size), and the plan refuses naming the file and the fix."""
    from ansible_collections.ascendfleet.llm.plugins.module_utils import _facts as facts
    from ansible_collections.ascendfleet.llm.plugins.module_utils import _modelscope as ms

    path = write_model(str(tmp_path), marker=False)
    files = [{"path": name, "size": os.path.getsize(os.path.join(path, name)),
              "sha256": hashlib.sha256(open(os.path.join(path, name), "rb").read()).hexdigest()}
             for name in ("a.safetensors", "b.safetensors", "config.json")]
    raw = facts.dumps_manifest(ms.build_manifest(QWEN, "master", "a" * 40, files, "hub"))
    with open(os.path.join(path, ".ascendfleet", "manifest.json"), "wb") as handle:
        handle.write(raw)
    with open(os.path.join(path, ".ascendfleet", "complete"), "w") as handle:
        json.dump(facts.build_marker(QWEN, "master", raw), handle)
    assert vd.model_state(str(tmp_path), QWEN, "master")["prefetched"] is True
    os.unlink(os.path.join(path, "b.safetensors"))
    state = vd.model_state(str(tmp_path), QWEN, "master")
    assert state["prefetched"] is False and state["reason"] == "b.safetensors is missing"
    msg = only_error(run([SEED_DEP], models={QWEN: state}))
    assert msg.startswith("h1: deployment qwen: model: Qwen/Qwen3.5-27B (revision master) is not prefetched: "
                          "b.safetensors is missing. Fix: fetch the missing files again")


@pytest.mark.parametrize("ref, registry", [
    ("quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler", "quay.io"),
    ("sim-registry:5000/quay.io/ascend/vllm-ascend:v0.17.0rc1", "sim-registry:5000"),
    ("localhost/vllm:1", "localhost"),
    ("ascend/vllm-ascend:v1", "docker.io"),
    ("vllm-ascend", "docker.io"),
    ("10.0.0.5:5000/vllm@sha256:" + "a" * 64, "10.0.0.5:5000"),
])
def test_image_registry_follows_dockers_rule(ref, registry):
    assert vd.image_registry(ref) == registry


def test_plan_names_the_registry_the_image_is_pulled_from():
    assert run([SEED_DEP])["deployments"][0]["registry"] == "quay.io"
    dep = run([SEED_DEP], image=dict(IMAGE, mirror="mirror.example:5000"))["deployments"][0]
    assert dep["registry"] == "mirror.example:5000"


# Error texts of Docker Engine 20.10.24 (the sim hosts' docker.io) pulling from Debian's
# docker-registry 2.8.2, captured on the simulated fleet (registry names shortened to "reg"); the
# "connection refused" line is Go's net error for a host that answers without a listener.
MIRROR_REF = "reg:5000/quay.io/ascend/vllm-ascend:v0.99.0-openeuler"


@pytest.mark.parametrize("message, cause, fix", [
    ("Error response from daemon: manifest for reg:5000/quay.io/ascend/vllm-ascend:v0.99.0-openeuler not found: "
     "manifest unknown: manifest unknown", "reg:5000 does not serve it (no such tag", "ascendfleet_image_version"),
    ("Error response from daemon: manifest for reg:5000/quay.io/ascend/vllm-ascend@sha256:" + "0" * 64
     + " not found: manifest unknown: manifest unknown", "no such digest", "ascendfleet_image_digest"),
    ('Error response from daemon: Head "https://reg:5000/v2/ascend-private/vllm-ascend/manifests/v1": '
     "no basic auth credentials", "reg:5000 refused the pull", "vllm_compose_image_registry_password"),
    ('Error response from daemon: Get "https://reg:5000/v2/": http: server gave HTTP response to HTTPS client',
     "reg:5000 speaks plain HTTP", "insecure-registries in /etc/docker/daemon.json"),
    ('Error response from daemon: Get "https://reg:5000/v2/": x509: certificate signed by unknown authority',
     "not trusted", "/etc/docker/certs.d/reg:5000/ca.crt"),
    ('Error response from daemon: Get "https://reg:5000/v2/": dial tcp: lookup reg on 127.0.0.11:53: no such host',
     "reg:5000 cannot be reached", "ascendfleet_image_mirror"),
    ('Error response from daemon: Get "https://reg:5000/v2/": dial tcp 172.19.0.3:5000: connect: connection refused',
     "reg:5000 cannot be reached", "registry is up"),
])
def test_pull_failure_names_cause_and_fix(message, cause, fix):
    text = vd.pull_failure(MIRROR_REF, message)
    assert cause in text
    assert "Fix: " in text and fix in text.split("Fix: ", 1)[1]
    assert message in text


def test_pull_failure_unknown_message_is_kept():
    text = vd.pull_failure("quay.io/a/b:1", "Error response from daemon: something new")
    assert text == "pulling quay.io/a/b:1 from quay.io failed. Fix: see Docker's message: " \
        "Error response from daemon: something new"


# --------------------------------------------------------------------------- presets per release

MTP = '{"method":"qwen3_5_mtp","num_speculative_tokens":3,"enforce_eager":true}'


@pytest.mark.parametrize("image, extra, expected", [
    (IMAGE, {}, []),                                                        # v0.17.0rc1: the reference procedure
    (dict(IMAGE, version="v0.18.0rc1"), {}, ["--no-enable-prefix-caching", "--speculative-config", MTP]),
    (dict(IMAGE, version="v0.23.0"), {}, ["--no-enable-prefix-caching", "--speculative-config", MTP]),
    (IMAGE, {"image_version": "v0.18.0"}, ["--no-enable-prefix-caching", "--speculative-config", MTP]),
    (IMAGE, {"image": "mirror:5000/vllm-ascend:v0.19.1rc1-openeuler"}, ["--no-enable-prefix-caching", "--speculative-config", MTP]),
    (dict(IMAGE, version="v0.18.0rc1-broken"), {}, ["--no-enable-prefix-caching", "--speculative-config", MTP]),
    (dict(IMAGE, version="v0.18.0rc1"), {"enable_prefix_caching": True, "speculative_config": None}, ["--enable-prefix-caching"]),
    (dict(IMAGE, image="site/vllm:latest"), {}, []),                        # no release in the tag: the preset as is
], ids=["v0.17", "v0.18rc1", "v0.23", "deployment-version", "explicit-image", "build-suffix", "overridden", "no-release"])
def test_the_qwen35_preset_follows_the_release_recipe(image, extra, expected):
    dep = run([dict(SEED_DEP, **extra)], image=image)["deployments"][0]
    cmd = vd.command(dep)
    tail = [a for i, a in enumerate(cmd) if a in ("--no-enable-prefix-caching", "--enable-prefix-caching", "--speculative-config")
            or (i and cmd[i - 1] == "--speculative-config")]
    assert tail == expected
    # The rest of the reference procedure's command line is the same on every release.
    assert cmd[cmd.index("--max-model-len") + 1] == "133000" and "--async-scheduling" in cmd


def test_preset_layers_in_release_order():
    preset = {"a": 1, "since": [{"release": "v0.18.0rc1", "set": {"a": 2}}, {"release": "v0.20.2rc1", "set": {"a": 3}}]}
    assert [l.get("a") for l in vd.preset_layers(preset, "v0.17.0rc1")] == [1]
    assert [l.get("a") for l in vd.preset_layers(preset, "v0.19.1rc1")] == [1, 2]
    assert [l.get("a") for l in vd.preset_layers(preset, "v0.21.0rc1")] == [1, 2, 3]
    assert [l.get("a") for l in vd.preset_layers(preset, "latest")] == [1]


@pytest.mark.parametrize("key, value, fix", [
    ("enable_prefix_caching", "maybe", "true (--enable-prefix-caching)"),
    ("speculative_config", "method:mtp", "speculative_config: {method: qwen3_5_mtp"),
])
def test_recipe_keys_are_checked(key, value, fix):
    msg = only_error(run([dict(SEED_DEP, **{key: value})]))
    assert msg.startswith("h1: deployment qwen: %s: " % key) and fix in msg


# --------------------------------------------------------------------------- boolean keys (issue 28)
# Each boolean key is read as Ansible reads a boolean: "no", "false", "off", 0 are False (YAML and
# extra-vars often give strings), "maybe" and 2 are refused; before, truthiness decided.

TEXT = {"name": "chat", "model": "Qwen/Qwen3-8B", "tool_call_parser": "hermes"}
FALSE_VALUES = ["no", "false", "off", "OFF", "No", "0", 0, False]
TRUE_VALUES = ["yes", "true", "on", "Yes", "1", 1, True]
FLAGS = [("trust_remote_code", "--trust-remote-code"), ("enable_auto_tool_choice", "--enable-auto-tool-choice"),
         ("async_scheduling", "--async-scheduling")]


@pytest.mark.parametrize("key, option", FLAGS)
@pytest.mark.parametrize("value", FALSE_VALUES)
def test_a_false_boolean_renders_no_flag_even_over_a_preset_that_sets_it(key, option, value):
    # The qwen3.5-27b preset turns all three on; the deployment turns them off.
    result = run([dict(SEED_DEP, **{key: value})])
    assert result["errors"] == [], result["errors"]
    dep = result["deployments"][0]
    assert option not in dep["command"]
    assert dep[key] is False


@pytest.mark.parametrize("key, option", FLAGS)
@pytest.mark.parametrize("value", TRUE_VALUES)
def test_a_true_boolean_renders_its_flag(key, option, value):
    result = run([dict(TEXT, **{key: value})])
    assert result["errors"] == [], result["errors"]
    dep = result["deployments"][0]
    assert dep["command"].count(option) == 1
    assert dep[key] is True


@pytest.mark.parametrize("key, option", FLAGS)
@pytest.mark.parametrize("value, shown", [("maybe", "'maybe'"), (2, "2"), ("", "''"), (None, "None"), ([True], "[True]")])
def test_a_boolean_that_is_neither_is_refused_naming_host_deployment_key_fix(key, option, value, shown):
    msg = only_error(run([dict(TEXT, **{key: value})]))
    assert msg.startswith("h1: deployment chat: %s: must be true or false, got %s. Fix: write true (" % (key, shown)), msg
    assert "or false; yes/no, on/off and 1/0 mean the same" in msg


def test_trust_remote_code_no_from_the_role_defaults_renders_no_flag():
    result = run([SEED_DEP], defaults={"trust_remote_code": "no"})
    assert result["errors"] == [] and "--trust-remote-code" not in result["deployments"][0]["command"]
    msg = only_error(run([SEED_DEP], defaults={"trust_remote_code": "maybe"}))
    assert msg.startswith("h1: deployment qwen: trust_remote_code: must be true or false, got 'maybe'. Fix: ")
    assert "vllm_compose_deployment_defaults" in msg


def test_enable_auto_tool_choice_no_needs_no_tool_call_parser():
    # "no" was true by truthiness, and refused for the missing parser.
    result = run([{"name": "chat", "model": "Qwen/Qwen3-8B", "enable_auto_tool_choice": "no"}])
    assert result["errors"] == [] and "--enable-auto-tool-choice" not in result["deployments"][0]["command"]
    msg = only_error(run([{"name": "chat", "model": "Qwen/Qwen3-8B", "enable_auto_tool_choice": "yes"}]))
    assert "enable_auto_tool_choice: is true without tool_call_parser" in msg


def test_a_string_boolean_plans_exactly_what_the_real_boolean_plans():
    """The plan is what the rollout renders and what the no-op verdict compares: "no" must give the
    same deployment as false, so the verdict is the same too."""
    as_strings = run([dict(SEED_DEP, trust_remote_code="no", async_scheduling="off", enable_auto_tool_choice="false",
                           enable_prefix_caching="no", vision="yes")])
    as_bools = run([dict(SEED_DEP, trust_remote_code=False, async_scheduling=False, enable_auto_tool_choice=False,
                         enable_prefix_caching=False, vision=True)])
    assert as_strings["errors"] == [] and as_strings == as_bools


@pytest.mark.parametrize("value, expected", [
    ("no", ["--no-enable-prefix-caching"]), ("off", ["--no-enable-prefix-caching"]), (0, ["--no-enable-prefix-caching"]),
    (False, ["--no-enable-prefix-caching"]), ("yes", ["--enable-prefix-caching"]), ("true", ["--enable-prefix-caching"]),
    (True, ["--enable-prefix-caching"]), (None, []),
])
def test_enable_prefix_caching_is_a_boolean_or_null(value, expected):
    dep = run([dict(TEXT, enable_prefix_caching=value)])["deployments"][0]
    assert [a for a in dep["command"] if a.endswith("enable-prefix-caching")] == expected


@pytest.mark.parametrize("key", ["enable_prefix_caching", "vision"])
@pytest.mark.parametrize("value, shown", [("maybe", "'maybe'"), (2, "2"), ("", "''")])
def test_a_nullable_boolean_that_is_neither_is_refused(key, value, shown):
    msg = only_error(run([dict(TEXT, **{key: value})]))
    assert msg.startswith("h1: deployment chat: %s: must be true, false or null, got %s. Fix: write true (" % (key, shown)), msg


@pytest.mark.parametrize("value", ["no", "false", "off", 0, False])
def test_vision_no_on_a_vl_model_is_a_text_model(value):
    # Qwen3.5-27B has a vision_config; vision: "no" says it is served as text (FlashComm v1 left alone).
    dep = run([dict(SEED_DEP, vision=value)])["deployments"][0]
    assert dep["is_vl"] is False and "VLLM_ASCEND_ENABLE_FLASHCOMM1" not in dep["environment"]


@pytest.mark.parametrize("value", ["yes", "on", 1, True])
def test_vision_yes_on_a_text_model_turns_flashcomm_off(value):
    dep = run([dict(TEXT, vision=value)])["deployments"][0]
    assert dep["is_vl"] is True and dep["environment"]["VLLM_ASCEND_ENABLE_FLASHCOMM1"] == "0"


def test_command_refuses_a_boolean_it_cannot_read():
    dep = run([TEXT])["deployments"][0]
    dep["trust_remote_code"] = "maybe"
    with pytest.raises(vd.DeployError, match="trust_remote_code: must be true or false, got 'maybe'"):
        vd.command(dep)
    dep["trust_remote_code"] = "no"
    assert "--trust-remote-code" not in vd.command(dep)
