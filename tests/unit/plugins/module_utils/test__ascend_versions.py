"""Ascend and vllm-ascend version ordering, checked against real release names.

Versions are the ones found in ../shared/npu-smi-samples (driver version.info files:
23.0.7, 24.1.rc1, 24.1.rc2.2, 25.0.rc1.1, 25.3.rc1; npu-smi 20.2.0, 21.0.4, 24.1.RC2, 25.2.1)
and vllm-ascend image tags from the seed document and vllm-ascend issues.
"""
import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils._ascend_versions import (
    VersionError,
    ascend_version_key,
    cann_driver_requirement,
    compare_ascend_versions,
    driver_requirement,
    vllm_ascend_version_key,
)

# Oldest first, as Huawei released them.
ASCEND_ORDER = [
    "20.2.0",
    "21.0.4",
    "22.0.3.1",
    "23.0.rc2",
    "23.0.5",
    "23.0.7",
    "24.1.rc1",
    "24.1.RC2",
    "24.1.rc2.2",
    "24.1.rc3",
    "24.1.rc3.5",
    "24.1.rc3.7",
    "24.1.0",
    "24.1.0.1",
    "25.0.rc1",
    "25.0.rc1.1",
    "25.2.0",
    "25.2.1",
    "25.2.3",
    "25.3.rc1",
]


@pytest.mark.parametrize("index", range(len(ASCEND_ORDER) - 1), ids=lambda i: "%s<%s" % (ASCEND_ORDER[i], ASCEND_ORDER[i + 1]))
def test_ascend_releases_order(index):
    older, newer = ASCEND_ORDER[index], ASCEND_ORDER[index + 1]
    assert compare_ascend_versions(older, newer) == -1
    assert compare_ascend_versions(newer, older) == 1


@pytest.mark.parametrize(
    "left, right",
    [("24.1.RC2", "24.1.rc2"), ("24.1.0", "24.1.0.0"), (" 25.0.rc1.1 ", "25.0.rc1.1"), ("21.0.4.B030", "21.0.4.b030")],
)
def test_ascend_equal_spellings(left, right):
    assert compare_ascend_versions(left, right) == 0


def test_build_tag_orders_within_patch():
    assert compare_ascend_versions("21.0.4.B030", "21.0.4.B031") == -1
    assert compare_ascend_versions("21.0.4", "21.0.4.B030") == -1


def test_bare_line_is_first_of_the_line():
    # "driver >= 25.2" must admit 25.2.rc1 and refuse 25.0.rc1.1.
    assert compare_ascend_versions("25.2.rc1", "25.2") == 1
    assert compare_ascend_versions("25.0.rc1.1", "25.2") == -1
    assert compare_ascend_versions("24.1.rc2", "24.1") == 1


@pytest.mark.parametrize("bad", ["", "   ", "abc", "25", "25.x.1", "25.0.rc1.zz", None, 25.0])
def test_ascend_garbage_is_refused(bad):
    with pytest.raises(VersionError):
        ascend_version_key(bad)


VLLM_ORDER = ["v0.7.3", "v0.9.1rc1", "v0.9.1", "v0.11.0rc0", "v0.11.0", "v0.13.0rc2", "v0.17.0rc1", "v0.17.0", "v0.23.0rc1", "v0.23.0"]


@pytest.mark.parametrize("index", range(len(VLLM_ORDER) - 1), ids=lambda i: "%s<%s" % (VLLM_ORDER[i], VLLM_ORDER[i + 1]))
def test_vllm_ascend_releases_order(index):
    assert vllm_ascend_version_key(VLLM_ORDER[index]) < vllm_ascend_version_key(VLLM_ORDER[index + 1])


def test_vllm_ascend_image_tag_suffix_is_ignored():
    assert vllm_ascend_version_key("v0.17.0rc1-a3-openeuler") == vllm_ascend_version_key("0.17.0rc1")


@pytest.mark.parametrize("bad", ["latest", "v0", "main-openeuler", "", 17])
def test_vllm_ascend_garbage_is_refused(bad):
    with pytest.raises(VersionError):
        vllm_ascend_version_key(bad)


# The matrix of issue 5, written out here by hand. "dev0" bounds take in a line's release
# candidates: v0.13.0rc1 belongs to the v0.13.0 line, v0.12.0rc1 does not belong to v0.11.x.
MATRIX = [
    {"vllm_ascend_min": "v0.23.0", "cann": ["9.1"], "driver_min": "25.2"},
    {"vllm_ascend_min": "v0.13.0dev0", "vllm_ascend_below": "v0.23.0", "cann": ["8.5", "9.0"], "driver_min": "25.0"},
    {"vllm_ascend_min": "v0.9.1dev0", "vllm_ascend_below": "v0.12.0dev0", "cann": ["8.2"], "driver_min": "24.1.rc2"},
]


@pytest.mark.parametrize(
    "version, driver_min",
    [
        ("v0.23.0", "25.2"),
        ("v0.24.1-a3", "25.2"),
        ("v0.23.0rc1", "25.0"),  # rc1 of 0.23 still ships CANN 9.0
        ("v0.17.0rc1-openeuler", "25.0"),
        ("v0.13.0", "25.0"),
        ("v0.13.0rc1", "25.0"),
        ("v0.11.0", "24.1.rc2"),
        ("v0.11.0rc3-310p", "24.1.rc2"),
        ("v0.9.1rc1", "24.1.rc2"),
    ],
)
def test_matrix_lookup(version, driver_min):
    assert driver_requirement(version, MATRIX)["driver_min"] == driver_min


@pytest.mark.parametrize("version", ["v0.9.0", "v0.12.0rc1", "v0.12.0", "v0.7.3"])
def test_matrix_gap_is_an_error_naming_the_version(version):
    with pytest.raises(VersionError, match=version):
        driver_requirement(version, MATRIX)


@pytest.mark.parametrize("cann, driver_min", [("9.1.0", "25.2"), ("8.5.RC1", "25.0"), ("9.0.0", "25.0"), ("8.2.rc1", "24.1.rc2")])
def test_cann_lookup(cann, driver_min):
    assert cann_driver_requirement(cann, MATRIX)["driver_min"] == driver_min


def test_unknown_cann_is_an_error():
    with pytest.raises(VersionError, match="CANN 7.0.0"):
        cann_driver_requirement("7.0.0", MATRIX)
