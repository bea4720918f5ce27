"""Multi-node deployments in the planner: the head's and a member's command line and environment,
written by hand from vllm-ascend's multi-node tutorials (Qwen3.5-397B-A17B "Multi-node Deployment
with MP", DeepSeek-R1 "Multi-Node Data Parallel Deployment"), and the refusals."""

from ansible_collections.ascendfleet.llm.plugins.module_utils import _vllm_cli
from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_deploy import MEMBER_KEYS, plan

MODELS = {
    "Qwen/Qwen3-8B": {"prefetched": True, "revision": "master", "config": {"max_position_embeddings": 40960}},
    "vllm-ascend/DeepSeek-R1-W8A8": {"prefetched": True, "revision": "master", "config": {}},
    "Eco-Tech/Qwen3.5-397B-A17B-w8a8-mtp": {"prefetched": True, "revision": "master", "config": {}},
}
NET = {"big": {"head_address": "192.0.2.11", "address": None, "nic": "enp61s0f0"}}


def run(deps, host, address, **kw):
    network = {"big": dict(NET["big"], address=address)} if kw.pop("network", True) else None
    return plan(deps, host=host, family="910B", healthy_device_ids=list(range(8)), models=MODELS,
                image={"version": "v0.18.0rc1"}, cli=_vllm_cli, network=network, **kw)


def flags(command):
    """The flags after `vllm serve <model>` as one string (easier to compare by hand)."""
    return " ".join(command[3:])


def test_head_and_member_of_the_deepseek_recipe():
    dep = {"name": "big", "preset": "deepseek-w8a8-2xa2", "model": "vllm-ascend/DeepSeek-R1-W8A8",
           "members": ["npu-01", "npu-02"]}
    head = run([dep], "npu-01", "192.0.2.11")
    member = run([dep], "npu-02", "192.0.2.12")
    assert head["errors"] == [] and member["errors"] == []
    assert head["deployments"] == [] and member["deployments"] == []
    h, m = head["multinode"][0], member["multinode"][0]
    assert flags(h["command"]) == (
        "--host 0.0.0.0 --port 8000 --tensor-parallel-size 4 --data-parallel-size 4 --data-parallel-size-local 2 "
        "--data-parallel-address 192.0.2.11 --data-parallel-rpc-port 13389 --served-model-name DeepSeek-R1-W8A8 "
        "--max-model-len 16384 --max-num-batched-tokens 4096 --trust-remote-code --gpu-memory-utilization 0.92 "
        '--speculative-config {"num_speculative_tokens":3,"method":"mtp"} '
        '--compilation-config {"cudagraph_mode":"FULL_DECODE_ONLY"} '
        "--quantization ascend --seed 1024 --enable-expert-parallel --max-num-seqs 16")
    assert flags(m["command"]) == (
        "--host 0.0.0.0 --port 8000 --tensor-parallel-size 4 --data-parallel-size 4 --data-parallel-size-local 2 "
        "--data-parallel-address 192.0.2.11 --data-parallel-rpc-port 13389 --headless --data-parallel-start-rank 2 "
        "--served-model-name DeepSeek-R1-W8A8 "
        "--max-model-len 16384 --max-num-batched-tokens 4096 --trust-remote-code --gpu-memory-utilization 0.92 "
        '--speculative-config {"num_speculative_tokens":3,"method":"mtp"} '
        '--compilation-config {"cudagraph_mode":"FULL_DECODE_ONLY"} '
        "--quantization ascend --seed 1024 --enable-expert-parallel --max-num-seqs 16")
    # TP 4 x 2 local ranks: all 8 cards of each A2 server.
    assert h["card_count"] == m["card_count"] == 8
    assert m["multinode"]["role"] == "member" and m["multinode"]["start_rank"] == 2
    for env, address in ((h["environment"], "192.0.2.11"), (m["environment"], "192.0.2.12")):
        assert {k: env[k] for k in ("HCCL_IF_IP", "GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME", "HCCL_SOCKET_IFNAME",
                                    "HCCL_BUFFSIZE", "OMP_PROC_BIND", "OMP_NUM_THREADS")} == {
            "HCCL_IF_IP": address, "GLOO_SOCKET_IFNAME": "enp61s0f0", "TP_SOCKET_IFNAME": "enp61s0f0",
            "HCCL_SOCKET_IFNAME": "enp61s0f0", "HCCL_BUFFSIZE": "200", "OMP_PROC_BIND": "false", "OMP_NUM_THREADS": "1"}
    assert {k: h["environment"][k] for k in ("VLLM_ASCEND_BALANCE_SCHEDULING", "HCCL_INTRA_PCIE_ENABLE",
                                             "HCCL_INTRA_ROCE_ENABLE")} == {
        "VLLM_ASCEND_BALANCE_SCHEDULING": "1", "HCCL_INTRA_PCIE_ENABLE": "1", "HCCL_INTRA_ROCE_ENABLE": "0"}


def test_qwen397_recipe_head_serves_two_api_servers_member_is_headless():
    dep = {"name": "big", "preset": "qwen3.5-397b-a17b-2xa2", "model": "Eco-Tech/Qwen3.5-397B-A17B-w8a8-mtp",
           "members": ["npu-01", "npu-02"]}
    head = run([dep], "npu-01", "192.0.2.11")
    member = run([dep], "npu-02", "192.0.2.12")
    h, m = head["multinode"][0]["command"], member["multinode"][0]["command"]
    assert h[h.index("--api-server-count") + 1] == "2" and "--headless" not in h
    assert "--api-server-count" not in m and m[m.index("--data-parallel-start-rank") + 1] == "1"
    for cmd in (h, m):
        assert cmd[cmd.index("--tensor-parallel-size") + 1] == "8"
        assert cmd[cmd.index("--data-parallel-size-local") + 1] == "1"
        assert "--no-enable-prefix-caching" in cmd and "--enable-expert-parallel" in cmd
    assert head["multinode"][0]["environment"]["HCCL_BUFFSIZE"] == "1024"
    # The recipe itself runs TP 8 on A2: no causal-conv1d warning for the preset's own size.
    assert head["warnings"] == []


def test_fewer_cards_than_the_host_and_ranks_split_evenly():
    dep = {"name": "big", "model": "Qwen/Qwen3-8B", "members": ["a", "b"], "tensor_parallel_size": 2,
           "data_parallel_size": 2}
    out = run([dep], "b", "192.0.2.12")
    assert out["errors"] == []
    node = out["multinode"][0]
    assert node["card_count"] == 2 and node["data_parallel_size_local"] == 1
    assert node["multinode"] == {"members": ["a", "b"], "head": "a", "role": "member", "local": 1, "start_rank": 1,
                                 "rpc_port": 13389, "head_address": "192.0.2.11", "address": "192.0.2.12",
                                 "nic": "enp61s0f0"}


def test_a_host_that_is_no_member_leaves_the_deployment_alone():
    dep = {"name": "big", "model": "Qwen/Qwen3-8B", "members": ["a", "b"], "data_parallel_size": 2}
    out = run([dep, {"name": "small", "model": "Qwen/Qwen3-8B", "port": 8001}], "c", "192.0.2.13")
    assert out["errors"] == [] and out["multinode"] == []
    assert [d["name"] for d in out["deployments"]] == ["small"]


def test_without_the_network_a_member_is_validated_but_gets_no_command():
    dep = {"name": "big", "model": "Qwen/Qwen3-8B", "members": ["a", "b"], "data_parallel_size": 2}
    out = run([dep], "a", None, network=False)
    assert out["errors"] == []
    assert out["multinode"][0]["command"] == [] and out["multinode"][0]["environment"] == {}


def test_refusals_name_host_deployment_variable_and_fix():
    cases = [
        ({"members": ["a"]}, "members: ['a'] is not a list of two or more distinct inventory host names. Fix: list"),
        ({"members": ["a", "a"]}, "is not a list of two or more distinct inventory host names"),
        ({"members": ["a", "b"], "data_parallel_size": 3},
         "data_parallel_size: 3 ranks do not split evenly over 2 members. Fix: use a multiple of 2"),
        ({"members": ["a", "b"], "data_parallel_size": 4, "data_parallel_size_local": 1},
         "data_parallel_size_local: 1 ranks on each of 2 members is not data_parallel_size 4. Fix: set "
         "data_parallel_size_local to data_parallel_size / members (2)"),
        ({"members": ["a", "b"], "data_parallel_size": 2, "data_parallel_rpc_port": 8000},
         "data_parallel_rpc_port: 8000 is not a TCP port apart from the API port 8000"),
        ({"members": ["a", "b"], "data_parallel_size": 2, "api_server_count": 0},
         "api_server_count: 0 is not a positive integer"),
        ({"members": ["a", "b"], "data_parallel_size": 2, "tensor_parallel_size": 16},
         "tensor_parallel_size x data_parallel_size_local: needs 16 cards but the host has only 8 healthy card(s)"),
    ]
    for extra, expected in cases:
        out = run([dict({"name": "big", "model": "Qwen/Qwen3-8B"}, **extra)], "a", "192.0.2.11")
        assert [e for e in out["errors"] if expected in e and e.startswith("a: deployment big: ")], (extra, out["errors"])


def test_member_keys_cover_what_the_head_refuses():
    # The stand-in's and vLLM's refusals: model, parallel sizes, version (image); and the RPC rendezvous.
    assert {"model", "revision", "image", "tensor_parallel_size", "data_parallel_size",
            "data_parallel_size_local", "data_parallel_rpc_port", "members"} <= set(MEMBER_KEYS)
