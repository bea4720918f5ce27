# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Filters judging and rendering the fleet status (playbooks/status.yml).

Documentation: fleet_status.yml, fleet_status_text.yml, fleet_status_markdown.yml and
fleet_status_html.yml beside this file.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible_collections.ascendfleet.llm.plugins.filter.facts import _plain
from ansible_collections.ascendfleet.llm.plugins.module_utils._fleet_status import (
    evaluate,
    render_html,
    render_markdown,
    render_text,
)


def _fleet(value, name):
    if not isinstance(value, dict) or "hosts" not in value or "summary" not in value:
        raise AnsibleFilterError("%s: expects the output of ascendfleet.llm.fleet_status, got %s"
                                 % (name, type(value).__name__))
    return _plain(value)


def fleet_status(records, generated_at="", gateways=None):
    """Fleet verdict from one record per host ({host, error, observed, plan}), with each gateway's
    pools from one record per gateway ({gateway, servers, error})."""
    if not isinstance(records, (list, tuple)):
        raise AnsibleFilterError("fleet_status: expects a list of host records, got %s" % type(records).__name__)
    if gateways is not None and not isinstance(gateways, (list, tuple)):
        raise AnsibleFilterError("fleet_status: gateways must be a list of gateway records, got %s" % type(gateways).__name__)
    try:
        return evaluate(_plain(list(records)), str(generated_at or ""),
                        gateways=None if gateways is None else _plain(list(gateways)))
    except (KeyError, TypeError, ValueError) as exc:
        raise AnsibleFilterError("fleet_status: a host record is malformed (%s: %s)" % (type(exc).__name__, exc))


def fleet_status_text(fleet):
    return render_text(_fleet(fleet, "fleet_status_text"))


def fleet_status_markdown(fleet):
    return render_markdown(_fleet(fleet, "fleet_status_markdown"))


def fleet_status_html(fleet, title="ascendfleet.llm fleet status"):
    return render_html(_fleet(fleet, "fleet_status_html"), str(title))


class FilterModule(object):
    """Fleet status filters."""

    def filters(self):
        return {
            "fleet_status": fleet_status,
            "fleet_status_text": fleet_status_text,
            "fleet_status_markdown": fleet_status_markdown,
            "fleet_status_html": fleet_status_html,
        }
