# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Filter judging, in the pre-flight, whether each image a host needs can reach it (role vllm_compose).

Documentation: vllm_compose_image_source_errors.yml beside this file.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ascendfleet.llm.plugins.module_utils._image_sources import (
    REGISTRY_TIMEOUT,
    errors,
    probe_argv,
    rollback_errors,
    version_images,
)


def _images(planned):
    """``{image: [deployment names]}`` of a plan (or of vllm_compose_rollback_images' result)."""
    images = {}
    for dep in list((planned or {}).get("deployments") or []) + list((planned or {}).get("multinode") or []):
        if isinstance(dep, dict) and dep.get("image"):
            images.setdefault(dep["image"], []).append(str(dep.get("name")))
    return images


def vllm_compose_image_source_errors(planned, host, source, present, remote=None, local=None, manifests=None,
                                     archive_dir="", remote_dir="", registry_timeout=REGISTRY_TIMEOUT,
                                     rollback_target=None):
    """Messages for the images of ``planned`` (a vllm_compose_plan result) that cannot reach ``host``;
    with ``rollback_target``, for the images of the versions a rollback returns to that are not on it."""
    images = _images(planned)
    if rollback_target:
        return rollback_errors(str(host), str(rollback_target), images, present)
    return errors(str(host), source, images, present, remote=remote, local=local, manifests=manifests,
                  archive_dir=archive_dir or "", remote_dir=remote_dir or "", registry_timeout=int(registry_timeout))


def vllm_compose_rollback_images(states):
    """The versions a rollback returns to, ``{deployments: [{name, image}]}``, from the slurped state.json files."""
    return version_images(states)


def vllm_compose_registry_probe(ref, timeout=REGISTRY_TIMEOUT):
    """The argv of the bounded registry probe for the image ``ref``."""
    return probe_argv(str(ref), int(timeout))


class FilterModule(object):
    """Image source checks."""

    def filters(self):
        return {"vllm_compose_image_source_errors": vllm_compose_image_source_errors,
                "vllm_compose_registry_probe": vllm_compose_registry_probe,
                "vllm_compose_rollback_images": vllm_compose_rollback_images}
