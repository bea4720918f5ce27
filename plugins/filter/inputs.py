# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Filter checking role inputs and play knobs against the roles' argument specs and ranges.

Documentation: input_errors.yml beside this file.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from collections.abc import Mapping, Sequence

from ansible.errors import AnsibleFilterError
from ansible_collections.ascendfleet.llm.plugins.module_utils import _deploy_schema
from ansible_collections.ascendfleet.llm.plugins.module_utils._inputs import RULES, check, message, shared_inputs
from ansible_collections.ascendfleet.llm.plugins.module_utils._shared_inputs import conflicts

ROLES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "roles")
ROLES = ("npu_verify", "model_prefetch", "vllm_compose", "fleet_monitoring")
_SPECS = {}


def spec_loader():
    """The YAML loader the specs are read with: libyaml's (CSafeLoader, as ansible-core prefers)
    where PyYAML has it, else the pure-Python SafeLoader (the same data, ~10x slower). Each task
    of each host runs in a worker forked afresh, which reads the specs again: with the pure-Python
    loader that was ~1 s of control-node CPU per input check per host (issue 30)."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def role_options(roles=ROLES):
    """The merged argument_specs.main.options of ``roles`` (read from the collection's roles/)."""
    import yaml

    options = {}
    for role in roles:
        if role not in _SPECS:
            path = os.path.join(ROLES_DIR, role, "meta", "argument_specs.yml")
            try:
                with open(path) as handle:
                    spec = yaml.load(handle, Loader=spec_loader()) or {}  # nosec B506: a safe loader
            except (IOError, OSError) as exc:
                raise AnsibleFilterError("input_errors: cannot read %s (%s)" % (path, exc))
            _SPECS[role] = ((spec.get("argument_specs") or {}).get("main") or {}).get("options") or {}
        options.update(_SPECS[role])
    return options


UNSET = "__ascendfleet_unset__"


def plain(value):
    """A value as plain Python data, read once: Ansible's lazy containers template their items on
    every access, which the checks make many of (~1 s of control-node CPU per host and input check
    before, issue 30). Mappings and sequences become dict and list (keys kept as they are: a
    non-string key is refused by the checks), text becomes str; other scalars stay as they are."""
    if isinstance(value, Mapping):
        return dict(((str(k) if isinstance(k, str) else k), plain(v)) for k, v in value.items())
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return [plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    return value


def input_names(roles=ROLES):
    """The variables ``roles`` read (their argument specs) plus the play knobs with a rule."""
    if isinstance(roles, str):
        roles = [roles]
    options = role_options(tuple(roles))
    return sorted(set(options) | set(shared_inputs(options).values())
                  | set(n for n in RULES if any(n.startswith(r + "_") for r in roles)))


def input_errors(variables, host="host", roles=ROLES, shared=False, deployments=True):
    """One message per bad input among ``variables`` (a host's vars, e.g. hostvars[host]).

    A value equal to ``__ascendfleet_unset__`` (the vars lookup's default in the roles) is not set.
    ``deployments``: also check every key of every deployment against the deployment schema (off
    where the planner comes next and reports every refusal of every deployment at once).
    ``shared``: also refuse role variables of one shared input that disagree (``_shared_inputs``);
    only for variables as the control node sees them (inventory and extra vars, no role defaults).
    """
    if isinstance(roles, str):
        roles = [roles]
    options = role_options(tuple(roles))
    names = input_names(roles) if tuple(roles) != ROLES else sorted(set(options) | set(RULES)
                                                                    | set(shared_inputs(options).values()))
    values, errors = {}, []
    for name in names:
        try:
            if name in variables:
                value = plain(variables[name])
                if not (isinstance(value, str) and value == UNSET):
                    values[name] = value
        except Exception as exc:  # pylint: disable=broad-except
            # an undefined or broken template
            errors.append(message(host, name, "cannot be evaluated (%s)" % exc, "fix the expression or the variables it uses"))
    errors += check(str(host), options, values)
    if deployments:
        errors += _deployment_errors(str(host), options, values)
    if shared:
        refused = set(name for name in values if check(str(host), options, values, names=[name]))
        errors += conflicts(str(host), options, values, skip=refused)
    return errors


def fleet_input_errors(hosts, hostvars, roles=ROLES, shared=False, deployments=True):
    """``input_errors`` of every host of ``hosts`` (e.g. ansible_play_hosts) judged on its
    ``hostvars`` in one call, in the order of ``hosts``: one task for the whole run where each host
    used to run its own (the messages name their host as before)."""
    errors = []
    for host in hosts or []:
        errors += input_errors(hostvars[host], host, roles=roles, shared=shared, deployments=deployments)
    return errors


def _deployment_errors(host, options, values):
    """Every key of every deployment (and of the deployment defaults) against the deployment schema,
    for the variables of _deploy_schema.VARIABLES that passed their own type check; a role variable
    holding its shared input's value is checked once, under the shared name."""
    errors = []
    for name in sorted(_deploy_schema.VARIABLES):
        if name not in values or check(host, options, values, names=[name]):
            continue
        source = shared_inputs(options).get(name)
        if source in values and values[source] == values[name]:
            continue  # the shared input itself is checked (and named)
        for text in _deploy_schema.errors(host, name, values[name]):
            if text not in errors:
                errors.append(text)
    return errors


class FilterModule(object):
    """Input checks."""

    def filters(self):
        return {"input_errors": input_errors, "input_names": input_names, "fleet_input_errors": fleet_input_errors}
