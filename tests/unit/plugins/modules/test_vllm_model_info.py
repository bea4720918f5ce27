# -*- coding: utf-8 -*-
"""ascendfleet.llm.vllm_model_info through its real entry point, on a model cache in tmp_path."""

import pytest

from ansible_collections.ascendfleet.llm.plugins.modules import vllm_model_info

from ..module_utils.test__vllm_deploy import write_model


def test_reads_prefetched_and_missing_models(run_module, tmp_path):
    write_model(str(tmp_path))
    failed, result = run_module(vllm_model_info.main, {
        "cache_dir": str(tmp_path),
        # The shape the planned_models filter returns (doc fragment ascendfleet.llm.models).
        "models": [{"model": "Qwen/Qwen3.5-27B", "revision": "master"}, {"model": "Qwen/Qwen3-8B"}],
    })
    assert not failed and result["changed"] is False
    qwen = result["models"]["Qwen/Qwen3.5-27B"]
    assert qwen["prefetched"] is True and qwen["weights_bytes"] == 15
    assert qwen["config"] == {"text_config": {"max_position_embeddings": 262144}, "vision_config": {}}
    small = result["models"]["Qwen/Qwen3-8B"]
    assert small["prefetched"] is False
    assert small["reason"] == "no completion marker %s/models/Qwen/Qwen3-8B/.ascendfleet/complete" % tmp_path


def test_item_without_model_fails_with_fix(run_module, tmp_path):
    failed, result = run_module(vllm_model_info.main, {"cache_dir": str(tmp_path), "models": [{"revision": "v1"}]})
    assert failed and result["msg"] == "missing required arguments: model found in models"
    failed, result = run_module(vllm_model_info.main, {"cache_dir": str(tmp_path), "models": [{"model": "qwen"}]})
    assert failed
    assert "has no model id of the form Owner/Name; give each item a model key" in result["msg"]


@pytest.mark.parametrize("model", ["a/..", "Qwen/Qwen3-8B\n", "Qwen/Qwen3 8B", "a/b/c", "/Qwen3"])
def test_a_malformed_model_id_is_refused_before_the_cache_is_read(run_module, tmp_path, model):
    """Issue 28: the module checked only for a '/', so 'a/..' read <cache>/models (outside any model)."""
    failed, result = run_module(vllm_model_info.main, {"cache_dir": str(tmp_path), "models": [{"model": model}]})
    assert failed and "models" not in result
    assert result["msg"] == ("models: %r has no model id of the form Owner/Name; give each item a model key holding "
                             "'Owner/Name' as on modelscope.cn (letters, digits, '-', '_', '.'; each part starting "
                             "with a letter or digit, no '..'; exactly one '/'), e.g. 'Qwen/Qwen3.5-27B'"
                             % ({"model": model, "revision": "master", "include": None, "exclude": None},))


def test_the_revisions_layout_names_the_directory_to_mount(run_module, tmp_path):
    from ..module_utils.test__vllm_deploy_revisions import A_BYTES, COMMIT_A, QWEN, fetched

    fetched(tmp_path, COMMIT_A, A_BYTES)
    failed, result = run_module(vllm_model_info.main, {
        "cache_dir": str(tmp_path), "layout": "revisions",
        "models": [{"model": QWEN, "revision": "master"}, {"model": "Qwen/Qwen3.5-27B", "revision": "master"}]})
    assert not failed
    qwen = result["models"][QWEN]
    assert (qwen["prefetched"], qwen["key"], qwen["mount_source"]) == (
        True, COMMIT_A, "%s/revisions/%s/%s" % (tmp_path, QWEN, COMMIT_A))
    other = result["models"]["Qwen/Qwen3.5-27B"]
    assert (other["prefetched"], other["key"], other["reason"]) == (
        False, None, "revision 'master' was never fetched into the revision cache")
