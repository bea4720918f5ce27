# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Filters producing the fleet's monitoring configuration (roles/fleet_monitoring).

Documentation: fleet_monitoring_targets.yml, fleet_monitoring_gateway_targets.yml, fleet_monitoring_rules.yml,
fleet_monitoring_prometheus_config.yml and fleet_monitoring_dashboard.yml beside this file.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.ascendfleet.llm.plugins.module_utils._fleet_monitoring import (
    NPU_EXPORTER_JOB,
    VLLM_JOB,
    MonitoringError,
    dashboard,
    file_sd,
    gateway_sd,
    prometheus_config,
    rule_groups,
)
from ansible_collections.ascendfleet.llm.plugins.filter.fleet_status import _plain


def _run(name, func, *args, **kwargs):
    try:
        return func(*args, **kwargs)
    except MonitoringError as exc:
        raise AnsibleFilterError("%s: %s" % (name, exc))
    except (KeyError, TypeError, AttributeError) as exc:
        raise AnsibleFilterError("%s: malformed input (%s: %s)" % (name, type(exc).__name__, exc))


def fleet_monitoring_targets(records):
    """file_sd target groups ({vllm, npu_exporter}) from one record per host."""
    if not isinstance(records, (list, tuple)):
        raise AnsibleFilterError("fleet_monitoring_targets: expects a list of host records, got %s"
                                 % type(records).__name__)
    return _run("fleet_monitoring_targets", file_sd, _plain(list(records)))


def fleet_monitoring_gateway_targets(gateways):
    """file_sd target groups of the fleet's gateways (HAProxy's Prometheus endpoint)."""
    if not isinstance(gateways, (list, tuple)):
        raise AnsibleFilterError("fleet_monitoring_gateway_targets: expects a list of gateway records, got %s"
                                 % type(gateways).__name__)
    return _run("fleet_monitoring_gateway_targets", gateway_sd, _plain(list(gateways)))


def fleet_monitoring_rules(thresholds, vllm_job=VLLM_JOB, npu_exporter_job=NPU_EXPORTER_JOB):
    """Prometheus alert and recording rules with these thresholds."""
    if not isinstance(thresholds, dict):
        raise AnsibleFilterError("fleet_monitoring_rules: expects a mapping of thresholds, got %s"
                                 % type(thresholds).__name__)
    return _run("fleet_monitoring_rules", rule_groups, _plain(thresholds), str(vllm_job), str(npu_exporter_job))


def fleet_monitoring_prometheus_config(sd_dir, rules_path, scrape_interval="15s", evaluation_interval="15s",
                                       alertmanagers=None, vllm_job=VLLM_JOB, npu_exporter_job=NPU_EXPORTER_JOB,
                                       external_labels=None):
    """A prometheus.yml scraping the discovery files in sd_dir."""
    return _run("fleet_monitoring_prometheus_config", prometheus_config, str(sd_dir), str(rules_path),
                str(scrape_interval), str(evaluation_interval), _plain(list(alertmanagers or [])),
                str(vllm_job), str(npu_exporter_job), _plain(dict(external_labels or {})))


def fleet_monitoring_dashboard(title="ascendfleet.llm fleet", vllm_job=VLLM_JOB, npu_exporter_job=NPU_EXPORTER_JOB):
    """The Grafana dashboard (JSON model) for the fleet."""
    return _run("fleet_monitoring_dashboard", dashboard, str(vllm_job), str(npu_exporter_job), str(title))


class FilterModule(object):
    """Fleet monitoring filters."""

    def filters(self):
        return {
            "fleet_monitoring_targets": fleet_monitoring_targets,
            "fleet_monitoring_gateway_targets": fleet_monitoring_gateway_targets,
            "fleet_monitoring_rules": fleet_monitoring_rules,
            "fleet_monitoring_prometheus_config": fleet_monitoring_prometheus_config,
            "fleet_monitoring_dashboard": fleet_monitoring_dashboard,
        }
