"""Ascend 950 (A5) end to end in pure logic (issue 32): the chips of the DERIVED A5 sample
(fixtures/npu_smi/SOURCES.md: a real 910B3 output laid out as npu-smi's source prints a 950 table) ->
family A5 -> the -a5 image variant the image workflow of vllm-ascend publishes (-a5 / -a5-openeuler,
from v0.21.0rc1 in the release data read from the tag Dockerfiles) -> which cards npu_assign gives."""
import os

import pytest

from ansible_collections.ascendfleet.llm.plugins.module_utils import _facts as facts
from ansible_collections.ascendfleet.llm.plugins.module_utils import _npu_assign as na
from ansible_collections.ascendfleet.llm.plugins.module_utils import _npu_smi as npu_smi
from ansible_collections.ascendfleet.llm.plugins.module_utils import _vllm_cli as cli
from ansible_collections.ascendfleet.llm.plugins.module_utils import _vllm_deploy as vd

from .test__vllm_deploy import MODELS, SEED_DEP

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "npu_smi")
with open(os.path.join(HERE, "DERIVED-A5-950PR-v2-layout-from-910B3-25.2.0-one-python-process.txt")) as _handle:
    INFO = npu_smi.parse_info(_handle.read())
FAMILY = npu_smi.detect_family(INFO)
IMAGE = {"repository": "quay.io/ascend/vllm-ascend", "os": "openeuler"}


def plan(version, deps=None, **image):
    chips = [c.to_dict() for c in INFO.chips]
    return vd.plan(deps or [SEED_DEP], host="npu-a5", family=FAMILY,
                   healthy_device_ids=[c.device_id for c in INFO.chips if c.health == "OK"],
                   hbm_per_card_mb=vd.hbm_per_card(chips), models=MODELS, image=dict(IMAGE, version=version, **image),
                   cli=cli)


def test_the_family_is_a5_and_its_variant_a5():
    assert FAMILY == "A5"
    assert facts.FAMILY_VARIANT["A5"] == "-a5" and "A5" in facts.fleet_fact("families")
    assert facts.image_ref({"version": "v0.26.0rc1"}, "A5") == "quay.io/ascend/vllm-ascend:v0.26.0rc1-a5-openeuler"
    assert facts.image_ref({"version": "v0.26.0rc1", "os": "ubuntu"}, "A5") == "quay.io/ascend/vllm-ascend:v0.26.0rc1-a5"


@pytest.mark.parametrize("ref, family", [
    ("quay.io/ascend/vllm-ascend:v0.26.0rc1-a5-openeuler", "A5"),
    ("quay.io/ascend/vllm-ascend:v0.26.0rc1-a5", "A5"),
    ("quay.io/ascend/vllm-ascend:v0.26.0rc1-950dt", "A5"),  # the installation guide's name
    ("quay.io/ascend/vllm-ascend:v0.26.0rc1-950dt-openeuler", "A5"),
    ("quay.io/ascend/vllm-ascend:v0.26.0rc1-a3-openeuler", "A3"),
    ("quay.io/ascend/vllm-ascend:v0.26.0rc1-openeuler", "910B"),
])
def test_image_variant_of(ref, family):
    assert facts.image_variant_of(ref) == family


def test_the_planner_picks_the_a5_image():
    result = plan("v0.26.0rc1")
    assert result["errors"] == [], result["errors"]
    dep = result["deployments"][0]
    assert dep["image"] == "quay.io/ascend/vllm-ascend:v0.26.0rc1-a5-openeuler"
    assert dep["card_count"] == 2
    # v0.26.0rc1 reads FlashComm v1 from --additional-config (issue 32): the VL model gets it there.
    assert dep["command"][-2:] == ["--additional-config", '{"enable_flashcomm1":false}']


def test_a_release_without_a5_images_is_refused_naming_the_first_with_them():
    errors = plan("v0.17.0rc1")["errors"]
    assert errors == [
        "npu-a5: deployment qwen: image: vllm-ascend v0.17.0rc1 publishes no -a5-openeuler image (the A5 variant: "
        "its Dockerfiles build '', '-310p', '-310p-openeuler', '-a3', '-a3-openeuler', '-openeuler'). Fix: set "
        "ascendfleet_image_version (or the deployment's image_version) to v0.21.0rc1 or later"]


def test_an_image_of_another_family_is_refused_naming_the_a5_variant():
    errors = plan("v0.26.0rc1", variant="-a3")["errors"]
    assert len(errors) == 1 and errors[0].startswith(
        "npu-a5: deployment qwen: image: quay.io/ascend/vllm-ascend:v0.26.0rc1-a3-openeuler is the A3 image variant "
        "but the host's chips are A5. Fix: use the A5 variant (tag suffix '-a5')")
    # The docs' -950dt name is accepted as the A5 variant when given explicitly.
    result = plan("v0.26.0rc1", image="quay.io/ascend/vllm-ascend:v0.26.0rc1-950dt-openeuler")
    assert [e for e in result["errors"] if "image variant" in e] == []


def test_cards_on_a5_any_free_chips_lowest_first():
    # NPU 4 runs a python process that is not the owner's: busy. One chip per NPU ID, no pairing rule.
    assert na.assign(INFO.chips, FAMILY, "qwen", 2, {}) == [0, 1]
    assert na.assign(INFO.chips, FAMILY, "qwen", 4, {"other": [0, 1]}) == [2, 3, 5, 6]
    held = na.assign(INFO.chips, FAMILY, "qwen", 2, {"qwen": [6, 7]})
    assert held == [6, 7]
    with pytest.raises(na.NotEnoughNpus) as exc:
        na.assign(INFO.chips, FAMILY, "qwen", 8, {})
    assert str(exc.value) == ("not enough free NPU chips: 8 requested, 7 usable. Unavailable: /dev/davinci4: "
                              "busy, pid 1601114")
