# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Can each image a host will need reach it? Judged in the pre-flight, before the prefetch.

PRIVATE to this collection; may change without notice. Standard library and ansible.module_utils only.

Only images missing on the host are judged (a host that has its image needs neither the registry
nor an archive: offline hosts). For the archive source, the archive must wait on the host
(``vllm_compose_image_archive_remote_dir``) or be a readable file on the control node
(``vllm_compose_image_archive_dir``). For the pull source, the host asked the registry for the
manifest (``docker manifest inspect``, read-only): only the two answers that are certain refuse -
the registry does not know the tag or digest, or it cannot be reached. Anything else (no
credentials before the login, a TLS or plain-HTTP setting the Docker CLI reads differently from
the daemon) is left to the pull, which names it (``_vllm_deploy.pull_failure``). The probe is
bounded (``probe_argv``: coreutils ``timeout`` kills ``docker manifest inspect`` after
``REGISTRY_TIMEOUT`` seconds): a registry that drops the packets or accepts the connection and never
answers is named as such, instead of hanging the play until the task's own time-out.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import re

from ansible_collections.ascendfleet.llm.plugins.module_utils._vllm_deploy import image_registry, pull_failure

# Seconds the registry probe may take, connecting and reading together. Docker's own bounds are longer
# (30 s to connect, 10 s per TLS handshake, none for an answer over plain HTTP); an answering
# registry gives a manifest in a second or two.
REGISTRY_TIMEOUT = 15
# The probe's exit status when ``timeout --foreground --signal=KILL`` stopped it (128 + SIGKILL), and
# what Python reports for a process killed by that signal.
TIMED_OUT_RCS = (124, 137, -9)

# docker manifest inspect (Docker CLI 20.10-28): "no such manifest: <ref>"; a registry's error
# body "manifest unknown"; a 500 for a digest that names no manifest (as the pull sees it).
UNKNOWN_RE = re.compile(r"no such manifest|manifest unknown|not found: manifest|manifest for .* not found", re.IGNORECASE)
UNREACHABLE_RE = re.compile(r"no such host|connection refused|i/o timeout|network is unreachable|no route to host|"
                            r"Client\.Timeout|TLS handshake timeout|context deadline exceeded", re.IGNORECASE)


def probe_argv(ref, timeout=REGISTRY_TIMEOUT):
    """The registry probe the host runs for a missing image ``ref``: ``docker manifest inspect``
    (read-only, the host's DNS, proxy and trust), killed after ``timeout`` seconds."""
    return ["timeout", "--foreground", "--signal=KILL", str(int(timeout)), "docker", "manifest", "inspect", ref]


def no_answer(ref, timeout=REGISTRY_TIMEOUT):
    """What a probe stopped by its time-out means, and the fix."""
    registry = image_registry(ref)
    return ("registry %s did not answer within %d s (docker manifest inspect from the host, stopped: a firewall "
            "that drops the packets, a proxy the host needs and does not use, or a registry that accepts the "
            "connection and hangs). Fix: check that %s is up and that the host reaches it (from the host: "
            "curl -sS -m 10 https://%s/v2/), or set ascendfleet_image_mirror to a registry the host reaches, or "
            "use ascendfleet_image_source: archive" % (registry, int(timeout), registry, registry))


def archive_name(ref):
    """The archive file of an image reference, as image.yml names it (``/``, ``:`` and ``@`` become ``_``)."""
    return re.sub(r"[/:@]", "_", ref) + ".tar"


def _by_item(results):
    """``{item: result}`` of a registered loop (``results`` of a loop over image references)."""
    out = {}
    for result in (results or {}).get("results", []) if isinstance(results, dict) else []:
        if isinstance(result, dict) and "item" in result and not result.get("skipped"):
            out[result["item"]] = result
    return out


def version_images(states):
    """``{"deployments": [{name, image}]}``, a plan's shape, of the versions a rollback returns to:
    ``states`` is the registered loop of ``slurp`` over each deployment's ``<target>/state.json``
    (``item``: the deployment). A deployment without that version or with an unreadable record is
    left out: the rollback itself reports it (no such version to return to)."""
    out = []
    for result in (states or {}).get("results", []) if isinstance(states, dict) else []:
        item = result.get("item") if isinstance(result, dict) else None
        if not isinstance(item, dict) or not result.get("content") or result.get("failed"):
            continue
        try:
            state = json.loads(base64.b64decode(result["content"]).decode("utf-8"))
        except (TypeError, ValueError):
            continue
        if isinstance(state, dict) and isinstance(state.get("image"), str) and state["image"]:
            out.append({"name": str(item.get("name")), "image": state["image"]})
    return {"deployments": out}


def rollback_errors(host, target, images, present):
    """One message per image of ``images`` (``{ref: [deployment names]}``, the versions to return to)
    that is not on ``host`` (``present``: the registered loop of ``docker image inspect``). A rollback
    starts the version with ``pull: never`` (it must not depend on a registry or an archive when it
    is needed): an image pruned since is refused before anything changes."""
    present = _by_item(present)
    out = []
    for ref in sorted(images):
        if present.get(ref, {}).get("rc") == 0:
            continue
        names = ", ".join(sorted(images[ref]))
        out.append("%s: deployment %s: vllm_compose_rollback_target: the %s version runs image %s, which is no "
                   "longer on the host (removed or pruned since), so the rollback could not start it; nothing was "
                   "changed. Fix: put the image back on the host (docker pull %s, or docker load -i <its archive>), "
                   "or roll back to another version (-e vllm_compose_rollback_target=%s)"
                   % (host, names, target, ref, ref, "previous" if target == "last-good" else "last-good"))
    return out


def errors(host, source, images, present, remote=None, local=None, manifests=None,
           archive_dir="", remote_dir="", registry_timeout=REGISTRY_TIMEOUT):
    """One message per image of ``images`` (``{ref: [deployment names]}``) that cannot reach ``host``.

    ``present``: the registered loop of ``docker image inspect`` (rc 0: on the host); ``remote`` /
    ``local``: the registered loops of ``stat`` on the host's and the control node's archive
    (source archive); ``manifests``: the registered loop of ``probe_argv`` (source pull), which ran
    with ``registry_timeout``.
    """
    present, remote, local, manifests = _by_item(present), _by_item(remote), _by_item(local), _by_item(manifests)
    out = []
    for ref in sorted(images):
        names = ", ".join(sorted(images[ref]))
        if present.get(ref, {}).get("rc") == 0:
            continue
        where = "%s: deployment %s" % (host, names)
        if source == "archive":
            if (remote.get(ref, {}).get("stat") or {}).get("exists"):
                continue
            path = "%s/%s" % (archive_dir.rstrip("/"), archive_name(ref))
            stat = (local.get(ref, {}).get("stat") or {})
            if not archive_dir:
                out.append("%s: vllm_compose_image_archive_dir: is empty while the image source is archive, and image %s "
                           "is not on the host nor its archive in %s. Fix: set it to the control-node directory holding "
                           "the image archives, or use ascendfleet_image_source: pull" % (where, ref, remote_dir))
                continue
            if not stat.get("exists"):
                problem = ("%s is missing on the control node (image %s is not on the host, and no archive waits in %s)"
                           % (path, ref, remote_dir))
            elif stat.get("isdir"):
                problem = "%s on the control node is a directory, not the image archive of %s" % (path, ref)
            elif not stat.get("readable"):
                problem = "%s on the control node cannot be read by the user running ansible-playbook" % path
            else:
                continue
            out.append("%s: vllm_compose_image_archive_dir: %s. Fix: save the image there on the control node "
                       "(docker save -o %s %s), or set vllm_compose_image_archive_dir to the directory that holds "
                       "it, or use ascendfleet_image_source: pull" % (where, problem, path, ref))
        elif source == "pull":
            result = manifests.get(ref)
            if not result or result.get("rc") == 0:
                continue
            if result.get("rc") in TIMED_OUT_RCS:
                out.append("%s: image %s: %s" % (where, ref, no_answer(ref, registry_timeout)))
                continue
            text = " ".join(str(result.get("stderr") or result.get("msg") or "").split())
            if UNKNOWN_RE.search(text):
                # pull_failure's wording and fix, for the CLI's own way of saying it
                out.append("%s: image %s: %s" % (where, ref, pull_failure(ref, text + " (manifest unknown)")))
            elif UNREACHABLE_RE.search(text):
                out.append("%s: image %s: %s" % (where, ref, pull_failure(ref, text)))
    return out
