"""Synthetic model repositories served by the stand-in ModelScope hub (a simulator).

Everything here is deterministic: a file is defined by its kind, size and seed, its bytes
are generated on demand in 1 MiB blocks (random access, so ``Range`` requests are cheap)
and never held whole in memory. Each file's sha256 is computed once and cached (in memory,
and on disk when a state directory is given, so GiB-sized benchmark repos hash once).

Standard library only: this runs on the sim hosts (Debian bookworm, Python 3.11).
"""

import hashlib
import json
import os
import random
import re
import struct
import threading

BLOCK = 1 << 20
# Bump when the byte generator changes, so cached digests of old bytes are not reused.
GENERATOR_VERSION = 1
MIB = 1 << 20
COMMIT_ID = re.compile(r"^[0-9a-f]{40}$")

DEFAULT_MODELS = {
    "Qwen/Qwen3.5-27B": {"weights_bytes": 4 * MIB, "shards": 2},
    "Qwen/Qwen3-0.6B": {"weights_bytes": 1 * MIB, "shards": 1},
}


class SyntheticFile:
    """One file of a repo: fixed ``data`` bytes, or a seeded (safetensors-framed) blob."""

    def __init__(self, path, data=None, seed=None, payload_bytes=0, tensor_name=None, lfs=None):
        self.path = path
        self.seed = seed
        self.data = data
        if data is None:
            # A valid single-tensor safetensors file: u64 header length, JSON header, U8 data.
            header = {
                "__metadata__": {"format": "pt", "ascendfleet_sim": "synthetic bytes"},
                tensor_name: {"dtype": "U8", "shape": [payload_bytes], "data_offsets": [0, payload_bytes]},
            }
            raw = json.dumps(header, separators=(",", ":")).encode()
            raw += b" " * (-len(raw) % 8)
            self.prefix = struct.pack("<Q", len(raw)) + raw
            self.size = len(self.prefix) + payload_bytes
        else:
            self.prefix = b""
            self.size = len(data)
        self.lfs = bool(lfs if lfs is not None else data is None)

    @property
    def cache_key(self):
        if self.data is not None:
            return None
        return "v%d:%s:%d:%s" % (
            GENERATOR_VERSION, self.seed, self.size, hashlib.sha256(self.prefix).hexdigest()[:16])

    def _block(self, index):
        return random.Random("%s/%d" % (self.seed, index)).randbytes(BLOCK)

    def iter_bytes(self, start=0, end=None, chunk=BLOCK):
        """Yield the bytes [start, end) in pieces of at most ``chunk`` bytes."""
        end = self.size if end is None else min(end, self.size)
        if self.data is not None:
            for pos in range(start, end, chunk):
                yield self.data[pos:min(end, pos + chunk)]
            return
        pos = start
        plen = len(self.prefix)
        if pos < plen:
            piece = self.prefix[pos:min(end, plen)]
            pos += len(piece)
            if piece:
                yield piece
        while pos < end:
            off = pos - plen
            index, within = divmod(off, BLOCK)
            block = self._block(index)
            take = min(BLOCK - within, end - pos, chunk)
            yield block[within:within + take]
            pos += take


class DigestCache:
    """sha256 per file, computed once; persisted as JSON under ``state_dir`` if given."""

    def __init__(self, state_dir=None):
        self._lock = threading.Lock()
        self._mem = {}
        self._path = os.path.join(state_dir, "sha256-cache.json") if state_dir else None
        if self._path and os.path.exists(self._path):
            with open(self._path, encoding="utf-8") as handle:
                self._mem.update(json.load(handle))

    def sha256(self, sfile):
        key = sfile.cache_key
        if key is None:
            return hashlib.sha256(sfile.data).hexdigest()
        with self._lock:
            if key in self._mem:
                return self._mem[key]
        digest = hashlib.sha256()
        for piece in sfile.iter_bytes():
            digest.update(piece)
        value = digest.hexdigest()
        with self._lock:
            self._mem[key] = value
            if self._path:
                os.makedirs(os.path.dirname(self._path), exist_ok=True)
                tmp = self._path + ".tmp"
                with open(tmp, "w", encoding="utf-8") as handle:
                    json.dump(self._mem, handle, indent=0, sort_keys=True)
                os.replace(tmp, self._path)
        return value


def _commit_id(*parts):
    return hashlib.sha1("/".join(str(p) for p in parts).encode()).hexdigest()


def _json_bytes(obj):
    return (json.dumps(obj, indent=2, ensure_ascii=False) + "\n").encode()


GITATTRIBUTES = b"""*.7z filter=lfs diff=lfs merge=lfs -text
*.bin filter=lfs diff=lfs merge=lfs -text
*.safetensors filter=lfs diff=lfs merge=lfs -text
tokenizer.json filter=lfs diff=lfs merge=lfs -text
"""


def _tokenizer_files(seed, vocab_size):
    """Small but well-formed BPE tokenizer files (a stand-in vocabulary, not Qwen's)."""
    rng = random.Random("%s/tokenizer" % seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = {}
    for i in range(256):
        vocab["<0x%02X>" % i] = i
    while len(vocab) < 2048:
        vocab["".join(rng.choice(letters) for _letter in range(rng.randint(2, 6)))] = len(vocab)
    merges = ["%s %s" % (a, b) for a, b in zip(letters, reversed(letters))]
    tokenizer = {
        "version": "1.0",
        "added_tokens": [
            {"id": vocab_size - 3, "content": "<|endoftext|>", "special": True},
            {"id": vocab_size - 2, "content": "<|im_start|>", "special": True},
            {"id": vocab_size - 1, "content": "<|im_end|>", "special": True},
        ],
        "model": {"type": "BPE", "vocab": vocab, "merges": merges},
    }
    tokenizer_config = {
        "add_prefix_space": False,
        "bos_token": None,
        "eos_token": "<|im_end|>",
        "pad_token": "<|endoftext|>",
        "model_max_length": 131072,
        "tokenizer_class": "Qwen2Tokenizer",
        "chat_template": "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
                         "{{ message['content'] }}<|im_end|>\n{% endfor %}"
                         "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
    }
    return {
        "tokenizer.json": _json_bytes(tokenizer),
        "tokenizer_config.json": _json_bytes(tokenizer_config),
        "vocab.json": _json_bytes(vocab),
        "merges.txt": ("#version: 0.2\n" + "\n".join(merges) + "\n").encode(),
    }


def _readme(model_id, note):
    return ("---\nlicense: apache-2.0\ntags:\n- ascendfleet-sim\n---\n# %s (simulated)\n\n"
            "Synthetic repository served by the ascendfleet.llm stand-in ModelScope hub, a "
            "simulator. %s The weights are seeded pseudo-random bytes, not a model.\n"
            % (model_id, note)).encode()


def _qwen35_27b_config():
    """Shaped like the real Qwen3.5-27B config.json (hybrid attention VL model)."""
    layers = 64
    return {
        "architectures": ["Qwen3_5ForConditionalGeneration"],
        "image_token_id": 248056,
        "model_type": "qwen3_5",
        "text_config": {
            "attention_bias": False,
            "attention_dropout": 0.0,
            "attn_output_gate": True,
            "bos_token_id": 248044,
            "eos_token_id": 248046,
            "full_attention_interval": 4,
            "head_dim": 256,
            "hidden_act": "silu",
            "hidden_size": 5120,
            "initializer_range": 0.02,
            "intermediate_size": 17408,
            "layer_types": ["full_attention" if (i + 1) % 4 == 0 else "linear_attention"
                            for i in range(layers)],
            "linear_conv_kernel_dim": 4,
            "linear_key_head_dim": 128,
            "linear_num_key_heads": 16,
            "linear_num_value_heads": 48,
            "linear_value_head_dim": 128,
            "max_position_embeddings": 262144,
            "model_type": "qwen3_5_text",
            "num_attention_heads": 24,
            "num_hidden_layers": layers,
            "num_key_value_heads": 4,
            "rms_norm_eps": 1e-06,
            "rope_parameters": {
                "mrope_interleaved": True,
                "mrope_section": [11, 11, 10],
                "partial_rotary_factor": 0.25,
                "rope_theta": 10000000,
                "rope_type": "default",
            },
            "tie_word_embeddings": False,
            "dtype": "bfloat16",
            "use_cache": True,
            "vocab_size": 248320,
        },
        "tie_word_embeddings": False,
        "transformers_version": "4.57.0.dev0",
        "video_token_id": 248057,
        "vision_config": {
            "deepstack_visual_indexes": [],
            "depth": 27,
            "hidden_act": "gelu_pytorch_tanh",
            "hidden_size": 1152,
            "in_channels": 3,
            "initializer_range": 0.02,
            "intermediate_size": 4304,
            "model_type": "qwen3_5",
            "num_heads": 16,
            "num_position_embeddings": 2304,
            "out_hidden_size": 5120,
            "patch_size": 16,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
        },
        "vision_end_token_id": 248054,
        "vision_start_token_id": 248053,
    }


def _qwen3_06b_config():
    """The real Qwen3-0.6B config.json values (text-only)."""
    return {
        "architectures": ["Qwen3ForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": 151643,
        "eos_token_id": 151645,
        "head_dim": 128,
        "hidden_act": "silu",
        "hidden_size": 1024,
        "initializer_range": 0.02,
        "intermediate_size": 3072,
        "max_position_embeddings": 40960,
        "max_window_layers": 28,
        "model_type": "qwen3",
        "num_attention_heads": 16,
        "num_hidden_layers": 28,
        "num_key_value_heads": 8,
        "rms_norm_eps": 1e-06,
        "rope_scaling": None,
        "rope_theta": 1000000,
        "sliding_window": None,
        "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.51.0",
        "use_cache": True,
        "use_sliding_window": False,
        "vocab_size": 151936,
    }


class Repo:
    """A model repo: named revisions (branches/tags) pointing at commits, each a file set."""

    def __init__(self, model_id):
        self.model_id = model_id
        self.commits = {}      # commit id -> {path: SyntheticFile}
        self.commit_times = {}  # commit id -> unix time
        self.branches = {}     # name -> commit id
        self.tags = {}         # name -> commit id

    def resolve(self, revision):
        """Commit id for a branch, tag or full commit id; None when unknown."""
        revision = revision or "master"
        if revision in self.branches:
            return self.branches[revision]
        if revision in self.tags:
            return self.tags[revision]
        if revision in self.commits:
            return revision
        return None


def _weights(model_id, seed, weights_bytes, shards, changed_shard=None, variant=""):
    """Shard files (and the index when sharded); ``changed_shard`` gets a different seed."""
    files = {}
    per = max(1, weights_bytes // shards)
    weight_map = {}
    total = 0
    for i in range(1, shards + 1):
        name = ("model-%05d-of-%05d.safetensors" % (i, shards)) if shards > 1 else "model.safetensors"
        payload = per if i < shards else max(1, weights_bytes - per * (shards - 1))
        tensor = "model.language_model.layers.%d.sim_weights" % (i - 1)
        shard_seed = "%s/%s%s" % (seed, name, variant if i == changed_shard else "")
        files[name] = SyntheticFile(name, seed=shard_seed, payload_bytes=payload, tensor_name=tensor)
        weight_map[tensor] = name
        total += payload
    if shards > 1:
        index = {"metadata": {"total_size": total}, "weight_map": weight_map}
        files["model.safetensors.index.json"] = SyntheticFile(
            "model.safetensors.index.json", data=_json_bytes(index))
    return files


def _merged(base, update):
    """``base`` with ``update`` merged in, key by key (nested mappings too); neither is changed."""
    out = dict(base)
    for key, value in update.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def build_repos(config=None):
    """Repos from a config dict: ``{"models": {"Owner/Name": {"weights_bytes": N, "shards": K}}}``.

    Every model gets branch ``master`` (the latest commit), a tag ``v1.0`` on the same commit,
    and an older commit (full 40-hex id, also tag ``v0.9``) in which only the last shard
    differs, so a revision change re-downloads exactly one shard.

    A model may also list ``"revisions": [...]``: more names it answers to, each the latest
    commit's files (a 40-hex name becomes that commit id, any other name a tag), so a team's
    pinned revisions resolve as they do on ModelScope; and ``"latest_config": {...}``, merged
    (key by key, nested mappings too) into the latest commit's ``config.json`` only, as an
    upstream push that changes the config with the weights (a shorter context, say).
    """
    config = config or {}
    models = dict(DEFAULT_MODELS)
    for model_id, spec in (config.get("models") or {}).items():
        models[model_id] = dict(models.get(model_id, {"weights_bytes": MIB, "shards": 1}), **spec)
    repos = {}
    for model_id, spec in models.items():
        weights_bytes = int(spec["weights_bytes"])
        shards = int(spec.get("shards", 1))
        if weights_bytes < shards or shards < 1:
            raise ValueError("model %s: weights_bytes (%d) must be >= shards (%d) >= 1; fix the "
                             "hub config" % (model_id, weights_bytes, shards))
        seed = "ascendfleet-sim/%s" % model_id
        if model_id.startswith("Qwen/Qwen3.5"):
            config_json = _qwen35_27b_config()
            vocab = config_json["text_config"]["vocab_size"]
            extra = {
                "preprocessor_config.json": _json_bytes({
                    "image_processor_type": "Qwen2VLImageProcessorFast", "patch_size": 16,
                    "temporal_patch_size": 2, "merge_size": 2,
                    "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}),
                "video_preprocessor_config.json": _json_bytes({
                    "video_processor_type": "Qwen3VLVideoProcessor", "patch_size": 16,
                    "temporal_patch_size": 2, "merge_size": 2}),
            }
            task = "image-text-to-text"
        elif model_id.startswith("Qwen/Qwen3-0.6B"):
            config_json = _qwen3_06b_config()
            vocab = config_json["vocab_size"]
            extra = {}
            task = "text-generation"
        else:
            config_json = dict(_qwen3_06b_config())
            vocab = config_json["vocab_size"]
            extra = {}
            task = "text-generation"
        common = {
            ".gitattributes": GITATTRIBUTES,
            "LICENSE": b"Apache License\nVersion 2.0, January 2004\nhttp://www.apache.org/licenses/\n",
            "README.md": _readme(model_id, "Revision-independent files are identical in every commit."),
            "config.json": _json_bytes(config_json),
            "configuration.json": _json_bytes({"framework": "pytorch", "task": task, "allow_remote": True}),
            "generation_config.json": _json_bytes({
                "bos_token_id": 151643, "do_sample": True, "eos_token_id": [151645, 151643],
                "pad_token_id": 151643, "temperature": 0.6, "top_k": 20, "top_p": 0.95}),
        }
        common.update(_tokenizer_files(seed, vocab))
        common.update(extra)
        latest = dict(common)
        if spec.get("latest_config"):
            latest["config.json"] = _json_bytes(_merged(config_json, spec["latest_config"]))
        repo = Repo(model_id)
        old = _commit_id(seed, "v0.9")
        new = _commit_id(seed, "v1.0")
        for commit, variant, when, texts in ((old, "@v0.9", 1767225600, common), (new, "", 1769904000, latest)):
            files = {p: SyntheticFile(p, data=d, lfs=p == "tokenizer.json") for p, d in texts.items()}
            files.update(_weights(model_id, seed, weights_bytes, shards,
                                  changed_shard=shards if variant else None, variant=variant))
            repo.commits[commit] = files
            repo.commit_times[commit] = when
        repo.branches["master"] = new
        repo.tags["v1.0"] = new
        repo.tags["v0.9"] = old
        for name in spec.get("revisions") or []:
            name = str(name)
            if repo.resolve(name):
                continue
            if COMMIT_ID.match(name):
                repo.commits[name] = repo.commits[new]
                repo.commit_times[name] = repo.commit_times[new]
            else:
                repo.tags[name] = new
        repos[model_id] = repo
    return repos
