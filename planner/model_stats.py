"""Parameter counts and model FLOPs per optimizer step, vectorised.

Every function takes broadcasting array-likes (one element per configuration) and returns
arrays; there is no loop over configurations.

Counting conventions (DESIGN §4.1)
----------------------------------
* Parameters: embedding ``V·h``; output head ``V·h`` unless tied; learned position table;
  per layer attention Q ``h·a·d_qk``, K and V ``2·h·k·d_h`` (GQA), O ``a·d_v·h``; MLP ``3·h·f``
  gated (SwiGLU) or ``2·h·f`` plain; norms ``h`` (RMSNorm) or ``2h`` (LayerNorm with bias), two
  per layer plus a final one; linear biases where the model has them. An MoE layer has ``E``
  routed experts, shared experts and a router ``h·E``; active parameters count ``top_k``
  routed experts. MLA (DeepSeek-V2/V3) is counted exactly from its low-rank projections.
* Model FLOPs per step (the MFU numerator): ``6 · N_matmul_active · tokens`` (forward 2,
  backward 4, Kaplan et al. 2020; Narayanan et al. 2021 eq. 3) plus the attention core
  (QKᵀ and AV). ``model_flop_per_step`` counts the attention core in full,
  ``12·B·s²·a·d_h·L`` (as Narayanan et al. 2021, Korthikanti et al. 2022, MosaicML and PaLM
  do); ``model_flop_per_step_causal`` counts only the causal half, ``6·B·s²·a·d_h·L`` (as
  Megatron-LM ``num_floating_point_operations`` does since 2026). ``N_matmul_active`` is the
  matmul parameters that touch each token: layers plus the output head (an input embedding
  lookup is no matmul); norms (MLA's latent RMSNorms too) and biases are not counted; an MoE
  layer's router ``h·E`` is (Megatron's ``num_floating_point_operations`` omits it: 8e-5 of
  Mixtral 8x7B's total; otherwise identical to it, tests/test_review14d_anchors.py).
* Sliding-window attention (Mistral 7B, Gemma 2, GPT-OSS; Beltagy et al. 2020): a layer with
  window ``w < s`` lets each query see ``w`` keys, so the full count is ``s·w`` per
  sequence-layer and the causal work ``s·w − w²/2``; with a share ``f`` of such layers the
  averages are :func:`attention_keys` (``s`` and ``s/2`` without a window).
* Multi-token prediction (``mtp_layers`` = D; DeepSeek-V3 report §2.2; Megatron-Core
  ``multi_token_prediction.py``): each module adds one block of the model's MoE-layer kind (dense
  for a dense model), ``eh_proj`` ``2h²`` and three norms (enorm, hnorm, final) to the parameters
  (``params_mtp``, in ``params_total``; the embedding and output head are shared, not counted
  again), and per token ``6·(block's active matmuls + 2h² + V·h)`` plus the block's attention
  core to the model FLOPs: Megatron-LM's ``num_floating_point_operations`` form (logits × (D + 1),
  ``2h²`` per module; its ``3h`` norm term is left out, norms are not matmuls here), which its
  reported throughput and MFU include; ``6·N·D`` conventions (Kaplan, Chinchilla) count the main
  model only, and the DeepSeek-V3 report gives no MFU. Full recompute re-runs the block and
  ``eh_proj`` with Megatron's uniform method (``recompute_layers`` = 0); partial recompute
  (``recompute_layers`` > 0, ``--recompute-method block``) re-runs none of it:
  ``MultiTokenPredictionLayer._checkpointed_forward`` skips the MTP recompute under ``block``.
* Hardware FLOPs (the HFU numerator) add the recomputed forward: full recompute one forward
  of the transformer layers (``2·N_layers·tokens`` + attention forward; the output head is not
  recomputed), selective recompute the attention core forward only (Korthikanti et al. 2022 §5),
  ``op_sac`` (TorchTitan's per-op selective checkpointing) the matmuls of
  :func:`op_sac_recompute_params` (and the attention core without flash attention).

References
----------
Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters Using
Megatron-LM", SC'21, arXiv:2104.04473, eq. (3).
Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models",
MLSys'23, arXiv:2205.05198, §6 (MFU/HFU formulas).
DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv:2412.19437 (MLA dimensions).
"""

from __future__ import annotations

import numpy as np

from .batch import RECOMPUTE, Batch, any_true, col, expand, size, where

#: Forward + backward FLOPs per matmul parameter per token (2 forward, 4 backward).
FLOP_PER_PARAM_PER_TOKEN_TRAIN = 6.0
#: Code of the ``op_sac`` recompute mode in a batch's ``recompute`` column.
RC_OPSAC = RECOMPUTE.index("op_sac")
#: Forward FLOPs per matmul parameter per token.
FLOP_PER_PARAM_PER_TOKEN_FWD = 2.0


def attention_params(h, a, k, d_h, *, d_v=None, linear_bias=False, mla=False, q_lora_rank=0,
                     kv_lora_rank=0, qk_nope_head_dim=0, qk_rope_head_dim=0):
    """Attention parameters per layer (matmul weights, plus biases where present).

    Standard (MHA/GQA): ``h·a·d_h + 2·h·k·d_h + a·d_h·h`` (DESIGN §4.1). MLA (DeepSeek-V3
    §2.1.1): ``q``: ``h·r_q + r_q·a·(d_nope+d_rope)`` (or ``h·a·(d_nope+d_rope)`` when
    ``r_q = 0``), ``kv``: ``h·(r_kv + d_rope) + r_kv·a·(d_nope + d_v)``, ``o``: ``a·d_v·h``,
    plus RMSNorms of size ``r_q`` and ``r_kv``. Returns parameters (count), shape of the
    broadcast inputs.
    """
    h, a, k, d_h = (np.asarray(x, dtype=np.float64) for x in (h, a, k, d_h))
    d_v = d_h if d_v is None else np.asarray(d_v, dtype=np.float64)
    std = h * a * d_h + 2.0 * h * k * d_h + a * d_h * h
    std = std + where(linear_bias, (a + 2.0 * k) * d_h + h, 0.0)
    rq = np.asarray(q_lora_rank, dtype=np.float64)
    rkv = np.asarray(kv_lora_rank, dtype=np.float64)
    dqk = np.asarray(qk_nope_head_dim, dtype=np.float64) + np.asarray(qk_rope_head_dim, dtype=np.float64)
    q = where(rq > 0, h * rq + rq * a * dqk + rq, h * a * dqk)
    kv = h * (rkv + np.asarray(qk_rope_head_dim, dtype=np.float64)) + rkv * a * (
        np.asarray(qk_nope_head_dim, dtype=np.float64) + d_v
    ) + rkv
    o = a * d_v * h
    return where(mla, q + kv + o, std)


def mlp_params(h, f, *, gated=True, linear_bias=False):
    """MLP parameters: ``3·h·f`` gated (SwiGLU) or ``2·h·f`` plain, plus biases."""
    h = np.asarray(h, dtype=np.float64)
    f = np.asarray(f, dtype=np.float64)
    w = where(gated, 3.0, 2.0) * h * f
    b = where(linear_bias, where(gated, 2.0, 1.0) * f + h, 0.0)
    return w + b


def op_sac_o_recomputed(tp, sequence_parallel):
    """Whether ``op_sac`` runs the attention output projection O again (bool array).

    Without TP, or with TP but no sequence parallelism (O's output is all-reduced), nothing
    saved rebuilds the residual stream ``x + O(·)`` that the MLP norm's backward needs, so O
    (and its all-reduce) runs again; with TP + SP the reduce-scatter after O is in TorchTitan's
    save list and rebuilds it (TorchTitan always pairs TP with SP)."""
    return (np.asarray(tp) == 1) | ~np.asarray(sequence_parallel, dtype=bool)


def op_sac_recompute_params(h, k, d_h, f, *, a, d_v, tp=1, sequence_parallel=True, gated=True,
                            mla=False, q_lora_rank=0.0, kv_lora_rank=0.0, qk_nope_head_dim=0.0,
                            qk_rope_head_dim=0.0):
    """Matmul parameters of one dense layer whose forward runs again under ``op_sac`` [count].

    TorchTitan's per-op selective activation checkpointing (``activation_checkpoint.mode =
    "selective"``, ``selective_ac_option = "op"``; ``torchtitan/distributed/
    activation_checkpoint.py``, ``_apply_op_sac``) saves the outputs of the ops in its save
    list (``aten.mm``, the SDPA kernels, reduce-scatter, ``max``) "except every second mm" of a
    block, and recomputes everything else. torch.compile's partitioner treats
    ``PREFER_RECOMPUTE`` as must-recompute (``torch._functorch.partitioners.must_recompute``)
    and re-runs what the backward needs. The model applies TorchTitan's block structure
    (separate Q, K, V projections) to every model:

    * Llama block, matmuls Q, K, V, O, W1, W3, W2 → K (attention gradient), W3 (the gate's
      gradient) and O when :func:`op_sac_o_recomputed` (it rebuilds the residual stream whose
      norm feeds the MLP; the norm's backward needs its input). W2 (odd) is saved, and no
      backward reads its output, so it never runs again (eager PyTorch holds that output until
      the backward all the same: memory._common, ``ACT_OPSAC_W2_OUT_PER_H``); a plain MLP's even
      matmul is its last (fc2), not needed.
    * MLA with a query low-rank (``q_lora_rank > 0``; matmuls wq_a, wq_b, wkv_a, wkv_b, wo):
      the up-projections wq_b ``r_q·a·(d_nope + d_rope)`` and wkv_b ``r_kv·a·(d_nope + d_v)``;
      the MLP's even matmul is then W1 (the same size as W3). Without it (wq, wkv_a, wkv_b,
      wo): wkv_a ``h·(r_kv + d_rope)`` and O as above.

    The attention core is saved (flash); norms, RoPE and activations run again (bandwidth-bound,
    in the timing stage). Eager PyTorch replays every marked op up to the last one needed, so
    with TP + SP it also runs O again (not counted: the model follows compiled runs).
    """
    h, k, d_h, f, a, d_v = (np.asarray(x, dtype=np.float64) for x in (h, k, d_h, f, a, d_v))
    rq, rkv = (np.asarray(x, dtype=np.float64) for x in (q_lora_rank, kv_lora_rank))
    nope, rope = (np.asarray(x, dtype=np.float64) for x in (qk_nope_head_dim, qk_rope_head_dim))
    o = a * d_v * h * op_sac_o_recomputed(tp, sequence_parallel)
    std = h * k * d_h + o
    mla_q = rq * a * (nope + rope) + rkv * a * (nope + d_v)
    mla_noq = h * (rkv + rope) + o
    attn = where(mla, where(rq > 0, mla_q, mla_noq), std)
    return attn + where(gated, h * f, 0.0)


def op_sac_moe_recompute_params(h, fe, top_k, n_shared, f_shared, n_experts, *, gated=True):
    """Matmul parameters per token of an MoE layer's MLP that run again under ``op_sac`` [count].

    TorchTitan's routed experts use grouped GEMMs (``torch._grouped_mm``), which are not in the
    op-SAC save list, so their up-projections run again (the backward needs their outputs): ``2·h·f_e``
    gated (``h·f_e`` plain) per routed copy, ``top_k`` of them; shared experts are plain matmuls
    (W3 again, as :func:`op_sac_recompute_params`); the router gate is force-recomputed
    (``per_op_sac_force_recompute_mm_shapes_by_fqns = ["moe.router.gate"]``): ``h·E``.
    """
    h, fe, top_k, n_shared, f_shared, n_experts = (
        np.asarray(x, dtype=np.float64) for x in (h, fe, top_k, n_shared, f_shared, n_experts))
    routed = top_k * where(gated, 2.0, 1.0) * h * fe
    shared = n_shared * where(gated, h * f_shared, 0.0)
    return routed + shared + h * n_experts


def attention_keys(s, window, frac):
    """Keys per query of the attention core, averaged over the layers, shape of the inputs.

    Parameters
    ----------
    s : array-like — sequence length [tokens].
    window : array-like — sliding window [tokens] (0 = none).
    frac : array-like — share of the layers with the window (0 … 1).

    Returns
    -------
    (keys_full, keys_causal): full counting ``(1−f)·s + f·w'`` and the causal work
    ``(1−f)·s/2 + f·(w' − w'²/(2s))``, ``w' = min(w, s)`` (``s`` and ``s/2`` without a
    window: the non-causal count and the causal half, exactly).
    """
    s = np.asarray(s, dtype=np.float64)
    frac = np.where(np.asarray(window) > 0, np.asarray(frac, dtype=np.float64), 0.0)
    w = np.minimum(np.where(np.asarray(window) > 0, np.asarray(window, dtype=np.float64), s), s)
    keys_full = (1.0 - frac) * s + frac * w
    keys_causal = (1.0 - frac) * (0.5 * s) + frac * (w - w * w / (2.0 * s))
    return keys_full, keys_causal


def stats(b: Batch) -> Batch:
    """Parameter counts and FLOPs for every row of a batch.

    Returns
    -------
    dict of arrays, shape (N,):
        params_total, params_active [count]; params_embedding (input + output + position
        tables); params_layer_dense, params_layer_moe_total, params_layer_moe_active,
        params_attention (per layer); params_expert (one routed expert);
        n_moe_layers, n_dense_layers; params_mtp (the multi-token-prediction modules, in
        params_total; 0 without them); matmul_params_active (per token); tokens_per_step;
        attn_fwd_flop_per_step (attention core forward, full counting);
        model_flop_per_step, model_flop_per_step_causal, hardware_flop_per_step [FLOP].
    """
    n = size(b)
    cache: dict = {}

    def F(k, dtype=np.float64):  # a column (uniform columns come back as scalars), read once
        key = (k, dtype)
        if key not in cache:
            cache[key] = col(b, k, dtype)
        return cache[key]

    def G(k):
        return F(k, None)

    h = F("hidden_size")
    L = F("n_layers")
    a = F("n_heads")
    k = F("n_kv_heads")
    d_h = F("head_dim")
    d_v = F("v_head_dim")
    V = F("vocab_size")
    f = F("ffn_hidden_size")
    bias = G("linear_bias")
    norm = where(G("layernorm"), 2.0 * h, h)

    attn = attention_params(
        h, a, k, where(G("mla"), d_v, d_h), d_v=d_v, linear_bias=bias, mla=G("mla"),
        q_lora_rank=G("q_lora_rank"), kv_lora_rank=G("kv_lora_rank"),
        qk_nope_head_dim=G("qk_nope_head_dim"), qk_rope_head_dim=G("qk_rope_head_dim"),
    )
    # matmul weights only: less the biases, and for MLA less the RMSNorms of the query and KV
    # latents (r_q where q is low-rank, r_kv): norm weights, not matmuls (until 2026-12-01 they
    # were in N_matmul_active, +124,928 on DeepSeek-V3, 3.4e-6 of it, 2.7e-6 of the model FLOPs; review 14d)
    rq_norm = where(F("q_lora_rank") > 0, F("q_lora_rank"), 0.0)
    attn_matmul = attn - where(bias & ~G("mla"), (a + 2.0 * k) * d_h + h, 0.0) - where(
        G("mla"), rq_norm + F("kv_lora_rank"), 0.0)
    dense_mlp = mlp_params(h, f, gated=G("gated_mlp"), linear_bias=bias)
    dense_mlp_matmul = mlp_params(h, f, gated=G("gated_mlp"), linear_bias=False)

    E = F("n_experts")
    is_moe = E > 0
    topk = F("moe_top_k")
    expert = mlp_params(h, G("expert_ffn_hidden_size"), gated=G("gated_mlp"), linear_bias=bias)
    expert_mm = mlp_params(h, G("expert_ffn_hidden_size"), gated=G("gated_mlp"), linear_bias=False)
    shared = G("n_shared_experts") * mlp_params(
        h, G("shared_expert_ffn_hidden_size"), gated=G("gated_mlp"), linear_bias=bias
    )
    shared_mm = G("n_shared_experts") * mlp_params(
        h, G("shared_expert_ffn_hidden_size"), gated=G("gated_mlp"), linear_bias=False
    )
    router = h * E
    n_moe = where(is_moe, L - G("first_dense_layers"), 0.0)
    n_dense = L - n_moe

    layer_norms = 2.0 * norm
    layer_dense = attn + dense_mlp + layer_norms
    moe_total = attn + E * expert + shared + router + layer_norms
    moe_active = attn + topk * expert + shared + router + layer_norms

    emb = V * h + where(G("tied_embeddings"), 0.0, V * h) + G("learned_pos_embeddings") * h
    total = n_dense * layer_dense + n_moe * moe_total + emb + norm
    active = n_dense * layer_dense + n_moe * moe_active + emb + norm

    matmul_active = (
        n_dense * (attn_matmul + dense_mlp_matmul)
        + n_moe * (attn_matmul + topk * expert_mm + shared_mm + router)
        + V * h  # output head (computed even when tied)
    )
    # Multi-token prediction (DeepSeek-V3 §2.2; Megatron-Core MultiTokenPredictionLayer): D modules,
    # each a transformer block of the model's MoE-layer kind (dense for a dense model), the projection
    # eh_proj (2h -> h, 2h² weights), three norms (enorm, hnorm, final_layernorm) and the shared
    # embedding and output head (not counted again). Per token each adds its block's active matmuls,
    # eh_proj and one more pass through the output head (Megatron num_floating_point_operations:
    # logits × (D + 1)). Only on batches with a row that has D > 0 (others are left as they were).
    has_mtp = "mtp_layers" in b and any_true(np.asarray(b["mtp_layers"]) > 0)
    if has_mtp:
        D = F("mtp_layers")
        mtp_extra = 2.0 * h * h + 3.0 * norm  # eh_proj + enorm, hnorm, final_layernorm
        mtp_total = D * (where(is_moe, moe_total, layer_dense) + mtp_extra)
        mtp_active = D * (where(is_moe, moe_active, layer_dense) + mtp_extra)
        mtp_block_mm = where(is_moe, attn_matmul + topk * expert_mm + shared_mm + router,
                             attn_matmul + dense_mlp_matmul)
        mtp_matmul = D * (mtp_block_mm + 2.0 * h * h + V * h)
        total = total + mtp_total
        active = active + mtp_active
        matmul_active = matmul_active + mtp_matmul
        L_attn = L + D  # the MTP blocks' attention cores
    else:
        D = 0.0
        mtp_total = 0.0
        L_attn = L
    B = F("global_batch_size")
    s = F("seq_len")
    tokens = B * s
    d_qk = d_h
    # Attention core forward, full counting: QK^T 2·s²·a·d_qk and AV 2·s²·a·d_v per sequence-layer
    # (s·keys with sliding-window layers: attention_keys).
    if "sliding_window" in b and any_true(np.asarray(b["sliding_window"]) > 0):
        keys_full, keys_causal = attention_keys(s, F("sliding_window"), F("swa_layer_frac"))
        attn_fwd = 2.0 * B * s * keys_full * a * (d_qk + d_v) * L_attn
        attn_causal = 2.0 * B * s * keys_causal * a * (d_qk + d_v) * L_attn
        model_flop_causal = FLOP_PER_PARAM_PER_TOKEN_TRAIN * matmul_active * tokens + 3.0 * attn_causal
    else:
        attn_fwd = 2.0 * B * s * s * a * (d_qk + d_v) * L_attn
        model_flop_causal = FLOP_PER_PARAM_PER_TOKEN_TRAIN * matmul_active * tokens + 1.5 * attn_fwd
    model_flop = FLOP_PER_PARAM_PER_TOKEN_TRAIN * matmul_active * tokens + 3.0 * attn_fwd
    rc = G("recompute")
    # Full recompute re-runs the transformer layers' forward, not the output head (Megatron
    # checkpoints layer inputs only; Narayanan et al. 2021 eq. 3 counts it this way: 96 vs 72
    # on the layer terms, 6·B·s·h·V unchanged for the logits).
    if has_mtp:
        # the MTP blocks' share (block + eh_proj forward, attention core), kept apart: Megatron's
        # MultiTokenPredictionLayer checkpoints its whole block under full recompute with the uniform
        # method (_checkpointed_forward); under the block method (recompute_layers > 0, exported as
        # --recompute-method block) it warns "recompute_method == 'block' is not supported for MTP
        # yet. Skipping recompute." and runs the block plainly: nothing of it is recomputed there
        # (until 2026-12-01 it was, review 16f). The heads are never recomputed.
        attn_main = attn_fwd * (L / L_attn)
        mtp_rc_full = FLOP_PER_PARAM_PER_TOKEN_FWD * D * (mtp_block_mm + 2.0 * h * h) * tokens + (attn_fwd - attn_main)
        recompute_flop = where(
            rc == 2, FLOP_PER_PARAM_PER_TOKEN_FWD * (matmul_active - mtp_matmul - V * h) * tokens + attn_main,
            where(rc == 1, attn_main, 0.0),
        )
    else:
        recompute_flop = where(
            rc == 2, FLOP_PER_PARAM_PER_TOKEN_FWD * (matmul_active - V * h) * tokens + attn_fwd,
            where(rc == 1, attn_fwd, 0.0),
        )
    if "recompute_layers" in b and any_true(np.asarray(b["recompute_layers"]) > 0):
        recompute_flop = recompute_flop * full_recompute_fraction(
            F("recompute_layers"), L, F("pp"), F("vpp"), rc == 2)
    if has_mtp:
        mtp_full = rc == 2
        if "recompute_layers" in b and any_true(np.asarray(b["recompute_layers"]) > 0):
            mtp_full = mtp_full & ~(F("recompute_layers") > 0)  # block method: MTP not recomputed
        recompute_flop = recompute_flop + where(mtp_full, mtp_rc_full, where(rc == 1, attn_fwd - attn_main, 0.0))
    opsac = rc == RC_OPSAC
    if any_true(opsac):  # op_sac: the recomputed matmuls; the attention core only without flash
        attn_rc = op_sac_recompute_params(  # the attention part (f = 0: no MLP)
            h, k, d_h, 0.0, gated=False, mla=G("mla"), a=a, tp=G("tp"),
            sequence_parallel=G("sequence_parallel"), q_lora_rank=G("q_lora_rank"),
            kv_lora_rank=G("kv_lora_rank"), qk_nope_head_dim=G("qk_nope_head_dim"),
            qk_rope_head_dim=G("qk_rope_head_dim"), d_v=d_v)
        dense_rc = attn_rc + where(G("gated_mlp"), h * f, 0.0)
        moe_rc = attn_rc + op_sac_moe_recompute_params(
            h, G("expert_ffn_hidden_size"), topk, G("n_shared_experts"),
            G("shared_expert_ffn_hidden_size"), E, gated=G("gated_mlp"))
        n_rc_moe = n_moe + D * is_moe if has_mtp else n_moe  # an MTP block: one more layer of its kind
        n_rc_dense = n_dense + D * ~is_moe if has_mtp else n_dense
        op_flop = FLOP_PER_PARAM_PER_TOKEN_FWD * (n_rc_dense * dense_rc + n_rc_moe * moe_rc) * tokens + where(
            G("flash_attention"), 0.0, attn_fwd)
        recompute_flop = where(opsac, op_flop, recompute_flop)
    out = {
        "params_total": total,
        "params_active": active,
        "params_embedding": emb,
        "params_attention": attn,
        "params_layer_dense": layer_dense,
        "params_layer_moe_total": where(is_moe, moe_total, 0.0),
        "params_layer_moe_active": where(is_moe, moe_active, 0.0),
        "params_expert": where(is_moe, expert, 0.0),
        "n_moe_layers": n_moe,
        "n_dense_layers": n_dense,
        "params_mtp": mtp_total,
        "matmul_params_active": matmul_active,
        "tokens_per_step": tokens,
        "attn_fwd_flop_per_step": attn_fwd,
        "model_flop_per_step": model_flop,
        "model_flop_per_step_causal": model_flop_causal,
        "recompute_flop_per_step": recompute_flop,
        "hardware_flop_per_step": model_flop + recompute_flop,
    }
    return {k: expand(v, n) for k, v in out.items()}


def full_recompute_fraction(recompute_layers, n_layers, pp, vpp, is_full):
    """Share of the layers that full recompute re-runs: ``min(N·pp·vpp / L, 1)`` with
    ``N = recompute_layers`` per pipeline chunk (Megatron ``--recompute-method block``), 1 when
    ``N`` is 0 (every layer) or the row is not a full-recompute row. Arrays (N,) → (N,).

    An average over the stages, used for the hardware FLOPs (exact when every rank holds at least
    N·vpp layers); the step time takes each pacing stage's own share ``min(N·vpp, n)/n``
    (timing) and memory each rank's (memory)."""
    N = np.asarray(recompute_layers, dtype=np.float64)
    frac = np.minimum(N * np.asarray(pp, dtype=np.float64) * np.asarray(vpp, dtype=np.float64)
                      / np.maximum(np.asarray(n_layers, dtype=np.float64), 1.0), 1.0)
    return np.where(np.asarray(is_full) & (N > 0), frac, 1.0)


def narayanan_flop_per_step(B, s, L, h, V):
    """Narayanan et al. 2021 eq. (3): ``96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h))`` FLOPs per step,
    which includes the full-recompute forward (an HFU count for a 4h-MLP MHA model)."""
    B, s, L, h, V = (np.asarray(x, dtype=np.float64) for x in (B, s, L, h, V))
    return 96.0 * B * s * L * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * L * h))


def layers_on_rank(n_layers, pp, vpp, rank):
    """Transformer layers held by pipeline rank ``rank`` (0-based), vectorised.

    The ``pp·vpp`` virtual stages are numbered in schedule order; rank j owns virtual stages
    ``j, j+pp, j+2·pp, …`` (Megatron's interleaved layout, Narayanan et al. 2021 §2.2). Each
    virtual stage gets ``floor(L/(pp·vpp))`` layers and the first ``L mod (pp·vpp)`` get one
    more (the schema's 'uneven' rule; with an even split the remainder is 0), so rank j holds
    ``vpp·floor(L/(pp·vpp)) + #{k < vpp : j + k·pp < L mod (pp·vpp)}`` layers.

    Example: Llama 3 405B, L = 126, pp = 16, vpp = 7: 112 virtual stages of 1 layer, the first
    14 with 2, so ranks 0–13 hold 8 layers and ranks 14–15 hold 7.
    """
    # Computed in float64 (integer floor division costs ~10 float operations per element):
    # quotients of integers below 2^52 floor and ceil exactly, so the result is the integer one.
    f = lambda x: np.asarray(x, dtype=np.int64).astype(np.float64)  # noqa: E731  (int64 truncation first)
    L, p, v, j = f(n_layers), f(pp), f(vpp), f(rank)
    stages = p * v
    base = np.floor(L / stages)
    rem = L - base * stages
    extra = np.minimum(np.maximum(np.ceil((rem - j) / p), 0.0), v)  # ceil((rem - j)/p) in [0, v]
    return (v * base + extra).astype(np.int64)


def dense_layers_on_rank(n_layers, n_dense, pp, vpp, rank):
    """Leading dense layers (an MoE model's ``first_dense_layers``) held by pipeline rank ``rank``,
    vectorised: over its virtual stages ``s = rank + k·pp`` (``k < vpp``), each holding ``base +
    [s < rem]`` layers after ``s·base + min(s, rem)`` earlier ones (the layout of
    :func:`layers_on_rank`), the dense layers being the model's first ``n_dense``. Float arrays
    (exact integers). A loop over the ``vpp`` chunks (at most the largest vpp), not over rows.

    Example: 32 layers, 16 dense, pp 2, vpp 1: rank 0 holds 16 dense layers, rank 1 none.
    """
    L, nd, p, v, j = (np.asarray(x, dtype=np.float64) for x in (n_layers, n_dense, pp, vpp, rank))
    shape = np.broadcast(L, nd, p, v, j).shape
    out = np.zeros(shape)
    need = nd > 0.0  # rows without dense layers hold none: only the others are computed (gathered)
    if not need.any():
        return out
    if shape:
        idx = np.flatnonzero(np.broadcast_to(need, shape))
        L, nd, p, v, j = (np.broadcast_to(x, shape)[idx] for x in (L, nd, p, v, j))
    stages = p * v
    base = np.floor(L / stages)
    rem = L - base * stages
    got = 0.0
    for k in range(int(np.max(v)) if v.size else 0):
        s = j + k * p
        held = np.clip(nd - (s * base + np.minimum(s, rem)), 0.0, base + (s < rem))
        got = got + held * (k < v)
    if not shape:
        return np.asarray(got, dtype=np.float64)
    out[idx] = got
    return out


stage = stats



def _int_text(x: float) -> str:
    """An exact count (parameters, tokens) with thousands separators: ``855,654,400``."""
    return f"{x:,.0f}"


def _flop_text(x: float) -> str:
    """FLOP with 4 significant digits: ``2.019e18``."""
    m, _, ex = f"{x:.4g}".partition("e")
    return m + ("e" + str(int(ex)) if ex else "")


def explain(row: dict) -> dict[str, str]:
    """Formula strings with one scenario's numbers plugged in: ``params_total``, ``params_active``,
    ``model_flop_per_step`` and ``hardware_flop_per_step`` (the module docstring's counting
    conventions; review 34: these had no explanation). ``row``: one result row (python scalars)."""
    from .memory import _params_text

    h = float(row["hidden_size"])
    norm = 2.0 * h if row.get("layernorm") else h
    n_d, n_m = float(row["n_dense_layers"]), float(row["n_moe_layers"])
    emb, mtp = float(row["params_embedding"]), float(row.get("params_mtp", 0.0) or 0.0)
    emb_why = "embedding, tied: one V·h table" if row.get("tied_embeddings") else "embedding + output head, V·h each"
    if row.get("learned_pos_embeddings"):
        emb_why += ", + position table"
    moe = n_m > 0
    e: dict[str, str] = {}

    def params(kind: str, moe_col: str, moe_what: str) -> str:
        sym, num = [], []
        if n_d > 0:
            sym.append("n_dense·P_dense")
            num.append(f"{n_d:g} × {_int_text(float(row['params_layer_dense']))}")
        if moe:
            sym.append(f"n_moe·P_moe_{kind}")
            num.append(f"{n_m:g} × {_int_text(float(row[moe_col]))}")
        sym += ["P_emb", "final norm"] + (["P_mtp"] if mtp > 0 else [])
        num += [f"{_int_text(emb)} ({emb_why})", _int_text(norm)] + (
            [f"{_int_text(mtp)} (MTP modules)"] if mtp > 0 else [])
        return (" + ".join(sym) + " = " + " + ".join(num) + f" = {_params_text(float(row['params_' + kind]))}"
                + f" (a layer: attention {_int_text(float(row['params_attention']))}, MLP, 2 norms{moe_what})")

    expert = _int_text(float(row["params_expert"])) if moe else ""
    e["params_total"] = params("total", "params_layer_moe_total", (
        f"; an MoE layer: {float(row.get('n_experts', 0)):g} routed experts of {expert} each, shared experts, "
        "router h·E") if moe else "")
    e["params_active"] = params("active", "params_layer_moe_active", (
        f"; an MoE layer: top_k = {float(row.get('moe_top_k', 0)):g} routed experts of {expert} each, shared "
        "experts, router h·E") if moe else "")
    n_mm, tok = float(row["matmul_params_active"]), float(row["tokens_per_step"])
    attn, mf = float(row["attn_fwd_flop_per_step"]), float(row["model_flop_per_step"])
    e["model_flop_per_step"] = (
        f"6 × N_matmul_active × tokens + 3 × attention core forward (QKᵀ and AV counted in full; Narayanan et al. "
        f"2021 eq. 3) = 6 × {_int_text(n_mm)} × {_int_text(tok)} + 3 × {_flop_text(attn)} = {_flop_text(mf)} FLOP "
        f"(N_matmul_active: the matmul weights each token passes through{', top_k routed experts' if moe else ''} "
        "and the output head; norms, biases and the embedding lookup are not matmuls; the causal half of the "
        f"attention core instead: model_flop_per_step_causal = {_flop_text(float(row['model_flop_per_step_causal']))})")
    rc = float(row.get("recompute_flop_per_step", 0.0) or 0.0)
    mode = row.get("recompute")
    mode = RECOMPUTE[int(mode)] if isinstance(mode, (int, float)) and 0 <= int(mode) < len(RECOMPUTE) else mode
    e["hardware_flop_per_step"] = (
        f"model FLOP + recomputed forward FLOP (recompute = {mode}) = {_flop_text(mf)} + {_flop_text(rc)} = "
        f"{_flop_text(float(row['hardware_flop_per_step']))} FLOP")
    return e
