"""The Prometheus compose file the fleet_monitoring role writes (templates/compose.yaml.j2),
rendered by Ansible's own templar with the role's defaults: loopback and no lifecycle API unless
asked (issue 28: an unauthenticated Prometheus on 0.0.0.0 with /-/quit could be stopped by anyone
on the network)."""
import pathlib

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

ROOT = pathlib.Path(__file__).resolve().parents[4]
ROLE = ROOT / "roles" / "fleet_monitoring"
DEFAULTS = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
SPECS = yaml.safe_load((ROLE / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]


def render(**overrides):
    variables = dict(DEFAULTS)
    variables.update({
        "ansible_managed": "Ansible managed",
        "__fleet_monitoring_service": "prometheus",
        "__fleet_monitoring_prometheus_dir": "/srv/mon/prometheus",
        "__fleet_monitoring_sd_dir": "/srv/mon/file_sd",
        "__fleet_monitoring_rules_dir": "/srv/mon/rules",
    })
    variables.update(overrides)
    templar = Templar(loader=DataLoader(), variables=variables)
    return yaml.safe_load(templar.template(trust_as_template((ROLE / "templates" / "compose.yaml.j2").read_text())))


def test_defaults_publish_on_loopback_without_the_lifecycle_api():
    service = render()["services"]["prometheus"]
    assert service["ports"] == ["127.0.0.1:9090:9090"]
    assert service["command"] == ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus",
                                  "--storage.tsdb.retention.time=15d"]


@pytest.mark.parametrize("value", [True, "yes", "true"])
def test_the_lifecycle_api_only_when_asked(value):
    assert "--web.enable-lifecycle" in render(fleet_monitoring_prometheus_lifecycle=value)["services"]["prometheus"]["command"]


@pytest.mark.parametrize("value", [False, "no", "false"])
def test_no_lifecycle_api_for_false_values(value):
    assert "--web.enable-lifecycle" not in render(fleet_monitoring_prometheus_lifecycle=value)["services"]["prometheus"]["command"]


def test_a_chosen_address_is_published():
    assert render(fleet_monitoring_prometheus_address="10.0.0.5")["services"]["prometheus"]["ports"] == ["10.0.0.5:9090:9090"]


def test_defaults_and_argument_specs_agree():
    assert DEFAULTS["fleet_monitoring_prometheus_address"] == SPECS["fleet_monitoring_prometheus_address"]["default"] == "127.0.0.1"
    assert DEFAULTS["fleet_monitoring_prometheus_lifecycle"] is SPECS["fleet_monitoring_prometheus_lifecycle"]["default"] is False
    assert SPECS["fleet_monitoring_prometheus_lifecycle"]["type"] == "bool"
