"""Tests of the stand-in vllm-ascend server (tests/sim/vllm/vllm_sim.py), run as a subprocess.

Each refusal of the start-up contract gets its own test asserting the exit code and the message;
the endpoints are checked against servers started on free loopback ports with short delays.
The simulator is only ever run, never imported: the tests see it as the roles will.
"""

import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

SIM = pathlib.Path(__file__).resolve().parent / "vllm" / "vllm_sim.py"

# The seed's command (shared/seed/README.md), minus host/port which each test picks.
SEED_FLAGS = [
    "--tensor-parallel-size", "2", "--served-model-name", "Qwen", "--max-model-len", "133000",
    "--max-num-batched-tokens", "8096", "--trust-remote-code", "--gpu-memory-utilization", "0.95",
    "--reasoning-parser", "qwen3", "--tool-call-parser", "qwen3_coder", "--enable-auto-tool-choice",
    "--async-scheduling", "--compilation-config", '{"cudagraph_mode":"FULL_DECODE_ONLY"}',
]
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "city name"}},
                       "required": ["city"]},
    },
}


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Host:
    """A fake host surface in tmp_path: /dev nodes, driver lib64 with the SoC file, a ModelScope cache."""

    def __init__(self, root):
        self.root = root
        self.dev = root / "dev"
        self.driver = root / "driver"
        self.cache = root / "modelscope"
        self.dev.mkdir()
        (self.driver / "lib64").mkdir(parents=True)
        for name in ("davinci_manager", "devmm_svm", "hisi_hdc"):
            (self.dev / name).touch()
        self.devices(4, 5)
        self.soc("Ascend910B2")
        # Qwen3.5-27B is a VL model: vision_config, max_position_embeddings under text_config.
        self.model("Qwen", "Qwen3___5-27B", {
            "architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
            "text_config": {"max_position_embeddings": 262144, "num_hidden_layers": 64},
            "vision_config": {"depth": 27},
        })
        self.model("Qwen", "Qwen3-0.6B", {"architectures": ["Qwen3ForCausalLM"], "max_position_embeddings": 40960})

    def devices(self, *numbers):
        for node in self.dev.glob("davinci[0-9]*"):
            node.unlink()
        for number in numbers:
            (self.dev / ("davinci%d" % number)).touch()

    def soc(self, name):
        (self.driver / "lib64" / "ascendfleet_sim_soc").write_text(name + "\n")

    def model(self, owner, name, config, weights=True):
        path = self.cache / "models" / owner / name
        path.mkdir(parents=True)
        (path / "config.json").write_text(json.dumps(config))
        if weights:
            (path / "model-00001-of-00001.safetensors").write_bytes(b"\0" * 16)
        return path

    def env(self, **extra):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ASCENDFLEET_SIM_", "VLLM_", "MODELSCOPE_"))}
        env.update({
            "ASCENDFLEET_SIM_DEV_DIR": str(self.dev), "ASCENDFLEET_SIM_DRIVER_DIR": str(self.driver),
            "MODELSCOPE_CACHE": str(self.cache), "VLLM_USE_MODELSCOPE": "true",
            "ASCENDFLEET_SIM_IMAGE_VARIANT": "910b", "ASCENDFLEET_SIM_STARTUP_SECONDS": "0.1",
        })
        env.update({k: str(v) for k, v in extra.items()})
        return env


@pytest.fixture()
def host(tmp_path):
    return Host(tmp_path)


def refuse(host, args, env=None):
    """Run `vllm serve ...` expecting it to exit; return (rc, stdout+stderr)."""
    proc = subprocess.run([sys.executable, str(SIM), "serve"] + args, env=host.env(**(env or {})),
                          capture_output=True, text=True, timeout=10)
    return proc.returncode, proc.stdout + proc.stderr


class Running:
    def __init__(self, host, args, env=None, wait=True):
        self.port = free_port()
        self.lines = []
        self.started = threading.Event()
        self.proc = subprocess.Popen(
            [sys.executable, str(SIM), "serve"] + args + ["--host", "127.0.0.1", "--port", str(self.port)],
            env=host.env(**(env or {})), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        if wait:
            assert self.started.wait(15), "no 'Application startup complete.' in:\n" + self.log()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line)
            if "Application startup complete." in line:
                self.started.set()

    def log(self):
        return "".join(self.lines)

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def request(self, path, body=None, key=None, method=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url(path), data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if key:
            req.add_header("Authorization", "Bearer " + key)
        try:
            with urllib.request.urlopen(req, timeout=5) as resp:
                return resp.status, resp.read().decode(), resp.headers
        except urllib.error.HTTPError as err:
            return err.code, err.read().decode(), err.headers

    def json(self, path, body=None, key=None):
        status, text, _ = self.request(path, body, key)
        return status, json.loads(text) if text else None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(5)
        return self.proc.returncode


@pytest.fixture()
def start(host):
    servers = []

    def _start(args, env=None, wait=True):
        server = Running(host, args, env, wait)
        servers.append(server)
        return server

    yield _start
    for server in servers:
        server.stop()


@pytest.fixture(scope="module")
def seed_server(tmp_path_factory):
    """The seed's deployment, with an API key given through VLLM_API_KEY as the role does."""
    server = Running(Host(tmp_path_factory.mktemp("seed")), ["Qwen/Qwen3.5-27B"] + SEED_FLAGS, {"VLLM_API_KEY": "sk-sim-test"})
    yield server
    server.stop()


@pytest.fixture(scope="module")
def plain_server(tmp_path_factory):
    """A text-only model without parsers, API key or served name."""
    server = Running(Host(tmp_path_factory.mktemp("plain")), ["Qwen/Qwen3-0.6B", "--tensor-parallel-size", "2"])
    yield server
    server.stop()


def chat(text, **extra):
    return dict({"model": "Qwen", "messages": [{"role": "user", "content": text}]}, **extra)


# --------------------------------------------------------------------------- start-up contract


def test_unknown_flag_exits_2_like_argparse(host):
    rc, out = refuse(host, ["Qwen/Qwen3.5-27B", "--tensor-parallel-size", "2", "--no-such-flag", "1"])
    assert rc == 2
    assert "vllm: error: unrecognized arguments: --no-such-flag 1" in out


def test_compilation_config_must_be_json(host):
    rc, out = refuse(host, ["Qwen/Qwen3.5-27B", "--tensor-parallel-size", "2",
                            "--compilation-config", "cudagraph_mode:FULL_DECODE_ONLY"])
    assert rc == 2
    assert "vllm serve: error: argument --compilation-config/-O: 1 validation error for CompilationConfig" in out
    assert "Invalid JSON" in out and "'cudagraph_mode:FULL_DECODE_ONLY'" in out


def test_compilation_config_unknown_cudagraph_mode_is_refused(host):
    rc, out = refuse(host, ["Qwen/Qwen3.5-27B", "--compilation-config", '{"cudagraph_mode":"FULL_DECODE"}'])
    assert rc == 2
    assert "cudagraph_mode\n  Input should be 'NONE', 'PIECEWISE', 'FULL', 'FULL_DECODE_ONLY' or 'FULL_AND_PIECEWISE'" in out


def test_compilation_config_json_list_is_refused(host):
    rc, out = refuse(host, ["Qwen/Qwen3.5-27B", "--compilation-config", '["FULL_DECODE_ONLY"]'])
    assert rc == 2
    assert "Input should be an object" in out


@pytest.mark.parametrize("value, expected", [
    ("1.5", "Input should be less than or equal to 1 [type=less_than_equal, input_value=1.5"),
    ("0", "Input should be greater than 0 [type=greater_than, input_value=0.0"),
    ("-0.2", "Input should be greater than 0 [type=greater_than, input_value=-0.2"),
])
def test_gpu_memory_utilization_outside_0_1_is_refused(host, value, expected):
    rc, out = refuse(host, ["Qwen/Qwen3.5-27B", "--tensor-parallel-size", "2", "--gpu-memory-utilization", value])
    assert rc == 1
    assert "1 validation error for CacheConfig" in out and expected in out
    assert "--gpu-memory-utilization must be in (0, 1]" in out


def test_gpu_memory_utilization_not_a_number_exits_2(host):
    rc, out = refuse(host, ["Qwen/Qwen3.5-27B", "--gpu-memory-utilization", "95%"])
    assert rc == 2
    assert "argument --gpu-memory-utilization: invalid float value: '95%'" in out


def test_model_missing_from_modelscope_cache(host):
    rc, out = refuse(host, ["Qwen/Qwen3-235B-A22B", "--tensor-parallel-size", "2"])
    assert rc == 1
    assert "couldn't find them in the cached files: Qwen/Qwen3-235B-A22B" in out
    assert str(host.cache / "models" / "Qwen" / "Qwen3-235B-A22B") in out
    assert "never downloads" in out


@pytest.mark.parametrize("value", ["false", "1"])
def test_hub_id_without_modelscope_looks_in_huggingface_cache_only(host, value):
    """vLLM reads VLLM_USE_MODELSCOPE as true only when it says "true": "1" means Hugging Face."""
    rc, out = refuse(host, ["Qwen/Qwen3.5-27B", "--tensor-parallel-size", "2"], {"VLLM_USE_MODELSCOPE": value})
    assert rc == 1
    assert "not in the local Hugging Face cache" in out


def test_model_local_path_missing(host):
    missing = host.root / "models" / "Qwen3.5-27B"
    rc, out = refuse(host, [str(missing), "--tensor-parallel-size", "2"])
    assert rc == 1
    assert "Incorrect path_or_model_id: '%s'" % missing in out
    assert "does not exist in the container" in out


def test_model_local_path_without_weights(host):
    path = host.model("Qwen", "Half-Fetched", {"max_position_embeddings": 4096}, weights=False)
    rc, out = refuse(host, [str(path), "--tensor-parallel-size", "2"])
    assert rc == 1
    assert "Cannot find any model weights with `%s`" % path in out


def test_model_missing_shard_listed_in_index(host):
    path = host.model("Qwen", "Two-Shards", {"max_position_embeddings": 4096})
    (path / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {
        "a": "model-00001-of-00001.safetensors", "b": "model-00002-of-00002.safetensors"}}))
    rc, out = refuse(host, [str(path), "--tensor-parallel-size", "2"])
    assert rc == 1
    assert "No such file or directory: '%s'" % (path / "model-00002-of-00002.safetensors") in out
    assert "1 of 2 weight shards" in out


def test_max_model_len_above_text_config_max_position_embeddings(host):
    rc, out = refuse(host, ["Qwen/Qwen3.5-27B", "--tensor-parallel-size", "2", "--max-model-len", "300000"])
    assert rc == 1
    assert ("User-specified max_model_len (300000) is greater than the derived max_model_len "
            "(max_position_embeddings=262144 or model_max_length=None in model's config.json)") in out
    assert "lower --max-model-len to at most 262144" in out


def test_max_model_len_above_top_level_max_position_embeddings(host):
    rc, out = refuse(host, ["Qwen/Qwen3-0.6B", "--tensor-parallel-size", "2", "--max-model-len", "40961"])
    assert rc == 1
    assert "User-specified max_model_len (40961) is greater than the derived max_model_len (max_position_embeddings=40960" in out


def test_allow_long_max_model_len_turns_refusal_into_warning(host, start):
    server = start(["Qwen/Qwen3-0.6B", "--tensor-parallel-size", "2", "--max-model-len", "65536"],
                   {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"})
    assert "User-specified max_model_len (65536) is greater than the derived max_model_len" in server.log()
    assert server.json("/v1/models")[1]["data"][0]["max_model_len"] == 65536


def test_max_model_len_with_yarn_rope_scaling(host):
    """vLLM multiplies original_max_position_embeddings by the YaRN factor (Qwen2.5 long-context recipe)."""
    host.model("Qwen", "Qwen2___5-7B-Instruct", {"max_position_embeddings": 32768, "rope_scaling": {
        "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}})
    rc, out = refuse(host, ["Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size", "2", "--max-model-len", "131073"])
    assert rc == 1
    assert "(131073) is greater than the derived max_model_len (max_position_embeddings=131072" in out


def test_flashcomm1_with_vl_model_is_refused(host):
    rc, out = refuse(host, ["Qwen/Qwen3.5-27B"] + SEED_FLAGS, {"VLLM_ASCEND_ENABLE_FLASHCOMM1": "1"})
    assert rc == 1
    assert "ValueError: Flash Comm V1 is not supported for VL models" in out
    assert "VLLM_ASCEND_ENABLE_FLASHCOMM1=0" in out


def test_flashcomm1_from_additional_config_with_vl_model_is_refused(host):
    rc, out = refuse(host, ["Qwen/Qwen3.5-27B"] + SEED_FLAGS + ["--additional-config", '{"enable_flashcomm1": true}'])
    assert rc == 1
    assert "ValueError: Flash Comm V1 is not supported for VL models" in out


def test_flashcomm1_must_be_an_integer(host):
    rc, out = refuse(host, ["Qwen/Qwen3-0.6B", "--tensor-parallel-size", "2"], {"VLLM_ASCEND_ENABLE_FLASHCOMM1": "true"})
    assert rc == 1
    assert "ValueError: invalid literal for int() with base 10: 'true'" in out


@pytest.mark.parametrize("devices, flags, world", [
    ((4,), ["--tensor-parallel-size", "2"], 2),
    ((4, 5, 6), ["--tensor-parallel-size", "2"], 2),
    ((4, 5), ["--tensor-parallel-size", "2", "--data-parallel-size", "2"], 4),
    ((), [], 1),
])
def test_mapped_davinci_count_must_equal_tp_times_dp(host, devices, flags, world):
    host.devices(*devices)
    rc, out = refuse(host, ["Qwen/Qwen3.5-27B"] + flags)
    assert rc == 1
    assert "The number of visible NPUs (%d) does not match the world size (%d)." % (len(devices), world) in out
    assert "map exactly %d /dev/davinciN devices" % world in out


def test_control_devices_must_be_mapped(host):
    (host.dev / "devmm_svm").unlink()
    rc, out = refuse(host, ["Qwen/Qwen3.5-27B"] + SEED_FLAGS)
    assert rc == 1
    assert "missing: devmm_svm" in out


@pytest.mark.parametrize("variant, soc, chip_type, image_type, chip_variant, suffix", [
    ("910b", "Ascend910_9392", "A3", "A2", "a3", "-a3"),
    ("910b", "Ascend310P3", "_310P", "A2", "310p", "-310p"),
    ("a3", "Ascend910B2", "A2", "A3", "910b", ""),
    ("a3", "Ascend910B3", "A2", "A3", "910b", ""),
    ("310p", "Ascend910B3", "A2", "_310P", "910b", ""),
])
def test_image_variant_must_match_host_soc(host, variant, soc, chip_type, image_type, chip_variant, suffix):
    host.soc(soc)
    rc, out = refuse(host, ["Qwen/Qwen3.5-27B"] + SEED_FLAGS, {"ASCENDFLEET_SIM_IMAGE_VARIANT": variant})
    assert rc == 1
    assert ("Current device type: AscendDeviceType.%s does not match the installed version's device type: "
            "AscendDeviceType.%s, please check your installation package." % (chip_type, image_type)) in out
    assert "SoC version mismatch" in out and soc in out
    assert "run the %s image on this host (tag v0.17.0rc1%s-openeuler)" % (chip_variant, suffix) in out


def test_unsupported_soc_is_refused(host):
    host.soc("Ascend910A")
    rc, out = refuse(host, ["Qwen/Qwen3.5-27B"] + SEED_FLAGS)
    assert rc == 1
    assert "RuntimeError: Can not support soc_version: Ascend910A." in out


def test_driver_not_mounted(host):
    (host.driver / "lib64" / "ascendfleet_sim_soc").unlink()
    rc, out = refuse(host, ["Qwen/Qwen3.5-27B"] + SEED_FLAGS)
    assert rc == 1
    assert "libascend_hal.so: cannot open shared object file" in out
    assert "the Ascend driver is not mounted" in out


def test_auto_tool_choice_requires_a_parser(host):
    rc, out = refuse(host, ["Qwen/Qwen3.5-27B", "--tensor-parallel-size", "2", "--enable-auto-tool-choice"])
    assert rc == 1
    assert "TypeError: Error: --enable-auto-tool-choice requires --tool-call-parser" in out


def test_unknown_tool_call_parser_is_refused(host):
    rc, out = refuse(host, ["Qwen/Qwen3.5-27B", "--tensor-parallel-size", "2", "--tool-call-parser", "qwen4"])
    assert rc == 1
    assert "invalid tool call parser: qwen4" in out


@pytest.mark.parametrize("variant, soc", [("910b", "Ascend910B3"), ("a3", "Ascend910_9392"), ("310p", "Ascend310P3")])
def test_matching_variant_starts(host, start, variant, soc):
    host.soc(soc)
    server = start(["Qwen/Qwen3.5-27B"] + SEED_FLAGS, {"ASCENDFLEET_SIM_IMAGE_VARIANT": variant})
    assert server.request("/health")[0] == 200
    assert "SoC %s (%s), NPUs davinci4, davinci5" % (soc, variant) in server.log()


def test_flashcomm1_with_text_model_and_numeric_compilation_level_start(host, start):
    server = start(["Qwen/Qwen3-0.6B", "--tensor-parallel-size", "2", "-O", "3"], {"VLLM_ASCEND_ENABLE_FLASHCOMM1": "1"})
    assert server.request("/health")[0] == 200


def test_underscore_flags_and_local_path_start(host, start):
    path = host.cache / "models" / "Qwen" / "Qwen3___5-27B"
    server = start([str(path), "--tensor_parallel_size=2", "--max_model_len", "262144"])
    status, models = server.json("/v1/models")
    assert status == 200
    assert [m["id"] for m in models["data"]] == [str(path)]
    assert models["data"][0]["max_model_len"] == 262144


def test_modelscope_cache_with_dotted_directory_name(host, start):
    """Older modelscope clients kept the dot: Qwen/Qwen2.5-7B-Instruct on disk as is."""
    host.model("Qwen", "Qwen2.5-7B-Instruct", {"max_position_embeddings": 32768})
    server = start(["Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size", "2"])
    assert server.json("/v1/models")[1]["data"][0]["max_model_len"] == 32768


def test_modelscope_hub_snapshot_layout(host, start):
    """modelscope >= 1.38 (modelscope-hub) stores <cache>/models/<Owner>--<Name>/snapshots/<revision>/."""
    host.model("Qwen--Qwen3-8B", "snapshots/master", {"max_position_embeddings": 40960})
    server = start(["Qwen/Qwen3-8B", "--tensor-parallel-size", "2"])
    assert "Loading weights from %s" % (host.cache / "models" / "Qwen--Qwen3-8B" / "snapshots" / "master") in server.log()


# --------------------------------------------------------------------------- serving


def test_port_closed_during_startup_then_healthy(host, start):
    server = start(["Qwen/Qwen3.5-27B"] + SEED_FLAGS, {"ASCENDFLEET_SIM_STARTUP_SECONDS": "2"}, wait=False)
    deadline = time.time() + 10
    while "Loading weights from" not in server.log() and time.time() < deadline:
        time.sleep(0.02)
    with pytest.raises(urllib.error.URLError):
        server.request("/health")
    assert "Application startup complete." not in server.log()
    assert server.started.wait(10)
    assert server.request("/health")[0] == 200


def test_never_healthy_image_serves_503(host, start):
    server = start(["Qwen/Qwen3.5-27B"] + SEED_FLAGS, {"ASCENDFLEET_SIM_NEVER_HEALTHY": "1"}, wait=False)
    deadline = time.time() + 10
    while "Started server process" not in server.log() and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.1)
    assert server.request("/health")[0] == 503
    assert server.request("/v1/models")[0] == 503
    assert server.proc.poll() is None
    assert "Application startup complete." not in server.log()


def test_health_open_without_api_key(seed_server):
    status, body, _ = seed_server.request("/health")
    assert (status, body) == (200, "")


@pytest.mark.parametrize("key", [None, "sk-wrong"])
def test_api_key_required_on_v1(seed_server, key):
    assert seed_server.json("/v1/models", key=key) == (401, {"error": "Unauthorized"})
    assert seed_server.json("/v1/chat/completions", chat("hi"), key=key) == (401, {"error": "Unauthorized"})


def test_api_key_from_flag(host, start):
    server = start(["Qwen/Qwen3-0.6B", "--tensor-parallel-size", "2", "--api-key", "flag-key"])
    assert server.json("/v1/models")[0] == 401
    assert server.json("/v1/models", key="flag-key")[0] == 200


def test_api_key_not_logged(seed_server):
    assert "sk-sim-test" not in seed_server.log()


def test_models_lists_served_name(seed_server):
    status, body = seed_server.json("/v1/models", key="sk-sim-test")
    assert status == 200
    assert body["object"] == "list"
    assert [(m["id"], m["root"], m["max_model_len"], m["owned_by"]) for m in body["data"]] == [
        ("Qwen", "Qwen/Qwen3.5-27B", 133000, "vllm")]


def test_served_name_defaults_to_model_argument(plain_server):
    status, body = plain_server.json("/v1/models")
    assert status == 200
    assert [m["id"] for m in body["data"]] == ["Qwen/Qwen3-0.6B"]
    assert body["data"][0]["max_model_len"] == 40960


def test_chat_reply_with_reasoning(seed_server):
    status, body = seed_server.json("/v1/chat/completions", chat("Introduce Ascend 910B in one line."), key="sk-sim-test")
    assert status == 200
    assert body["object"] == "chat.completion" and body["model"] == "Qwen"
    choice = body["choices"][0]
    assert choice["finish_reason"] == "stop"
    assert choice["message"]["role"] == "assistant"
    assert "Introduce Ascend 910B in one line." in choice["message"]["content"]
    assert "Introduce Ascend 910B in one line." in choice["message"]["reasoning_content"]
    assert body["usage"]["total_tokens"] == body["usage"]["prompt_tokens"] + body["usage"]["completion_tokens"]


def test_chat_without_reasoning_parser_has_no_reasoning(plain_server):
    status, body = plain_server.json("/v1/chat/completions", chat("hello", model="Qwen/Qwen3-0.6B"))
    assert status == 200
    assert "reasoning_content" not in body["choices"][0]["message"]
    assert "hello" in body["choices"][0]["message"]["content"]


def test_chat_unknown_model_is_404(seed_server):
    status, body = seed_server.json("/v1/chat/completions", chat("hi", model="gpt-4"), key="sk-sim-test")
    assert status == 404
    assert body["error"]["message"] == "The model `gpt-4` does not exist."
    assert body["error"]["type"] == "NotFoundError"


def test_chat_rejects_invalid_json(seed_server):
    req = urllib.request.Request(seed_server.url("/v1/chat/completions"), data=b"{not json", method="POST",
                                 headers={"Authorization": "Bearer sk-sim-test"})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=5)
    assert err.value.code == 400


@pytest.mark.parametrize("text, city", [
    ("What's the weather like in Beijing today?", "Beijing"),
    ("Will it rain in San Francisco tomorrow?", "San Francisco"),
    ("北京今天天气怎么样？", "北京"),
])
def test_tool_call_get_weather(seed_server, text, city):
    status, body = seed_server.json("/v1/chat/completions", chat(text, tools=[WEATHER_TOOL], tool_choice="auto"),
                                    key="sk-sim-test")
    assert status == 200
    choice = body["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    calls = choice["message"]["tool_calls"]
    assert len(calls) == 1 and calls[0]["type"] == "function"
    assert calls[0]["function"]["name"] == "get_weather"
    assert json.loads(calls[0]["function"]["arguments"]) == {"city": city}


def test_tool_call_arguments_follow_schema_types(seed_server):
    tool = {"type": "function", "function": {"name": "book", "parameters": {"type": "object", "properties": {
        "nights": {"type": "integer"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "smoking": {"type": "boolean"}}, "required": ["nights", "unit", "smoking"]}}}
    status, body = seed_server.json("/v1/chat/completions", chat("Book a room", tools=[WEATHER_TOOL, tool],
                                    tool_choice={"type": "function", "function": {"name": "book"}}), key="sk-sim-test")
    assert status == 200
    call = body["choices"][0]["message"]["tool_calls"][0]["function"]
    assert call["name"] == "book"
    assert json.loads(call["arguments"]) == {"nights": 1, "unit": "celsius", "smoking": True}


def test_tools_without_auto_tool_choice_flags_are_400(plain_server):
    status, body = plain_server.json("/v1/chat/completions",
                                     chat("weather in Paris?", model="Qwen/Qwen3-0.6B", tools=[WEATHER_TOOL]))
    assert status == 400
    assert body["error"]["message"] == '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'


def test_tool_choice_required_works_without_parser_flags(plain_server):
    status, body = plain_server.json("/v1/chat/completions", chat("weather in Paris?", model="Qwen/Qwen3-0.6B",
                                     tools=[WEATHER_TOOL], tool_choice="required"))
    assert status == 200
    call = body["choices"][0]["message"]["tool_calls"][0]["function"]
    assert (call["name"], json.loads(call["arguments"])) == ("get_weather", {"city": "Paris"})


def test_max_tokens_truncates_with_finish_reason_length(plain_server):
    status, body = plain_server.json("/v1/chat/completions", chat("hello there", model="Qwen/Qwen3-0.6B", max_tokens=3))
    assert status == 200
    assert body["choices"][0]["finish_reason"] == "length"
    assert len(body["choices"][0]["message"]["content"].split()) == 3
    assert body["usage"]["completion_tokens"] == 3


def test_several_served_model_names(host, start):
    server = start(["Qwen/Qwen3-0.6B", "--tensor-parallel-size", "2", "--served-model-name", "qwen-small", "default"])
    assert [m["id"] for m in server.json("/v1/models")[1]["data"]] == ["qwen-small", "default"]
    assert server.json("/v1/chat/completions", chat("hi", model="default"))[0] == 200


def test_tool_choice_none_gives_plain_reply(seed_server):
    status, body = seed_server.json("/v1/chat/completions", chat("weather in Paris?", tools=[WEATHER_TOOL], tool_choice="none"),
                                    key="sk-sim-test")
    assert status == 200
    assert body["choices"][0]["message"]["tool_calls"] == []
    assert body["choices"][0]["finish_reason"] == "stop"


def test_image_content_accepted_by_vl_model(seed_server):
    content = [{"type": "text", "text": "Describe this picture."},
               {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]
    status, body = seed_server.json("/v1/chat/completions", {"model": "Qwen", "messages": [{"role": "user", "content": content}]},
                                    key="sk-sim-test")
    assert status == 200
    assert "I see 1 image(s)." in body["choices"][0]["message"]["content"]
    assert "Describe this picture." in body["choices"][0]["message"]["content"]


def test_image_content_refused_by_text_model(plain_server):
    content = [{"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]
    status, body = plain_server.json("/v1/chat/completions", {"messages": [{"role": "user", "content": content}]})
    assert status == 400
    assert "At most 0 image(s)" in body["error"]["message"]


def test_streaming_chat(seed_server):
    status, text, headers = seed_server.request("/v1/chat/completions", chat("stream me", stream=True), key="sk-sim-test")
    assert status == 200
    assert headers["content-type"].startswith("text/event-stream")
    events = [line[6:] for line in text.splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    content = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
    assert "stream me" in content
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def metric(text, name):
    for line in text.splitlines():
        if line.startswith(name + "{"):
            labels, value = line[len(name):].rsplit(" ", 1)
            return labels, float(value)
    raise AssertionError("%s not in metrics:\n%s" % (name, text))


def test_metrics_use_vllm_names_and_count_tokens(seed_server):
    status, before, headers = seed_server.request("/metrics")
    assert status == 200 and headers["content-type"].startswith("text/plain")
    for name in ("vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
                 "vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:prefix_cache_queries_total",
                 "vllm:prefix_cache_hits_total", "vllm:time_to_first_token_seconds_bucket",
                 "vllm:inter_token_latency_seconds_count", "vllm:e2e_request_latency_seconds_sum"):
        labels, _ = metric(before, name)
        assert 'model_name="Qwen"' in labels and 'engine="0"' in labels
    assert "# TYPE vllm:prompt_tokens_total counter" in before
    assert "# TYPE vllm:time_to_first_token_seconds histogram" in before
    # vLLM 0.17 no longer has the old KV-cache gauge (renamed in 0.9.2, removed in 0.12).
    assert "vllm:gpu_cache_usage_perc" not in before
    _, body = seed_server.json("/v1/chat/completions", chat("count these five words"), key="sk-sim-test")
    after = seed_server.request("/metrics")[1]
    assert metric(after, "vllm:prompt_tokens_total")[1] - metric(before, "vllm:prompt_tokens_total")[1] == body["usage"]["prompt_tokens"]
    assert (metric(after, "vllm:generation_tokens_total")[1] - metric(before, "vllm:generation_tokens_total")[1]
            == body["usage"]["completion_tokens"])
    count = "vllm:time_to_first_token_seconds_count"
    assert metric(after, count)[1] - metric(before, count)[1] == 1
    inf = 'vllm:time_to_first_token_seconds_bucket{engine="0",model_name="Qwen",le="+Inf"}'
    assert inf in after
    itl = "vllm:inter_token_latency_seconds_count"
    assert metric(after, itl)[1] - metric(before, itl)[1] == body["usage"]["completion_tokens"] - 1


def test_old_vllm_still_serves_the_old_kv_cache_gauge(host, start):
    server = start(["Qwen/Qwen3-0.6B", "--tensor-parallel-size", "2"], {"ASCENDFLEET_SIM_VLLM_VERSION": "0.10.1"})
    text = server.request("/metrics")[1]
    assert metric(text, "vllm:gpu_cache_usage_perc")[1] == metric(text, "vllm:kv_cache_usage_perc")[1]


def test_version_endpoint_reports_image_version(host, start):
    server = start(["Qwen/Qwen3-0.6B", "--tensor-parallel-size", "2"], {"ASCENDFLEET_SIM_VLLM_VERSION": "0.18.0rc1"})
    assert server.json("/version") == (200, {"version": "0.18.0rc1"})
    assert "vLLM API server version 0.18.0rc1" in server.log()


def test_sigterm_shuts_down_cleanly(host, start):
    server = start(["Qwen/Qwen3.5-27B"] + SEED_FLAGS)
    began = time.time()
    assert server.stop() == 0
    assert time.time() - began < 5
    assert "Application shutdown complete." in server.log()


def test_sigterm_during_startup_exits_promptly(host, start):
    server = start(["Qwen/Qwen3.5-27B"] + SEED_FLAGS, {"ASCENDFLEET_SIM_STARTUP_SECONDS": "60"}, wait=False)
    deadline = time.time() + 10  # the handlers are set before this line (a loaded machine is slow to get there)
    while "non-default args" not in server.log() and time.time() < deadline:
        time.sleep(0.05)
    began = time.time()
    assert server.stop() == 0
    assert time.time() - began < 5


def test_port_in_use_exits_1(host, start):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        rc, out = refuse(host, ["Qwen/Qwen3-0.6B", "--tensor-parallel-size", "2", "--host", "127.0.0.1", "--port", str(port)])
    assert rc == 1
    assert "Address already in use" in out


# --------------------------------------------------------------------------- crash at start-up (-crash image)


def test_crash_at_start_exits_1_with_vllm_traceback(host, start):
    """ASCENDFLEET_SIM_CRASH_AT_START (baked into the -crash image): after the load delay the engine
    core dies the way vLLM V1 reports it - the root cause's traceback at ERROR, then the API
    server's 'Engine core initialization failed' - and the process exits 1 without opening the port."""
    server = start(["Qwen/Qwen3.5-27B"] + SEED_FLAGS,
                   {"ASCENDFLEET_SIM_CRASH_AT_START": "1", "ASCENDFLEET_SIM_STARTUP_SECONDS": "0.2"}, wait=False)
    assert server.proc.wait(15) == 1
    server.reader.join(5)
    lines = server.log().splitlines()
    errors = [line for line in lines if " ERROR " in line]
    assert errors[0].endswith("[core.py:708] EngineCore failed to start.")
    assert errors[0].startswith("(EngineCore_DP0 pid=")
    assert errors[-1].endswith("ERR00100 PTA call acl api failed")
    assert "RuntimeError: NPU function error: aclrtMalloc, error code is 207001" in errors[-1]
    assert lines[-2].endswith("RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}")
    assert "Loading weights from" in server.log()
    assert "Application startup complete." not in server.log()
    with pytest.raises(urllib.error.URLError):
        server.request("/health")


def test_crash_at_start_takes_the_root_cause_from_the_knob(host, start):
    server = start(["Qwen/Qwen3.5-27B"] + SEED_FLAGS,
                   {"ASCENDFLEET_SIM_CRASH_AT_START": "ValueError: weights of layer 3 are corrupt",
                    "ASCENDFLEET_SIM_STARTUP_SECONDS": "0"}, wait=False)
    assert server.proc.wait(15) == 1
    server.reader.join(5)
    assert "[core.py:708] ValueError: weights of layer 3 are corrupt" in server.log()


def test_crash_knob_off_by_default_and_with_0(host, start):
    server = start(["Qwen/Qwen3.5-27B"] + SEED_FLAGS,
                   {"ASCENDFLEET_SIM_CRASH_AT_START": "0", "ASCENDFLEET_SIM_STARTUP_SECONDS": "0"})
    assert server.request("/health")[0] == 200


# --------------------------------------------------------------------------- per-release CLI lists (cli_lists.json)

LATER_FLAG = "--distributed-timeout-seconds"  # in vLLM 0.23.0's serve parser, not in 0.17.0's (cli_lists.json)


def test_flag_of_a_later_release_is_refused_by_the_older_one(host):
    rc, out = refuse(host, ["Qwen/Qwen3.5-27B", LATER_FLAG, "60"], env={"ASCENDFLEET_SIM_VLLM_VERSION": "0.17.0rc1"})
    assert rc == 2
    assert "vllm: error: unrecognized arguments: %s 60" % LATER_FLAG in out


def test_release_flag_the_stand_in_does_not_model_is_accepted(host, start):
    host.model("Qwen", "Qwen3-8B", {"max_position_embeddings": 40960})
    server = start(["Qwen/Qwen3-8B", "--tensor-parallel-size", "2", "--no-enable-prefix-caching", LATER_FLAG, "60",
                    "--kv-cache-metrics-sample", "0.5"],
                   env={"ASCENDFLEET_SIM_VLLM_VERSION": "0.23.0"})
    status, _ = server.json("/v1/models")
    assert status == 200


def test_flag_the_release_does_not_have_is_refused_even_if_modelled(host):
    """--disable-log-requests is gone from vLLM 0.17.0's serve parser (deprecated, then removed)."""
    rc, out = refuse(host, ["Qwen/Qwen3.5-27B", "--disable-log-requests"], env={"ASCENDFLEET_SIM_VLLM_VERSION": "0.17.0rc1"})
    assert rc == 2
    assert "unrecognized arguments: --disable-log-requests" in out


@pytest.mark.parametrize("release", ["0.21.0rc1", "0.26.0rc1"])
def test_no_hf_token_is_refused_where_the_parser_never_built_it(host, release):
    """vLLM >= 0.21's --hf-token takes an optional value (no --no-hf-token), as its own argparse builds it."""
    rc, out = refuse(host, ["Qwen/Qwen3.5-27B", "--no-hf-token"], env={"ASCENDFLEET_SIM_VLLM_VERSION": release})
    assert rc == 2
    assert "unrecognized arguments: --no-hf-token" in out


def test_the_seed_command_of_the_newest_release_starts(host, start):
    """The seed's command as the role writes it for v0.26.0rc1 (FlashComm v1 off through --additional-config from
    v0.23.0, MTP speculative config), on that release's own lists."""
    server = start(["Qwen/Qwen3.5-27B"] + SEED_FLAGS + [
        "--no-enable-prefix-caching", "--speculative-config",
        '{"method":"qwen3_5_mtp","num_speculative_tokens":3,"enforce_eager":true}',
        "--additional-config", '{"enable_flashcomm1":false}'],
        {"ASCENDFLEET_SIM_VLLM_VERSION": "0.26.0rc1", "ASCENDFLEET_SIM_STARTUP_SECONDS": "0"})
    assert server.request("/health")[0] == 200


def test_reasoning_parser_of_a_later_release_is_refused(host):
    sim = json.loads((SIM.parent / "cli_lists.json").read_text())
    later = sorted(set(sim["0.23.0"]["reasoning_parsers"]) - set(sim["0.17.0rc1"]["reasoning_parsers"]))[0]
    rc, out = refuse(host, ["Qwen/Qwen3.5-27B", "--reasoning-parser", later], env={"ASCENDFLEET_SIM_VLLM_VERSION": "0.17.0rc1"})
    assert rc == 1
    assert "invalid reasoning parser: %s" % later in out


# --------------------------------------------------------------------------- completions and the engine-hang switch


def test_completion_of_one_token(plain_server):
    status, body = plain_server.json("/v1/completions", {"model": "Qwen/Qwen3-0.6B", "prompt": "ping", "max_tokens": 1})
    assert status == 200
    assert body["object"] == "text_completion" and body["model"] == "Qwen/Qwen3-0.6B"
    assert body["choices"][0]["finish_reason"] == "length"
    assert body["usage"]["completion_tokens"] == 1 and len(body["choices"][0]["text"].split()) == 1


def test_completion_unknown_model_and_missing_prompt(plain_server):
    status, body = plain_server.json("/v1/completions", {"model": "gpt-4", "prompt": "ping"})
    assert status == 404 and body["error"]["message"] == "The model `gpt-4` does not exist."
    status, body = plain_server.json("/v1/completions", {"model": "Qwen/Qwen3-0.6B"})
    assert status == 400 and body["error"]["param"] == "prompt"


def test_hang_file_holds_requests_while_health_answers(host, start, tmp_path):
    hang = tmp_path / "hung"
    server = start(["Qwen/Qwen3-0.6B", "--tensor-parallel-size", "2"], env={"ASCENDFLEET_SIM_HANG_FILE": str(hang)})
    hang.touch()
    assert server.request("/health")[0] == 200
    req = urllib.request.Request(server.url("/v1/completions"), method="POST",
                                 data=json.dumps({"model": "Qwen/Qwen3-0.6B", "prompt": "ping", "max_tokens": 1}).encode())
    with pytest.raises(OSError):  # socket timeout (URLError or TimeoutError): no token comes
        urllib.request.urlopen(req, timeout=1)
    status, text, _ = server.request("/metrics")
    assert status == 200
    assert 'vllm:num_requests_waiting{engine="0",model_name="Qwen/Qwen3-0.6B"} 1.0' in text
    hang.unlink()
    status, body = server.json("/v1/completions", {"model": "Qwen/Qwen3-0.6B", "prompt": "ping", "max_tokens": 1})
    assert status == 200 and body["usage"]["completion_tokens"] == 1
    # The held request notices the recovery at its next look at the file (every 0.1 s).
    deadline = time.monotonic() + 3
    while 'vllm:num_requests_waiting{engine="0",model_name="Qwen/Qwen3-0.6B"} 0.0' not in server.request("/metrics")[1]:
        assert time.monotonic() < deadline, "the held request still waits 3 s after the recovery"
        time.sleep(0.1)


# --------------------------------------------------------------------------- --shutdown-timeout (vLLM 0.18 on)
# cli_lists.json (recorded from each release's vLLM): 0.17.0rc1's serve has no --shutdown-timeout,
# 0.18.0rc1's has it. With it, a stop refuses new requests and lets those in flight finish.

DRAIN_MODEL = ["Qwen/Qwen3-0.6B", "--tensor-parallel-size", "2"]


def test_shutdown_timeout_is_refused_by_a_release_without_it(host):
    rc, out = refuse(host, DRAIN_MODEL + ["--shutdown-timeout", "30"], env={"ASCENDFLEET_SIM_VLLM_VERSION": "0.17.0rc1"})
    assert rc == 2
    assert "vllm: error: unrecognized arguments: --shutdown-timeout" in out


def _chat_in_background(server):
    """Send one chat completion in a thread; its (status, text) or the exception lands in the list."""
    out = []

    def send():
        try:
            out.append(server.request("/v1/chat/completions", chat("drain me", model="Qwen/Qwen3-0.6B"))[:2])
        except Exception as exc:  # pylint: disable=broad-exception-caught - the aborted request's error is the result
            out.append(exc)
    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread, out


def _wait_running(server, count=1, limit=5):
    deadline = time.time() + limit
    while time.time() < deadline:
        if metric(server.request("/metrics")[1], "vllm:num_requests_running")[1] >= count:
            return True
        time.sleep(0.05)
    return False


def test_stop_with_shutdown_timeout_finishes_the_requests_in_flight(host, start):
    server = start(DRAIN_MODEL + ["--shutdown-timeout", "10"],
                   {"ASCENDFLEET_SIM_VLLM_VERSION": "0.18.0rc1", "ASCENDFLEET_SIM_RESPONSE_SECONDS": "2"})
    thread, out = _chat_in_background(server)
    assert _wait_running(server)
    server.proc.send_signal(signal.SIGTERM)
    deadline = time.time() + 5
    while "rejecting new requests" not in server.log() and time.time() < deadline:
        time.sleep(0.05)
    # New requests are refused while the one in flight finishes.
    status, body = server.json("/v1/chat/completions", chat("too late", model="Qwen/Qwen3-0.6B"))
    assert status == 503 and body["error"]["message"] == "The server is shutting down."
    thread.join(10)
    assert out and not isinstance(out[0], Exception), out
    assert out[0][0] == 200 and json.loads(out[0][1])["choices"][0]["finish_reason"] in ("stop", "length")
    assert server.proc.wait(10) == 0
    server.reader.join(5)
    assert "All in-flight requests finished." in server.log()


def test_stop_without_shutdown_timeout_aborts_the_requests_in_flight(host, start):
    server = start(DRAIN_MODEL, {"ASCENDFLEET_SIM_VLLM_VERSION": "0.18.0rc1", "ASCENDFLEET_SIM_RESPONSE_SECONDS": "3"})
    thread, out = _chat_in_background(server)
    assert _wait_running(server)
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(5) == 0
    thread.join(10)
    # vLLM's default (--shutdown-timeout 0): the request in flight gets no answer.
    assert out and isinstance(out[0], Exception), out
