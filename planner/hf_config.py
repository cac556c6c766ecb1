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
hidden_size                hidden_size, n_embd, d_model
n_heads                    num_attention_heads, n_head, n_heads
n_kv_heads                 num_key_value_heads, num_kv_heads, multi_query (→ 1); else = heads
head_dim                   head_dim (when given)
ffn_hidden_size            intermediate_size, n_inner, ffn_dim, ffn_hidden_size; GPT-2's null
                           n_inner = 4 · hidden (``GPT2MLP``)
vocab_size                 vocab_size
tied_embeddings            tie_word_embeddings (Transformers' ``PretrainedConfig`` default: true)
gated_mlp, norm            by ``model_type``: the Llama family (SwiGLU / GeGLU, RMSNorm) or the
                           GPT family (plain MLP, LayerNorm)
linear_bias                attention_bias / bias / use_bias / add_bias_linear / enable_bias / MPT's no_bias; the GPT family's
                           own rule otherwise (GPT-2, NeoX, OPT, BLOOM, Phi: biases; Falcon: none)
learned_pos_embeddings     GPT-2 n_positions; OPT max_position_embeddings (+ 2, its offset)
dropout                    the largest of hidden_dropout, resid_pdrop, attention_dropout, attn_pdrop
sliding_window (+ frac)    sliding_window when the layers use it (use_sliding_window, layer_types,
                           Gemma 2's alternation, Gemma 3's sliding_window_pattern)
moe                        num_local_experts / num_experts / n_routed_experts,
                           num_experts_per_tok / experts_per_token, moe_intermediate_size
                           (else intermediate_size), n_shared_experts or Qwen2-MoE's one
                           shared expert of shared_expert_intermediate_size,
                           first_k_dense_replace / leading mlp_only_layers
mla                        q_lora_rank (null → 0), kv_lora_rank, qk_nope_head_dim,
                           qk_rope_head_dim, v_head_dim (DeepSeek-V2 / V3)
=========================  ==================================================================

What the planner's model cannot hold is listed in the returned notes, never silently dropped:
Qwen2's Q/K/V-only biases, DeepSeek-V3's multi-token-prediction module, group-limited routing,
vision towers of multimodal configs. Encoder-decoder and state-space (Mamba / hybrid) models
are refused, as are configs without the keys above.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from .schema import InputError, ModelSpec, format_errors

#: model_type values read as Llama-style decoders: gated MLP (SwiGLU / GeGLU) and RMSNorm.
LLAMA_FAMILY = frozenset({
    "llama", "mistral", "mixtral", "qwen2", "qwen3", "qwen2_moe", "qwen3_moe", "deepseek_v2",
    "deepseek_v3", "gemma", "gemma2", "gemma3_text", "phi3", "olmo", "olmo2", "gpt_oss", "granite",
    "granitemoe", "cohere", "internlm2", "yi", "baichuan", "minicpm", "stablelm", "exaone", "glm",
    "hunyuan_v1_dense", "ernie4_5", "ernie4_5_moe", "smollm3", "apertus",
})
#: model_type values read as GPT-style decoders: plain (ungated) MLP and LayerNorm.
GPT_FAMILY = frozenset({"gpt2", "gpt_neox", "gptj", "opt", "bloom", "falcon", "phi", "starcoder2",
                        "gpt_bigcode", "mpt", "codegen", "gpt_neo"})
#: GPT-family types whose linear layers carry biases when the config has no bias key.
_GPT_BIAS = frozenset({"gpt2", "gpt_neox", "opt", "bloom", "phi", "starcoder2", "gpt_bigcode", "codegen", "gpt_neo",
                       "gptj"})
#: Architectures the planner does not model (refused with a reason).
_REFUSED = {
    "t5": "encoder-decoder", "mt5": "encoder-decoder", "bart": "encoder-decoder", "mbart": "encoder-decoder",
    "whisper": "encoder-decoder", "pegasus": "encoder-decoder", "umt5": "encoder-decoder",
    "mamba": "state-space (Mamba)", "mamba2": "state-space (Mamba)", "jamba": "hybrid Mamba / attention",
    "zamba": "hybrid Mamba / attention", "zamba2": "hybrid Mamba / attention", "falcon_h1": "hybrid Mamba / attention",
    "nemotron_h": "hybrid Mamba / attention", "rwkv": "recurrent (RWKV)", "recurrent_gemma": "recurrent",
    "bert": "encoder-only", "roberta": "encoder-only", "deberta": "encoder-only",
    "deberta-v2": "encoder-only", "electra": "encoder-only",
}


class HFImport(NamedTuple):
    """The model read from a ``config.json`` and what the reading had to leave out or assume."""

    model: ModelSpec
    notes: list[str]


def _first(cfg: dict, keys: tuple[str, ...]) -> tuple[str, Any] | tuple[None, None]:
    for k in keys:
        if k in cfg and cfg[k] is not None:
            return k, cfg[k]
    return None, None


def _pos_int(key: str, value: Any, errors: list[str]) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        if isinstance(value, float) and value.is_integer() and value >= 1:
            return int(value)
        errors.append(f"config.json {key}: expected a positive integer (got {value!r})")
        return None
    return value


def import_hf_config(config: dict | str | Path, name: str | None = None) -> HFImport:
    """Read a Hugging Face Transformers ``config.json`` into the planner's model.

    Parameters
    ----------
    config : the parsed JSON object, or the path of the file.
    name : the model's display name (default: ``_name_or_path`` in the file, else
        ``"<model_type> (config.json)"``).

    Returns
    -------
    HFImport : ``model`` (a validated :class:`ModelSpec`) and ``notes`` (list of str): every
        key the planner's model cannot hold and every assumption made, one sentence each.

    Raises
    ------
    InputError : the file is unreadable or not a JSON object; a required key is missing or not
        a positive integer (the message names the key); the architecture is not a decoder-only
        transformer (encoder-decoder, encoder-only, state-space, hybrid); or the values
        contradict each other (e.g. ``num_key_value_heads`` not dividing
        ``num_attention_heads``), named by the planner's field.

    Sources
    -------
    Key names and defaults: the Transformers configuration classes (``LlamaConfig``,
    ``MixtralConfig``, ``Qwen2MoeConfig``, ``Qwen3MoeConfig``, ``DeepseekV3Config``,
    ``GptOssConfig``, ``Gemma2Config``, ``GPT2Config``, ...) and ``PretrainedConfig``
    (``tie_word_embeddings`` defaults to true).
    """
    if isinstance(config, (str, Path)):
        path = Path(config)
        try:
            config = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError([f"{path}: no such file"]) from None
        except (OSError, UnicodeDecodeError) as e:
            raise InputError([f"{path}: cannot be read ({e})"]) from None
        except json.JSONDecodeError as e:
            raise InputError([f"{path}: not valid JSON ({e.msg} at line {e.lineno})"]) from None
    if not isinstance(config, dict):
        raise InputError([f"config.json: expected a JSON object (got {type(config).__name__})"])
    notes: list[str] = []
    cfg = config
    top_type = str(cfg.get("model_type", "") or "")
    if isinstance(cfg.get("text_config"), dict):  # multimodal wrappers: the language model
        cfg = {**cfg["text_config"]}
        cfg.setdefault("tie_word_embeddings", config.get("tie_word_embeddings", True))
        notes.append(f"'{top_type}' is multimodal: its text_config (the language model) is read; "
                     "the vision / audio tower is not counted.")
    mtype = str(cfg.get("model_type", "") or top_type).lower()
    if mtype in _REFUSED:
        raise InputError([f"config.json model_type '{mtype}': {_REFUSED[mtype]} models are not modelled; "
                          "the planner models decoder-only transformers"])
    if cfg.get("is_encoder_decoder") is True:
        raise InputError([f"config.json model_type '{mtype}': encoder-decoder models are not modelled; "
                          "the planner models decoder-only transformers"])

    errors: list[str] = []

    def need(label: str, keys: tuple[str, ...]) -> int | None:
        k, v = _first(cfg, keys)
        if k is None:
            errors.append(f"config.json: no {label} (looked for {', '.join(keys)})")
            return None
        return _pos_int(k, v, errors)

    def opt_int(keys: tuple[str, ...]) -> int | None:
        k, v = _first(cfg, keys)
        return None if k is None else _pos_int(k, v, errors)

    n_layers = need("layer count", ("num_hidden_layers", "n_layer", "num_layers", "n_layers"))
    hidden = need("hidden size", ("hidden_size", "n_embd", "d_model"))
    heads = need("attention head count", ("num_attention_heads", "n_head", "n_heads"))
    vocab = need("vocabulary size", ("vocab_size",))
    kv = opt_int(("num_key_value_heads", "num_kv_heads", "n_head_kv"))
    if kv is None and cfg.get("multi_query") is True:
        kv = 1
    head_dim = opt_int(("head_dim",))

    k_ffn, ffn = _first(cfg, ("intermediate_size", "n_inner", "ffn_dim", "ffn_hidden_size"))
    if k_ffn is not None:
        ffn = _pos_int(k_ffn, ffn, errors)
    elif mtype in ("gpt2", "gpt_bigcode", "gptj", "codegen", "gpt_neo", "falcon", "bloom") and hidden:
        ffn = 4 * hidden  # GPT2MLP / FalconMLP / BloomMLP: 4 · hidden when the key is null or absent
        notes.append(f"no intermediate size in the file: 4 × hidden = {ffn} ({mtype}'s default).")
    elif mtype == "mpt" and hidden:
        ratio = (cfg.get("expansion_ratio") or 4)
        ffn = int(ratio * hidden)
    else:
        errors.append("config.json: no FFN size (looked for intermediate_size, n_inner, ffn_dim, ffn_hidden_size)")

    # --- MoE -------------------------------------------------------------------------------
    k_e, n_exp = _first(cfg, ("num_local_experts", "n_routed_experts", "num_experts", "moe_num_experts"))
    moe = None
    if k_e is not None:
        n_exp = _pos_int(k_e, n_exp, errors)
    if n_exp is not None and n_exp > 1:
        k_k, topk = _first(cfg, ("num_experts_per_tok", "experts_per_token", "moe_top_k", "moe_k"))
        if k_k is None:
            errors.append("config.json: an MoE model without num_experts_per_tok")
        else:
            topk = _pos_int(k_k, topk, errors)
        k_m, e_ffn = _first(cfg, ("moe_intermediate_size", "expert_intermediate_size"))
        e_ffn = _pos_int(k_m, e_ffn, errors) if k_m is not None else ffn
        shared, shared_ffn = 0, None
        if cfg.get("n_shared_experts"):
            shared = _pos_int("n_shared_experts", cfg["n_shared_experts"], errors) or 0
        elif cfg.get("shared_expert_intermediate_size"):  # Qwen2-MoE: one shared expert of this width
            shared = 1
            shared_ffn = _pos_int("shared_expert_intermediate_size", cfg["shared_expert_intermediate_size"], errors)
            notes.append("Qwen2-MoE's shared expert is read as one expert of shared_expert_intermediate_size; "
                         "its sigmoid gate (hidden × 1) is not counted.")
        first_dense = 0
        if cfg.get("first_k_dense_replace"):
            first_dense = _pos_int("first_k_dense_replace", cfg["first_k_dense_replace"], errors) or 0
        mlp_only = cfg.get("mlp_only_layers") or []
        if isinstance(mlp_only, list) and mlp_only:
            if sorted(mlp_only) == list(range(len(mlp_only))):
                first_dense = max(first_dense, len(mlp_only))
            else:
                notes.append(f"mlp_only_layers {mlp_only} are not the leading layers: read as MoE layers "
                             "(the planner's dense layers come first).")
        step = cfg.get("decoder_sparse_step") or cfg.get("moe_layer_freq") or 1
        if isinstance(step, int) and step > 1:
            notes.append(f"MoE in every {step}th layer (decoder_sparse_step / moe_layer_freq = {step}) is "
                         "read as MoE in every layer: the planner's MoE layers are contiguous.")
        if cfg.get("topk_group") and cfg.get("n_group"):
            notes.append(f"group-limited routing (topk_group = {cfg['topk_group']} of n_group = {cfg['n_group']}) "
                         "is not set as max_nodes_per_token: set it when the groups are nodes (DeepSeek-V3: 4).")
        moe = {"n_experts": n_exp, "top_k": topk, "expert_ffn_hidden_size": e_ffn,
               "n_shared_experts": shared, "first_dense_layers": first_dense}
        if shared_ffn is not None:
            moe["shared_expert_ffn_hidden_size"] = shared_ffn
        elif shared:
            moe["shared_expert_ffn_hidden_size"] = e_ffn

    # --- MLA -------------------------------------------------------------------------------
    mla = None
    if cfg.get("kv_lora_rank"):
        mla = {"q_lora_rank": cfg.get("q_lora_rank") or 0}
        for k in ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"):
            mla[k] = _pos_int(k, cfg.get(k), errors)
        q = mla["q_lora_rank"]
        if isinstance(q, bool) or not isinstance(q, int) or q < 0:
            errors.append(f"config.json q_lora_rank: expected a non-negative integer or null (got {q!r})")
    if cfg.get("num_nextn_predict_layers"):
        notes.append(f"the multi-token-prediction module ({cfg['num_nextn_predict_layers']} layer) is not "
                     "counted: the planner models the main model.")

    if errors:
        raise InputError(errors)

    # --- family rules ----------------------------------------------------------------------
    gpt_like = mtype in GPT_FAMILY
    if not gpt_like and mtype not in LLAMA_FAMILY:
        act = str(cfg.get("hidden_act") or cfg.get("hidden_activation") or cfg.get("activation_function") or "")
        gpt_like = act.startswith("gelu") and "glu" not in act
        notes.append(f"model_type '{mtype or '?'}' is not in the planner's list: read as a "
                     + ("GPT-style decoder (plain MLP, LayerNorm)" if gpt_like
                        else "Llama-style decoder (gated MLP, RMSNorm)") + f" from hidden_act = '{act or '?'}'.")
    bias_key, bias = _first(cfg, ("attention_bias", "bias", "use_bias", "add_bias_linear", "enable_bias"))
    if bias_key is None and isinstance(cfg.get("no_bias"), bool):  # MPT
        bias_key, bias = "no_bias", not cfg["no_bias"]
    if bias_key is None:
        bias = mtype in _GPT_BIAS
        if mtype in ("qwen2", "qwen2_moe"):
            notes.append("Qwen2's Q/K/V projection biases are not counted (the planner's biases are all or "
                         "none; they are under 0.01 % of the parameters).")
    pos = 0
    if mtype == "gpt2" or mtype == "gpt_bigcode":
        pos = int(cfg.get("n_positions") or cfg.get("max_position_embeddings") or 0)
    elif mtype == "opt":
        pos = int(cfg.get("max_position_embeddings") or 0) + 2  # OPTLearnedPositionalEmbedding offset
    elif mtype == "gpt_neo":
        pos = int(cfg.get("max_position_embeddings") or 0)

    window, frac = None, 1.0
    sw = cfg.get("sliding_window")
    layer_types = cfg.get("layer_types")
    if isinstance(sw, int) and not isinstance(sw, bool) and sw > 0 and cfg.get("use_sliding_window", True) is not False:
        if isinstance(layer_types, list) and layer_types:
            n_sw = sum(1 for t in layer_types if "sliding" in str(t))
            frac = n_sw / len(layer_types)
        elif mtype == "gemma2":
            frac = 0.5  # Gemma2DecoderLayer: every other layer slides
        elif isinstance(cfg.get("sliding_window_pattern"), int) and cfg["sliding_window_pattern"] > 0:
            p = cfg["sliding_window_pattern"]  # Gemma 3: (p − 1) sliding layers, then one global
            frac = (p - 1) / p
        if frac > 0:
            window = sw
        if window is not None and n_layers and window >= int(cfg.get("max_position_embeddings") or 0) > 0:
            notes.append(f"sliding_window = {sw} is not shorter than max_position_embeddings: it only "
                         "matters for longer sequences.")

    dropout = 0.0
    for k in ("hidden_dropout", "resid_pdrop", "hidden_dropout_prob", "attention_dropout", "attn_pdrop", "dropout"):
        v = cfg.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < 1:
            dropout = max(dropout, float(v))
    if dropout:
        notes.append(f"dropout {dropout:g} is read from the file: its masks count in activation memory "
                     "(set the model's dropout to 0 if pretraining runs without it).")

    name = name or str(config.get("_name_or_path") or "").strip() or f"{mtype or 'model'} (config.json)"
    data = {
        "name": name, "n_layers": n_layers, "hidden_size": hidden, "n_heads": heads, "n_kv_heads": kv,
        "head_dim": head_dim, "ffn_hidden_size": ffn, "vocab_size": vocab,
        "gated_mlp": not gpt_like, "tied_embeddings": bool(cfg.get("tie_word_embeddings", True)),
        "norm": "layernorm" if gpt_like else "rmsnorm", "linear_bias": bool(bias),
        "learned_pos_embeddings": pos, "dropout": dropout, "sliding_window": window,
        "sliding_window_layer_frac": frac if window is not None else 1.0,
        "moe": moe, "mla": mla,
        "source": f"Hugging Face config.json (model_type '{mtype or '?'}')"
                  + (f", {config['_name_or_path']}" if config.get("_name_or_path") else ""),
    }
    try:
        model = ModelSpec.model_validate(data)
    except ValidationError as e:
        raise InputError(["config.json → model." + line for line in format_errors(e)]) from None
    return HFImport(model, notes)


def model_from_hf_config(config: dict | str | Path, name: str | None = None) -> ModelSpec:
    """:func:`import_hf_config` without the notes: the :class:`ModelSpec` only.

    Raises :class:`InputError` as :func:`import_hf_config` does."""
    return import_hf_config(config, name).model
