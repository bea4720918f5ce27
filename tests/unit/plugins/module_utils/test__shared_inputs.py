"""Role variables of one shared input that disagree (issue 28), against the real argument specs."""
import pytest

from ansible_collections.ascendfleet.llm.plugins.filter.inputs import input_errors, role_options
from ansible_collections.ascendfleet.llm.plugins.module_utils._shared_inputs import conflicts, readers

HOST = "npu-a01"
OPTIONS = role_options()
DEP = {"name": "qwen", "preset": "qwen3-8b", "model": "Qwen/Qwen3-8B", "port": 8001}


def test_readers_come_from_the_specs():
    found = readers(OPTIONS)
    assert found["ascendfleet_cache_dir"] == {
        "direct": {"model_prefetch_cache_dir": "/var/lib/ascendfleet/modelscope",
                   "npu_verify_cache_dir": "/var/lib/ascendfleet/modelscope",
                   "vllm_compose_cache_dir": "/var/lib/ascendfleet/modelscope"},
        "derived": []}
    assert found["ascendfleet_deployments"] == {"direct": {"vllm_compose_deployments": []},
                                                "derived": ["model_prefetch_models", "npu_verify_models"]}
    assert found["ascendfleet_image_mirror"]["direct"] == {"npu_verify_image_mirror": "", "vllm_compose_image_mirror": ""}


def test_the_cache_dir_of_one_role_is_refused_naming_both_and_the_shared_name():
    assert conflicts(HOST, OPTIONS, {"model_prefetch_cache_dir": "/mnt/disk2/modelscope"}) == [
        "npu-a01: model_prefetch_cache_dir: is set to '/mnt/disk2/modelscope', but npu_verify_cache_dir reads "
        "'/var/lib/ascendfleet/modelscope' (the default; ascendfleet_cache_dir is not set); vllm_compose_cache_dir "
        "reads '/var/lib/ascendfleet/modelscope' (the default; ascendfleet_cache_dir is not set): the roles would "
        "use different values of the one shared input ascendfleet_cache_dir. Fix: set ascendfleet_cache_dir (the "
        "one name every role reads) to the value you want and remove model_prefetch_cache_dir"]


def test_a_role_variable_against_the_shared_input_set_elsewhere():
    [text] = conflicts(HOST, OPTIONS, {"ascendfleet_cache_dir": "/mnt/disk2/modelscope",
                                       "vllm_compose_cache_dir": "/var/lib/ascendfleet/modelscope"})
    assert text.startswith("npu-a01: vllm_compose_cache_dir: is set to '/var/lib/ascendfleet/modelscope', but "
                           "model_prefetch_cache_dir reads '/mnt/disk2/modelscope' from ascendfleet_cache_dir; "
                           "npu_verify_cache_dir reads '/mnt/disk2/modelscope' from ascendfleet_cache_dir")
    assert text.endswith("remove vllm_compose_cache_dir")


def test_the_deployments_under_their_first_release_name_are_refused():
    """The issue's inventory: vllm_compose_deployments (first release) - model_prefetch would fetch nothing."""
    [text] = conflicts(HOST, OPTIONS, {"vllm_compose_deployments": [DEP]})
    assert text.startswith("npu-a01: vllm_compose_deployments: is set to 1 item(s): qwen, but model_prefetch_models "
                           "(computed from ascendfleet_deployments) reads [] (the default; ascendfleet_deployments is not set)")
    assert "Fix: set ascendfleet_deployments (the one name every role reads)" in text


def test_two_role_variables_set_to_different_values_name_each_other():
    [text] = conflicts(HOST, OPTIONS, {"npu_verify_image_version": "v0.11.0", "vllm_compose_image_version": "v0.18.0rc1"})
    assert "npu_verify_image_version: is set to 'v0.11.0', but vllm_compose_image_version is set to 'v0.18.0rc1'" in text
    assert text.endswith("set ascendfleet_image_version (the one name every role reads) to the value you want and "
                         "remove npu_verify_image_version and vllm_compose_image_version")


@pytest.mark.parametrize("values", [
    {},
    {"ascendfleet_cache_dir": "/mnt/disk2/modelscope"},
    # the same value under the shared and the role name; a trailing / is the same directory
    {"ascendfleet_cache_dir": "/mnt/disk2/modelscope", "vllm_compose_cache_dir": "/mnt/disk2/modelscope/"},
    # every reader set to one value
    {"model_prefetch_cache_dir": "/mnt/d", "npu_verify_cache_dir": "/mnt/d", "vllm_compose_cache_dir": "/mnt/d"},
    # the default value written out
    {"vllm_compose_image_version": "v0.17.0rc1"},
    {"ascendfleet_deployments": [DEP], "vllm_compose_deployments": [DEP]},
    # explicit model lists are another shape: the user's choice, not compared
    {"vllm_compose_deployments": [DEP], "model_prefetch_models": [{"model": "Qwen/Qwen3-8B"}], "npu_verify_models": []},
    # each role's report may go elsewhere
    {"npu_verify_report_dir": "/tmp/reports/verify"},
], ids=["nothing", "shared-only", "same-path", "all-same", "default-written", "deployments-same", "model-lists",
        "report-dir"])
def test_agreeing_readers_pass(values):
    assert conflicts(HOST, OPTIONS, values) == []


def test_a_value_refused_for_its_format_is_not_compared_too():
    """A relative path gets its format message only (a fix "set ascendfleet_cache_dir: cache" would be wrong)."""
    errors = input_errors({"model_prefetch_cache_dir": "cache"}, HOST, shared=True)
    assert errors == ["npu-a01: model_prefetch_cache_dir: 'cache' is not an absolute path. Fix: give an absolute path "
                      "starting with /, e.g. /var/lib/ascendfleet/modelscope"]


def test_the_filter_compares_only_when_asked():
    """Inside a role every variable holds a value (its default): the role pre-flight does not compare."""
    values = {"model_prefetch_cache_dir": "/mnt/disk2/modelscope"}
    assert input_errors(values, HOST) == []
    assert len(input_errors(values, HOST, shared=True)) == 1
