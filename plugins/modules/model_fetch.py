#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ascendfleet.llm contributors
# Dual-licensed: Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0),
# or, at your option, GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt).

from __future__ import annotations

DOCUMENTATION = r"""
module: model_fetch
short_description: Put one ModelScope model into the host's cache, verified, with a completion marker
version_added: 0.1.0
description:
  - Ensures C(<cache_dir>/models/<Owner>/<Name>) holds every file of O(model) at O(revision)
    with the size and sha256 the hub lists, then writes C(.ascendfleet/manifest.json) and,
    last, C(.ascendfleet/complete).
  - Fast path - when the marker matches the model, the revision and the manifest, and every
    manifest file has its size, nothing is read or contacted and the result is C(changed=false).
  - O(source=hub) lists the files over the hub's HTTP API, checks free space, then runs the real
    C(modelscope download --model M --revision R --local-dir DIR) (resumable; a changed revision
    fetches only the files that differ). O(source=rsync) copies from a completed copy (a seed
    host's rsync daemon or a mirror directory) and verifies against that copy's manifest.
    O(source=prestaged) only verifies files staged by other means against the hub's list.
  - Files that fail verification are deleted and fetched again, at most O(attempts) times.
  - One writer per model directory - an fcntl lock on C(.ascendfleet/lock) names its holder.
  - Run with C(async) and C(poll) above 0 and the action plugin prints progress (bytes done /
    total, rate, files, time left) every O(progress_interval) seconds while the transfer runs;
    C(poll=0) is the usual fire-and-forget job.
author:
  - ascendfleet maintainers (@ascendfleet)
attributes:
  check_mode:
    support: full
    description: Reports whether the model would be fetched; writes nothing.
  diff_mode:
    support: none
    description: Model files are not diffed; RV(diff) lists changed files of a revision change.
  idempotent:
    support: full
    description: A completed model is a no-op.
  async:
    support: full
    description: With C(poll) above 0 the action plugin prints progress while the job runs.
options:
  model:
    description: ModelScope model id C(Owner/Name).
    type: str
    required: true
  revision:
    description: Branch, tag or commit id to fetch. Pin it; C(master) moves.
    type: str
    default: master
  cache_dir:
    description: Cache root; the model goes to C(<cache_dir>/models/<Owner>/<Name>) (O(layout=flat)).
    type: path
    required: true
  layout:
    description:
      - C(flat) keeps one copy per model in C(<cache_dir>/models/<Owner>/<Name>); a changed
        revision is written over it.
      - C(revisions) keeps each resolved revision in its own directory
        C(<cache_dir>/revisions/<Owner>/<Name>/<commit>), fetched into a staging directory and
        renamed into place only when verified, so no fetch ever writes into a revision a
        container reads. Files a cached revision already holds are hard-linked, not fetched again;
        today's C(flat) copy is moved in by hard links on the first run (no byte downloaded).
        O(source=hub), or O(source=rsync) with O(source_url) naming another host's revision
        directory C(<...>/revisions/<Owner>/<Name>/<key>), copied as a unit.
        The vllm_compose role does not mount this layout yet (docs/model-revisions.md).
    type: str
    choices: [flat, revisions]
    default: flat
  resolve:
    description:
      - With O(layout=revisions), when to ask the hub what O(revision) resolves to.
      - C(missing) only when it resolves to no complete revision in the cache yet (a re-run
        contacts no hub); C(always) every run, so a moved branch is fetched as a new revision.
    type: str
    choices: [missing, always]
    default: missing
  include:
    description: Only files matching one of these globs (C(*.json)); all when empty.
    type: list
    elements: str
    default: []
  exclude:
    description: Skip files matching one of these globs.
    type: list
    elements: str
    default: []
  source:
    description:
      - C(hub) downloads with the C(modelscope) CLI from O(endpoint).
      - C(rsync) copies from O(source_url), a completed copy holding C(.ascendfleet/manifest.json).
      - C(prestaged) verifies files already in place against the hub's list, never downloads.
    type: str
    choices: [hub, rsync, prestaged]
    default: hub
  source_url:
    description:
      - For O(source=rsync) - the model directory of the copy, as rsync reads it
        (C(rsync://seed:8730/models/Qwen/Qwen3.5-27B), a local or NFS path, or C(host:path)); with
        O(layout=revisions) the revision directory, whose last path component is its key.
    type: str
  rsync_password:
    description: Password of the rsync daemon user for O(source_url) (passed as C(RSYNC_PASSWORD)).
    type: str
  endpoint:
    description: Hub (or internal mirror) URL speaking the ModelScope API.
    type: str
    default: https://www.modelscope.cn
  token:
    description:
      - ModelScope access token for private models. The module passes it to the C(modelscope) CLI in
        the CLI's environment (C(MODELSCOPE_API_TOKEN), which only the process owner and root can
        read), never on a command line, and writes it to no file.
      - Give it here, with C(no_log) on the task. Ansible sends module arguments on the connection's
        standard input (pipelining) or, with C(async), in the module's file inside its private
        (C(0700)) remote tmp directory, which the job removes when it ends.
      - Do not pass the token with the task's C(environment) - Ansible writes a task's environment
        into the remote command line (C(MODELSCOPE_API_TOKEN=... python3 ...)), visible in C(ps), in
        sudo's log and in C(-vvv) output. When the option is omitted, C(MODELSCOPE_API_TOKEN) from the
        module's environment is still used.
    type: str
  cli:
    description: Path of the C(modelscope) executable (usually in a dedicated virtualenv).
    type: path
    default: /opt/ascendfleet/modelscope-venv/bin/modelscope
  env:
    description:
      - Extra environment of the C(modelscope) CLI, e.g. C(MODELSCOPE_DOWNLOAD_MAX_RETRIES) or
        C(HTTPS_PROXY). C(MODELSCOPE_ENDPOINT), C(MODELSCOPE_CACHE), C(MODELSCOPE_HOME) and the
        token are set by the module.
    type: dict
    default: {}
  rsync:
    description: Path or name of the C(rsync) executable.
    type: str
    default: rsync
  verify:
    description:
      - C(quick) trusts a valid marker when sizes match; C(full) re-hashes every file and
        re-fetches any that differ.
    type: str
    choices: [quick, full]
    default: quick
  attempts:
    description: Transfer attempts before failing (each resumes the previous one).
    type: int
    default: 3
  space_margin:
    description: Bytes that must stay free on the cache disk beyond the download.
    type: int
    default: 1073741824
  lock_timeout:
    description: Seconds to wait for another writer of the same model directory.
    type: int
    default: 30
  timeout:
    description: Seconds one transfer attempt may run before it is stopped (0 - no limit).
    type: int
    default: 0
  progress_interval:
    description: Seconds between progress updates (written to C(.ascendfleet/progress.json)).
    type: int
    default: 10
notes:
  - The marker is not re-validated against the hub on the fast path, so a moving branch such
    as C(master) is not refreshed once complete - pin a tag or commit id.
  - The CLI runs with C(MODELSCOPE_CACHE) and C(MODELSCOPE_HOME) under C(<cache_dir>/.modelscope)
    and C(MODELSCOPE_DOWNLOAD_INTRA_CLOUD=false).
seealso:
  - module: ascendfleet.llm.model_cache_info
"""

EXAMPLES = r"""
# Download a pinned model from ModelScope, showing progress while it runs
- name: Fetch Qwen3.5-27B into the cache
  ascendfleet.llm.model_fetch:
    model: Qwen/Qwen3.5-27B
    revision: v1.0
    cache_dir: /mnt/disk2/modelscope
  async: 36000
  poll: 5

# Copy from a seed host that already holds a verified copy
- name: Copy the model from the seed
  ascendfleet.llm.model_fetch:
    model: Qwen/Qwen3.5-27B
    revision: v1.0
    cache_dir: /mnt/disk2/modelscope
    source: rsync
    source_url: rsync://seed-01:8730/ascendfleet-models/Qwen/Qwen3.5-27B
    rsync_password: "{{ __rsync_password }}"
  no_log: true

# One directory per resolved commit; a moved branch is fetched beside the old revision
- name: Fetch what master resolves to now
  ascendfleet.llm.model_fetch:
    model: Qwen/Qwen3.5-27B
    revision: master
    cache_dir: /mnt/disk2/modelscope
    layout: revisions
    resolve: always
  register: fetched

# Re-hash everything and repair what differs
- name: Verify the cached model byte for byte
  ascendfleet.llm.model_fetch:
    model: Qwen/Qwen3.5-27B
    revision: v1.0
    cache_dir: /mnt/disk2/modelscope
    verify: full
"""

RETURN = r"""
model:
  description: The model id.
  returned: always
  type: str
  sample: Qwen/Qwen3.5-27B
revision:
  description: The requested revision.
  returned: always
  type: str
  sample: v1.0
commit:
  description: Commit id the hub resolved the revision to (when a transfer ran).
  returned: when fetched
  type: str
  sample: 360167a01ba11562e3ea220a57ed6999be13ab9c
model_dir:
  description: Directory holding the model (with O(layout=revisions), the revision's directory).
  returned: always, with layout=revisions unless in check mode
  type: str
  sample: /mnt/disk2/modelscope/models/Qwen/Qwen3.5-27B
action:
  description: C(none) (already complete), C(downloaded), C(copied), C(verified) or C(would_fetch).
  returned: always
  type: str
  sample: downloaded
reasons:
  description: Why the cached copy was not complete before this run.
  returned: always
  type: list
  elements: str
  sample: ["no completion marker"]
bytes_total:
  description: Size of the model's files.
  returned: when known
  type: int
  sample: 4206210
bytes_fetched:
  description: Bytes of the files that had to be transferred.
  returned: always
  type: int
  sample: 2097336
files_fetched:
  description: Files transferred by this run.
  returned: always
  type: list
  elements: str
  sample: ["model-00002-of-00002.safetensors"]
attempts:
  description: Transfer attempts used.
  returned: always
  type: int
  sample: 1
seconds:
  description: Seconds the transfers (the CLI or rsync) ran.
  returned: when a transfer ran
  type: float
  sample: 41.3
verify_seconds:
  description: >-
    Seconds spent verifying after the transfers ended. Files are hashed while the transfer runs,
    each once it has landed, so this is the hashing of what landed last (or changed since).
  returned: when files were fetched, copied or verified
  type: float
  sample: 0.4
key:
  description: With O(layout=revisions), the revision directory's name - the commit id, or C(content-<sha256>)
    of the file list when the hub names no single commit.
  returned: with layout=revisions, unless in check mode
  type: str
  sample: 360167a01ba11562e3ea220a57ed6999be13ab9c
previous_key:
  description: With O(layout=revisions), the key O(revision) resolved to before this run (null the first time).
  returned: with layout=revisions, unless in check mode
  type: str
  sample: 0b1e7c1e5c7cbd1d21f6e7d3c3f8e8f2d4a0b6c9
change:
  description: "With O(layout=revisions), C(revision <name>: <old> -> <new>) when the name moved, else null."
  returned: with layout=revisions, unless in check mode
  type: str
  sample: "revision master: 0b1e7c1e5c7c -> 360167a01ba1"
migrated:
  description: With O(layout=revisions), the key today's C(flat) copy was moved into (hard links) by this run.
  returned: when a copy was migrated
  type: str
  sample: 360167a01ba11562e3ea220a57ed6999be13ab9c
files_linked:
  description: With O(layout=revisions), files hard-linked from a cached revision instead of fetched.
  returned: when a revision was fetched
  type: list
  elements: str
  sample: ["config.json", "model-00001-of-00002.safetensors"]
diff:
  description: Change against the previous manifest (unchanged/changed/added/removed paths).
  returned: when a previous manifest existed
  type: dict
  sample: {"unchanged": ["config.json"], "changed": ["model.safetensors"], "added": [], "removed": []}
"""

import socket

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ascendfleet.llm.plugins.module_utils._model_cache import fetch, fetch_revision
from ansible_collections.ascendfleet.llm.plugins.module_utils._facts import ModelCacheError


def main():
    module = AnsibleModule(
        argument_spec=dict(
            model=dict(type="str", required=True),
            revision=dict(type="str", default="master"),
            cache_dir=dict(type="path", required=True),
            include=dict(type="list", elements="str", default=[]),
            exclude=dict(type="list", elements="str", default=[]),
            source=dict(type="str", choices=["hub", "rsync", "prestaged"], default="hub"),
            source_url=dict(type="str"),
            rsync_password=dict(type="str", no_log=True),
            endpoint=dict(type="str", default="https://www.modelscope.cn"),
            token=dict(type="str", no_log=True),
            cli=dict(type="path", default="/opt/ascendfleet/modelscope-venv/bin/modelscope"),
            env=dict(type="dict", default={}),
            rsync=dict(type="str", default="rsync"),
            verify=dict(type="str", choices=["quick", "full"], default="quick"),
            attempts=dict(type="int", default=3),
            space_margin=dict(type="int", default=1 << 30),
            lock_timeout=dict(type="int", default=30),
            timeout=dict(type="int", default=0),
            progress_interval=dict(type="int", default=10),
            layout=dict(type="str", choices=["flat", "revisions"], default="flat"),
            resolve=dict(type="str", choices=["missing", "always"], default="missing"),
        ),
        required_if=[("source", "rsync", ("source_url",))],
        supports_check_mode=True,
    )
    params = dict(module.params)
    params["check_mode"] = module.check_mode
    try:
        engine = fetch_revision if params["layout"] == "revisions" else fetch
        result = engine(params, socket.gethostname())
    except ModelCacheError as exc:
        module.fail_json(msg=str(exc), model=params["model"], revision=params["revision"])
    except (IOError, OSError) as exc:
        module.fail_json(msg="host %s: %s@%s: %s" % (socket.gethostname(), params["model"],
                                                     params["revision"], exc))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
