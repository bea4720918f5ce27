# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).
"""Would the vllm_compose rollout change anything on this host? (pure logic, unit-tested)

The deploy playbook plans every host at once before its serial, health-gated play: a host whose
deployments are all as the rollout would leave them skips that play (no batch, no skipped-task
rounds). "As the rollout would leave them" is judged conservatively, step by step of
tasks/rollout.yml: any doubt sends the host through the rollout, which then behaves exactly as
without the plan.

- cards: npu_assign would keep the chips the ledger holds (no ledger write);
- image: the deployment's image is on the host (no pull, no archive load);
- files: the project directory and last-good/ exist with mode 0755, compose.yaml holds the bytes the
  role renders now (mode 0644), vllm.env holds the API key line (mode 0600) when a key is set;
- gate: the live compose.yaml is last-known-good's (last-good/compose.yaml): a config no gate
  passed on (a run stopped between its render and its record, or run with the gate skipped) is
  never called unchanged, the rollout gates it;
- containers: exactly one container of the project, of the one service, running, created from
  this compose file (compose's own config hash) and from the image the tag names now (compose's
  image label), so ``docker compose up`` would report nothing to do.

The host half (what the files, containers and ledger hold) is read by vllm_host_info
(``deployments``); the control-node half (the rendered compose file) is compared by the
vllm_compose_noop filter. The API key file is compared on the host (vllm_host_info's ``no_log``
option ``env_content``): only whether it matches comes back, no digest a reader of ``-v`` output
could test guesses of the key against.
"""

from __future__ import annotations

from ansible_collections.ascendfleet.llm.plugins.module_utils import _vllm_rollout as rollout

CONFIG_HASH_LABEL = "com.docker.compose.config-hash"
IMAGE_LABEL = "com.docker.compose.image"
SERVICE_LABEL = "com.docker.compose.service"
PROJECT_LABEL = "com.docker.compose.project"
DIR_MODE = "0755"
COMPOSE_MODE = "0644"
ENV_MODE = "0600"


def config_hashes(text):
    """``docker compose config --hash '*'`` output ("<service> <sha256>" per line) -> {service: hash}."""
    out = {}
    for line in (text or "").splitlines():
        parts = line.split()
        if len(parts) == 2:
            out[parts[0]] = parts[1]
    return out


def project_containers(inspected, project):
    """The containers of compose project ``project`` in ``docker inspect`` output (a list of dicts),
    each as {service, status, config_hash, image_label, image_id}."""
    out = []
    for item in inspected or []:
        labels = (item.get("Config") or {}).get("Labels") or {}
        if labels.get(PROJECT_LABEL) != project:
            continue
        out.append({
            "service": labels.get(SERVICE_LABEL),
            "status": (item.get("State") or {}).get("Status"),
            "config_hash": labels.get(CONFIG_HASH_LABEL),
            "image_label": labels.get(IMAGE_LABEL),
            "image_id": item.get("Image"),
        })
    return out


def host_reasons(state, service):
    """Why the rollout would change the host side of one deployment (``state``: one entry of
    vllm_host_info's ``deployments``), [] when it would not."""
    reasons = []
    if state.get("cards_error"):
        reasons.append("cards: " + state["cards_error"])
    elif state.get("cards_changed"):
        reasons.append("cards: the ledger would change")
    if state.get("image_error"):
        reasons.append("image: docker image inspect failed: %s" % state["image_error"])
    elif not state.get("image_id"):
        reasons.append("image: not on the host")
    if state.get("last_good_mode") != DIR_MODE:
        reasons.append("files: no last-good/ directory (mode %s)" % DIR_MODE)
    if state.get("compose") is None:
        reasons.append("files: no compose.yaml")
    elif state.get("compose_mode") != COMPOSE_MODE:
        reasons.append("files: compose.yaml mode %s, not %s" % (state.get("compose_mode"), COMPOSE_MODE))
    if state.get("compose") is not None and state.get("last_good_compose") != state["compose"]:
        reasons.append("gate: the live compose.yaml is not last-known-good (no gate passed on it: "
                       "a run stopped before its gate, or skipped it)")
    containers = state.get("containers") or []
    hashes = state.get("config_hashes") or {}
    if len(containers) != 1:
        reasons.append("containers: %d of the project, not 1" % len(containers))
    else:
        one = containers[0]
        if one.get("service") != service:
            reasons.append("containers: service %s, not %s" % (one.get("service"), service))
        if one.get("status") != "running":
            reasons.append("containers: %s, not running" % one.get("status"))
        if state.get("config_hash_error"):
            reasons.append("containers: docker compose config --hash failed: %s" % state["config_hash_error"])
        elif not hashes.get(service) or one.get("config_hash") != hashes.get(service):
            reasons.append("containers: created from another compose file (config hash)")
        # compose recreates when its image label differs from the image the tag names now.
        if not state.get("image_id") or state["image_id"] != (one.get("image_label") or one.get("image_id")):
            reasons.append("containers: created from another image than the tag names now")
    return reasons


def judge(deployments, absent, refusals, host_states, rendered, api_key_set, service, host="host", endpoint_host="127.0.0.1"):
    """Per host: {unchanged: bool, reasons: [...], deployments: [{name, unchanged, reasons}], kept: [...], results: [...]}.

    ``deployments``: the plan's present deployments (name); ``absent``: its absent ones (a removal
    is a change the rollout makes); ``refusals``: the pre-flight's (the rollout reports them);
    ``host_states``: vllm_host_info ``deployments``; ``rendered``: {name: compose file as the role
    renders it now}; ``api_key_set``: whether an API key is set, so the role writes vllm.env (each
    state's ``env_matches`` then says whether the host's file holds the line; without a key the role
    leaves any file as it is). ``kept`` names the deployments the rollout
    leaves as they are (each judged on its own: a host whose other deployment changes, or with an
    absent one to remove, still skips them; none when the pre-flight refuses anything) and
    ``results`` are their fleet summary entries, as the rollout would report them (status unchanged)."""
    out, kept, results = [], [], []
    for dep in deployments:
        name = dep["name"]
        state = (host_states or {}).get(name)
        if state is None:
            out.append({"name": name, "unchanged": False, "reasons": ["not read on the host"]})
            continue
        reasons = host_reasons(state, service)
        if name not in (rendered or {}):
            reasons.append("files: compose.yaml not rendered")
        elif state.get("compose") is not None and state["compose"] != rendered[name]:
            reasons.append("files: compose.yaml differs from the rendered one")
        if api_key_set and (state.get("env_matches") is not True or state.get("env_mode") != ENV_MODE):
            reasons.append("files: vllm.env differs (content or mode %s)" % ENV_MODE)
        out.append({"name": name, "unchanged": not reasons, "reasons": reasons})
        if not reasons and not refusals:
            kept.append(name)
            results.append(summary_entry(host, dep, dep.get("devices") if dep.get("devices") is not None else state.get("cards"),
                                         endpoint_host))
    whole = []
    if absent:
        whole.append("absent deployments to remove: %s" % ", ".join(d["name"] for d in absent))
    if refusals:
        whole.append("pre-flight refusals")
    unchanged = not whole and all(d["unchanged"] for d in out)
    return {"unchanged": unchanged, "reasons": whole, "deployments": out, "kept": kept, "results": results}


def summary_entry(host, dep, cards, endpoint_host):
    """The fleet summary's entry of an unchanged deployment: its rollout taken through the states the
    verdict judged (cards kept, image present, the live file last-known-good's, running as written)
    to kept, reported through the one record function (_vllm_rollout.result)."""
    kept = rollout.step(rollout.new(dep["name"], host), [rollout.CARDS, rollout.IMAGE, rollout.RENDERED, rollout.KEPT],
                        cards=cards, new_config=False, as_written=True)
    return rollout.result(kept, dep, endpoint_host)
