"""The CANN filter as playbooks call it, over the matrix of issue 5 written out by hand."""
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.ascendfleet.llm.plugins.filter.cann import FilterModule

FILTER = FilterModule().filters()["cann_driver_requirement"]

MATRIX = [
    {"vllm_ascend_min": "v0.23.0", "cann": ["9.1"], "driver_min": "25.2"},
    {"vllm_ascend_min": "v0.13.0dev0", "vllm_ascend_below": "v0.23.0", "cann": ["8.5", "9.0"], "driver_min": "25.0"},
    {"vllm_ascend_min": "v0.9.1dev0", "vllm_ascend_below": "v0.12.0dev0", "cann": ["8.2"], "driver_min": "24.1.rc2"},
]


@pytest.mark.parametrize(
    "cann, driver_min",
    # 8.2.RC1 is the CANN of the vllm-ascend v0.11 images; 8.5.0 / 9.0.0 of v0.13 .. v0.23.0rc1.
    [("8.2.RC1", "24.1.rc2"), ("8.5.0", "25.0"), ("9.0.0", "25.0"), ("9.1.0", "25.2")],
)
def test_cann_row(cann, driver_min):
    assert FILTER(cann, MATRIX)["driver_min"] == driver_min


def test_cann_not_in_matrix_names_the_version():
    # 8.3.RC2 is the CANN read from the v0.12.0rc1 image (vllm-ascend issue #5606): no row for it.
    with pytest.raises(AnsibleFilterError, match="CANN 8.3.RC2 is not in the driver compatibility matrix"):
        FILTER("8.3.RC2", MATRIX)


def test_cann_garbage_is_a_filter_error():
    with pytest.raises(AnsibleFilterError, match="cann_driver_requirement"):
        FILTER("latest", MATRIX)
