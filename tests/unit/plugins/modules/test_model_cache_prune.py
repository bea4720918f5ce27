# -*- coding: utf-8 -*-
"""ascendfleet.llm.model_cache_prune through its real entry point: revision directories written as
the prefetch writes them, compose files as vllm_compose renders them (a recorded one of today's
layout with its model mount replaced by a revision directory)."""

from ansible_collections.ascendfleet.llm.plugins.modules import model_cache_prune

from ..module_utils.test__model_revisions import (
    A_BYTES, B_BYTES, COMMIT_A, COMMIT_B, MODEL, deployment_dir, stage_revision)


def test_removes_what_nothing_mounts_honestly_and_once(run_module, tmp_path):
    cache, projects = tmp_path / "cache", tmp_path / "opt"
    stage_revision(cache, COMMIT_A, COMMIT_A, "master", A_BYTES)
    stage_revision(cache, COMMIT_B, COMMIT_B, "master", B_BYTES)
    deployment_dir(projects, "qwen", live=COMMIT_B, last_good=COMMIT_B, previous=COMMIT_B)
    args = {"cache_dir": str(cache), "project_root": str(projects), "keep": 1,
            "deployments": [{"name": "qwen", "model": MODEL, "revision_key": COMMIT_B, "port": 8000},
                            {"name": "flat", "model": "Qwen/Qwen3-8B"}]}
    failed, out = run_module(model_cache_prune.main, dict(args, _ansible_check_mode=True))
    assert not failed and out["changed"] is True and out["models"][MODEL]["removed"] == [COMMIT_A]
    assert (cache / "revisions" / MODEL / COMMIT_A).is_dir()
    failed, out = run_module(model_cache_prune.main, args)
    assert not failed and out["changed"] is True
    assert out["models"] == {MODEL: {"kept": [COMMIT_B], "removed": [COMMIT_A], "legacy_removed": False, "busy": None}}
    assert not (cache / "revisions" / MODEL / COMMIT_A).exists()
    failed, out = run_module(model_cache_prune.main, args)
    assert not failed and out["changed"] is False


def test_a_bad_key_is_refused_naming_the_deployment(run_module, tmp_path):
    failed, out = run_module(model_cache_prune.main, {
        "cache_dir": str(tmp_path), "project_root": str(tmp_path),
        "deployments": [{"name": "qwen", "model": MODEL, "revision_key": "../../etc"}]})
    assert failed and out["msg"].startswith("deployments: qwen: model 'Qwen/Qwen3.5-27B' at revision_key '../../etc' is not")
