"""The collection's shared facts (plugins/module_utils/_facts.py) and the filters exposing them.

Expected image references are written by hand from vllm-ascend's published tags
(quay.io/ascend/vllm-ascend: v0.17.0rc1, v0.17.0rc1-openeuler, v0.17.0rc1-a3, v0.17.0rc1-a3-openeuler,
v0.17.0rc1-310p-openeuler, ...; ../shared/field-facts.md).
"""
import json
import os
import pathlib

import pytest
import yaml

from ansible.errors import AnsibleFilterError
from ansible_collections.ascendfleet.llm.plugins.filter.facts import (
    FilterModule,
    planned_models_filter,
    report_path,
    vllm_ascend_image,
)
from ansible_collections.ascendfleet.llm.plugins.filter.vllm_compose import vllm_compose_plan
from ansible_collections.ascendfleet.llm.plugins.module_utils import _facts as facts
from ansible_collections.ascendfleet.llm.plugins.module_utils import _modelscope as ms

ROOT = pathlib.Path(__file__).resolve().parents[4]
DIGEST = "sha256:" + "0123456789abcdef" * 4
QWEN = "Qwen/Qwen3.5-27B"
CACHED = {QWEN: {"prefetched": True, "revision": "master", "weights_bytes": 0,
                 "config": {"text_config": {"max_position_embeddings": 262144}, "vision_config": {}}}}
CHIPS = [{"device_id": d, "health": "OK", "hbm_total_mb": 65536} for d in range(16)]


def settings(**kw):
    """The image settings as both roles' vars/main.yml build them from the role defaults."""
    out = {"repository": "quay.io/ascend/vllm-ascend", "version": "v0.17.0rc1", "os": "openeuler",
           "variant": "auto", "image": "", "digest": "", "source": "pull", "mirror": ""}
    out.update(kw)
    return out


# -- one image reference for verify, deploy and status -----------------------------------------
CASES = [
    # (family, settings, deployment keys, reference as published)
    ("910B", settings(), {}, "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler"),
    ("910B", settings(os="ubuntu"), {}, "quay.io/ascend/vllm-ascend:v0.17.0rc1"),
    ("A3", settings(os="ubuntu"), {}, "quay.io/ascend/vllm-ascend:v0.17.0rc1-a3"),
    ("A3", settings(), {}, "quay.io/ascend/vllm-ascend:v0.17.0rc1-a3-openeuler"),
    ("310P", settings(), {}, "quay.io/ascend/vllm-ascend:v0.17.0rc1-310p-openeuler"),
    ("910B", settings(digest=DIGEST), {}, "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler@" + DIGEST),
    ("A3", settings(os="ubuntu", digest=DIGEST), {}, "quay.io/ascend/vllm-ascend:v0.17.0rc1-a3@" + DIGEST),
    ("910B", settings(os="ubuntu"), {"image_version": "v0.18.0rc1"}, "quay.io/ascend/vllm-ascend:v0.18.0rc1"),
    ("910B", settings(), {"image_version": "v0.18.0rc1"}, "quay.io/ascend/vllm-ascend:v0.18.0rc1-openeuler"),
    ("910B", settings(mirror="mirror.example:5000"), {}, "mirror.example:5000/quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler"),
    ("910B", settings(mirror="mirror.example:5000", source="archive"), {}, "quay.io/ascend/vllm-ascend:v0.17.0rc1-openeuler"),
    ("910B", settings(image="registry.local/vllm:custom"), {}, "registry.local/vllm:custom"),
]


@pytest.mark.parametrize("family, image, dep, expected", CASES,
                         ids=["%s-%s%s%s" % (c[0], c[1]["os"], "-digest" if c[1]["digest"] else "",
                                             "-" + "-".join("%s=%s" % kv for kv in sorted(c[2].items())) if c[2] else "")
                              + ("-mirror-" + c[1]["source"] if c[1]["mirror"] else "") + ("-explicit" if c[1]["image"] else "")
                              for c in CASES])
def test_verify_deploy_and_status_name_the_same_image(family, image, dep, expected):
    # npu_verify: the vllm_ascend_image filter over its settings (gather.yml)
    verify = vllm_ascend_image(image, family, dep)
    # vllm_compose (preflight.yml) and the status (tasks/status.yml): the plan of the deployment
    deployment = dict({"name": "qwen", "model": QWEN, "tensor_parallel_size": 1}, **dep)
    plan = vllm_compose_plan([deployment], "h1", family=family, healthy_device_ids=list(range(16)), chips=CHIPS,
                             models=CACHED, image=image)
    assert plan["errors"] == []
    assert verify == plan["deployments"][0]["image"] == expected


def test_both_roles_build_the_same_image_settings():
    shapes = {}
    for role in ("npu_verify", "vllm_compose"):
        data = yaml.safe_load((ROOT / "roles" / role / "vars" / "main.yml").read_text())
        shapes[role] = data["__%s_image_settings" % role]
        assert shapes[role] == {key: "{{ %s_image%s }}" % (role, "" if key == "image" else "_" + key)
                                for key in settings()}
    defaults = {role: yaml.safe_load((ROOT / "roles" / role / "defaults" / "main.yml").read_text())
                for role in shapes}
    for key in settings():
        name = "image" if key == "image" else "image_" + key
        assert defaults["npu_verify"]["npu_verify_" + name] == defaults["vllm_compose"]["vllm_compose_" + name]
        assert "ascendfleet_" + name in defaults["npu_verify"]["npu_verify_" + name]


def test_unknown_family_and_bad_digest_are_refused():
    with pytest.raises(facts.FactError, match="no vllm-ascend image variant for chip family '910A'"):
        facts.image_ref(settings(), "910A")
    with pytest.raises(facts.FactError, match="not sha256:<64 hex digits>"):
        facts.image_ref(settings(digest="sha256:abc"), "910B")
    with pytest.raises(AnsibleFilterError, match="vllm_ascend_image: no vllm-ascend image variant"):
        vllm_ascend_image(settings(), None)
    # an explicit variant needs no family
    assert facts.image_ref(settings(variant="-a3"), None) == "quay.io/ascend/vllm-ascend:v0.17.0rc1-a3-openeuler"


def test_image_variant_of_published_tags():
    assert facts.image_variant_of("quay.io/ascend/vllm-ascend:v0.17.0rc1-a3-openeuler") == "A3"
    assert facts.image_variant_of("quay.io/ascend/vllm-ascend:v0.17.0rc1-310p") == "310P"
    assert facts.image_variant_of("mirror:5000/quay.io/ascend/vllm-ascend:v0.17.0rc1@" + DIGEST) == "910B"
    assert facts.image_variant_of("registry.local/vllm") is None


# -- shared defaults -------------------------------------------------------------------------
def test_fleet_facts_are_copies():
    mounts = facts.fleet_fact("host_mounts")
    mounts.append("/tmp")
    assert "/tmp" not in facts.fleet_fact("host_mounts")
    assert "/usr/local/bin/npu-smi" in mounts  # the compose file mounts it, so npu_verify checks it
    assert facts.fleet_fact("image_version") == "v0.17.0rc1"
    # vllm-ascend's Qwen3.5-397B-A17B multi-node tutorial (../shared/field-facts.md, multi-node)
    assert facts.fleet_fact("multinode_rpc_port") == 13389
    assert facts.fleet_fact("families") == ["310P", "910B", "A3", "A5"]
    with pytest.raises(facts.FactError, match="no shared fact 'nope'"):
        facts.fleet_fact("nope")


def test_filters_registered():
    assert sorted(FilterModule().filters()) == ["cached_models", "fleet_fact", "model_prefetch_fanout_plan", "model_revisions",
                                                "planned_models", "report_path", "vllm_ascend_image"]


def test_model_revisions_filter():
    from ansible.errors import AnsibleFilterError
    commit = "3c1a4f0e9b7d2a6c5e8f1b0d4a7c9e2f6b3d8a15"
    model_revisions = FilterModule().filters()["model_revisions"]
    wanted = [{"model": "Qwen/Qwen3.5-27B", "revision": "v1.0"}]
    entries = [{"item": {"model": "Qwen/Qwen3.5-27B", "revision": "v1.0"}, "key": commit, "commit": commit, "change": None}]
    assert model_revisions(entries, wanted) == [
        {"model": "Qwen/Qwen3.5-27B", "revision": "v1.0", "key": commit, "commit": commit, "change": None}]
    with pytest.raises(AnsibleFilterError, match="model_revisions: expects two lists"):
        model_revisions({"key": commit}, wanted)


def test_cached_models_from_model_prefetch_fact():
    from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import cached_models
    qwen = {"path": "/var/lib/ascendfleet/modelscope/models/Qwen/Qwen3.5-27B", "prefetched": True, "revision": "master",
            "reason": None, "config": {"text_config": {"max_position_embeddings": 262144}}, "weights_bytes": 4194304}
    fact = {"cache_dir": "/var/lib/ascendfleet/modelscope", "layout": "flat", "states": {"Qwen/Qwen3.5-27B@master": qwen}}
    wanted = [{"model": "Qwen/Qwen3.5-27B", "revision": "master"}]
    assert cached_models(fact, wanted, "/var/lib/ascendfleet/modelscope") == {"Qwen/Qwen3.5-27B": qwen}
    assert cached_models(fact, wanted, "/var/lib/ascendfleet/modelscope", "flat") == {"Qwen/Qwen3.5-27B": qwen}
    # A flat state has no revision directory to mount: the revisions layout reads the cache itself.
    assert cached_models(fact, wanted, "/var/lib/ascendfleet/modelscope", "revisions") is None
    # A fact that names no layout answers for none.
    assert cached_models(dict(fact, layout=None), wanted, "/var/lib/ascendfleet/modelscope") is None
    # Another revision, another cache directory, a model it did not read, no fact: read the cache.
    assert cached_models(fact, [{"model": "Qwen/Qwen3.5-27B", "revision": "v1"}], "/var/lib/ascendfleet/modelscope") is None
    assert cached_models(fact, wanted, "/mnt/disk2/modelscope") is None
    assert cached_models(fact, wanted + [{"model": "Qwen/Qwen3-8B", "revision": "master"}], "/var/lib/ascendfleet/modelscope") is None
    assert cached_models({}, wanted, "/var/lib/ascendfleet/modelscope") is None
    assert cached_models(None, [], "/x") == {}


def test_cached_models_of_the_revisions_layout():
    """The state vllm_model_info returns with layout=revisions (the revision directory, its key and
    what the compose file mounts), handed over only to a reader of the same layout."""
    from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import cached_models
    from ansible_collections.ascendfleet.llm.plugins.filter.facts import FilterModule
    commit = "3c1a4f0e9b7d2a6c5e8f1b0d4a7c9e2f6b3d8a15"
    rdir = "/var/lib/ascendfleet/modelscope/revisions/Qwen/Qwen3.5-27B/" + commit
    qwen = {"path": rdir, "prefetched": True, "revision": "master", "reason": None,
            "config": {"text_config": {"max_position_embeddings": 262144}}, "weights_bytes": 65600,
            "key": commit, "commit": commit, "mount_source": rdir}
    fact = {"cache_dir": "/var/lib/ascendfleet/modelscope", "layout": "revisions", "states": {"Qwen/Qwen3.5-27B@master": qwen}}
    wanted = [{"model": "Qwen/Qwen3.5-27B", "revision": "master"}]
    assert cached_models(fact, wanted, "/var/lib/ascendfleet/modelscope", "revisions") == {"Qwen/Qwen3.5-27B": qwen}
    assert cached_models(fact, wanted, "/var/lib/ascendfleet/modelscope", "flat") is None
    assert cached_models(fact, wanted, "/var/lib/ascendfleet/modelscope") is None
    # The filter passes the layout through (vllm_compose's vars/main.yml gives vllm_compose_cache_layout).
    flt = FilterModule().filters()["cached_models"]
    assert flt(fact, wanted, "/var/lib/ascendfleet/modelscope", "revisions") == {"Qwen/Qwen3.5-27B": qwen}
    assert flt(fact, wanted, "/var/lib/ascendfleet/modelscope") is None


def test_report_path(monkeypatch):
    monkeypatch.setenv("PWD", "/srv/site")
    assert report_path("reports", "/srv/site/playbooks") == "/srv/site/reports"
    assert report_path("/var/reports", "/x") == "/var/reports"
    monkeypatch.delenv("PWD")
    assert report_path("reports", "/srv/site/playbooks") == "/srv/site/playbooks/reports"


# -- planned models --------------------------------------------------------------------------
def test_planned_models():
    deployments = [
        {"name": "qwen-a", "model": QWEN, "revision": "v1.0", "preset": "x"},
        {"name": "qwen-b", "model": QWEN, "revision": "v1.0", "state": "present"},
        {"name": "small", "model": "Qwen/Qwen3-0.6B"},
        {"name": "old", "model": "Qwen/Old", "state": "absent"},
    ]
    assert facts.planned_models(deployments) == [
        {"model": QWEN, "revision": "v1.0", "include": [], "exclude": []},
        {"model": "Qwen/Qwen3-0.6B", "revision": "master", "include": [], "exclude": []},
    ]
    # ascendfleet_deployment_defaults supplies revision and state, as vllm_compose resolves them
    assert facts.planned_models(deployments, {"revision": "v2"})[1]["revision"] == "v2"
    assert facts.planned_models([{"model": QWEN}], {"state": "absent"}) == []
    assert facts.planned_models([{"model": QWEN, "include": ["*.json"]}], globs=False) == [
        {"model": QWEN, "revision": "master"}]
    with pytest.raises(facts.FactError, match=r"entry 0 \(\{'name': 'x'\}\) has no 'model'"):
        facts.planned_models([{"name": "x"}])
    with pytest.raises(AnsibleFilterError, match="planned_models: expected a list"):
        planned_models_filter("qwen")
    assert planned_models_filter(None) == []


# -- the one completeness reader -------------------------------------------------------------
FILES = {"config.json": b'{"model_type": "qwen3_5"}', "model.safetensors": b"w" * 10}


def stage(root, model=QWEN, revision="v1.0", include=(), marker=True):
    """A model as model_prefetch leaves it (its own writers build the manifest and marker)."""
    mdir = facts.model_dir(str(root), model)
    os.makedirs(facts.state_paths(mdir)["dir"])
    files = []
    for path, data in FILES.items():
        with open(os.path.join(mdir, path), "wb") as handle:
            handle.write(data)
        files.append({"path": path, "size": len(data), "sha256": facts.sha256_bytes(data)})
    raw = facts.dumps_manifest(ms.build_manifest(model, revision, "c" * 40, files, "hub", list(include)))
    with open(facts.state_paths(mdir)["manifest"], "wb") as handle:
        handle.write(raw)
    if marker:
        with open(facts.state_paths(mdir)["marker"], "w") as handle:
            json.dump(facts.build_marker(model, revision, raw), handle)
    return mdir


def test_complete_model(tmp_path):
    mdir = stage(tmp_path)
    state = facts.model_completeness(str(tmp_path), QWEN, "v1.0")
    assert state == {"model": QWEN, "revision": "v1.0", "model_dir": mdir,
                     "marker": mdir + "/.ascendfleet/complete", "complete": True, "reasons": [],
                     "bytes": 35, "cached_revision": "v1.0"}
    assert facts.model_completeness(str(tmp_path), QWEN, "v1.0", verify="full")["complete"] is True


def test_missing_marker_and_other_revision(tmp_path):
    assert facts.model_completeness(str(tmp_path), QWEN, "v1.0")["reasons"] == ["no completion marker"]
    stage(tmp_path)
    state = facts.model_completeness(str(tmp_path), QWEN, "master")
    assert state["complete"] is False and state["cached_revision"] == "v1.0"
    assert state["reasons"] == ["marker is for revision 'v1.0', 'master' requested"]


def test_missing_or_truncated_file_is_not_complete(tmp_path):
    mdir = stage(tmp_path)
    with open(os.path.join(mdir, "model.safetensors"), "wb") as handle:
        handle.write(b"w" * 9)
    assert facts.model_completeness(str(tmp_path), QWEN, "v1.0")["reasons"] == [
        "model.safetensors has 9 bytes, manifest says 10"]
    os.unlink(os.path.join(mdir, "model.safetensors"))
    assert facts.model_completeness(str(tmp_path), QWEN, "v1.0")["reasons"] == ["model.safetensors is missing"]


def test_quick_trusts_sizes_full_reads_the_bytes(tmp_path):
    mdir = stage(tmp_path)
    with open(os.path.join(mdir, "model.safetensors"), "wb") as handle:
        handle.write(b"X" * 10)  # same size, other bytes: a damaged copy
    assert facts.model_completeness(str(tmp_path), QWEN, "v1.0", verify="quick")["complete"] is True
    state = facts.model_completeness(str(tmp_path), QWEN, "v1.0", verify="full")
    assert state["complete"] is False
    assert state["reasons"] == ["model.safetensors: sha256 %s, expected %s"
                                % (facts.sha256_bytes(b"X" * 10), facts.sha256_bytes(b"w" * 10))]


def test_globs_are_compared_only_when_given(tmp_path):
    stage(tmp_path, include=["*.json", "*.safetensors"])
    assert facts.model_completeness(str(tmp_path), QWEN, "v1.0")["complete"] is True
    assert facts.model_completeness(str(tmp_path), QWEN, "v1.0", include=[], exclude=[])["reasons"] == [
        "include/exclude globs differ from the manifest's"]


def test_a_damaged_manifest_never_raises(tmp_path):
    mdir = stage(tmp_path)
    with open(facts.state_paths(mdir)["manifest"], "wb") as handle:
        handle.write(b"{not json")
    state = facts.model_completeness(str(tmp_path), QWEN, "v1.0")
    assert state["complete"] is False
    assert state["reasons"] == ["manifest does not match the marker's manifest_sha256"]


def test_model_prefetch_fanout_plan_filter():
    from ansible.errors import AnsibleFilterError
    plan = FilterModule().filters()["model_prefetch_fanout_plan"]
    qwen = {"model": "Qwen/Qwen3.5-27B", "revision": "master"}
    records = [{"host": h, "domain": "rack1", "address": h, "models": [qwen], "missing": m, "fanout": True}
               for h, m in (("a", [qwen]), ("b", []))]
    assert plan(records)["a"] == {"seed": "b", "seed_address": "b", "domain_missing": [qwen], "peers_missing": ["a"],
                                  "own_fetch": [], "copy": [qwen]}
    with pytest.raises(AnsibleFilterError, match="model_prefetch_fanout_plan: expects the list"):
        plan({"a": records[0]})
    with pytest.raises(AnsibleFilterError, match="model_prefetch_fanout_plan: fan-out plan: each record needs"):
        plan([{"host": "a"}])
