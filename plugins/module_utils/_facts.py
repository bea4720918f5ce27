# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""What the collection knows about the world, in one place: the home of every cross-role fact.

PRIVATE to this collection; may change without notice. Standard library only (runs on the
controller in filters and on hosts in modules, Python >= 3.8).

Every role, module and playbook reads these facts from here (YAML through the filters of
``plugins/filter/facts.py``); none spells them again:

* ``DEFAULTS``: the default of every shared inventory input ``ascendfleet_<name>`` (the image,
  the model cache, the report directory, the host paths a vllm-ascend container mounts) and of
  the facts roles expose as inputs (the supported releases, the chip families).
* ``RELEASES``: the vllm-ascend releases the collection supports and what each needs (the CANN
  lines in its images, the oldest host driver for them).
* ``FAMILY_VARIANT`` / :func:`image_ref`: the image tag variant of a chip family and THE image
  reference of a deployment (verify, deploy and status all call it).
* Container paths (``CONTAINER_MODELS``) and the marker layout of a cached model
  (:func:`model_dir`, :func:`state_paths`, :func:`build_marker`, :func:`dumps_manifest`).
* :func:`planned_models`: the unique models the present deployments of a host need.
* :func:`model_completeness`: THE answer to "is this model complete in the cache".
* The identifiers users give (:func:`is_deployment_name`, :func:`model_id_parts`, :func:`is_digest`):
  THE rules every check of a deployment name, a model id or an image digest uses, matched
  against the whole string (``re.fullmatch``; ``$`` also matches before a trailing newline).
"""

from __future__ import annotations

import hashlib
import json
import os
import re

from ansible_collections.ascendfleet.llm.plugins.module_utils._files import file_size, read_bytes

# --------------------------------------------------------------------------- releases and images

# vllm-ascend release -> CANN lines in its images -> oldest host driver (Ascend HDK) for them.
# vllm_ascend_min is inclusive, vllm_ascend_below exclusive; "dev0" takes in a line's release candidates.
# First match wins, so the rows run newest first; CANN does not only grow (v0.24.0rc1 and v0.25.1rc1 went
# back to CANN 9.0.1 after v0.23.0's 9.1.0).
# Sources: the CANN of each release's images is read from its Dockerfiles by scripts/gen-vllm-cli-data.py
# (RELEASES[tag]["images"] of _vllm_cli_data; tests/unit/roles/test_npu_verify_matrix.py checks every
# row against it). The driver per CANN line (8.2 -> 24.1.rc2, 8.5/9.0 -> 25.0, 9.1 -> 25.2) is the
# collection's earlier reading of vllm-ascend's release notes and versioning policy; from v0.23.0 the
# installation guide only points at the CANN release notes on hiascend.com (not readable here), so the
# 9.0/9.1 driver minimums are not confirmed from Huawei's compatibility documents (../shared/field-facts.md:
# the current docs validate HDK 26.0.RC1 with CANN 9.1.0). The 310P images of v0.20.2rc1 ... v0.25.1rc1
# ship CANN 9.1.0-beta.1, outside their row's lines: npu_verify's check of the image's own CANN
# (cann_driver_requirement) holds them to the 9.1 driver.
RELEASES = (
    {"vllm_ascend_min": "v0.26.0dev0", "cann": ["9.1"], "driver_min": "25.2"},
    {"vllm_ascend_min": "v0.24.0dev0", "vllm_ascend_below": "v0.26.0dev0", "cann": ["9.0"], "driver_min": "25.0"},
    {"vllm_ascend_min": "v0.23.0", "vllm_ascend_below": "v0.24.0dev0", "cann": ["9.1"], "driver_min": "25.2"},
    {"vllm_ascend_min": "v0.13.0dev0", "vllm_ascend_below": "v0.23.0", "cann": ["8.5", "9.0"],
     "driver_min": "25.0"},
    {"vllm_ascend_min": "v0.9.1dev0", "vllm_ascend_below": "v0.12.0dev0", "cann": ["8.2"],
     "driver_min": "24.1.rc2"},
)

# Image tag variant per chip family (vllm-ascend's naming: vX, vX-a3, vX-310p, vX-a5, each +-openeuler).
# A5 (Ascend 950): the image workflow (.github/workflows/schedule_image_build_and_push.yaml, "A5 Ubuntu" /
# "A5 openEuler") pushes -a5 and -a5-openeuler, and the release Dockerfiles are Dockerfile.a5[.openEuler];
# the installation guide's table names -950dt / -950dt-openeuler, which no workflow builds. The collection
# picks -a5 (the tags that exist) and reads a -950dt tag as the A5 variant too (image_variant_of), so an
# explicit image with that suffix is not refused as a 910B image.
FAMILY_VARIANT = {"910B": "", "A3": "-a3", "310P": "-310p", "A5": "-a5"}
# The values ascendfleet_image_variant takes: auto (from the chip family) or a tag suffix.
VARIANT_CHOICES = ("auto", "", "-a3", "-310p", "-a5")
# Tag suffixes read as a family's variant besides FAMILY_VARIANT's (the docs' name for the A5 images).
VARIANT_ALIASES = {"-950dt": "A5"}

# --------------------------------------------------------------------------- identifiers

# The identifiers a user gives. Each rule is matched with re.fullmatch against the whole string:
# ``^...$`` with re.match also accepts a trailing newline ("x\n"), which then reaches a file name,
# the NPU ledger or a compose file.
# An image digest: sha256:<64 lower-case hex digits>.
DIGEST_RE = re.compile(r"sha256:[0-9a-f]{64}")
# A deployment name: the compose project name, the NPU ledger's owner, /opt/ascendfleet/<name>/.
DEPLOYMENT_NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]*")
DEPLOYMENT_NAME_FORM = ("lower-case letters, digits, '-' and '_', starting with a letter or digit "
                        "(it is the compose project name)")
# A ModelScope model id Owner/Name: it is a directory <cache>/models/<Owner>/<Name> on the host.
# Each part starts with an ASCII letter or digit and holds letters, digits, '-', '_', '.'; so no
# part is empty, '.' or '..', and there is exactly one '/' and no whitespace; no '..' anywhere.
MODEL_ID_RE = re.compile(r"([A-Za-z0-9][A-Za-z0-9_.-]{0,99})/([A-Za-z0-9][A-Za-z0-9_.-]{0,199})")
MODEL_ID_RULE = "letters, digits, '-', '_', '.'; each part starting with a letter or digit, no '..'; exactly one '/'"
MODEL_ID_FORM = "'Owner/Name' as on modelscope.cn (%s), e.g. 'Qwen/Qwen3.5-27B'" % MODEL_ID_RULE


def is_deployment_name(name):
    """Whether ``name`` is a valid deployment name (the whole string, see DEPLOYMENT_NAME_RE)."""
    return isinstance(name, str) and DEPLOYMENT_NAME_RE.fullmatch(name) is not None


def model_id_parts(model):
    """``(owner, name)`` of a valid model id ``Owner/Name``, else None. THE model-id rule: the
    planner, the prefetch and every module that reads the cache call it."""
    match = MODEL_ID_RE.fullmatch(model) if isinstance(model, str) else None
    if match is None or ".." in model:
        return None
    return match.group(1), match.group(2)


def is_digest(digest):
    """Whether ``digest`` is ``sha256:<64 lower-case hex digits>`` (the whole string)."""
    return isinstance(digest, str) and DIGEST_RE.fullmatch(digest) is not None


# --------------------------------------------------------------------------- host and container paths

# Where the reference procedure's compose file mounts the model cache in the container (models are served by
# their path under it: <CONTAINER_MODELS>/<Owner>/<Name>).
CONTAINER_MODELS = "/root/.cache/modelscope/hub/models"
# Host paths the vllm-ascend container mounts read-only (driver, npu-smi, dcmi): npu_verify
# checks that each exists, vllm_compose mounts them.
# The Ascend driver's NPU network tool (RoCE link, address, ping of each NPU).
HCCN_TOOL = "/usr/local/Ascend/driver/tools/hccn_tool"
HOST_MOUNTS = (
    "/usr/local/dcmi",
    HCCN_TOOL,
    "/usr/local/bin/npu-smi",
    "/usr/local/Ascend/driver/lib64/",
    "/usr/local/Ascend/driver/version.info",
    "/etc/ascend_install.info",
)
# Where a CANN toolkit keeps its version files, on a host or in an image: ``ascend-toolkit/latest``
# is the layout up to CANN 8.3 (and a link kept by later installers), ``cann`` the CANN 8.5+ one.
TOOLKIT_DIRS = ("/usr/local/Ascend/ascend-toolkit/latest", "/usr/local/Ascend/cann")
# Control device nodes every NPU container needs besides its /dev/davinciN.
CONTROL_DEVICES = ("/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc")

# --------------------------------------------------------------------------- shared inputs

# Default of each shared inventory input ascendfleet_<name> (and the facts roles expose as inputs
# or templates place); the filter ascendfleet.llm.fleet_fact returns it to YAML ('<name>' | fleet_fact).
DEFAULTS = {
    "cache_dir": "/var/lib/ascendfleet/modelscope",
    # How the cache keeps models: "flat" (one copy per model, <cache>/models/<Owner>/<Name>) or
    # "revisions" (one directory per resolved revision, _model_revisions; docs/model-revisions.md).
    "cache_layout": "flat",
    # With the "revisions" layout: how many revisions of a model each host keeps after a successful
    # rollout (those a compose file, last-known-good or previous mounts count and always stay).
    "cache_keep_revisions": 2,
    "report_dir": "reports",
    "image_repository": "quay.io/ascend/vllm-ascend",
    "image_version": "v0.17.0rc1",
    "image_os": "openeuler",
    "image_variant": "auto",
    "image_source": "pull",
    "host_mounts": list(HOST_MOUNTS),
    "control_devices": list(CONTROL_DEVICES),
    "toolkit_dirs": list(TOOLKIT_DIRS),
    "releases": [dict(row) for row in RELEASES],
    "families": sorted(FAMILY_VARIANT),
    "container_models": CONTAINER_MODELS,
    # The head's data-parallel RPC port of a multi-node deployment: the vllm-ascend
    # Qwen3.5-397B-A17B multi-node tutorial's --data-parallel-rpc-port (vLLM's own default is 29550).
    "multinode_rpc_port": 13389,
}


class FactError(ValueError):
    """An input that contradicts what the collection knows (message names the fix)."""


def fleet_fact(name):
    """A copy of ``DEFAULTS[name]``; raises FactError naming the known names."""
    if name not in DEFAULTS:
        raise FactError("no shared fact %r (known: %s)" % (name, ", ".join(sorted(DEFAULTS))))
    value = DEFAULTS[name]
    return json.loads(json.dumps(value))


def image_ref(settings=None, family=None, deployment=None):
    """THE image reference of a deployment on a host with chips of ``family``.

    ``settings`` holds the shared image inputs without their ``ascendfleet_image_`` prefix:
    ``repository``, ``version``, ``os``, ``variant`` (``auto``/None: from ``family``; or a tag
    suffix ``""``, ``-a3``, ``-310p``, ``-a5``), ``image`` (an explicit reference that replaces the four
    before), ``digest`` (``sha256:...``, pins any reference), ``source`` and ``mirror`` (a
    registry prefix put before the reference when ``source`` is ``pull``). Missing keys take
    ``DEFAULTS``. ``deployment`` may override ``image_version`` and ``image``.

    The reference is ``<repository>:<version><variant>[-openeuler]`` - vllm-ascend publishes
    the openEuler images with a ``-openeuler`` suffix and the Ubuntu ones without any. Raises
    FactError when the variant would come from an unknown family, or for a malformed digest.
    """
    s = dict(settings or {})
    dep = deployment or {}
    explicit = dep.get("image") or s.get("image")
    if explicit:
        ref = explicit
    else:
        variant = s.get("variant")
        if variant is None or variant == "auto":
            if family not in FAMILY_VARIANT:
                raise FactError("no vllm-ascend image variant for chip family %r (known: %s)"
                                % (family, ", ".join(sorted(FAMILY_VARIANT))))
            variant = FAMILY_VARIANT[family]
        if variant and not variant.startswith("-"):
            variant = "-" + variant
        os_flavour = s.get("os", DEFAULTS["image_os"])
        ref = "%s:%s%s%s" % (s.get("repository") or DEFAULTS["image_repository"],
                             dep.get("image_version") or s.get("version") or DEFAULTS["image_version"],
                             variant, "-openeuler" if os_flavour == "openeuler" else "")
    digest = s.get("digest")
    if digest:
        if not is_digest(digest):
            raise FactError("image digest %r is not sha256:<64 hex digits>" % digest)
        ref = "%s@%s" % (ref.split("@", 1)[0], digest)
    mirror = s.get("mirror")
    if mirror and s.get("source", "pull") == "pull":
        ref = "%s/%s" % (mirror.rstrip("/"), ref)
    return ref


TAG_VERSION_RE = re.compile(r"(v\d+\.\d+\.\d+(?:(?:rc|\.post)\d+)?)(?:-|\Z)", re.ASCII)


def release_of(image):
    """The vllm-ascend release (``v0.18.0rc1``) an image reference or tag names, or None."""
    if not isinstance(image, str) or not image:
        return None
    ref = image.split("@", 1)[0]
    last = ref.rsplit("/", 1)[-1]
    tag = last.rsplit(":", 1)[1] if ":" in last else ref
    match = TAG_VERSION_RE.match(tag)
    return match.group(1) if match else None


def image_variant_of(ref):
    """The family an image reference's tag is built for ("910B", "A3", "310P", "A5"), or None if unknown."""
    tag = ref.split("@", 1)[0]
    if ":" not in tag.rsplit("/", 1)[-1]:
        return None
    tag = tag.rsplit(":", 1)[1]
    suffixes = [(suffix, family) for family, suffix in FAMILY_VARIANT.items() if suffix]
    for suffix, family in suffixes + sorted(VARIANT_ALIASES.items()):
        if re.search(re.escape(suffix) + r"(-|\Z)", tag):
            return family
    if re.match(r"v?[0-9]", tag):
        return "910B"
    return None


def report_dir_path(report_dir, pwd=None, playbook_dir=None):
    """A report directory made absolute: relative to where ansible-playbook was started (its
    ``PWD``), else to the playbook's directory (where Ansible runs lookups and local modules)."""
    report_dir = str(report_dir)
    if os.path.isabs(report_dir):
        return report_dir
    return os.path.join(pwd or playbook_dir or os.getcwd(), report_dir)


def models_option():
    """The argument spec of the ``models`` option of every module that reads the model cache
    (documented once in the doc fragment ascendfleet.llm.models)."""
    return dict(type="list", elements="dict", default=[], options=dict(
        model=dict(type="str", required=True),
        revision=dict(type="str", default="master"),
        include=dict(type="list", elements="str"),
        exclude=dict(type="list", elements="str"),
    ))


def container_model_path(model):
    """Where the container sees ``model`` (``Owner/Name``)."""
    return "%s/%s" % (CONTAINER_MODELS, model)


# --------------------------------------------------------------------------- planned models

def planned_models(deployments, defaults=None, globs=True):
    """Unique ``{model, revision, include, exclude}`` of the present deployments, first seen first.

    ``deployments`` are ``ascendfleet_deployments`` items (``name``, ``model``, ``revision``,
    ``state``, flags...) or model_prefetch entries (``model``, ``revision``, ``include``,
    ``exclude``); ``defaults`` (``ascendfleet_deployment_defaults``) supplies ``revision`` and
    ``state`` where an item has none, as vllm_compose resolves them. Items with ``state:
    absent`` are skipped; ``revision`` defaults to ``master``. ``globs`` False leaves
    ``include``/``exclude`` out (a consumer accepts a copy whatever globs it was fetched with).
    Raises FactError naming an item without a model.
    """
    defaults = defaults or {}
    out = []
    for index, item in enumerate(deployments or []):
        if not isinstance(item, dict) or not item.get("model"):
            raise FactError("entry %d (%r) has no 'model' (Owner/Name)" % (index, item))
        if item.get("state", defaults.get("state", "present")) == "absent":
            continue
        entry = {"model": item["model"],
                 "revision": str(item.get("revision") or defaults.get("revision") or "master")}
        if globs:
            entry.update(include=list(item.get("include") or []), exclude=list(item.get("exclude") or []))
        if entry not in out:
            out.append(entry)
    return out


def cached_models(fact, wanted, cache_dir, layout="flat"):
    """The model states vllm_model_info would return for ``wanted`` (planned_models items) in the
    cache ``layout``, taken from the host fact ``ascendfleet_models`` = ``{"cache_dir", "layout",
    "states": {"<model>@<revision>": state}}`` that model_prefetch sets when its run changed
    nothing in the cache; None when the fact is missing, is about another cache directory or
    another layout (or names none: the states of one layout do not answer for the other, a flat
    state has no revision directory to mount), or lacks one of the models (read the cache then)."""
    if not wanted:
        return {}
    if (not isinstance(fact, dict) or fact.get("cache_dir") != cache_dir or fact.get("layout") != layout
            or not isinstance(fact.get("states"), dict)):
        return None
    out = {}
    for item in wanted:
        state = fact["states"].get("%s@%s" % (item["model"], item["revision"]))
        if not isinstance(state, dict):
            return None
        out[item["model"]] = state
    return out


# --------------------------------------------------------------------------- marker layout

# One cached model (what ``modelscope download --local-dir`` writes, plus ours):
#   <cache>/models/<Owner>/<Name>/                          the files of the repo
#   <cache>/models/<Owner>/<Name>/.ascendfleet/manifest.json revision, files, sizes, sha256
#   <cache>/models/<Owner>/<Name>/.ascendfleet/complete      written last, only when verified
#   <cache>/models/<Owner>/<Name>/.ascendfleet/lock          fcntl lock, holder as JSON
# The marker is {"model", "revision", "manifest_sha256"} (sha256 of the manifest file's bytes),
# so a marker cannot vouch for a manifest it was not written with.
STATE_DIR = ".ascendfleet"
MANIFEST = "manifest.json"
MARKER = "complete"
LOCK = "lock"
PROGRESS = "progress.json"
MANIFEST_FORMAT = 1
HASH_CHUNK = 4 << 20


class ModelCacheError(Exception):
    """A model cache problem, with a clear message naming what is wrong and the fix (model_prefetch's
    ModelPrefetchError is one); a manifest or path that does not follow the marker layout."""


def model_dir(cache_dir, model):
    """``<cache>/models/<Owner>/<Name>``."""
    return os.path.join(cache_dir, "models", model)


def state_paths(mdir):
    """Our files in a model directory: dir, manifest, marker, lock, progress."""
    base = os.path.join(mdir, STATE_DIR)
    return {"dir": base, "manifest": os.path.join(base, MANIFEST),
            "marker": os.path.join(base, MARKER), "lock": os.path.join(base, LOCK),
            "progress": os.path.join(base, PROGRESS)}


def safe_relpath(path):
    """A repo file path that stays inside the model dir (no '..', not absolute, not ours)."""
    if (not isinstance(path, str) or not path or path.startswith("/") or "\\" in path
            or any(part in ("", ".", "..") for part in path.split("/"))
            or path.split("/")[0] == STATE_DIR):
        raise ModelCacheError("hub listed an unsafe file path %r; refusing to write outside "
                              "the model directory" % (path,))
    return path


def dumps_manifest(manifest):
    """Canonical bytes of a manifest (what the marker's manifest_sha256 covers)."""
    return (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode("utf-8")


def sha256_bytes(data):
    return hashlib.sha256(data).hexdigest()


def sha256_file(path, chunk=HASH_CHUNK, stop=None, counted=None):
    """sha256 of ``path``, read in ``chunk`` pieces. ``stop``: a threading.Event; once it is set
    the read is abandoned and None returned. ``counted``: called with each piece's length."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while True:
            if stop is not None and stop.is_set():
                return None
            piece = handle.read(chunk)
            if not piece:
                break
            if counted is not None:
                counted(len(piece))
            digest.update(piece)
    return digest.hexdigest()


class CacheReads(object):
    """The cache files one read-only module execution reads, each read once: the bytes of a small
    file, a file's size, a file's sha256. Several questions about the same copy in one execution
    (npu_host_facts: npu_verify's disk count, model_prefetch's cache read, vllm_compose's model
    states) are then judged on one reading of it, and no file is hashed twice. Only for a read
    that writes nothing: a change made after the first read is not seen. Pass one to the readers'
    ``reads``; without one (None) every reader reads the disk itself (:data:`DISK`)."""

    def __init__(self):
        self._bytes, self._sizes, self._hashes = {}, {}, {}

    def read_bytes(self, path):
        """``_files.read_bytes`` of ``path``, read once."""
        if path not in self._bytes:
            self._bytes[path] = read_bytes(path)
        return self._bytes[path]

    def file_size(self, path):
        """``_files.file_size`` of ``path``, read once."""
        if path not in self._sizes:
            self._sizes[path] = file_size(path)
        return self._sizes[path]

    def sha256_file(self, path):
        """:func:`sha256_file` of ``path``, hashed once (an IOError/OSError is raised again each time)."""
        if path not in self._hashes:
            try:
                self._hashes[path] = (sha256_file(path), None)
            except (IOError, OSError) as exc:
                self._hashes[path] = (None, exc)
        digest, error = self._hashes[path]
        if error is not None:
            raise error
        return digest


class _DiskReads(object):
    """The readers' default: every read goes to the disk (no memory between two reads)."""

    read_bytes = staticmethod(read_bytes)
    file_size = staticmethod(file_size)

    @staticmethod
    def sha256_file(path):
        return sha256_file(path)


DISK = _DiskReads()


def build_marker(model, revision, manifest_bytes):
    return {"model": model, "revision": revision, "manifest_sha256": sha256_bytes(manifest_bytes)}


def parse_manifest(raw, where="manifest"):
    """Manifest dict from bytes; raises ModelCacheError when it is not one of ours."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ModelCacheError("%s is not valid JSON (%s)" % (where, exc))
    if not isinstance(data, dict) or not isinstance(data.get("files"), list):
        raise ModelCacheError("%s has no files list" % where)
    for item in data["files"]:
        if not isinstance(item, dict) or not {"path", "size", "sha256"} <= set(item):
            raise ModelCacheError("%s: a file entry lacks path/size/sha256: %r" % (where, item))
        safe_relpath(item["path"])
    return data


def check_marker(marker_raw, manifest_raw, model, revision, sizes, include=None, exclude=None):
    """Reasons the cached model is NOT complete for (model, revision); [] when it is.

    The pure rule behind :func:`model_completeness`. Reads no model bytes: ``sizes`` maps each
    manifest path to its size on disk (None when missing). ``marker_raw``/``manifest_raw`` are
    file bytes or None when absent. ``include``/``exclude`` None accept any globs the copy was
    fetched with; lists must equal the manifest's (model_prefetch re-fetches on a change).
    """
    if marker_raw is None:
        return ["no completion marker"]
    try:
        marker = json.loads(marker_raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return ["completion marker is not valid JSON"]
    if not isinstance(marker, dict):
        return ["completion marker is not a JSON object"]
    if marker.get("model") != model:
        return ["marker is for model %r" % (marker.get("model"),)]
    if marker.get("revision") != revision:
        return ["marker is for revision %r, %r requested" % (marker.get("revision"), revision)]
    if manifest_raw is None:
        return ["manifest is missing"]
    if marker.get("manifest_sha256") != sha256_bytes(manifest_raw):
        return ["manifest does not match the marker's manifest_sha256"]
    try:
        manifest = parse_manifest(manifest_raw)
    except ModelCacheError as exc:
        return [str(exc)]
    if ((include is not None and list(manifest.get("include") or []) != list(include))
            or (exclude is not None and list(manifest.get("exclude") or []) != list(exclude))):
        return ["include/exclude globs differ from the manifest's"]
    reasons = []
    for item in manifest["files"]:
        have = sizes.get(item["path"])
        if have is None:
            reasons.append("%s is missing" % item["path"])
        elif have != int(item["size"]):
            reasons.append("%s has %d bytes, manifest says %d" % (item["path"], have, item["size"]))
    return reasons


def verify_entries(files, observed):
    """Mismatches of ``observed`` ({path: (size or None, sha256 or None)}) against ``files``.

    Returns [(path, reason)] naming what differs.
    """
    bad = []
    for item in files:
        size, sha = observed.get(item["path"], (None, None))
        if size is None:
            bad.append((item["path"], "missing"))
        elif size != int(item["size"]):
            bad.append((item["path"], "size %d, expected %d" % (size, int(item["size"]))))
        elif sha is not None and sha != item["sha256"]:
            bad.append((item["path"], "sha256 %s, expected %s" % (sha, item["sha256"])))
    return bad


def model_completeness(cache_dir, model, revision="master", verify="quick", include=None, exclude=None, reads=None):
    """Is ``model`` at ``revision`` complete in the cache under ``cache_dir``? THE one reader.

    model_prefetch (model_cache_info, model_fetch), vllm_compose (vllm_model_info), npu_verify
    (npu_host_facts) and the status playbook (vllm_status) all ask this function, so they give
    one answer. A model is complete when its completion marker names ``model`` and
    ``revision``, the manifest still has the sha256 the marker recorded, and every manifest file
    is present with its manifest size (``verify="quick"``: stat only, no model bytes read) and,
    with ``verify="full"``, also its manifest sha256 (every byte re-read).

    ``include``/``exclude``: None accepts the copy whatever globs it was fetched with (what a
    consumer wants); lists must equal the manifest's (model_prefetch passes its own, so a
    changed glob set fetches again).

    Never raises for a missing, partial or damaged cache. Returns ``{"model", "revision",
    "model_dir", "marker", "complete" (bool), "reasons" ([] when complete; else why not, e.g.
    ``"no completion marker"``, ``"model.safetensors is missing"``, ``"model.safetensors:
    sha256 ..., expected ..."``), "bytes" (the manifest's total when complete, else None),
    "cached_revision" (the revision the marker names, None without a readable marker)}``.
    ``reads``: a :class:`CacheReads` shared by the questions of one read-only execution.
    """
    return dir_completeness(model_dir(cache_dir, model), model, revision, verify, include, exclude, reads)


def dir_completeness(mdir, model, revision="master", verify="quick", include=None, exclude=None, reads=None):
    """:func:`model_completeness` of the copy in the directory ``mdir`` (the marker layout above):
    the one rule for today's ``<cache>/models/<Owner>/<Name>`` and for one resolved revision's
    directory (``_model_revisions``, whose marker names the revision key)."""
    reads = reads or DISK
    paths = state_paths(mdir)
    out = {"model": model, "revision": revision, "model_dir": mdir, "marker": paths["marker"],
           "complete": False, "reasons": [], "bytes": None, "cached_revision": None}
    marker_raw = reads.read_bytes(paths["marker"])
    try:
        marker = json.loads(marker_raw.decode("utf-8")) if marker_raw is not None else None
    except (ValueError, UnicodeDecodeError):
        marker = None
    if isinstance(marker, dict) and marker.get("model") == model:
        out["cached_revision"] = marker.get("revision")
    manifest_raw = reads.read_bytes(paths["manifest"])
    manifest = None
    sizes = {}
    if manifest_raw is not None:
        try:
            manifest = parse_manifest(manifest_raw, paths["manifest"])
        except ModelCacheError:
            manifest = None
    if manifest:
        for item in manifest["files"]:
            sizes[item["path"]] = reads.file_size(os.path.join(mdir, item["path"]))
    reasons = check_marker(marker_raw, manifest_raw, model, revision, sizes, include, exclude)
    if not reasons and verify == "full":
        observed = {}
        for item in manifest["files"]:
            path = os.path.join(mdir, item["path"])
            try:
                observed[item["path"]] = (reads.file_size(path), reads.sha256_file(path))
            except (IOError, OSError):
                observed[item["path"]] = (None, None)
        reasons = ["%s: %s" % bad for bad in verify_entries(manifest["files"], observed)]
    out["reasons"] = reasons
    out["complete"] = not reasons
    if not reasons:
        out["bytes"] = manifest.get("total_bytes")
    return out
