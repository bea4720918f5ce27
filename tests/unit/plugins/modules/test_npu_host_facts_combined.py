# -*- coding: utf-8 -*-
"""npu_host_facts' model_cache and vllm_host options (issue 30: one read per host): the combined read
answers exactly what model_cache_info and vllm_host_info answer for the same options on the same
host (fake npu-smi replaying the seed's 910B2 sample, fake docker replaying a sim host after a
deploy of qwen and chat, a cache entry built by hand), in one module execution."""

from ansible_collections.ascendfleet.llm.plugins.module_utils._host_read import question
from ansible_collections.ascendfleet.llm.plugins.modules import model_cache_info, npu_host_facts, vllm_host_info

from .conftest import FAKE_NPU_SMI
from .test_model_prefetch_modules import MODEL, stage
from .test_vllm_host_info import IMAGE, PLANNED, _host

A3_IMAGE = "quay.io/ascend/vllm-ascend:v0.17.0rc1-a3-openeuler"


def _result(result):
    """A module's result but what any module returns (changed, invocation) and its warnings: ansible-core
    keeps module warnings for the process, so in a test process they carry over from earlier tests."""
    return dict((k, v) for k, v in result.items() if k not in ("changed", "invocation", "warnings"))


def _combined(tmp_path, host_args, **extra):
    """npu_host_facts reading the chips, the cache (as model_prefetch asks) and the host (as the plan asks)."""
    cache_args = {"cache_dir": str(tmp_path / "cache"), "models": [{"model": MODEL, "revision": "v1.0"},
                                                                   {"model": "Qwen/Qwen3-8B", "revision": "master"}],
                  "deployment_states": True}
    vllm_args = dict(host_args)
    del vllm_args["planned"]
    vllm_args["planned_by_family"] = {"910B": PLANNED, "A3": [dict(d, image=A3_IMAGE) for d in PLANNED]}
    vllm_args["exclude_unhealthy"] = True
    args = {"npu_smi": True, "npu_smi_executable": FAKE_NPU_SMI, "docker": False, "control_devices": ["null"],
            "model_cache": cache_args, "vllm_host": vllm_args}
    args.update(extra)
    return args, cache_args


def test_one_read_answers_what_the_two_readers_answer(run_module, tmp_path, monkeypatch):
    stage(tmp_path / "cache")
    host_args = _host(tmp_path, monkeypatch)
    args, cache_args = _combined(tmp_path, host_args)
    failed, combined = run_module(npu_host_facts.main, args)
    assert not failed, combined.get("msg")
    assert combined["npu"]["family"] == "910B"

    failed, alone = run_module(model_cache_info.main, cache_args)
    assert not failed
    assert combined["model_cache"] == _result(alone)
    assert [m["complete"] for m in combined["model_cache"]["models"]] == [True, False]
    assert combined["model_cache"]["missing"] == [{"model": "Qwen/Qwen3-8B", "revision": "master", "include": [], "exclude": []}]

    # The plan of the 910B family (the chips' family) is what was read; the seed's chips are all OK.
    failed, alone = run_module(vllm_host_info.main, host_args)
    assert not failed
    assert combined["vllm_host"] == dict(_result(alone), planned=PLANNED, exclude=[])
    assert combined["vllm_host"]["deployments"]["qwen"]["cards"] == [4, 5]
    assert combined["vllm_host"]["deployments"]["qwen"]["image_id"] == (
        "sha256:9c216db4e9b4692f449299fa18904851495fa3c9c82f3c249411520d626402db")


def test_one_read_runs_npu_smi_and_the_image_read_once(run_module, tmp_path, monkeypatch):
    # The chips (npu_verify) and the cards npu_assign would give (the plan) come from one npu-smi
    # info; the image's ID (npu_verify's image, the plan's image_id) from one docker image inspect;
    # the containers from one docker ps and one docker inspect. The answers are those of the readers alone.
    stage(tmp_path / "cache")
    host_args = _host(tmp_path, monkeypatch)
    args, _cache = _combined(tmp_path, host_args, docker=True, docker_executable=host_args["docker_executable"], image=IMAGE)
    npu_log, docker_log = tmp_path / "npu-smi.log", tmp_path / "docker.log"
    monkeypatch.setenv("FAKE_NPU_SMI_LOG", str(npu_log))
    monkeypatch.setenv("FAKE_DOCKER_LOG", str(docker_log))
    failed, combined = run_module(npu_host_facts.main, args)
    assert not failed, combined.get("msg")
    assert npu_log.read_text().splitlines() == ["info LC_ALL=C"]
    calls = docker_log.read_text().splitlines()
    assert [c for c in calls if c.startswith("image inspect")] == ["image inspect --format {{.Id}} " + IMAGE]
    assert len([c for c in calls if c.startswith(("ps ", "inspect "))]) == 2
    qwen = combined["vllm_host"]["deployments"]["qwen"]
    assert combined["image"]["id"] == qwen["image_id"] == (
        "sha256:9c216db4e9b4692f449299fa18904851495fa3c9c82f3c249411520d626402db")
    assert combined["npu"]["family"] == "910B" and qwen["cards"] == [4, 5]
    monkeypatch.delenv("FAKE_NPU_SMI_LOG")
    failed, alone = run_module(vllm_host_info.main, host_args)
    assert not failed
    assert combined["vllm_host"] == dict(_result(alone), planned=PLANNED, exclude=[])
    # Another npu-smi for the plan than for the chips: each is run (the output of one is not the other's).
    other = tmp_path / "other-npu-smi"
    other.symlink_to(FAKE_NPU_SMI)
    args["vllm_host"]["npu_smi_executable"] = str(other)
    npu_log.unlink()
    monkeypatch.setenv("FAKE_NPU_SMI_LOG", str(npu_log))
    failed, again = run_module(npu_host_facts.main, args)
    assert not failed and npu_log.read_text().splitlines() == ["info LC_ALL=C"] * 2
    assert again["vllm_host"]["deployments"]["qwen"]["cards"] == [4, 5]


def test_the_unhealthy_chips_are_excluded_as_the_role_excludes_them(run_module, tmp_path, monkeypatch):
    # The 910A sample (chips 3 and 7 Warning): no plan for 910A -> nothing read of the host;
    # with one, chips 3 and 7 are excluded as vllm_compose excludes ascendfleet_npu.unhealthy_device_ids.
    monkeypatch.setenv("FAKE_NPU_SMI_SAMPLE", "910A-24.1.RC2-8cards-warning-health-hlt-processes-doc.txt")
    host_args = _host(tmp_path, monkeypatch)
    args, _cache = _combined(tmp_path, host_args)
    failed, combined = run_module(npu_host_facts.main, args)
    assert not failed
    assert combined["vllm_host"] == {"error": "no planned deployments for the chips' family 910A"}
    args["vllm_host"]["planned_by_family"]["910A"] = PLANNED
    failed, combined = run_module(npu_host_facts.main, args)
    assert not failed
    assert combined["vllm_host"]["exclude"] == [3, 7]
    failed, alone = run_module(vllm_host_info.main, dict(host_args, exclude=[3, 7]))
    assert combined["vllm_host"] == dict(_result(alone), planned=PLANNED, exclude=[3, 7])


def test_reads_that_fail_are_data_not_a_failed_verify(run_module, tmp_path, monkeypatch):
    # npu-smi missing: no family, nothing planned is read; a malformed model id: model_cache_info's
    # message, as data (npu_verify's checks go on, model_prefetch reads the cache itself and fails there).
    host_args = _host(tmp_path, monkeypatch)
    args, cache_args = _combined(tmp_path, host_args, npu_smi_executable=str(tmp_path / "no-npu-smi"))
    cache_args["models"] = [{"model": "not-an-id"}]
    failed, combined = run_module(npu_host_facts.main, args)
    assert not failed
    assert combined["vllm_host"] == {"error": "planned_by_family and exclude_unhealthy need the chips (npu_smi), "
                                              "which were not read"}
    failed, alone = run_module(model_cache_info.main, cache_args)
    assert failed
    assert combined["model_cache"] == {"error": alone["msg"], "model": "not-an-id"}


def test_the_question_is_what_vllm_host_info_reads_of_a_plan():
    planned = [dict(PLANNED[0], command=["vllm", "serve"], environment={"A": "1"}, revision="v1.0")]
    assert question(planned) == [{"name": "qwen", "port": 8000, "devices": None, "card_count": 2, "image": IMAGE,
                                  "model": "Qwen/Qwen3.5-27B", "revision": "v1.0"}]
    # Another image (another family), port or card count is another question.
    assert question([dict(planned[0], image=A3_IMAGE)]) != question(planned)
    assert question([dict(planned[0], port=8001)]) != question(planned)
    assert question([dict(planned[0], card_count=4)]) != question(planned)
