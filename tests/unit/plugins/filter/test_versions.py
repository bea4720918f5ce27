"""The version filters as playbooks call them: through a real Jinja template."""
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.ascendfleet.llm.plugins.filter.versions import FilterModule

FILTERS = FilterModule().filters()


@pytest.mark.parametrize(
    "left, op, right, expected",
    [
        ("25.0.rc1.1", ">=", "25.0", True),
        ("24.1.rc2.2", ">=", "25.0", False),
        ("23.0.7", "<", "24.1.rc2", True),
        ("25.2.1", "==", "25.2.1", True),
        ("25.2.1", "!=", "25.2.1", False),
        ("24.1.0", ">", "24.1.rc3.7", True),
        ("24.1.0", "<=", "24.1.rc3.7", False),
    ],
)
def test_ascend_version(left, op, right, expected):
    assert FILTERS["ascend_version"](left, op, right) is expected


def test_ascend_version_bad_operator():
    with pytest.raises(AnsibleFilterError, match="operator must be one of"):
        FILTERS["ascend_version"]("25.0", "=>", "24.1")


def test_ascend_version_bad_version_names_it():
    with pytest.raises(AnsibleFilterError, match="'latest' is not an Ascend version"):
        FILTERS["ascend_version"]("latest", ">=", "24.1")


def test_vllm_ascend_requirement():
    matrix = [{"vllm_ascend_min": "v0.13.0", "cann": ["8.5"], "driver_min": "25.0"}]
    assert FILTERS["vllm_ascend_requirement"]("v0.17.0rc1-openeuler", matrix)["driver_min"] == "25.0"
    with pytest.raises(AnsibleFilterError, match="v0.11.0 is not in the driver compatibility matrix"):
        FILTERS["vllm_ascend_requirement"]("v0.11.0", matrix)
