# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The fan-out plan of model_prefetch, for every host of the run at once (issue 30).

Each host records what it is and what its cache misses (``__model_prefetch_self``, tasks/inspect.yml):
``host``, ``domain`` (its fan-out domain), ``address`` (where its peers reach its rsync daemon),
``models`` (the models it stages), ``missing`` (those its cache does not hold complete) and
``fanout`` (whether fan-out applies to it). The plan says, per host, which host of its domain is the
seed, what the domain misses, which peers miss something, what the host fetches from the hub itself
and what it copies from the seed. One pass over the records, on the control node: judged per host,
the same plan read every other host's record on every host (N x N).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ascendfleet.llm.plugins.module_utils._lists import unique

RECORD_KEYS = ("host", "domain", "address", "models", "missing", "fanout")


def fanout_plan(records):
    """``{host: {seed, seed_address, domain_missing, peers_missing, own_fetch, copy}}`` for the records.

    Without fan-out a host is its own seed and fetches what it misses. With fan-out the seed of a
    domain is its first host (in run order) whose cache is complete, else its first host with models
    at all, else the host itself; the seed fetches what any host of the domain misses, and every other
    host copies what it misses from the seed.
    """
    for record in records:
        if not isinstance(record, dict) or any(key not in record for key in RECORD_KEYS):
            raise ValueError("fan-out plan: each record needs the keys %s, got %r" % (", ".join(RECORD_KEYS), record))
        if not isinstance(record["fanout"], bool):
            raise ValueError("fan-out plan: fanout of %s must be true or false, got %r" % (record["host"], record["fanout"]))
    domains = {}
    for record in records:
        domains.setdefault(record["domain"], []).append(record)
    plans = {}
    for record in records:
        host = record["host"]
        if record["fanout"] is not True:
            plans[host] = {"seed": host, "seed_address": record["address"], "domain_missing": [], "peers_missing": [],
                           "own_fetch": list(record["missing"]), "copy": []}
            continue
        peers = domains[record["domain"]]
        with_models = [p for p in peers if p["models"] != []]
        complete = [p for p in with_models if p["missing"] == []]
        seed = (complete + with_models + [record])[0]
        missing = unique(m for p in peers for m in p["missing"])
        plans[host] = {"seed": seed["host"], "seed_address": seed["address"], "domain_missing": missing,
                       "peers_missing": [p["host"] for p in peers if p["missing"] != []],
                       "own_fetch": missing if host == seed["host"] else [],
                       "copy": list(record["missing"]) if host != seed["host"] else []}
    return plans
