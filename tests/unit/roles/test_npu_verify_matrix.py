"""The supported releases the collection ships (plugins/module_utils/_facts.py, npu_verify's default
driver matrix) are those of vllm-ascend's release notes:

vllm-ascend >= v0.23.0 (CANN 9.1) -> driver >= 25.2; v0.13.0 ... v0.23.0rc1 (CANN 8.5/9.0)
-> >= 25.0; v0.9.1 ... v0.11.x (CANN 8.2) -> >= 24.1.rc2. The expectations below are that text, and
the FROM lines of the tag Dockerfiles: v0.24.0rc1 and v0.25.1rc1 build on quay.io/ascend/cann:9.0.1-*,
the v0.26.0rc1 release branch on CANN_VERSION="9.1.0".
"""
import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import fleet_fact
from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_cli_data import RELEASES as CLI_DATA
from ansible_collections.ascendfleet.llm.plugins.module_utils._ascend_versions import (
    VersionError,
    cann_driver_requirement,
    compare_ascend_versions,
    driver_requirement,
)

MATRIX = fleet_fact("releases")


@pytest.mark.parametrize("release, cann, driver_min", [
    ("v0.23.0", ["9.1"], "25.2"),
    ("v0.26.0rc1", ["9.1"], "25.2"),
    ("v0.27.1rc1-a3", ["9.1"], "25.2"),  # newer than the data: the newest row
    ("v0.25.1rc1-a3-openeuler", ["9.0"], "25.0"),
    ("v0.24.0rc1", ["9.0"], "25.0"),
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


# Image variants whose CANN is not a line of their release's row (written from the Dockerfiles: the
# 310P images of v0.20.2rc1 ... v0.25.1rc1 build on cann:9.1.0-beta.1-310p-*); npu_verify checks the
# CANN read from such an image against cann_driver_requirement instead.
OFF_ROW = {(release, variant) for release in ("v0.20.2rc1", "v0.21.0rc1", "v0.22.1rc1", "v0.23.0rc1", "v0.24.0rc1",
                                              "v0.25.1rc1") for variant in ("-310p", "-310p-openeuler")}


@pytest.mark.parametrize("release", sorted(CLI_DATA))
def test_every_release_in_the_data_has_a_row_naming_the_cann_of_its_images(release):
    row = driver_requirement(release, MATRIX)
    for variant, image in CLI_DATA[release]["images"].items():
        line = ".".join(image["cann"].split(".")[:2])
        if (release, variant) in OFF_ROW:
            assert line not in row["cann"]
            continue
        assert line in row["cann"], "%s%s ships CANN %s, its row names %s" % (release, variant, image["cann"], row["cann"])
        assert cann_driver_requirement(image["cann"], MATRIX)["driver_min"] == row["driver_min"]


@pytest.mark.parametrize("release, variant, cann", [
    ("v0.17.0rc1", "-openeuler", "8.5.1"),
    ("v0.23.0", "-a3", "9.1.0"),
    ("v0.24.0rc1", "-310p", "9.1.0-beta.1"),
    ("v0.24.0rc1", "-a5", "9.0.1"),
    ("v0.25.1rc1", "", "9.0.1"),
    ("v0.26.0rc1", "-a5-openeuler", "9.1.0"),
])
def test_cann_per_image_variant(release, variant, cann):
    assert CLI_DATA[release]["images"][variant]["cann"] == cann


def test_a5_images_exist_from_v0_21():
    assert "-a5" not in CLI_DATA["v0.20.2rc1"]["images"]
    assert {"-a5", "-a5-openeuler"} <= set(CLI_DATA["v0.21.0rc1"]["images"])
