# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Which hosts of a deploy run have nothing to do? (pure logic, unit-tested; issue 30)

The deploy playbook reads each host once (npu_verify's npu_host_facts, with the model cache and
what runs on the host) and then decides, for every host at once on the control node, which hosts
the later plays (image pre-flight, prefetch, plan, rollout) can leave out. Each role's own verdict
is the judge; this only combines them, conservatively - any doubt keeps the host in the full path:

- npu_verify: the host's verdict is not ``fail``;
- model_prefetch: the one read answered model_prefetch's own question (``shared``) and found no
  model missing, and no other host of its fan-out domain in this run misses one (the domain's seed
  may be this host, which would serve the copies);
- vllm_compose: the plan judged every deployment unchanged (``_vllm_noop.judge``: cards, image,
  files, the live compose file last-known-good's, one container running as written, the API key
  line), with no refusal and no absent deployment to remove;
- nothing to warn about: no orphan deployment on the host, no risky setting in the plan (the plan
  play shows those warnings);
- not a member of a multi-node deployment (rolled out as one unit by its own play) and not a
  gateway host (the gateway play changes it).
"""

from __future__ import annotations


def candidate_reasons(record):
    """Why one host cannot be a no-op before its deployments are planned ([] when it can).

    ``record``: {verdict, prefetch: {shared, missing}, multinode, gateway} (see decide)."""
    reasons = []
    if record.get("verdict") in (None, "fail"):
        reasons.append("npu_verify: verdict %s" % record.get("verdict"))
    prefetch = record.get("prefetch") or {}
    if not prefetch.get("shared"):
        reasons.append("model_prefetch: the one read did not answer its question")
    elif prefetch.get("missing"):
        reasons.append("model_prefetch: missing %s" % ", ".join(str(m) for m in prefetch["missing"]))
    if record.get("multinode"):
        reasons.append("member of a multi-node deployment")
    if record.get("gateway"):
        reasons.append("gateway host")
    return reasons


def decide(records):
    """``records``: one dict per host of the run, in play order::

        {host, verdict: npu_verify's verdict (pass/warn/fail or None when not judged),
         prefetch: {shared: bool, missing: [...], domain: str, fanout: bool},
         noop: vllm_compose's plan verdict (``_vllm_noop.judge``: {unchanged, ...}) or None when not planned,
         warnings: the plan's warnings and orphan deployments (the plan play shows them),
         multinode: bool, gateway: bool}

    Returns {noop: [host, ...] in play order, reasons: {host: [why it runs the full path]}}."""
    # A fan-out domain with any host missing a model: its seed serves the copies, so no host of it is a no-op.
    busy_domains = set()
    for rec in records:
        prefetch = rec.get("prefetch") or {}
        if prefetch.get("fanout") and (not prefetch.get("shared") or prefetch.get("missing")):
            busy_domains.add(prefetch.get("domain"))
    noop, why = [], {}
    for rec in records:
        reasons = candidate_reasons(rec)
        prefetch = rec.get("prefetch") or {}
        if not reasons and prefetch.get("fanout") and prefetch.get("domain") in busy_domains:
            reasons.append("model_prefetch: a host of fan-out domain %s misses a model" % prefetch.get("domain"))
        plan = rec.get("noop")
        if not isinstance(plan, dict):
            reasons.append("vllm_compose: not planned")
        elif plan.get("unchanged") is not True:
            reasons.append("vllm_compose: %s" % "; ".join(
                list(plan.get("reasons") or []) + ["%s: %s" % (d.get("name"), ", ".join(d.get("reasons") or []))
                                                   for d in plan.get("deployments") or [] if not d.get("unchanged")])
                or "changes")
        if rec.get("warnings"):
            reasons.append("vllm_compose: warnings to show (%d)" % len(rec["warnings"]))
        if reasons:
            why[rec["host"]] = reasons
        else:
            noop.append(rec["host"])
    return {"noop": noop, "reasons": why}
