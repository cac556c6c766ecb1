"""A :class:`~planner.schema.ModelSpec` from a Hugging Face ``config.json``.

Users have the architecture of the model they want to train as a Transformers
``config.json``; typing its numbers into the custom-architecture fields by hand is where
calculators go wrong (the built-in Llama-2-70B of one public tool is 20 % short, see
``../shared/reference/anchors.md`` §8). This module reads the file's own keys, as the
Transformers configuration classes define them, into the planner's model:

=========================  ==================================================================
planner field              config.json keys (first present wins)
=========================  ==================================================================
n_layers                   num_hidden_layers, n_layer, num_layers, n_layers
hidden_size                hidden_size, n_embd, n_embed (BLOOM, Falcon), d_model
n_heads                    num_attention_heads, n_head, n_heads
n_kv_heads                 num_key_value_heads, num_kv_heads, n_head_kv, multi_query (→ 1; GPTBigCode's
                           default true); else = heads. Falcon: 1 when multi_query (default true)
                           and not new_decoder_architecture, whatever num_kv_heads says
                           (FalconAttention)
head_dim                   head_dim (when given)
ffn_hidden_size            intermediate_size, n_inner, ffn_dim, ffn_hidden_size; GPT-2's null
                           n_inner = 4 · hidden (``GPT2MLP``)
vocab_size                 vocab_size
tied_embeddings            tie_word_embeddings; when absent, the model class's default in
                           Transformers (``_TIE_DEFAULTS``: false for Llama, Mistral, Mixtral,
                           Qwen2/3 (MoE), DeepSeek-V2/V3, Phi-3, OLMo, GPT-OSS, Granite, GPT-NeoX,
                           GPT-J, CodeGen, Phi, StableLM, GLM, InternLM2, Yi, Baichuan, Llama 4,
                           Apertus, Nemotron, Persimmon; true for Gemma, Cohere), else
                           ``PretrainedConfig``'s true; a note says which was taken
gated_mlp, norm            by ``model_type``: the Llama family (SwiGLU / GeGLU, RMSNorm) or the
                           GPT family (plain MLP, LayerNorm; also Nemotron and Persimmon, whose
                           squared-ReLU MLPs are ungated)
linear_bias                attention_bias / bias / use_bias / add_bias_linear / enable_bias / MPT's no_bias; the GPT family's
                           own rule otherwise (GPT-2, NeoX, OPT, BLOOM, Phi: biases; Falcon: none)
learned_pos_embeddings     GPT-2 n_positions; OPT max_position_embeddings (+ 2, its offset)
rope                       false for ALiBi: BLOOM and MPT (Transformers builds their ALiBi bias
                           always), Falcon with alibi = true; else true
dropout                    the largest of hidden_dropout, resid_pdrop, attention_dropout, attn_pdrop
sliding_window (+ frac)    sliding_window when the layers use it (use_sliding_window, layer_types,
                           Gemma 2's alternation, Gemma 3's sliding_window_pattern)
moe                        num_local_experts / num_experts / n_routed_experts,
                           num_experts_per_tok / experts_per_token, moe_intermediate_size
                           (else intermediate_size), n_shared_experts or Qwen2-MoE's one
                           shared expert of shared_expert_intermediate_size,
                           first_k_dense_replace / leading mlp_only_layers (with
                           moe_layer_freq: MoE at multiples of it from that layer on); one expert is
                           a dense MLP, and more experts per token than experts is refused; keys a
                           mixtral, qwen2_moe, qwen3_moe, gpt_oss, phimoe, olmoe, granitemoe or
                           deepseek_v3 file leaves out are
                           its Transformers class defaults; expert keys in a file of a dense type
                           (llama, mistral, qwen2, the GPT family, …; no auto_map) are ignored
                           (also with one expert)
mla                        q_lora_rank (null → 0), kv_lora_rank, qk_nope_head_dim,
                           qk_rope_head_dim, v_head_dim (DeepSeek-V2 / V3)
=========================  ==================================================================

Families that nest or rename keys are read first into these names: DBRX (``attn_config`` /
``ffn_config``), ChatGLM (``padded_vocab_size``, ``multi_query_group_num``, ``kv_channels``),
Llama 4 (one shared expert always, MoE at the listed ``moe_layers`` or else every
``interleave_moe_layer_step``-th layer, dense layers of ``intermediate_size_mlp``; a
``text_config`` without its own model_type is still Llama 4's), Falcon's original
``RefinedWeb`` / ``RefinedWebModel`` types (read as ``falcon``), Gemma 3 (keys its ``text_config`` leaves out take
``Gemma3TextConfig``'s defaults). MoE in every k-th layer (``decoder_sparse_step``,
``moe_layer_freq``, Llama 4) or at listed ``mlp_only_layers`` is counted exactly, with the dense
layers placed first (the planner's dense layers lead), which moves pipeline-stage balance.
``num_nextn_predict_layers`` (DeepSeek-V3: 1) becomes ``mtp_layers``: the multi-token-prediction
modules are counted (a note says so and how to leave them out).

What the planner's model cannot hold is listed in the returned notes, never silently dropped:
Qwen2's Q/K/V-only biases, group-limited routing,
OPT's projected embedding, Llama 4's chunked attention, vision towers of multimodal configs,
``quantization_config`` (the file's weight storage; training runs at the scenario's precision),
Gemma 2's logit soft-capping, GPT-OSS's attention sinks.
Encoder-decoder, encoder-only, state-space, hybrid (Mamba, linear attention, convolution)
and recurrent models are refused, as are layer types other than full / sliding attention,
configs without the keys above, values of the wrong type (named by key) and a planner
scenario given by mistake.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from .schema import COUNT_MAX as HF_INT_MAX  # the schema's bound on every count of a model
from .schema import MTP_LAYERS_MAX, InputError, JsonTextError, ModelSpec, format_errors, loads_json, read_json_file

#: model_type values read as Llama-style decoders: gated MLP (SwiGLU / GeGLU) and RMSNorm.
LLAMA_FAMILY = frozenset({
    "llama", "mistral", "mixtral", "qwen2", "qwen3", "qwen2_moe", "qwen3_moe", "deepseek_v2",
    "deepseek_v3", "gemma", "gemma2", "gemma3_text", "phi3", "olmo", "olmo2", "gpt_oss", "granite",
    "granitemoe", "cohere", "internlm2", "yi", "baichuan", "minicpm", "stablelm", "exaone", "glm",
    "hunyuan_v1_dense", "ernie4_5", "ernie4_5_moe", "smollm3", "apertus", "olmoe",
})
#: model_type values read as GPT-style decoders: plain (ungated) MLP and LayerNorm.
#: Nemotron (Nemotron-4 / Minitron: NemotronMLP = up_proj, squared ReLU, down_proj; LayerNorm1P) and
#: Persimmon (dense_h_to_4h, squared ReLU, dense_4h_to_h; LayerNorm) are ungated despite their
#: non-GeLU activation (found by review: Nemotron was read as a gated MLP, +22 % parameters).
GPT_FAMILY = frozenset({"gpt2", "gpt_neox", "gptj", "opt", "bloom", "falcon", "phi", "starcoder2",
                        "gpt_bigcode", "mpt", "codegen", "gpt_neo", "nemotron", "persimmon"})
#: GPT-family types whose linear layers carry biases when the config has no bias key.
_GPT_BIAS = frozenset({"gpt2", "gpt_neox", "opt", "bloom", "phi", "starcoder2", "gpt_bigcode", "codegen", "gpt_neo",
                       "gptj", "persimmon"})
#: Architectures the planner does not model (refused with a reason).
_REFUSED = {
    "t5": "encoder-decoder", "mt5": "encoder-decoder", "bart": "encoder-decoder", "mbart": "encoder-decoder",
    "whisper": "encoder-decoder", "pegasus": "encoder-decoder", "umt5": "encoder-decoder",
    "mamba": "state-space (Mamba)", "mamba2": "state-space (Mamba)", "jamba": "hybrid Mamba / attention",
    "zamba": "hybrid Mamba / attention", "zamba2": "hybrid Mamba / attention", "falcon_h1": "hybrid Mamba / attention",
    "nemotron_h": "hybrid Mamba / attention", "rwkv": "recurrent (RWKV)", "recurrent_gemma": "recurrent",
    "falcon_mamba": "state-space (Mamba)", "bamba": "hybrid Mamba / attention",
    "granitemoehybrid": "hybrid Mamba / attention", "plamo2": "hybrid Mamba / attention",
    "qwen3_next": "hybrid linear / full attention", "minimax": "hybrid linear / full attention",
    "lfm2": "hybrid convolution / attention", "xlstm": "recurrent (xLSTM)",
    "bert": "encoder-only", "roberta": "encoder-only", "deberta": "encoder-only",
    "deberta-v2": "encoder-only", "electra": "encoder-only",
}


_ARCH_SUFFIXES = ("ForCausalLM", "ForConditionalGeneration", "LMHeadModel", "Model")
#: Architecture classes named for the wrapper whose language model has its own type: Gemma 3's
#: multimodal class wraps a gemma3_text model (the caller reads its text_config), its causal-LM
#: class is one; Llama 4's classes run a llama4_text model (Transformers' configs).
_ARCH_TYPES = {"Gemma3ForCausalLM": "gemma3_text", "Gemma3ForConditionalGeneration": "gemma3",
               "Llama4ForCausalLM": "llama4_text", "Llama4ForConditionalGeneration": "llama4_text",
               "RWForCausalLM": "falcon"}

#: model_type values of files written before Transformers had the family: Falcon's original
#: remote code called its configs ``RefinedWeb`` (40B, new decoder architecture) and
#: ``RefinedWebModel`` (7B); FalconConfig reads the same keys (n_layer, n_head, n_head_kv,
#: multi_query, ...). Found by review: they were refused as "no FFN size".
_TYPE_ALIASES = {"refinedweb": "falcon", "refinedwebmodel": "falcon", "rw": "falcon"}


#: Hugging Face model types whose attention normalises each query and key head (QK-norm): Qwen3 and
#: Qwen3-MoE (Qwen3Attention.q_norm / k_norm), OLMo 2 and OLMoE, Gemma 3, Qwen3-Next; other families
#: carry a flag (use_qk_norm: GLM-4.5 MoE, Llama 4, Cohere; qk_layernorm: Persimmon, StableLM).
_QK_NORM_TYPES = frozenset({"qwen3", "qwen3_moe", "qwen3_next", "olmo2", "olmoe", "gemma3", "gemma3_text"})

def _type_from_architectures(archs: Any) -> str:
    """The ``model_type`` a config's ``architectures`` names (``LlamaForCausalLM`` → ``llama``,
    ``Qwen3MoeForCausalLM`` → ``qwen3_moe``, ``GPTNeoXForCausalLM`` → ``gpt_neox``): the class
    name without its head suffix, compared with the known types without underscores or
    dashes; '' when none matches (or ``archs`` is not a list of strings)."""
    if not isinstance(archs, list):
        return ""
    known = {t.replace("_", "").replace("-", ""): t
             for t in (*LLAMA_FAMILY, *GPT_FAMILY, *_REFUSED, *_TIE_DEFAULTS, "dbrx", "chatglm")}
    for a in archs:
        if not isinstance(a, str):
            continue
        if a in _ARCH_TYPES:  # classes whose language model is a *_text type (found by review)
            return _ARCH_TYPES[a]
        stem = a
        for suf in _ARCH_SUFFIXES:
            if stem.endswith(suf) and len(stem) > len(suf):
                stem = stem[: -len(suf)]
                break
        t = known.get(stem.lower())
        if t:
            return t
    return ""


class HFImport(NamedTuple):
    """The model read from a ``config.json`` and what the reading had to leave out or assume."""

    model: ModelSpec
    notes: list[str]


#: Transformers' class defaults for keys that published files leave out (Gemma 3's text_config
#: holds only what differs from ``Gemma3TextConfig``; the 4B file has no head counts).
_CLASS_DEFAULTS: dict[str, dict[str, Any]] = {
    "gemma3_text": {"num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "vocab_size": 262_208,
                    "intermediate_size": 9216, "num_hidden_layers": 26, "hidden_size": 2304,
                    "sliding_window": 4096, "sliding_window_pattern": 6, "tie_word_embeddings": True},
    # Llama4TextConfig: intermediate_size 8192 (each expert and the shared expert), intermediate_size_mlp
    # 16384 (the dense layers); a file without them was read with the experts at the dense size
    "llama4_text": {"intermediate_size": 8192, "intermediate_size_mlp": 16384},
}


#: The routing keys of the Transformers config classes of MoE model types, used where a file leaves
#: a whole group of them out (review 42a: a mixtral file without num_local_experts was read as a
#: dense model): MixtralConfig (num_local_experts 8, num_experts_per_tok 2), Qwen2MoeConfig (60,
#: 4, moe_intermediate_size 1408, shared_expert_intermediate_size 5632), Qwen3MoeConfig (128, 8,
#: 768), GptOssConfig (128, 4), PhimoeConfig (16, 2), OlmoeConfig (num_experts 64, 8),
#: GraniteMoeConfig (8, 2), DeepseekV3Config (n_routed_experts 256, 8, 2048, n_shared_experts
#: 1, first_k_dense_replace 3), DeepseekV2Config (64, no top-k default, 1407, 2, 0) and
#: Llama4TextConfig (num_local_experts 16, 1; its FFN sizes are in ``_CLASS_DEFAULTS``). Each entry: the class's key: (the keys its value may be written under, the
#: default).
_EXPERT_KEYS = ("num_local_experts", "n_routed_experts", "num_experts", "moe_num_experts")
_TOPK_KEYS = ("num_experts_per_tok", "experts_per_token", "moe_top_k", "moe_k")
_EXPERT_FFN_KEYS = ("moe_intermediate_size", "expert_intermediate_size")
_MOE_CLASS_DEFAULTS: dict[str, dict[str, tuple[tuple[str, ...], int]]] = {
    "mixtral": {"num_local_experts": (_EXPERT_KEYS, 8), "num_experts_per_tok": (_TOPK_KEYS, 2)},
    "qwen2_moe": {"num_experts": (_EXPERT_KEYS, 60), "num_experts_per_tok": (_TOPK_KEYS, 4),
                  "moe_intermediate_size": (_EXPERT_FFN_KEYS, 1408),
                  "shared_expert_intermediate_size": (("shared_expert_intermediate_size",), 5632)},
    "qwen3_moe": {"num_experts": (_EXPERT_KEYS, 128), "num_experts_per_tok": (_TOPK_KEYS, 8),
                  "moe_intermediate_size": (_EXPERT_FFN_KEYS, 768)},
    "gpt_oss": {"num_local_experts": (_EXPERT_KEYS, 128), "num_experts_per_tok": (_TOPK_KEYS, 4)},
    "phimoe": {"num_local_experts": (_EXPERT_KEYS, 16), "num_experts_per_tok": (_TOPK_KEYS, 2)},
    "olmoe": {"num_experts": (_EXPERT_KEYS, 64), "num_experts_per_tok": (_TOPK_KEYS, 8)},
    "granitemoe": {"num_local_experts": (_EXPERT_KEYS, 8), "num_experts_per_tok": (_TOPK_KEYS, 2)},
    "deepseek_v3": {"n_routed_experts": (_EXPERT_KEYS, 256), "num_experts_per_tok": (_TOPK_KEYS, 8),
                    "moe_intermediate_size": (_EXPERT_FFN_KEYS, 2048), "n_shared_experts": (("n_shared_experts",), 1),
                    "first_k_dense_replace": (("first_k_dense_replace",), 3)},
    # DeepseekV2Config has no default top-k (num_experts_per_tok None): a file without it is refused below
    "deepseek_v2": {"n_routed_experts": (_EXPERT_KEYS, 64), "moe_intermediate_size": (_EXPERT_FFN_KEYS, 1407),
                    "n_shared_experts": (("n_shared_experts",), 2),
                    "first_k_dense_replace": (("first_k_dense_replace",), 0)},
    "llama4_text": {"num_local_experts": (_EXPERT_KEYS, 16), "num_experts_per_tok": (_TOPK_KEYS, 1)},
}
#: model_type values whose Transformers model has no experts (LlamaForCausalLM, MistralForCausalLM,
#: Qwen2ForCausalLM, …, and the GPT family): expert keys in such a file are not read by the model
#: Transformers builds from it, so the planner reads it as dense too, saying so (review 42a: a
#: llama file with num_local_experts was read as an MoE model). A file with ``auto_map`` runs its own
#: code, which may read them: those are left as they are.
_DENSE_TYPES = frozenset({"llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3_text", "phi3", "olmo",
                          "olmo2", "granite", "cohere", "stablelm", "glm", "smollm3", "apertus", "ernie4_5",
                          "hunyuan_v1_dense"}) | (GPT_FAMILY - {"mpt"})


#: ``tie_word_embeddings`` default of the Transformers config class of each model_type, where it
#: is not ``PretrainedConfig``'s true (a file that leaves the key out means the class default:
#: ``LlamaConfig(tie_word_embeddings=False)``, ``MistralConfig``, ``Qwen2Config``, …).
_TIE_DEFAULTS: dict[str, bool] = {
    **{t: False for t in ("llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "deepseek_v2",
                          "deepseek_v3", "phi3", "olmo", "olmo2", "gpt_oss", "granite", "granitemoe", "gpt_neox",
                          "gptj", "codegen", "phi", "stablelm", "glm", "glm4", "internlm2", "yi", "baichuan",
                          "llama4_text", "apertus", "nemotron", "persimmon", "olmoe", "phimoe")},
    **{t: True for t in ("gemma", "gemma2", "gemma3_text", "cohere")},
}


def _shown(value: Any) -> str:
    """A file's value as a message quotes it; a number of thousands of digits by its size (review
    44g: a 5,000-digit hidden_size in a dict was a ValueError from its own repr)."""
    from .schema import _shown_value
    return _shown_value(value, False)


class _Reader:
    """Typed reads of config keys; every bad value becomes one error line naming its key."""

    def __init__(self, cfg: dict, label: str):
        self.cfg, self.label, self.errors = cfg, label, []

    def bad(self, key: str, what: str, value: Any) -> None:
        self.errors.append(f"{self.label} {key}: expected {what} (got {_shown(value)})")

    def present(self, keys: tuple[str, ...]) -> tuple[str | None, Any]:
        for k in keys:
            if k in self.cfg and self.cfg[k] is not None:
                return k, self.cfg[k]
        return None, None

    def int_(self, key: str, value: Any, lo: int = 1, hi: int = HF_INT_MAX, field: str = "") -> int | None:
        ok = (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and math.isfinite(value) and value.is_integer())
        # the schema's bound on every count (schema.PosInt); found by review: 1e30 layers was
        # "expected a positive integer", which it is. ``hi`` / ``field``: a field with its own
        # bound names it for every bad value (review 16f: num_nextn_predict_layers = -1 was told
        # "0 to 10,000,000", only 17 and up heard of the real 0 to 16)
        if not ok or int(value) < lo or int(value) > hi:
            what = (f"a positive integer up to {hi:,}" if lo == 1 else f"an integer from {lo} to {hi:,}")
            self.bad(key, what + (f" ({field})" if field else ""), value)
            return None
        return int(value)

    def need(self, label: str, keys: tuple[str, ...]) -> int | None:
        k, v = self.present(keys)
        if k is None:
            self.errors.append(f"{self.label}: no {label} (looked for {', '.join(keys)})")
            return None
        return self.int_(k, v)

    def opt_int(self, keys: tuple[str, ...], lo: int = 1) -> int | None:
        k, v = self.present(keys)
        return None if k is None else self.int_(k, v, lo)

    def bool_(self, key: str, default: bool | None) -> bool | None:
        v = self.cfg.get(key)
        if v is None:
            return default
        if not isinstance(v, bool):
            self.bad(key, "true or false", v)
            return default
        return v

    def number(self, key: str, lo: float, hi: float) -> float | None:
        v = self.cfg.get(key)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not lo <= v <= hi:
            self.bad(key, f"a number from {lo:g} to {hi:g}", v)
            return None
        return float(v)


def _is_json_text(config: str) -> bool:
    """A string that is a config.json's text, not a path: it starts with ``{``, or with ``[`` and
    names no file (review 46e: a file named ``[v2]config.json`` was read as text)."""
    head = config.lstrip("\ufeff \t\r\n")[:1]
    if head == "{":
        return True
    if head != "[":
        return False
    try:
        return "\n" in config or not Path(config).exists()
    except (OSError, ValueError):  # a name too long or with a NUL byte for the file system: not a path
        return True


def _read_file(config: dict | str | Path) -> tuple[Any, str]:
    if isinstance(config, str) and _is_json_text(config):  # the file's text itself
        try:  # as a file is read: a key given twice, 5,000 digits and deep nesting refused (schema.loads_json)
            return loads_json(config.lstrip("\ufeff")), "config.json"
        except JsonTextError as e:
            raise InputError([f"config.json: {e}"]) from None
        except ValueError as e:
            raise InputError([f"config.json: not valid JSON ({e})"]) from None
        except RecursionError:
            raise InputError(["config.json: not valid JSON (nested too deeply)"]) from None
    if not isinstance(config, (str, Path)):
        return config, "config.json"
    return read_json_file(config, "a config.json file"), Path(config).name


def _flatten_family(cfg: dict, mtype: str, notes: list[str]) -> dict:
    """Model types whose files nest or rename the standard keys, as standard keys."""
    out = dict(cfg)
    if mtype == "dbrx":  # DbrxConfig: attn_config / ffn_config blocks
        attn = cfg.get("attn_config") if isinstance(cfg.get("attn_config"), dict) else {}
        ffn = cfg.get("ffn_config") if isinstance(cfg.get("ffn_config"), dict) else {}
        out.update({"hidden_size": cfg.get("d_model"), "num_attention_heads": cfg.get("n_heads"),
                    "num_hidden_layers": cfg.get("n_layers"), "num_key_value_heads": attn.get("kv_n_heads"),
                    "intermediate_size": ffn.get("ffn_hidden_size"), "num_local_experts": ffn.get("moe_num_experts"),
                    "num_experts_per_tok": ffn.get("moe_top_k"), "attention_bias": False})
        notes.append("DBRX: attn_config / ffn_config read (kv_n_heads, ffn_hidden_size, moe_num_experts, "
                     "moe_top_k); its LayerNorms have no bias, counted as RMSNorm (a 1-vector difference).")
    elif mtype == "chatglm":  # ChatGLMConfig (GLM-4 / ChatGLM3)
        out.update({"vocab_size": cfg.get("padded_vocab_size", cfg.get("vocab_size")),
                    "head_dim": cfg.get("kv_channels"), "attention_bias": False})
        if cfg.get("multi_query_attention") is True:
            out["num_key_value_heads"] = cfg.get("multi_query_group_num")
        if cfg.get("add_qkv_bias"):
            notes.append("ChatGLM's Q/K/V-only biases are not counted (under 0.01 % of the parameters).")
    elif mtype == "llama4_text":  # Llama4TextConfig
        step = cfg.get("interleave_moe_layer_step", 1)
        if cfg.get("moe_layers") is not None:
            # Llama4TextConfig: moe_layers, when given, lists the MoE layers (the decoder layers test
            # layer_idx in config.moe_layers); interleave_moe_layer_step only makes the default list.
            # Found by review: a file with moe_layers and no step was read as MoE in every layer.
            out["_moe_layers"] = cfg["moe_layers"]
        else:
            out["moe_layer_freq"] = step
        out["intermediate_size_dense"] = cfg.get("intermediate_size_mlp")
        out["n_shared_experts"] = 1  # Llama4TextMoe: one shared expert of intermediate_size, always
        out["moe_intermediate_size"] = cfg.get("intermediate_size")
        out["intermediate_size"] = cfg.get("intermediate_size_mlp", cfg.get("intermediate_size"))
        if cfg.get("attention_chunk_size"):
            notes.append(f"Llama 4's chunked attention (attention_chunk_size = {cfg['attention_chunk_size']} in "
                         "3 of 4 layers) is read as full attention: attention FLOPs and memory are over-counted "
                         "for sequences longer than the chunk.")
    return out


def import_hf_config(config: dict | str | Path, name: str | None = None) -> HFImport:
    """Read a Hugging Face Transformers ``config.json`` into the planner's model.

    Parameters
    ----------
    config : the parsed JSON object, its text, or the path of the file.
    name : the model's display name (default: ``_name_or_path`` in the file, else
        ``"<model_type> (config.json)"``).

    Returns
    -------
    HFImport : ``model`` (a validated :class:`ModelSpec`) and ``notes`` (list of str): every
        key the planner's model cannot hold and every assumption made, one sentence each.

    Raises
    ------
    InputError : the file is unreadable or not a JSON object; a required key is missing or a
        value has the wrong type (the message names the key and the value); the architecture
        is not a decoder-only transformer (encoder-decoder, encoder-only, state-space, hybrid,
        linear attention); or the values contradict each other (e.g. ``num_key_value_heads``
        not dividing ``num_attention_heads``), named by the planner's field.

    Sources
    -------
    Key names and defaults: the Transformers configuration classes (``LlamaConfig``,
    ``Llama4TextConfig``, ``MixtralConfig``, ``Qwen2MoeConfig``, ``Qwen3MoeConfig``,
    ``DeepseekV3Config``, ``GptOssConfig``, ``Gemma2Config``, ``Gemma3TextConfig``,
    ``DbrxConfig``, ``GPT2Config``, ``OPTConfig``, ...) and ``PretrainedConfig``
    (``tie_word_embeddings`` defaults to true).
    """
    config, fname = _read_file(config)
    if not isinstance(config, dict):
        raise InputError([f"{fname}: expected a JSON object (got {type(config).__name__})"])
    def _is_scenario(d) -> bool:
        return isinstance(d, dict) and isinstance(d.get("model"), (str, dict)) and isinstance(d.get("cluster"), dict)

    if _is_scenario(config):
        raise InputError([f"{fname}: this is a planner scenario (it has 'model' and 'cluster'), not a Hugging "
                          "Face config.json; load it as a scenario (CLI: the FILE argument; app: Export / import "
                          "→ Import scenario JSON)"])
    if _is_scenario(config.get("scenario")):  # `planner evaluate --format json` output (found by review 17b)
        raise InputError([f"{fname}: this is the output of `planner evaluate --format json` (its 'scenario' is a "
                          "planner scenario), not a Hugging Face config.json; load it as a scenario (CLI: the FILE "
                          "argument, which reads its 'scenario'; app: Export / import → Import scenario JSON)"])
    notes: list[str] = []
    cfg = config
    top_type = config.get("model_type", "")
    if not isinstance(top_type, str):
        raise InputError([f"{fname} model_type: expected a string (got {_shown(top_type)})"])
    if "text_config" in config:  # multimodal wrappers: the language model
        if not isinstance(config["text_config"], dict):
            raise InputError([f"{fname} text_config: expected an object (got {_shown(config['text_config'])})"])
        cfg = {**config["text_config"]}
        if "tie_word_embeddings" in config and "tie_word_embeddings" not in cfg:
            cfg["tie_word_embeddings"] = config["tie_word_embeddings"]
        notes.append(f"'{top_type or '?'}' is multimodal: its text_config (the language model) is read; "
                     "the vision / audio tower is not counted.")
    mtype = cfg.get("model_type", "") or top_type
    if not isinstance(mtype, str):
        raise InputError([f"{fname} text_config.model_type: expected a string (got {_shown(mtype)})"])
    mtype = mtype.lower()
    if not mtype:  # found by review: a Llama file without model_type was read as an unknown type
        mtype = _type_from_architectures(cfg.get("architectures") or config.get("architectures"))
        if mtype:
            notes.append(f"model_type absent: read as '{mtype}' from architectures "
                         f"{cfg.get('architectures') or config.get('architectures')}")
    if mtype in _TYPE_ALIASES:
        notes.append(f"model_type '{cfg.get('model_type') or top_type}' is the original name of "
                     f"'{_TYPE_ALIASES[mtype]}' (Falcon's first remote code): read as '{_TYPE_ALIASES[mtype]}'.")
        mtype = _TYPE_ALIASES[mtype]
    if mtype == "gemma3" and "text_config" in config:
        mtype = "gemma3_text"
    if mtype == "llama4" and "text_config" in config:
        # found by review: a Llama 4 text_config without its own model_type was read as an unknown
        # type (no shared expert, no dense layers): Maverick 778B / 11B instead of 400B / 17B
        mtype = "llama4_text"
    if mtype in _REFUSED:
        raise InputError([f"{fname} model_type '{mtype}': {_REFUSED[mtype]} models are not modelled; "
                          "the planner models decoder-only transformers"])
    if cfg.get("is_encoder_decoder") is True:
        raise InputError([f"{fname} model_type '{mtype}': encoder-decoder models are not modelled; "
                          "the planner models decoder-only transformers"])
    layer_types = cfg.get("layer_types")
    if layer_types is not None:
        if not isinstance(layer_types, list) or not all(isinstance(x, str) for x in layer_types):
            raise InputError([f"{fname} layer_types: expected a list of strings (got {_shown(layer_types)})"])
        other = sorted({x for x in layer_types if x not in ("full_attention", "sliding_attention")})
        if other:
            raise InputError([f"{fname} layer_types: {', '.join(repr(x) for x in other)} layers are not "
                              "modelled (the planner models full and sliding-window attention layers)"])
    if mtype == "llama4_text":
        # Llama4TextConfig's FFN widths are ints: a null one is no value (review 44g: a null
        # intermediate_size made the experts the dense layers' 16,384 wide, without a word)
        nulls = [k for k in ("intermediate_size", "intermediate_size_mlp") if k in cfg and cfg[k] is None]
        if nulls:
            raise InputError([f"{fname} {k}: null; a llama4_text model needs a whole number (leave the key out "
                              "for the Transformers default)" for k in nulls])
    if mtype in _CLASS_DEFAULTS:
        filled = {k: v for k, v in _CLASS_DEFAULTS[mtype].items() if k not in cfg}
        if filled:
            cfg = {**filled, **cfg}
            notes.append(f"keys absent from the file taken from the {mtype} class defaults (Transformers): "
                         + ", ".join(f"{k} = {v}" for k, v in filled.items()) + ".")
    if mtype in _MOE_CLASS_DEFAULTS:
        # an explicit null is no value: Transformers' config class refuses None for these ints, and
        # read as absent an MoE model became dense without a word (review 43a: num_local_experts null)
        # (review 44g: a null expert width fell back to the dense width, 7.8 × too wide, and a null
        # first_k_dense_replace read as 0; DeepseekV2/V3's decoder layers compare layer_idx with it)
        nulls = [k for key, (aliases, _v) in _MOE_CLASS_DEFAULTS[mtype].items()
                 if key in _EXPERT_KEYS + _EXPERT_FFN_KEYS + ("first_k_dense_replace",)
                 for k in aliases if k in cfg and cfg[k] is None and all(cfg.get(a) is None for a in aliases)]
        if nulls:
            raise InputError([f"{fname} {k}: null; a {mtype} model needs a whole number (leave the key out for "
                              f"the Transformers default)" for k in nulls])
        filled = {key: v for key, (aliases, v) in _MOE_CLASS_DEFAULTS[mtype].items()
                  if all(k not in cfg for k in aliases)}  # an explicit null stays an error, below
        if filled:
            cfg = {**cfg, **filled}
            notes.append(f"MoE keys absent from the file taken from the {mtype} class defaults (Transformers): "
                         + ", ".join(f"{k} = {v}" for k, v in filled.items()) + "."
                         + (" The file's auto_map names its own configuration code, whose defaults may differ."
                            if "auto_map" in config or "auto_map" in cfg else ""))
    elif mtype in _DENSE_TYPES and "auto_map" not in config and "auto_map" not in cfg:
        ignored = [k for k in _EXPERT_KEYS + _TOPK_KEYS + _EXPERT_FFN_KEYS + ("n_shared_experts",)
                   if cfg.get(k) is not None]
        if ignored:
            cfg = {k: v for k, v in cfg.items() if k not in ignored}
            notes.append(f"{', '.join(ignored)} ignored: Transformers builds a dense model for model_type "
                         f"'{mtype}' (its model class has no experts), so the file describes a dense model; an "
                         "MoE model of this family has its own model_type (mixtral, qwen2_moe, …).")
    cfg = _flatten_family(cfg, mtype, notes)
    r = _Reader(cfg, fname)

    n_layers = r.need("layer count", ("num_hidden_layers", "n_layer", "num_layers", "n_layers"))
    hidden = r.need("hidden size", ("hidden_size", "n_embd", "n_embed", "d_model"))
    heads = r.need("attention head count", ("num_attention_heads", "n_head", "n_heads"))
    vocab = r.need("vocabulary size", ("vocab_size",))
    kv = r.opt_int(("num_key_value_heads", "num_kv_heads", "n_head_kv"))
    if mtype == "falcon":
        # FalconAttention: num_kv_heads if new_decoder_architecture or not multi_query, else 1
        # (FalconConfig: multi_query defaults to true, new_decoder_architecture to false). Found by
        # review: a Falcon-7B file saved by Transformers carries num_kv_heads = 71 beside
        # multi_query = true and was read as 71 K/V heads (8.22B parameters instead of 6.92B).
        if r.bool_("multi_query", True) and not r.bool_("new_decoder_architecture", False):
            if kv is not None and kv != 1:
                notes.append(f"Falcon: multi_query = true without new_decoder_architecture: one K/V head "
                             f"(FalconAttention), the file's {kv} K/V heads are not used.")
            kv = 1
    elif kv is None and r.bool_("multi_query", mtype == "gpt_bigcode"):  # GPTBigCodeConfig: multi_query true
        kv = 1
    head_dim = r.opt_int(("head_dim",))

    k_ffn, ffn = r.present(("intermediate_size", "n_inner", "ffn_dim", "ffn_hidden_size"))
    if k_ffn is not None:
        ffn = r.int_(k_ffn, ffn)
    elif mtype in ("gpt2", "gpt_bigcode", "gptj", "codegen", "gpt_neo", "falcon", "bloom") and hidden:
        ffn = 4 * hidden  # GPT2MLP / FalconMLP / BloomMLP: 4 · hidden when the key is null or absent
        notes.append(f"no intermediate size in the file: 4 × hidden = {ffn} ({mtype}'s default).")
    elif mtype == "mpt" and hidden:
        ratio = r.number("expansion_ratio", 0.01, 1000.0)
        ffn = int(round((4.0 if ratio is None and "expansion_ratio" not in cfg else (ratio or 0.0)) * hidden)) or None
        if ffn is None:
            r.errors.append(f"{fname}: no FFN size (expansion_ratio)")
    else:
        r.errors.append(f"{fname}: no FFN size (looked for intermediate_size, n_inner, ffn_dim, ffn_hidden_size)")

    # --- MoE -------------------------------------------------------------------------------
    expert_keys = _EXPERT_KEYS
    given = {k: cfg[k] for k in expert_keys if cfg.get(k) is not None}
    if len({json.dumps(v) for v in given.values()}) > 1:
        r.errors.append(f"{fname}: expert counts disagree ({', '.join(f'{k} = {v!r}' for k, v in given.items())})")
    k_e, n_exp = r.present(expert_keys)
    moe = None
    if k_e is not None:
        n_exp = r.int_(k_e, n_exp)
    k_k, topk = r.present(("num_experts_per_tok", "experts_per_token", "moe_top_k", "moe_k"))
    if n_exp is not None and k_k is not None:
        topk = r.int_(k_k, topk)
        # A token is routed to at most every expert (the schema refuses top_k > n_experts; here in
        # the file's names, also for one expert, which would otherwise be read as a dense MLP and
        # hide a file that cannot describe a trained model).
        if topk is not None and topk > n_exp:
            r.errors.append(f"{fname} {k_k} = {topk} exceeds {k_e} = {n_exp}: a token is routed to at most "
                            f"every expert (allowed 1 to {n_exp})")
    if n_exp is not None and n_exp > 1:
        if k_k is None:
            r.errors.append(f"{fname}: an MoE model without num_experts_per_tok"
                            + (f" ({mtype}'s Transformers class has no default for it)" if mtype == "deepseek_v2" else ""))
        k_m, e_ffn = r.present(("moe_intermediate_size", "expert_intermediate_size"))
        e_ffn = r.int_(k_m, e_ffn) if k_m is not None else ffn
        shared, shared_ffn = 0, None
        if cfg.get("n_shared_experts"):
            shared = r.int_("n_shared_experts", cfg["n_shared_experts"]) or 0
        elif cfg.get("shared_expert_intermediate_size"):  # Qwen2-MoE: one shared expert of this width
            shared = 1
            shared_ffn = r.int_("shared_expert_intermediate_size", cfg["shared_expert_intermediate_size"])
            notes.append("Qwen2-MoE's shared expert is read as one expert of shared_expert_intermediate_size; "
                         "its sigmoid gate (hidden × 1) is not counted.")
        first_dense = 0
        if cfg.get("first_k_dense_replace") is not None:
            first_dense = r.int_("first_k_dense_replace", cfg["first_k_dense_replace"], lo=0) or 0
        mlp_only = cfg.get("mlp_only_layers")
        if mlp_only is not None:
            if not isinstance(mlp_only, list) or not all(isinstance(x, int) and not isinstance(x, bool)
                                                         for x in mlp_only):
                r.bad("mlp_only_layers", "a list of layer indices", mlp_only)
            elif mlp_only and sorted(mlp_only) == list(range(len(mlp_only))):
                first_dense = max(first_dense, len(mlp_only))
            elif mlp_only:
                first_dense = max(first_dense, len(set(mlp_only)))
                notes.append(f"mlp_only_layers {mlp_only} are counted as {len(set(mlp_only))} dense layers placed "
                             "first (the planner's dense layers lead): totals are exact, pipeline stage balance "
                             "is not.")
        k_step, step = r.present(("decoder_sparse_step", "moe_layer_freq"))
        step = r.int_(k_step, step) if k_step is not None else 1
        moe_layers = cfg.get("_moe_layers")
        if moe_layers is not None:  # Llama 4's explicit list of MoE layers
            ok = isinstance(moe_layers, list) and all(
                isinstance(x, int) and not isinstance(x, bool) and 0 <= x < (n_layers or 0) for x in moe_layers)
            if not ok:
                r.bad("moe_layers", f"a list of layer indices from 0 to {(n_layers or 1) - 1}", moe_layers)
            elif n_layers:
                n_moe = len(set(moe_layers))
                first_dense = max(first_dense, n_layers - n_moe)
                if n_moe == 0:  # as a DeepSeek first_k_dense_replace of every layer: dense, said (review 14j)
                    notes.append(f"moe_layers is empty: no MoE layer, every layer dense (num_local_experts = "
                                 f"{n_exp} is not used).")
                elif n_moe < n_layers:
                    notes.append(f"moe_layers lists {n_moe} MoE layers of {n_layers}: the {n_layers - n_moe} dense "
                                 "ones are placed first (the planner's dense layers lead): totals are exact, "
                                 "pipeline stage balance is not.")
        elif step and step > 1 and n_layers and mtype in ("deepseek_v2", "deepseek_v3"):
            # DeepseekV2/V3 decoder layer: MoE where idx >= first_k_dense_replace and idx % moe_layer_freq == 0
            # (found by review: n_layers // step ignored first_k_dense_replace, 3 and freq 2 of 27 layers
            # gave 13 MoE layers instead of 12)
            k0 = first_dense
            n_moe = len(range(-(-k0 // step) * step, n_layers, step))
            first_dense = n_layers - n_moe
            notes.append(f"MoE in the layers from {k0} (first_k_dense_replace) that are multiples of {step} "
                         f"({k_step} = {step}): {n_moe} MoE and {n_layers - n_moe} dense layers, the dense ones "
                         "placed first (the planner's dense layers lead): totals are exact, pipeline stage balance "
                         "is not.")
        elif step and step > 1 and n_layers:
            n_moe = n_layers // step  # MoE in layers step−1, 2·step−1, ... (Qwen2-MoE, Llama 4)
            first_dense = max(first_dense, n_layers - n_moe)
            notes.append(f"MoE in 1 of every {step} layers ({k_step} = {step}): {n_moe} MoE and {n_layers - n_moe} "
                         "dense layers, the dense ones placed first (the planner's dense layers lead): "
                         "totals are exact, pipeline stage balance is not.")
        if cfg.get("intermediate_size_dense"):  # Llama 4: the dense layers' own width
            ffn = r.int_("intermediate_size_mlp", cfg["intermediate_size_dense"])
        n_group = cfg.get("n_group")
        if cfg.get("topk_group") and isinstance(n_group, int) and n_group > 1:
            notes.append(f"group-limited routing (topk_group = {cfg['topk_group']} of n_group = {n_group}) "
                         "is not set as max_nodes_per_token: set it when the groups are nodes (DeepSeek-V3: 4).")
        if n_layers and first_dense >= n_layers and not any("no MoE layer" in x for x in notes):
            # every layer dense (first_k_dense_replace, a step beyond the layers, ...): said, not
            # silent (review 14j: it imported as an "MoE" model with no MoE layer and no word)
            notes.append(f"no MoE layer: all {n_layers} layers are dense ({n_exp} experts per MoE layer "
                         "are not used); the model is evaluated as a dense one.")
        moe = {"n_experts": n_exp, "top_k": topk, "expert_ffn_hidden_size": e_ffn,
               "n_shared_experts": shared, "first_dense_layers": first_dense}
        if shared_ffn is not None:
            moe["shared_expert_ffn_hidden_size"] = shared_ffn
        elif shared:
            moe["shared_expert_ffn_hidden_size"] = e_ffn

    # --- MLA -------------------------------------------------------------------------------
    mla = None
    if cfg.get("kv_lora_rank") is not None:
        q = cfg.get("q_lora_rank")
        mla = {"q_lora_rank": 0 if q is None else r.int_("q_lora_rank", q, lo=0)}
        for k in ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"):
            if cfg.get(k) is None:
                r.errors.append(f"{fname}: MLA (kv_lora_rank given) without {k}")
            else:
                mla[k] = r.int_(k, cfg[k])
    qc = cfg.get("quantization_config", config.get("quantization_config"))
    if isinstance(qc, dict) and qc:
        qm = qc.get("quant_method") or qc.get("quant_algo") or "?"
        notes.append(f"quantization_config (quant_method = '{qm}') says how the file's weights are stored; it is not "
                     "read: the planner counts the parameters and trains at the scenario's precision "
                     "(training.precision; bf16 weights with fp32 master weights and optimizer state).")
    caps = {k: cfg[k] for k in ("attn_logit_softcapping", "final_logit_softcapping")
            if isinstance(cfg.get(k), (int, float)) and not isinstance(cfg.get(k), bool) and cfg[k]}
    if caps:  # Gemma 2: tanh soft-capping of the attention and output logits
        notes.append("logit soft-capping (" + ", ".join(f"{k} = {v:g}" for k, v in caps.items()) + ") is not "
                     "modelled (its element-wise tanh is not counted); flash attention needs a kernel with "
                     "soft-capping (FlashAttention 2.6+; PyTorch's scaled_dot_product_attention has none).")
    if mtype in _QK_NORM_TYPES or any(cfg.get(k) is True for k in ("use_qk_norm", "qk_layernorm")):
        # Qwen3, OLMo 2 / OLMoE, Gemma 3: an RMSNorm of each query and key head (review 34: the importer said
        # nothing while the memory notes name it)
        notes.append("QK-norm (an RMSNorm of each query and key head) is not modelled: the scenario has no field for "
                     "it, so its input, which the backward keeps beside the normalised Q and K (2·(q + kv) B per token "
                     "and layer in 16 bits: about 8 % more activations on Qwen3-235B), its element-wise time and its "
                     "2·head_dim weights per layer are not counted.")
    if mtype == "gpt_oss" and heads and n_layers:  # GptOssAttention.sinks: one learned logit per head
        notes.append(f"GPT-OSS's attention sinks ({heads} per layer, {heads * n_layers:,} parameters) are not "
                     "counted; the attention core is counted as plain softmax attention.")
    mtp = 0
    if cfg.get("num_nextn_predict_layers") is not None:
        # DeepSeek-V3 (1), GLM-4.5, MiMo: multi-token-prediction modules (DeepSeek-V3 report §2.2), each a
        # decoder layer of the MoE kind + eh_proj + enorm / hnorm / shared_head.norm, with the embedding and
        # output head shared (the checkpoint stores its own copies of both): model.mtp_layers
        # the schema's bound (ModelSpec.mtp_layers), named by the file's key for every bad value
        mtp = r.int_("num_nextn_predict_layers", cfg["num_nextn_predict_layers"], lo=0, hi=MTP_LAYERS_MAX,
                     field="model.mtp_layers") or 0
        if mtp:
            notes.append(f"the multi-token-prediction module (num_nextn_predict_layers = {mtp}) is modelled as "
                         f"mtp_layers = {mtp}: its block, projection and norms count in the parameters (the "
                         "checkpoint's own copies of the embedding and output head are shared in training, not "
                         "counted again), FLOPs, step time and memory of the last stage; set the model's "
                         "mtp_layers to 0 to plan the main model alone.")

    # --- family rules ----------------------------------------------------------------------
    for k in ("hidden_act", "hidden_activation", "activation_function"):
        v = cfg.get(k)
        # review 45a: 42 was read as '?' without a word; review 46b: for every model type, not only
        # the unlisted ones (Transformers' ACT2FN lookup fails on a non-string when it builds the model)
        if v is not None and not isinstance(v, str):
            raise InputError([f"{fname} {k}: expected a string (got {_shown(v)})"])
    gpt_like = mtype in GPT_FAMILY
    if not gpt_like and mtype not in LLAMA_FAMILY and mtype not in ("dbrx", "chatglm", "llama4_text"):
        act = ""
        for k in ("hidden_act", "hidden_activation", "activation_function"):
            v = cfg.get(k)
            if v is None:
                continue
            if v:
                act = v
                break
        gpt_like = act.startswith("gelu") and "glu" not in act
        notes.append(f"model_type '{mtype or '?'}' is not in the planner's list: read as a "
                     + ("GPT-style decoder (plain MLP, LayerNorm)" if gpt_like
                        else "Llama-style decoder (gated MLP, RMSNorm)") + f" from hidden_act = '{act or '?'}'.")
    bias = None
    for k in ("attention_bias", "bias", "use_bias", "add_bias_linear", "enable_bias"):
        if cfg.get(k) is not None:
            bias = r.bool_(k, None)
            break
    mlp_bias = r.bool_("mlp_bias", None)
    if mlp_bias is not None and bias is not None and mlp_bias != bias:
        notes.append(f"attention_bias = {str(bias).lower()} but mlp_bias = {str(mlp_bias).lower()}: the planner's "
                     "biases are all or none; counted as " + ("present" if (bias or mlp_bias) else "absent")
                     + " (a few vectors per layer).")
        bias = bias or mlp_bias
    if bias is None and cfg.get("no_bias") is not None:  # MPT
        nb = r.bool_("no_bias", None)
        bias = None if nb is None else not nb
    if bias is None:
        bias = mtype in _GPT_BIAS
        if mtype in ("qwen2", "qwen2_moe"):
            notes.append("Qwen2's Q/K/V projection biases are not counted (the planner's biases are all or "
                         "none; they are under 0.01 % of the parameters).")
    if "tie_word_embeddings" not in cfg:
        tied = _TIE_DEFAULTS.get(mtype, True)
        notes.append(f"tie_word_embeddings absent: {'tied' if tied else 'untied'} embeddings, the "
                     + (f"{mtype} config class's default (Transformers)." if mtype in _TIE_DEFAULTS
                        else "PretrainedConfig default (Transformers)."))
    else:
        tied = r.bool_("tie_word_embeddings", True)

    pos = 0
    if mtype in ("gpt2", "gpt_bigcode"):
        pos = r.opt_int(("n_positions", "max_position_embeddings")) or 0
    elif mtype == "opt":
        pos = (r.opt_int(("max_position_embeddings",)) or 0) + 2  # OPTLearnedPositionalEmbedding offset
        proj = r.opt_int(("word_embed_proj_dim",))
        if proj and hidden and proj != hidden and vocab:
            notes.append(f"OPT's word_embed_proj_dim = {proj} (≠ hidden {hidden}) is not modelled: the embedding "
                         f"is counted at the hidden width, {vocab * (hidden - proj) - 2 * proj * hidden:+,} "
                         "parameters against the file's projected embedding.")
    elif mtype == "gpt_neo":
        pos = r.opt_int(("max_position_embeddings",)) or 0

    # ALiBi instead of RoPE: BLOOM and MPT always (BloomModel and MptModel build an ALiBi bias
    # whatever attn_config says; Transformers' MPT has no rotary embedding), Falcon when its
    # alibi key is true (FalconConfig default false: rotary)
    rope = True
    if mtype in ("bloom", "mpt"):
        rope = False
    elif mtype == "falcon":
        rope = not r.bool_("alibi", False)

    window, frac = None, 1.0
    use_sw = r.bool_("use_sliding_window", True)
    sw = cfg.get("sliding_window")
    if sw is not None:
        sw = r.int_("sliding_window", sw)
    if sw and use_sw:
        if layer_types:
            if n_layers and len(layer_types) != n_layers:
                r.errors.append(f"{fname} layer_types: {len(layer_types)} entries for {n_layers} layers "
                                "(expected one per layer)")
            frac = sum(1 for x in layer_types if x == "sliding_attention") / len(layer_types)
        elif mtype == "gemma2":
            frac = 0.5  # Gemma2DecoderLayer: every other layer slides
        elif mtype in ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe") and cfg.get("max_window_layers") is not None:
            mwl = r.int_("max_window_layers", cfg["max_window_layers"], lo=0)  # layers >= it slide
            if mwl is not None and n_layers:
                frac = max(n_layers - mwl, 0) / n_layers
        elif cfg.get("sliding_window_pattern") is not None:
            pat = r.int_("sliding_window_pattern", cfg["sliding_window_pattern"])
            frac = (pat - 1) / pat if pat else 1.0  # Gemma 3: (p − 1) sliding layers, then one global
        if frac > 0:
            window = sw
        mpe = cfg.get("max_position_embeddings")
        if window is not None and isinstance(mpe, int) and not isinstance(mpe, bool) and 0 < mpe <= window:
            notes.append(f"sliding_window = {sw} is not shorter than max_position_embeddings = {mpe}: it only "
                         "matters for longer sequences.")

    dropout = 0.0
    for k in ("hidden_dropout", "resid_pdrop", "hidden_dropout_prob", "attention_dropout", "attn_pdrop", "dropout"):
        if cfg.get(k) is not None:
            v = r.number(k, 0.0, 0.99)
            dropout = max(dropout, v or 0.0)
    if dropout:
        notes.append(f"dropout {dropout:g} is read from the file: its masks count in activation memory "
                     "(set the model's dropout to 0 if pretraining runs without it).")

    if r.errors:
        raise InputError(r.errors)
    nm = config.get("_name_or_path")
    name = name or (nm.strip() if isinstance(nm, str) and nm.strip() else f"{mtype or 'model'} (config.json)")
    # a valid display name (schema.Name): one line, no control or invisible characters, at most
    # NAME_MAX_CHARS (found by review: _name_or_path or model_type could carry an ESC sequence)
    from .schema import NAME_MAX_CHARS, one_line

    clean = one_line(name) or "model (config.json)"
    if clean != name:
        notes.append(f"the model's name was made a display name of at most {NAME_MAX_CHARS} characters without "
                     "control or invisible characters")
    name = clean
    data = {
        "name": name, "n_layers": n_layers, "hidden_size": hidden, "n_heads": heads, "n_kv_heads": kv,
        "head_dim": head_dim, "ffn_hidden_size": ffn, "vocab_size": vocab,
        "gated_mlp": not gpt_like, "tied_embeddings": tied,
        "norm": "layernorm" if gpt_like else "rmsnorm", "linear_bias": bool(bias),
        "learned_pos_embeddings": pos, "rope": rope, "dropout": dropout, "sliding_window": window,
        "sliding_window_layer_frac": frac if window is not None else 1.0,
        "moe": moe, "mla": mla, "mtp_layers": mtp,
        "source": f"Hugging Face config.json (model_type '{mtype or '?'}')"
                  + (f", {nm}" if isinstance(nm, str) and nm.strip() else ""),
    }
    try:
        model = ModelSpec.model_validate(data)
    except ValidationError as e:
        raise InputError([f"{fname} → model." + line for line in format_errors(e, json_spelling=True)]) from None
    return HFImport(model, notes)


def model_from_hf_config(config: dict | str | Path, name: str | None = None) -> ModelSpec:
    """:func:`import_hf_config` without the notes: the :class:`ModelSpec` only.

    Raises :class:`InputError` as :func:`import_hf_config` does."""
    return import_hf_config(config, name).model
