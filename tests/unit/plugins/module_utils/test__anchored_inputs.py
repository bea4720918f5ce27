"""Every rule that validates a user input matches the whole value (issue 28).

Python's ``$`` also matches before a trailing newline, so ``re.match(r"^...$")`` accepted
``"x\\n"``: a deployment name that reached the NPU ledger and /opt/ascendfleet/x\\n/, model ids,
digests, versions. The URL rule had no end anchor (``https://x y`` passed) and the three model-id
rules differed (``a/..`` passed the planner's). Cases written by hand; each failed before.
"""
import pytest

from ansible_collections.ascendfleet.llm.plugins.filter.inputs import role_options
from ansible_collections.ascendfleet.llm.plugins.module_utils import _facts as facts
from ansible_collections.ascendfleet.llm.plugins.module_utils import _fleet_monitoring as fm
from ansible_collections.ascendfleet.llm.plugins.module_utils import _inputs as inputs
from ansible_collections.ascendfleet.llm.plugins.module_utils import _modelscope as ms
from ansible_collections.ascendfleet.llm.plugins.module_utils import _vllm_deploy as vd
from ansible_collections.ascendfleet.llm.plugins.module_utils._ascend_versions import (
    VersionError,
    ascend_version_key,
    vllm_ascend_version_key,
)

HOST = "npu-07"
DIGEST = "sha256:" + "0123456789abcdef" * 4
QWEN = "Qwen/Qwen3.5-27B"
MODELS = {QWEN: {"prefetched": True, "revision": "master", "reason": None, "weights_bytes": 0,
                 "config": {"text_config": {"max_position_embeddings": 262144}, "vision_config": {}}}}
IMAGE = {"repository": "quay.io/ascend/vllm-ascend", "version": "v0.17.0rc1", "os": "openeuler"}

GOOD_MODEL_IDS = ["Qwen/Qwen3.5-27B", "Qwen/Qwen3-0.6B", "deepseek-ai/DeepSeek-V3.1", "ZhipuAI/GLM-4.5",
                  "a/b", "Owner_1/name.with.dots", "0wner/9name"]
BAD_MODEL_IDS = [
    "Qwen/Qwen3.5-27B\n",          # trailing newline: `$` matched before it
    "Qwen/Qwen3.5-27B\r\n",
    "Qwen/Qwen3\n.5-27B",          # embedded newline
    "\nQwen/Qwen3.5-27B",
    "Qwen/Qwen3.5 27B",            # whitespace
    " Qwen/Qwen3.5-27B",
    "Qwen/Qwen3.5-27B ",
    "Qwen/Qwen3.5-27B\t",
    "a/..",                        # passed the planner's rule: <cache>/models/a/.. is <cache>/models
    "a/.",
    "../a",
    "./a",
    "a/b..c",
    "a//b",                        # empty part
    "/b",
    "a/",
    "/",
    "",
    "a/b/c",                       # more than one '/'
    "Qwen/Qwen3.5-27B/",
    "Qwen3.5-27B",                 # no '/'
    "-x/y",
    "x/_y",                        # the planner's \w let a leading '_' in
    "x/.hidden",
    "Qwen/Qwen\u00e9",             # \w matched non-ASCII letters
    "Qwen/Qwen3.5-27B\x00",
    None,
    42,
]


# -- one model-id rule ---------------------------------------------------------------------

@pytest.mark.parametrize("model", GOOD_MODEL_IDS)
def test_good_model_ids_pass_every_check(model):
    assert facts.model_id_parts(model) == tuple(model.split("/"))
    assert ms.validate_model_id(model) == tuple(model.split("/"))
    result = vd.plan([{"name": "q", "model": model}], host=HOST, family="910B", healthy_device_ids=list(range(8)),
                     hbm_per_card_mb=65536, models=MODELS, image=IMAGE)
    assert not [e for e in result["errors"] if ": model: %r is not a model id" % (model,) in e], result["errors"]


@pytest.mark.parametrize("model", BAD_MODEL_IDS, ids=repr)
def test_bad_model_ids_are_refused_by_the_one_rule(model):
    assert facts.model_id_parts(model) is None


@pytest.mark.parametrize("model", BAD_MODEL_IDS, ids=repr)
def test_bad_model_ids_are_refused_by_the_prefetch(model):
    with pytest.raises(ms.ModelPrefetchError) as err:
        ms.validate_model_id(model)
    assert str(err.value).startswith("malformed model id %r: expected 'Owner/Name' as on modelscope.cn" % (model,))
    assert "e.g. 'Qwen/Qwen3.5-27B'" in str(err.value)
    with pytest.raises(ms.ModelPrefetchError):
        ms.model_dir("/var/lib/ascendfleet/modelscope", model)


@pytest.mark.parametrize("model", [m for m in BAD_MODEL_IDS if m not in ("", None)], ids=repr)
def test_bad_model_ids_are_refused_by_the_planner_naming_key_and_fix(model):
    result = vd.plan([{"name": "q", "model": model}], host=HOST, family="910B", healthy_device_ids=list(range(8)),
                     hbm_per_card_mb=65536, models=MODELS, image=IMAGE)
    assert result["deployments"] == []
    assert result["errors"] == ["%s: deployment q: model: %r is not a model id. Fix: give the ModelScope id as "
                                "Owner/Name (%s), e.g. Qwen/Qwen3.5-27B" % (HOST, model, facts.MODEL_ID_RULE)]


# -- deployment names ------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["qwen", "q", "qwen-chat", "qwen_2", "0x"])
def test_good_deployment_names(name):
    assert facts.is_deployment_name(name)
    result = vd.plan([{"name": name, "model": QWEN}], host=HOST, family="910B", healthy_device_ids=list(range(8)),
                     hbm_per_card_mb=65536, models=MODELS, image=IMAGE)
    assert [d["name"] for d in result["deployments"]] == [name], result["errors"]


@pytest.mark.parametrize("name", ["x\n", "x\r\n", "x\ny", "\nx", "x ", " x", "x y", "x\t", "X", "-x", "_x",
                                  "x/y", "x.y", "", "qwen\x00", None, 7], ids=repr)
def test_bad_deployment_names_are_refused_before_the_ledger(name):
    assert not facts.is_deployment_name(name)
    result = vd.plan([{"name": name, "model": QWEN}], host=HOST, family="910B", healthy_device_ids=list(range(8)),
                     hbm_per_card_mb=65536, models=MODELS, image=IMAGE)
    assert result["deployments"] == []
    assert result["errors"] == ["%s: deployment #1: name: %r is not a valid deployment name. Fix: use lower-case "
                                "letters, digits, '-' and '_', starting with a letter or digit (it is the compose "
                                "project name)" % (HOST, name)]


# -- digests ---------------------------------------------------------------------------------

@pytest.mark.parametrize("digest", [DIGEST + "\n", DIGEST + " ", "\n" + DIGEST, DIGEST[:20] + "\n" + DIGEST[20:],
                                    DIGEST.upper(), DIGEST + "0", DIGEST[:-1], "sha512:" + "0" * 64], ids=repr)
def test_bad_digests_are_refused(digest):
    assert not facts.is_digest(digest)
    with pytest.raises(facts.FactError, match="is not sha256:<64 hex digits>"):
        facts.image_ref({"digest": digest}, "910B")
    assert inputs.check_value(HOST, "ascendfleet_image_digest", digest, {"type": "str"}, {"kind": "digest"}) == [
        "%s: ascendfleet_image_digest: %r is not an image digest. Fix: give sha256:<64 lower-case hex digits> "
        "(docker image inspect --format '{{.RepoDigests}}'), or leave it empty" % (HOST, digest)]


def test_a_good_digest_pins_the_image():
    assert facts.is_digest(DIGEST)
    assert facts.image_ref({"digest": DIGEST}, "910B").endswith("@" + DIGEST)
    assert inputs.check_value(HOST, "ascendfleet_image_digest", DIGEST, {"type": "str"}, {"kind": "digest"}) == []


# -- versions --------------------------------------------------------------------------------

@pytest.mark.parametrize("version", ["v0.17.0rc1", "v0.18.0", "24.0.0", "0.11.0", "v0.18.0rc1-broken", "2.20.3"])
def test_good_versions(version):
    assert inputs.is_version(version)
    assert inputs.check_value(HOST, "ascendfleet_image_version", version, {"type": "str"}, {"kind": "version"}) == []


@pytest.mark.parametrize("version", ["v0.17.0rc1\n", "v0.17.0rc1\r\n", "v0.17\n.0", "\nv0.17.0", "v0.17.0 ",
                                     "v0.17.0 rc1", "v0.17.0rc1-a b", "v\u0660.17.0", "latest", ""], ids=repr)
def test_bad_versions_are_refused_naming_the_variable_and_fix(version):
    assert not inputs.is_version(version)
    assert inputs.check_value(HOST, "vllm_compose_image_version", version, {"type": "str"}, {"kind": "version"}) == [
        "%s: vllm_compose_image_version: %r is not a version. Fix: give a version such as v0.18.0rc1 or 24.0.0"
        % (HOST, version)]


@pytest.mark.parametrize("version", ["v0.17.0rc1\nx", "v0.17.0\u0660"], ids=repr)
def test_vllm_ascend_version_key_reads_the_whole_version(version):
    with pytest.raises(VersionError):
        vllm_ascend_version_key(version)


def test_ascend_version_tokens_are_read_whole():
    assert ascend_version_key("24.1.rc2") < ascend_version_key("24.1.0")
    with pytest.raises(VersionError):
        ascend_version_key("24.1.rc2\n.1")


# -- URLs ------------------------------------------------------------------------------------

@pytest.mark.parametrize("url", ["https://modelscope.cn", "https://modelscope.cn/", "http://10.0.0.5:8080/simple",
                                 "https://mirror.example/models?x=1#a", "HTTPS://Mirror.Example/path",
                                 "http://[fd00::5]:8000/", "https://user:pw@host/path"])
def test_good_urls(url):
    assert inputs.is_url(url)
    assert inputs.check(HOST, {}, {"model_prefetch_endpoint": url}) == []


@pytest.mark.parametrize("url", [
    "https://x y",                      # no end anchor: passed
    "https://modelscope.cn/a b",
    "https://modelscope.cn\n",
    "https://modelscope.cn\n--index-url=https://evil",
    "https://modelscope.cn/\r\n",
    "\nhttps://modelscope.cn",
    " https://modelscope.cn",
    "https://modelscope.cn\t",
    "https://modelscope.cn/\x00",
    "https://",                         # no host
    "https:///path",
    "https://:8080/",
    "https://?q",
    "ftp://modelscope.cn",              # not http(s)
    "file:///etc/passwd",
    "modelscope.cn",
    "https//modelscope.cn",
    "https://[fd00::5/",                # unbalanced bracket
], ids=repr)
def test_bad_urls_are_refused_naming_the_variable_and_fix(url):
    assert not inputs.is_url(url)
    assert inputs.check(HOST, {}, {"model_prefetch_pip_index_url": url}) == [
        "%s: model_prefetch_pip_index_url: %r is not an http(s) URL. Fix: give a URL such as https://host/path "
        "(http or https, a host, no spaces or line breaks), or leave it empty" % (HOST, url)]


def test_an_empty_optional_url_is_unset():
    assert inputs.check(HOST, {}, {"model_prefetch_mirror_url": ""}) == []


# -- the other formats of _inputs --------------------------------------------------------------

@pytest.mark.parametrize("size", ["1g\n", "1g ", " 1g", "1 g", "1g\n    privileged: true"], ids=repr)
def test_bad_sizes(size):
    assert inputs.check(HOST, {}, {"vllm_compose_shm_size": size}) == [
        "%s: vllm_compose_shm_size: %r is not a size. Fix: give a size such as 1g, 512m or 16g" % (HOST, size)]


@pytest.mark.parametrize("serial", ["25%\n", "25%x", "25%\n%", "12.5%", "\u0662\u0665%"], ids=repr)
def test_bad_serial_percentages(serial):
    messages = inputs.check(HOST, {}, {"vllm_compose_serial": serial})
    assert len(messages) == 1 and messages[0].startswith("%s: vllm_compose_serial: %r is neither" % (HOST, serial))
    assert "Fix: give a batch size such as 1, 2 or '25%'" in messages[0]


@pytest.mark.parametrize("serial", ["25%", "100%", " 25%", "2", 3, [1, "50%"]], ids=repr)
def test_good_serial(serial):
    assert inputs.check(HOST, {}, {"vllm_compose_serial": serial}) == []


@pytest.mark.parametrize("path", ["/var/lib/ascendfleet/modelscope\n", "/var/lib/x\ny", "/opt/a\tb", "/opt/\x00"],
                         ids=repr)
def test_paths_with_a_line_break_are_refused(path):
    # vllm_compose_cache_dir reads ascendfleet_cache_dir: its rule is the shared input's, found
    # through the role's argument spec.
    assert inputs.check(HOST, role_options(), {"vllm_compose_cache_dir": path}) == [
        "%s: vllm_compose_cache_dir: %r holds a line break or another control character. Fix: give the absolute "
        "path on one line without control characters, e.g. /var/lib/ascendfleet/modelscope" % (HOST, path)]


def test_good_paths_pass():
    assert inputs.check(HOST, role_options(), {"vllm_compose_cache_dir": "/var/lib/ascendfleet/modelscope",
                                               "vllm_compose_project_root": "/mnt/my disk/opt"}) == []


def test_a_repository_with_a_line_break_is_refused():
    value = "quay.io/ascend/vllm-ascend\n"
    assert inputs.check(HOST, role_options(), {"vllm_compose_image_repository": value}) == [
        "%s: vllm_compose_image_repository: %r holds a line break or another control character. Fix: give the "
        "value on one line without control characters" % (HOST, value)]
    assert inputs.check(HOST, role_options(), {"vllm_compose_image_repository": "quay.io/ascend/vllm-ascend"}) == []


# -- revisions (model_prefetch) ----------------------------------------------------------------

@pytest.mark.parametrize("revision", ["master\n", "v1.0\r\n", "mas\nter", "master ", "a b", "\nmaster"], ids=repr)
def test_bad_revisions_are_refused(revision):
    with pytest.raises(ms.ModelPrefetchError, match="malformed revision"):
        ms.validate_revision(revision)


# -- fleet_monitoring ----------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["5m\n", "5m ", "5m\n- alert: x"], ids=repr)
def test_monitoring_durations_are_read_whole(value):
    with pytest.raises(fm.MonitoringError, match="fleet_monitoring_rate_window: .* is not a Prometheus duration"):
        fm.thresholds({"rate_window": value})
    with pytest.raises(fm.MonitoringError, match="is not a Prometheus duration"):
        fm.prometheus_config("/etc/prometheus/sd", "/etc/prometheus/rules.yml", scrape_interval=value)


@pytest.mark.parametrize("job", ["vllm\n", "vllm\"} or vector(1)\n", "vllm "], ids=repr)
def test_monitoring_job_names_are_read_whole(job):
    with pytest.raises(fm.MonitoringError, match="fleet_monitoring_vllm_job: .* is not a usable job name"):
        fm.rule_groups(vllm_job=job)


def test_monitoring_good_values_pass():
    assert fm.thresholds({"rate_window": "5m"})["rate_window"] == "5m"
    assert fm.rule_groups(vllm_job="vllm")["groups"]
