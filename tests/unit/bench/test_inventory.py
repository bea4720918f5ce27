"""Inventories of the benchmark's fleet (bench/benchlib/inventory.py)."""
import pytest
import yaml

from benchlib import inventory


def test_host_names():
    assert inventory.host_names(3) == ["ascendfleet-bench-01", "ascendfleet-bench-02", "ascendfleet-bench-03"]
    assert inventory.host_names(100, "b")[-1] == "b-100"
    assert inventory.host_names(100, "b")[0] == "b-001"
    with pytest.raises(ValueError, match="positive integer"):
        inventory.host_names(0)
    with pytest.raises(ValueError, match="prefix"):
        inventory.host_names(2, "Bench_")


def test_fleet_profiles_seed_first():
    assert inventory.fleet(3) == [("ascendfleet-bench-01", "seed-910b2"), ("ascendfleet-bench-02", "idle-910b3"),
                                  ("ascendfleet-bench-03", "idle-910b3")]


def test_render_is_the_inventory_fleet_sh_and_the_roles_read():
    text = inventory.render(inventory.fleet(2))
    data = yaml.safe_load(text)
    assert data["ascend_servers"]["hosts"] == {
        "ascendfleet-bench-01": {"ascendfleet_sim_profile": "seed-910b2"},
        "ascendfleet-bench-02": {"ascendfleet_sim_profile": "idle-910b3"},
    }
    assert data["control"]["hosts"]["localhost"]["ansible_connection"] == "local"
    assert text.startswith("---\n")


def test_render_refuses_bad_input():
    with pytest.raises(ValueError, match="at least one host"):
        inventory.render([])
    with pytest.raises(ValueError, match="listed twice"):
        inventory.render([("h-1", "seed-910b2"), ("h-1", "idle-910b3")])
    with pytest.raises(ValueError, match="profile"):
        inventory.render([("h-1", "../etc")])


def test_render_host_vars_win_for_every_host():
    data = yaml.safe_load(inventory.render(inventory.fleet(2), host_vars={"ansible_connection": "docker"}))
    assert all(h["ansible_connection"] == "docker" for h in data["ascend_servers"]["hosts"].values())
    with pytest.raises(ValueError, match="plain"):
        inventory.render(inventory.fleet(1), host_vars={"x": "a: b"})


def test_render_gateways_group_after_the_servers():
    # The gateway section's inventory: group ascendfleet_gateways (role fleet_gateway, fleet.sh starts
    # its hosts too); host_vars stay with ascend_servers; a name is one host, whatever its group.
    text = inventory.render(inventory.fleet(2), host_vars={"x": "1"}, gateways=[("ascendfleet-bench-gw", "idle-910b3")])
    data = yaml.safe_load(text)
    assert data["ascendfleet_gateways"]["hosts"] == {"ascendfleet-bench-gw": {"ascendfleet_sim_profile": "idle-910b3"}}
    assert list(data["ascend_servers"]["hosts"]) == ["ascendfleet-bench-01", "ascendfleet-bench-02"]
    assert data["ascend_servers"]["hosts"]["ascendfleet-bench-02"]["x"] == 1
    assert "ascendfleet_gateways" not in yaml.safe_load(inventory.render(inventory.fleet(2)))
    with pytest.raises(ValueError, match="listed twice"):
        inventory.render(inventory.fleet(1), gateways=[("ascendfleet-bench-01", "idle-910b3")])
