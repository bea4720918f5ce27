"""The supported releases the collection ships (plugins/module_utils/_facts.py, npu_verify's default
driver matrix) are those of vllm-ascend's release notes:

vllm-ascend >= v0.23.0 (CANN 9.1) -> driver >= 25.2; v0.13.0 ... v0.23.0rc1 (CANN 8.5/9.0)
-> >= 25.0; v0.9.1 ... v0.11.x (CANN 8.2) -> >= 24.1.rc2. The expectations below are that text.
"""
import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import fleet_fact
from ansible_collections.ascendfleet.llm.plugins.module_utils._ascend_versions import (
    VersionError,
    cann_driver_requirement,
    compare_ascend_versions,
    driver_requirement,
)

MATRIX = fleet_fact("releases")


@pytest.mark.parametrize("release, cann, driver_min", [
    ("v0.23.0", ["9.1"], "25.2"),
    ("v0.25.1-a3-openeuler", ["9.1"], "25.2"),
    ("v0.23.0rc1", ["8.5", "9.0"], "25.0"),
    ("v0.17.0rc1-openeuler", ["8.5", "9.0"], "25.0"),  # the seed's image
    ("v0.13.0rc1", ["8.5", "9.0"], "25.0"),
    ("v0.11.0", ["8.2"], "24.1.rc2"),
    ("v0.9.1", ["8.2"], "24.1.rc2"),
])
def test_release_rows(release, cann, driver_min):
    row = driver_requirement(release, MATRIX)
    assert (row["cann"], row["driver_min"]) == (cann, driver_min)


@pytest.mark.parametrize("release", ["v0.9.0", "v0.12.0rc1"])
def test_releases_outside_the_matrix_are_refused(release):
    with pytest.raises(VersionError, match=release):
        driver_requirement(release, MATRIX)


@pytest.mark.parametrize("driver, release, ok", [
    # drivers of the shared samples and the sim profiles against the seed's v0.17.0rc1
    ("25.2.1", "v0.17.0rc1", True),
    ("25.0.rc1.1", "v0.17.0rc1", True),
    ("24.1.rc3.7", "v0.17.0rc1", False),   # the A3 sample host
    ("23.0.7", "v0.17.0rc1", False),       # the old-driver fault
    ("24.1.rc3.7", "v0.11.0", True),
    ("24.1.rc1", "v0.11.0", False),
    ("25.0.rc1.1", "v0.23.0", False),
    ("25.3.rc1", "v0.23.0", True),
])
def test_driver_against_release(driver, release, ok):
    minimum = driver_requirement(release, MATRIX)["driver_min"]
    assert (compare_ascend_versions(driver, minimum) >= 0) is ok


@pytest.mark.parametrize("cann, driver_min", [("8.5.0", "25.0"), ("9.0.0", "25.0"), ("9.1.RC1", "25.2"), ("8.2.RC1", "24.1.rc2")])
def test_cann_rows(cann, driver_min):
    assert cann_driver_requirement(cann, MATRIX)["driver_min"] == driver_min


def test_cann_of_the_v0_12_image_is_not_in_the_matrix():
    # 8.3.RC2 was read from a v0.12.0rc1 image (fixtures/npu_host): no release row covers it
    with pytest.raises(VersionError, match="CANN 8.3.RC2"):
        cann_driver_requirement("8.3.RC2", MATRIX)
