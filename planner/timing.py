"""Step time of one optimizer step, its parts, throughput, MFU and HFU (stage 3), vectorised.

Every function takes a :data:`planner.batch.Batch` (arrays of shape (N,)) and returns arrays
of shape (N,); there is no loop over configurations. Columns read: the model, training,
parallelism and hardware columns of ``planner.batch`` and the ``model_stats`` outputs
(``params_total``, ``params_attention``, ``params_expert``, ``n_moe_layers``,
``n_dense_layers``, ``model_flop_per_step``, ``hardware_flop_per_step``). The optional
``act_offload_traffic_bytes`` of the memory stage (every micro-batch's activations of the
busiest rank, per step) is used for activation offload only.

The model (DESIGN §4.3; docs/timing.md has the derivations) — the slowest pipeline stage sets
the pace; everything is per GPU of that stage:

``step_time_s = t_compute + t_tp_comm + t_cp_comm + t_ep_comm + t_pp_bubble + t_pp_p2p
+ t_dp_comm_exposed + t_offload + t_optimizer``

* compute: every GEMM ``M×K×N`` of a layer (QKV, attention output, MLP up/down, experts,
  output head) at ``eff = eff_max · I / (I + k·R)``, ``I`` = arithmetic intensity
  ``2MKN / (bytes·(MK+KN+MN))`` [FLOP/byte], ``R`` = peak / HBM bandwidth (the roofline ridge):
  a Calculon-style size-dependent efficiency (Isaev et al. SC'23) whose knee sits at the
  roofline; ``eff_max`` = MAMF fraction × a fitted scale, the fraction being the part's own
  (``mamf_flop_per_s`` of hardware/accelerators.json: measured, hardware.md §6a, or derived by
  the power rule :func:`mamf_at_power`) where the catalogue gives one, else its family's.
  Attention core with flash attention: causal half of the full-count FLOPs at
  ``attn_eff_rel · eff_max · d_h/(d_h + knee)`` (knee = exp vs matmul throughput of the
  family: 32 on A100, 64 on H100, 128 on Blackwell, :data:`ATTN_DHEAD_KNEE`; an accelerator's
  own ``attention_dhead_knee`` first: 64 on Blackwell Ultra B300 / GB300), backward
  ``(2.5·d_h + knee)/(d_h + knee)`` × the forward (5 matmuls vs 2, :data:`FLASH_BWD_OVER_FWD`, but
  one exp per score element in each pass: :func:`flash_bwd_over_fwd`); without flash: the full ``s²`` batched GEMMs
  (backward 2×) plus the materialised score matrix through HBM (softmax, dropout); with flash
  attention, sliding-window layers count ``min(w, s)`` keys per query instead of ``s``
  (``model_stats.attention_keys``; without flash the scores are computed in full and masked);
  on Hopper and Blackwell the flash core's rate is × ``k/(k + C)`` with ``k`` the keys a query
  visits per kernel call (causal ``s/2``, ÷ cp) and ``C`` = 240 keys of per-query overhead
  (:data:`ATTN_QUERY_OVERHEAD_KEYS`). Norms,
  residual adds, activation functions and the cross-entropy are HBM-bandwidth bound (bytes
  counted per token: fused kernels, or PyTorch eager ops one by one with
  ``training.elementwise = "eager"``, :data:`RMSNORM_BYTES_EAGER_FWD`). Recompute adds one forward of everything (full; with
  ``recompute_layers = N`` the share ``min(N·pp·vpp/L, 1)`` of the layers,
  ``model_stats.full_recompute_fraction``), of the attention
  core (selective), or (``op_sac``, TorchTitan's per-op selective checkpointing) of the K
  projection, O (without TP, or with TP but no SP), the gated MLP's second up-projection (W3), the routed experts'
  up-projections and every elementwise op (``model_stats.op_sac_recompute_params``). FP8
  row-wise scaling (``training.fp8_scaling = "rowwise"``, FP8 GEMMs only) adds
  :data:`FP8_ROWWISE_BYTES` HBM bytes per cast element: every dense and attention linear
  casts its input and weight in the forward (``M·K + K·N``), its output gradient twice and its
  input and weight again in the backward (``2·M·N + M·K + K·N``), the forward casts again with
  full recompute; in MoE layers the attention projections and shared experts (the routed
  experts' grouped GEMMs are not charged). MoE layers add the routed experts' host time, ``E/ep`` local experts ×
  :data:`MOE_HOST_S_PER_LOCAL_EXPERT` per layer and micro-batch (the dropless dispatcher's
  device-host sync leaves the expert kernels' launch cost exposed; a lower bound from NVIDIA's
  DeepSeek-V3 GB200 guide).
* TP: per layer and micro-batch 4 all-reduces of ``b·s·h`` 16-bit values (+2 with full
  recompute, +1 with ``op_sac``), ring over the TP group (Megatron-LM, Shoeybi et al. 2019 §3; Korthikanti et al.
  2022 §4.2.2: SP = reduce-scatter + all-gather of the same volume); ``tp_overlap_frac``
  hidden when ``tp_comm_overlap``.
* CP (ring attention, Liu et al. 2023; Megatron-Core context parallel): ``c−1`` KV block
  transfers per layer forward, ``2(c−1)`` backward (KV and dKV), hidden behind the attention
  compute: exposed = ``max(0, comm − attention)``.
* EP: dispatch + combine all-to-all, forward and backward, of ``b·s·h·top_k`` 16-bit values
  per MoE layer, times ``moe_capacity_factor`` (load imbalance); exposed unless
  ``ep_comm_overlap``, which hides up to ``tp_overlap_frac`` × the MoE layer's compute of
  another micro-batch (DualPipe, DeepSeek-V3 §3.2.1). Node-limited routing (DeepSeek's at
  most ``M`` = 4 nodes per token, ``moe_max_nodes_per_token``): a token crosses the network
  once per destination node, so the network share of the routed copies is
  ``min(top_k, M)/top_k``; node-aware dispatch (``ep_node_dispatch``, DeepEP) sends one copy per
  destination node whatever the routing, ``D·(1 − p₀)/top_k`` (:func:`node_dispatch_network_frac`);
  FP8 dispatch (``ep_dispatch_fp8``) sends the dispatches in 1 B.
* Expert TP (``etp`` column, ``parallelism.etp``; absent = tp, Megatron-Core's default): the
  routed experts' GEMMs ``tok·top_k·ep·(etp/tp)/E × h × fe/etp`` per local expert, the MoE
  layers' MLP-half TP collectives over the etp ranks (none for etp = 1), the EP all-to-all over
  ep ranks etp apart, the expert DP collectives over ``tp·cp·dp/(etp·ep)`` ranks etp·ep apart
  (Megatron-Core parallel_state: expert rank order tp-cp-ep-dp-pp with tp = etp, cp = 1).
* PP bubble (Narayanan et al. 2021 §2.2): 1F1B and GPipe ``(p−1)/m``, interleaved
  ``(p−1)/(v·m)``, of the per-stage time; zero-bubble ZB-H1 ``(p−1)(F + R)`` per step, at least the
  critical path's ``(p−1)(F + B − W) − (m−1)W`` below m = p (:func:`zero_bubble_fraction`);
  DualPipe ``(p/2 − 1)(F + B/2)`` per step, ``(p/2 − 1)(F + B/2 + 3R/2)`` with full recompute (R the
  recomputed forward inside B) (:func:`dualpipe_bubble_fraction`; its ranks hold
  two stages' parameters, so DP collectives and the optimizer step carry twice as many);
  p2p sends of ``b·s·h/t`` 16-bit values (Narayanan §4.1 scatter/gather) per micro-batch,
  forward and backward, ``v`` times with interleaving; counted exposed.
* DP: gradient reduce (all-reduce for ZeRO-0, reduce-scatter for ZeRO ≥ 1) hidden behind
  the backward of the last micro-batch except the last bucket; ZeRO-2 keeps only its
  gradient shard, so it reduce-scatters after every micro-batch's backward (DeepSpeed stage 2,
  deepspeedai/DeepSpeed#2252), the earlier ``m − 1`` each hidden behind that micro-batch's
  forward + backward except the last bucket; ZeRO ≥ 1 parameter all-gather
  behind the next forward except the first bucket; ZeRO-3 gathers parameters forward and
  backward and reduce-scatters every micro-batch, hidden behind that micro-batch except the
  first unit's gather and the last unit's reduce, each with the ring's full latency (an average
  layer, or on the stage holding the embedding the vocabulary matrix ``V·h/tp`` where larger:
  torchtitan's embedding unit). Dense parameters over ``dp·cp``, expert
  parameters over ``dp·cp/ep`` (``tp·cp·dp/(etp·ep)`` with expert TP ≠ TP). Hybrid sharding
  (HSDP, ``dp_shard < dp``): the ZeRO
  collectives run over the shard group ``dp_shard·cp`` (the inner DP ranks, often one node),
  and the gradient shard is ring-all-reduced over the ``dp/dp_shard`` replicas once per step
  (``2·(r−1)/r · g·P/(dp_shard·cp) / BW``), hidden with the gradient reduce (PyTorch FSDP
  HYBRID_SHARD; Megatron ``num_distributed_optimizer_instances``). A simplification: FSDP2
  reduces across replicas every micro-batch unless told not to; counted once. With
  ``dp_comm_overlap`` off nothing is hidden: the step carries every DP collective in full
  (ZeRO-3: ``m·(2 gathers + reduce-scatter)``), as MosaicML's llm-foundry tables show for
  PyTorch FSDP1 under Composer: at a fixed sequence length the published time per
  micro-batch exceeds the overlapped prediction by a constant, the modelled collective time
  (docs/timing.md).
* offload (ZeRO-Offload, Ren et al. 2021; Maurya et al. 2024): gradients down and weights
  up over the host link, CPU Adam bound by host DRAM bandwidth shared by the job's GPUs on the node;
  the gradient download overlaps the last backward, the CPU step and upload are exposed.
* optimizer (on GPU): memory bound, ``OPT_BYTES_PER_PARAM`` per parameter of the local shard.
* multi-token prediction (``mtp_layers`` = D): on the head-carrying stage, per micro-batch
  ``D · (a block of the model's MoE-layer kind, a dense layer on a dense model, + eh_proj GEMM
  tok × 2h × h/t + the head and loss again)``, with the block's TP / EP / CP communication;
  recompute as Megatron: whole under full recompute with the uniform method, none under the
  block method (``recompute_layers`` > 0, which Megatron skips for MTP) (docs/timing.md).

Outputs: ``tokens_per_s`` (whole job), ``tflops_per_gpu`` (model FLOP/s per GPU in
TFLOP/s, i.e. 1e12 FLOP/s), ``mfu = model_flop_per_step / (step · n_gpus ·
peak_16bit_flop_per_s)`` — for FP8 rows the denominator is still the **16-bit** peak (the
convention of MosaicML and of MFU comparisons across precisions); ``mfu_precision_peak``
divides by the GEMM precision's peak (``peak_flop_per_s``, the FP8 peak for FP8 rows).
``hfu`` uses ``hardware_flop_per_step`` (recompute included) over the 16-bit peak. Model
FLOPs count the attention core in full (``model_stats.model_flop_per_step``). None of them is
clipped: over the 16-bit peak, an FP8 or FP4 run's ``mfu`` / ``hfu`` can exceed 1 (the formula
view and the headline show the same number).
"""

from __future__ import annotations

import json
import threading
from functools import lru_cache

import numpy as np

from . import catalog, comm, model_stats
from . import memory as _mem
from .batch import ATTENTION_KERNELS, FAMILIES, PRECISIONS, RECOMPUTE, SCHEDULES, Batch, any_true
from .batch import col as _col
from .batch import expand as _expand
from .model_stats import layers_on_rank

# ----------------------------------------------------------------------------- constants
#: Causal attention with flash attention computes only the blocks under the diagonal: half
#: of the full-count FLOPs (Dao 2023, FlashAttention-2 §3.1.1 "causal masking ... skip").
CAUSAL_WORK_FRAC = 0.5
#: Flash-attention head-dimension knee: per score element the forward does 4·d_h matmul FLOPs
#: and one exp on the special-function units (MUFU, 16 per SM per clock). H100 SXM: 989
#: TFLOP/s of matmul but 3.9 TFLOP/s of exp (Shah et al. 2024, FlashAttention-3 §3.1; = 132
#: SMs × 16 × 1.83 GHz), ratio 256, so exp time equals matmul time at d_h = 256/4 = 64;
#: attention efficiency ∝ d_h / (d_h + knee). A100: 108 SMs × 16 × 1.41 GHz = 2.44 TFLOP/s of
#: exp against 312 TFLOP/s of matmul, ratio 128, knee 128/4 = 32 (NVIDIA A100 whitepaper SM
#: counts and boost clock). Families without a derivation use the Hopper value (U); an
#: accelerator may give its own (``attention_dhead_knee`` in hardware/accelerators.json: B200 /
#: GB200 128 — twice Hopper's tensor FLOP per clock per SM, the same 16 exp per clock; B300 /
#: GB300 64 — Blackwell Ultra doubles the exp throughput).
ATTN_DHEAD_KNEE = {"ampere": 32.0, "hopper": 64.0, "blackwell": 128.0}
ATTN_DHEAD_KNEE_DEFAULT = 64.0
#: Flash attention's per-query overhead, in keys' worth of work: a kernel call pays, per query
#: tile, a prologue (loading Q, the softmax state) and an epilogue (rescaling and writing O, the
#: log-sum-exp) on top of the key blocks it visits, so its rate grows with the keys per query
#: ``k`` as ``T∞ · k/(k + C)``. Read off the tables of pytorch/benchmark PR #2391 (commit
#: ff65cb67, H100, d_h 128, no mask, B·s = 16K tokens, 16 heads): FlashAttention-3 430 / 517 /
#: 566 / 590 / 614 / 621 TFLOP/s and the Triton FlashAttention-2 tutorial kernel 329 / 390 /
#: 434 / 459 / 471 / 477 at s = 512 … 16K; a least-squares fit of 1/T = (1 + C/k)/T∞ gives C =
#: 236 and 244 keys (T∞ 630 and 485 TFLOP/s), so 240 for both kernel kinds on Hopper.
#: FlashAttention-3's causal panel (Shah et al. 2024, Fig. 5, d_h 128: 292 … 616 TFLOP/s) fits
#: C ≈ 317 with k = s/2 keys visited (the diagonal blocks' masking on top): 240 is the lower,
#: unmasked figure. Blackwell takes Hopper's (assumed: no table read); Ampere and the other
#: families none (no table read; the calibration file's 61 A100 rows, MosaicML's FlashAttention-2
#: / Triton kernels at 512 … 65K tokens, fit worse with it: docs/timing.md, review 20). Applied
#: per CP hop: a ring step is one kernel call over ``k/cp`` keys.
ATTN_QUERY_OVERHEAD_KEYS = {"hopper": 240.0, "blackwell": 240.0}
#: The tables' shortest length (512 keys per query): below it the factor is held at
#: 512/(512 + C) = 0.68, not extrapolated (at 128 keys per query, a 1K sequence over CP 4, the
#: fitted curve would make flash slower than materialised scores, which no kernel table shows).
ATTN_QUERY_OVERHEAD_MIN_KEYS = 512.0
#: Flash attention backward / forward work: the forward runs 2 matmuls per block (QKᵀ, PV),
#: the backward 5 (QKᵀ recomputed, dV = PᵀdO, dP = dO·Vᵀ, dQ = dS·K, dK = dSᵀ·Q): 2.5×
#: (Dao 2023, FlashAttention-2 §3.1.2 / Alg. 2; the flash-attn benchmark counts bwd FLOPs as
#: 2.5 × fwd). The materialised (no-flash) path keeps BWD_OVER_FWD = 2 (4 matmuls vs 2). The
#: flash backward's *time* is 2.5 × the forward's matmul time plus one exp per score element, as
#: in the forward (P recomputed from the saved log-sum-exp): :func:`flash_bwd_over_fwd`.
FLASH_BWD_OVER_FWD = 2.5
#: Backward / forward work ratio of a GEMM or attention pass (Kaplan et al. 2020: 2 + 4).
BWD_OVER_FWD = 2.0


def flash_bwd_over_fwd(d_h, knee):
    """Backward / forward time of the flash attention core, shape: the arguments' broadcast.

    The forward's time per score element is ``4·d_h`` matmul FLOPs plus one exp, which the core's
    rate ``∝ d_h/(d_h + knee)`` expresses (the exp costs ``knee`` in units of ``d_h``: :data:`ATTN_DHEAD_KNEE`);
    the backward runs 5 matmuls against the forward's 2 (:data:`FLASH_BWD_OVER_FWD` = 2.5:
    FlashAttention-2 §3.1.2, Alg. 2) but one exp per element too (P = exp(S − LSE), recomputed
    from the saved log-sum-exp; Dao 2023, Alg. 2 line 11), so::

        r = (2.5·d_h + knee) / (d_h + knee)

    2.5 without exp cost (knee 0), 1.75 at d_h = knee (B200 / GB200 at d_h 128), 2.0 on H100 at
    d_h 128 (knee 64), 2.2 on A100 (knee 32). Until session 37 every pass paid the knee, r = 2.5.
    The engine takes the row's own knee (× the core's peak / the 16-bit peak in fp32 / tf32, as the
    forward); FlashAttention-2-class kernels (``attention_kernel = flash2``) the native knee's ratio,
    their speed factor applying to both passes; the FP8 core its 16-bit core's ratio.
    NVIDIA's cuDNN training benchmark (``NVIDIA/cudnn-frontend``
    ``benchmark/sdpa_benchmark_training/results/llama3.1/{gb200,gb300}/llama3.1_20260724_*.csv``:
    cuDNN 9.26, BF16, causal, d_h 128, 64 query / 8 KV heads, batch 2) measures GB300 / GB200 (the
    same 2.5 PF peak, knees 64 / 128) at 1.19–1.34× in the forward (the knee's 1.33×) and
    1.07–1.18× in the backward, where this form gives 1.17× and a knee on every pass 1.33×.
    """
    d = np.asarray(d_h, dtype=float)
    k = np.asarray(knee, dtype=float)
    return (FLASH_BWD_OVER_FWD * d + k) / (d + k)


#: HBM bytes per hidden element per token per layer, forward, 16-bit: two norms (read h,
#: write h: 4 B each) and two residual / bias-dropout-add (read 2h, write h: 6 B each) = 20.
ELEMWISE_H_BYTES_FWD = 20.0
#: HBM bytes per FFN element per token, forward: GeLU reads f and writes f (4 B); SwiGLU
#: reads 2f and writes f (6 B, per element of f).
ACT_BYTES_PLAIN_FWD = 4.0
ACT_BYTES_GATED_FWD = 6.0
#: Eager PyTorch (``training.elementwise = "eager"``), one kernel per op, bytes per element
#: forward, counted op by op on TorchTitan's 2024 Llama (``torchtitan/models/norms.py``
#: ``RMSNorm``: ``self._norm(x.float()).type_as(x) * self.weight``, ``_norm = x *
#: rsqrt(x.pow(2).mean(-1) + eps)``; ``models/llama/model.py`` ``apply_rotary_emb`` and
#: ``FeedForward``): RMSNorm = cast to fp32 (2+4) + pow (4+4) + mean (4) + multiply (4+4) +
#: cast back (4+2) + × weight (2+2) = 36 B per hidden element against a fused norm's 4 (read
#: 2 + write 2; a LayerNorm is ``F.layer_norm``, one kernel, in eager PyTorch too); RoPE =
#: cast to fp32 (2+4) + complex multiply (4+4) + cast back (4+2) = 20 B per query and key
#: element, which the fused count leaves inside the neighbouring kernels; SwiGLU = silu (2+2)
#: + multiply (2+2+2) = 10 B per FFN element against the fused 6 (GeLU is one kernel either
#: way). Residual adds are single kernels in both.
RMSNORM_BYTES_FUSED_FWD = 4.0
#: FP8 row-wise scaling (torchao ``Float8LinearConfig.from_recipe_name("rowwise")``,
#: ``training.fp8_scaling = "rowwise"``): HBM bytes per element of every cast the recipe
#: makes. Each nn.Linear (TorchTitan's wq, wk, wv, wo, w1, w3, w2 are separate) casts its input
#: (M·K) and weight (K·N) along the reduction axis in the forward; the backward casts the output
#: gradient twice (M·N, once per GEMM) and input and weight again along their other axis
#: (row-wise scales do not survive a transpose, tensor-wise ones do); full recompute repeats
#: the forward casts. Derived (not fitted on validation rows) from torchao's own table
#: (torchao/float8/README.md, "Training benchmarks", 8 H100, Llama 3 8B, seq 8192, batch 1,
#: FSDP2, torch.compile, per-op SAC): over bf16 6150 tok/s, tensorwise with float8 all-gather
#: 7689.5 (+25.0 %), rowwise 6768 (+10.1 %). This model gives tensorwise +25.3 % on that run;
#: tensorwise / rowwise = 1.136 then needs 4.77 B per cast element (0.135 s on a 0.989 s step;
#: docs/timing.md). About what a two-pass cast moves — read bf16 for the row amax (2 B), read
#: it again and write FP8 (2 + 1 B) — which the derivation does not use.
FP8_ROWWISE_BYTES = 4.8
RMSNORM_BYTES_EAGER_FWD = 36.0
ROPE_BYTES_EAGER_FWD = 20.0
ACT_BYTES_GATED_EAGER_FWD = 10.0
#: Backward elementwise traffic over forward (read saved input + upstream grad, write grad).
ELEMWISE_BWD_OVER_FWD = 2.0
#: Cross-entropy bytes per logit, forward + backward (Megatron-Core loss path, unfused, per
#: op read + write): forward transpose (2+2), fp32 cast (2+4), max (4), subtract (4+4), exp
#: (4+4), sum (4), divide (4+4) = 42 B; backward softmax − one-hot (4+4), × grad (4+4), cast
#: to 16-bit (4+2), transpose (2+2) = 26 B; total 68 B.
LOGIT_BYTES = 68.0
#: Materialised attention (no flash): bytes per score element, forward: fused scale-mask-
#: softmax read 2 + write 2 = 4 B, and with dropout > 0 the dropout's read 2 + write 2 + mask 1
#: = 5 B more (Korthikanti et al. 2022 §4.1, the 5·a·s²·b activation bytes: 9 B in all);
#: backward twice that. A model without dropout (``ModelSpec.dropout = 0``) skips it: PyTorch's
#: dropout returns its input unchanged at p = 0 (ATen ``_dropout_impl``), and the memory model
#: already keeps no dropout masks then (``memory.ACT_ATTN_CORE_DROPOUT_PER_AS``).
SCORE_BYTES_SOFTMAX_FWD = 4.0
SCORE_BYTES_DROPOUT_FWD = 5.0
SCORE_BYTES_FWD = SCORE_BYTES_SOFTMAX_FWD + SCORE_BYTES_DROPOUT_FWD
#: Optimizer step bytes per parameter of the local shard: read grad (grad_bytes) + fp32
#: master, m, v (12) and write master, m, v (12) + 16-bit weights (2) -> grad_bytes + 26.
OPT_BYTES_BASE = 26.0
#: CPU Adam host-DRAM traffic per parameter (fp32 grad, master, m, v read; master, m, v write).
CPU_OPT_BYTES_PER_PARAM = 28.0
#: fp32 master bytes copied back to the GPU after the CPU step when the GPU keeps its own master
#: (``offload_master_weights`` off), instead of the 16-bit weights: the memory model's master bytes.
MASTER_UP_BYTES = _mem.MASTER_BYTES
#: ZeRO-Infinity NVMe offload: fp32 master + Adam m, v bytes per parameter read before and written
#: after the CPU step (Rajbhandari et al., SC'21): the memory model's optimizer bytes.
NVME_OPT_BYTES_PER_PARAM = _mem.OPTIMIZER_BYTES
#: Megatron-Core DDP bucket: max(40M, 1M · dp) parameters (distributed_data_parallel_config).
DP_BUCKET_PARAMS = 40.0e6
DP_BUCKET_PARAMS_PER_RANK = 1.0e6
#: Zero-bubble residual, ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR'24 §3.1):
#: its bubble is (p−1)(T_F + T_B − T_W) against 1F1B's (p−1)(T_F + T_B + T_W), with the
#: backward split into input-gradient T_B and weight-gradient T_W; at T_F = T_B = T_W, 1/3.
#: ZB-H1 is the schedule whose peak activation memory equals 1F1B's, which is what the memory
#: model holds (ZB-H2 / ZB-2p reach "near zero" with about twice the activations). Until
#: 2026-11-30 this was 0.1 — a ZB-2p-like bubble with ZB-H1's memory (found by review).
ZERO_BUBBLE_RESIDUAL = 1.0 / 3.0
#: Rows per chunk in :func:`stage` (arrays of 16k float64 = 128 KiB stay in cache; the same
#: as engine.DEFAULT_CHUNK_ROWS: measured fastest of 4k-64k on a 41k-row sweep batch).
CHUNK_ROWS = 16_384
#: Bytes of a 16-bit activation / weight element.
BYTES_16 = 2.0
#: FlashAttention-2-class kernels (``attention_kernel = "flash2"``) on Hopper run the Ampere
#: code (mma.sync, no TMA / wgmma), so their speed is anchored to the one generation the
#: calibration measures them on: the fitted FA2-on-A100 efficiency (``attn_eff_rel · eff_max``
#: at the Ampere knee, a fraction of the A100 peak; MosaicML's 61 A100 rows) times the ratio of
#: the kernel's published peak utilisations, H100 / A100: 0.35 ("FlashAttention-2 achieving
#: only 35% utilization on the H100 GPU", Shah et al. 2024, FlashAttention-3, arXiv:2407.08608,
#: abstract; pytorch/pytorch#142132 measures PyTorch's FA2 port at 329 TFLOP/s = 33 % of an
#: H100) over 0.73 ("reaching 50-73% of the theoretical maximum FLOPs/s on A100", Dao 2023,
#: FlashAttention-2, arXiv:2307.08691, abstract). As a factor on the native Hopper kernels:
#: ``(eff_max(ampere) / eff_max(hopper)) · (0.35 / 0.73) · (d'/(d' + FLASH2_DHEAD_KNEE)) / (d_h/(d_h + 64))``,
#: d' = min(d_h, FLASH2_DHEAD_CAP) (:func:`_flash2_factor`), = 0.61 at d_h 128 with the fitted constants (the FA3 paper's own FA3 / FA2 speed-up,
#: 1.5-2.0×, would give 0.5-0.67; the model's native Hopper kernels sit below FA3's
#: benchmarks by about what they absorb in training). The part's own deviation from its family
#: (own MAMF, power limit) carries over. Blackwell: the Hopper factor, assumed (no published
#: FA2 figure on Blackwell). Ampere and the other families: 1 (FA2 is Ampere's native kernel;
#: the others have no figure).
FLASH2_PEAK_UTIL: dict[str, float] = {"ampere": 0.73, "hopper": 0.35}
#: Families whose FP8 attention core (``training.fp8_attention``) is modelled: NVIDIA Hopper and
#: Blackwell, where Transformer Engine / cuDNN ship FP8 fused attention (the cuDNN training benchmark's
#: B200 / GB200 / GB300 tables are the figures the model is checked against, docs/timing.md). Other
#: families (AMD CDNA, Intel Gaudi) have FP8 attention kernels of their own but no figure here: the
#: setting changes nothing there, with a note (review 36).
FP8_ATTENTION_FAMILIES = ("hopper", "blackwell")
#: ... as a table by family code.
_FP8_ATTN_FAMILY = np.array([fam in FP8_ATTENTION_FAMILIES for fam in FAMILIES])
#: The families whose ``flash2`` rows take the Hopper factor above.
FLASH2_FAMILIES = ("hopper", "blackwell")
#: Head-dimension knee of FlashAttention-2-class kernels, d_h 64-128: Ampere's 32 (the same code's
#: exp / mma.sync balance; read off the FA3 paper's Fig. 5, FA2 on H100 runs d_h 64 at 324 and d_h 128
#: at 370 TFLOP/s forward, 0.88 of it, where knee 32 gives 0.83 and Hopper's native 64 0.75).
FLASH2_DHEAD_KNEE = ATTN_DHEAD_KNEE["ampere"]
#: Head dim above which FlashAttention-2-class kernels gain nothing more: the same figure has FA2
#: at d_h 256 at 326 TFLOP/s, below d_h 128's 370 (register pressure), where the knee alone
#: would give +11 %; the curve is held flat at d_h 128's value above it (not lowered: one point).
FLASH2_DHEAD_CAP = 128.0
_FLASH2 = ATTENTION_KERNELS.index("flash2")
#: FP8 expert dispatch (DeepSeek-V3 §3.3.2): bytes per element of a dispatch all-to-all (the
#: fp32 scale of each 1×128 tile adds 4/128 = 0.03 B per element, neglected).
FP8_DISPATCH_BYTES = 1.0
#: Share of the expert all-to-alls that are dispatches (forward dispatch and the backward
#: all-to-all that sends gradients to the experts; the two combines stay BF16): 1/2.
EP_DISPATCH_SHARE = 0.5

#: Host (CPU) time of the routed experts per local expert, per MoE layer and micro-batch
#: (forward + backward) [s]: work the GPU waits for, not overlapped. Dropless MoE needs a
#: device-to-host sync per MoE layer (tokens per expert), after which the expert kernels
#: (quantisation, grouped GEMMs, permutes) are launched from Python. Anchor: NVIDIA's
#: DeepSeek-V3 GB200 guide (Megatron-LM docs/discussions/deepseek-v3-gb200-optimization):
#: after every optimisation (970 TFLOP/s/GPU; 256 GB200, TP1 PP8 VPP4 EP32, micro-batch 1,
#: global batch 2048, seq 4096, MXFP8) "only the routed experts part still has some CPU
#: overhead", and removing the sync is estimated at "at least a 10% additional performance
#: gain": the step at 970 TFLOP/s is 2048·4096 tokens × 249.8 GFLOP/token (Megatron's count,
#: no MTP) / (256 × 970e12) = 8.44 s, a 10 % throughput gain saves 8.44 × (1 − 1/1.1) =
#: 0.77 s, over (64 + 7/4) micro-batch slots × 8 layers on the busiest GPU × 8 local experts
#: = 0.18 ms per local expert per layer and micro-batch. A lower bound (the guide's "at
#: least"); not fitted (calibration.csv holds no MoE run).
MOE_HOST_S_PER_LOCAL_EXPERT = 0.18e-3

#: Power rule for a part's maximum achievable matmul FLOP/s (MAMF) at another power limit, the
#: same die: ``MAMF(P) = MAMF(P_ref) · (P / P_ref)^κ``. κ from the BF16 column of the MAMF
#: table's one clean same-die pair (stas-accel, ../shared/reference/hardware.md §6a): GB200 at
#: 1,200 W 1,822 TF vs B200 at 1,000 W 1,745 TF → κ = ln(1822/1745) / ln(1.2) = 0.237. Poorly
#: determined (U): the same pair's FP8 column gives 0.285; A100 PCIe 252.9 TF vs A100 SXM
#: (400 W) 271.2 TF gives 0.243 if that PCIe card is the 300 W one, 0.149 if the 250 W one (its
#: power is not stated); and H200 vs H100 at the same 700 W differ by 3.6 % in FP8, near the
#: whole 4.4 % gap κ rests on. A derived exponent, not a clock model. Used for the catalogue's
#: ``mamf_flop_per_s`` of parts with no measurement (TorchTitan's 500 W H100 from H100 SXM at
#: 700 W; GB300 from B300 at 1,100 W; tests check the data against :func:`mamf_at_power`) and
#: for ``cluster.overrides.power_limit_w``.
MAMF_POWER_EXPONENT = 0.237


def _eff_max_origin(r: dict, T: dict) -> str:
    """Where a row's GEMM eff_max comes from, for the explain string (``_terms``' own MAMF
    fraction and power-limit clock factor)."""
    own, clock = T["_mamf_own"], T["_clock"]
    fp8_for_fp4 = r.get("precision") == PRECISIONS.index("fp4") and own == r.get("mamf_frac_gemm") and (
        r.get("peak_flop_per_s", 0.0) > r.get("peak_16bit_flop_per_s", 0.0))
    fam = FAMILIES[int(r.get("accel_family", FAMILIES.index("other")))]
    low = r.get("precision") in (_FP8, _FP4)  # the FP8 / FP4 unit's tables (as _terms)
    C, K = _calibration(), _default_consts()  # the tables _terms ran with (no rebuild per explain)
    i_fam = FAMILIES.index(fam)
    scale = float(K.scale_tab[i_fam + K.n_fam * low])
    frac = C["mamf_frac"].get(fam, {}).get("fp8" if low else "16bit")
    fp4 = r.get("precision") == _FP4
    out = (f"the part's own {'FP8 ' if fp8_for_fp4 else ''}MAMF {own:.4g} of peak × the fitted scale {scale:.4g}"
           if own > 0 else (f"the family's {'FP8 ' if fp4 else ''}MAMF fraction {frac:.4g} × the fitted scale {scale:.4g}"
                            if frac is not None else f"the family's MAMF fraction × the fitted scale {scale:.4g}"))
    if clock < 1.0:
        out += (f" × power limit ({r['power_limit_w']:g} W / TDP {r['tdp_w']:g} W)^{MAMF_POWER_EXPONENT:g} = "
                f"× {clock:.4f}, the roofline ridge likewise")
    if low and fam in FP8_RATIO_FAMILIES and f"{fam}_fp8" not in C["gemm_eff_scale"]:
        out += (f"; the scale {scale:.4g} = the family's 16-bit scale {float(K.scale_tab[i_fam]):.4g} × Hopper's "
                f"FP8 / 16-bit ratio {fp8_scale_ratio():.3f}")
    return out


def mamf_at_power(mamf_ref_flop_per_s, power_ref_w, power_w):
    """MAMF of the same die at another power limit [FLOP/s]: ``MAMF_ref · (P / P_ref)^κ``,
    κ = :data:`MAMF_POWER_EXPONENT` (derivation there). Broadcasts; inputs > 0."""
    return np.asarray(mamf_ref_flop_per_s, dtype=np.float64) * (
        np.asarray(power_w, dtype=np.float64) / np.asarray(power_ref_w, dtype=np.float64)) ** MAMF_POWER_EXPONENT


_FP8 = PRECISIONS.index("fp8")
_FP4 = PRECISIONS.index("fp4")
_FP32 = PRECISIONS.index("fp32")
_TF32 = PRECISIONS.index("tf32")
_SCHED = {name: i for i, name in enumerate(SCHEDULES)}
_RC_OPSAC = RECOMPUTE.index("op_sac")


@lru_cache(maxsize=1)
def _calibration_file() -> dict:
    return json.loads(catalog.data_path("hardware", "calibration.json").read_text(encoding="utf-8"))


def load_calibration() -> dict:
    """Constants of ``hardware/calibration.json`` as ``{name: value}`` (a fresh copy)."""
    raw = _calibration_file()
    return {k: json.loads(json.dumps(v["value"])) for k, v in raw.items() if not k.startswith("_")}


@lru_cache(maxsize=1)
def _calibration() -> dict:
    """The default constants, loaded once (read-only: callers must not modify it)."""
    return load_calibration()


#: Families without a fitted FP8 scale whose FP8 GEMMs take their 16-bit scale times the Hopper
#: FP8 / 16-bit ratio (:func:`fp8_scale_ratio`): the NVIDIA family after Hopper, on the same
#: Transformer Engine FP8 recipes.
FP8_RATIO_FAMILIES = ("blackwell",)


def fp8_scale_ratio(C: dict | None = None) -> float:
    """FP8 / 16-bit ratio of the fitted GEMM-efficiency scales of the one family fitted at both
    (Hopper: ``gemm_eff_scale.hopper_fp8 / hopper_16bit`` = 0.82 / 0.91 = 0.90); 1 where the
    constants lack either.

    The FP8 scale is below the 16-bit one by what an FP8 step pays beyond its GEMMs' own MAMF
    (amax reductions, scaling-factor updates, the casts the model does not list) in NVIDIA's
    Transformer Engine recipes, which the calibration file's FP8 rows ran. The other NVIDIA
    family with an FP8 unit and no FP8 fit, Blackwell (same Transformer Engine recipes), takes its
    16-bit scale times this ratio (:data:`FP8_RATIO_FAMILIES`, review 19). Until 2026-12-02
    it ran FP8 (and FP4) GEMMs at its 16-bit scale: out of sample, Blackwell dense runs at
    <= 8k tokens were +4.8 % on average and 25 % at the 90th percentile, the FP4 runs +6.5 %
    (docs/timing.md, review 19). Other vendors' FP8 stacks (ROCm, Habana) were never measured
    against a 16-bit run here and keep their 16-bit scale (with the ratio the AMD runs, already
    8 % slow, went to 12 %)."""
    sc = (C if C is not None else _calibration())["gemm_eff_scale"]
    if "hopper_fp8" in sc and "hopper_16bit" in sc and sc["hopper_16bit"] > 0:
        return float(sc["hopper_fp8"] / sc["hopper_16bit"])
    return 1.0


def _family_scales(C: dict):
    """Per-family arrays (index = FAMILIES code) of the fitted GEMM-efficiency scale, 16-bit and
    FP8 (also FP4). A family without a fitted FP8 scale takes its 16-bit scale (fitted, else the
    ``default``), times :func:`fp8_scale_ratio` in :data:`FP8_RATIO_FAMILIES`."""
    sc = C["gemm_eff_scale"]
    s16 = np.array([sc.get(f"{fam}_16bit", sc["default"]) for fam in FAMILIES])
    r8 = fp8_scale_ratio(C)
    s8 = np.array([sc[f"{fam}_fp8"] if f"{fam}_fp8" in sc else s16[i] * (r8 if fam in FP8_RATIO_FAMILIES else 1.0)
                   for i, fam in enumerate(FAMILIES)])
    return s16, s8


def _family_tables(C: dict):
    """Per-family arrays (index = FAMILIES code) of eff_max for 16-bit and FP8 GEMMs."""
    mamf = C["mamf_frac"]
    s16, s8 = _family_scales(C)
    m16 = np.array([mamf.get(fam, mamf["other"])["16bit"] for fam in FAMILIES])
    m8 = np.array([mamf.get(fam, mamf["other"])["fp8"] for fam in FAMILIES])
    return np.minimum(m16 * s16, 1.0), np.minimum(m8 * s8, 1.0)


def gemm_efficiency(M, K, N, eff_max, peak_flop_per_s, hbm_bw_bytes_per_s, bytes_per_elem, ridge_mult):
    """Achieved fraction of peak of one ``M×K×N`` GEMM.

    ``eff = eff_max · I / (I + k·R)`` with arithmetic intensity
    ``I = 2·M·K·N / (bytes · (M·K + K·N + M·N))`` [FLOP/byte] and roofline ridge
    ``R = peak / hbm_bw`` (Williams et al. 2009); ``k`` = ``ridge_mult`` (fitted). A
    Calculon-style efficiency by op size; a simplification (no tile quantisation, no wave
    effects). Shapes broadcast; returns a fraction in (0, eff_max).
    """
    M, K, N = (np.maximum(np.asarray(x, dtype=np.float64), 1.0) for x in (M, K, N))
    intensity = 2.0 * M * K * N / (bytes_per_elem * (M * K + K * N + M * N))
    ridge = peak_flop_per_s / hbm_bw_bytes_per_s
    return eff_max * intensity / (intensity + ridge_mult * ridge)


def ep_overlap_possible(pp, schedule, n_micro, recompute, vpp=None) -> np.ndarray:
    """Where ``parallelism.ep_comm_overlap`` can hide the expert all-to-all (bool, broadcast shape
    of the inputs; ``schedule`` and ``recompute`` as batch codes, ``n_micro`` micro-batches per
    step per pipeline): one micro-batch's all-to-all runs beside another micro-batch's compute,
    so the step needs at least two micro-batches and a schedule that runs two at once — PP 1
    (Megatron-Core's combined 1F1B, ``--overlap-moe-expert-parallel-comm``), the interleaved
    schedule (Megatron-Bridge: "if PP > 1, set virtual_pipeline_model_parallel_size"), both
    without full recompute (Megatron-Core ``transformer_config.py``: "disable full recomputation
    when enabling overlap_moe_expert_parallel_comm"), or DualPipe (DeepSeek-V3 §3.2.1; DeepSeek's
    own schedule keeps the setting with any recompute). The engine and the sweep both apply it.

    ``vpp`` (optional, the virtual stages per rank): the interleaved schedule counts only with
    ``vpp > 1``. With one chunk it is 1F1B — Megatron's ``arguments.py`` sets a
    ``virtual_pipeline_model_parallel_size`` of 1 to None, and ``transformer_config.py`` then
    refuses the overlap at PP > 1 ("virtual_pipeline_model_parallel_size must be specified when
    pipeline_model_parallel_size > 1"); until review 17c an interleaved row with vpp = 1 hid the
    all-to-all that the same 1F1B row exposed. Without ``vpp`` every interleaved row counts (the
    sweep's interleaved candidates all have vpp >= 2)."""
    pp = np.asarray(pp)
    schedule = np.asarray(schedule)
    inter = schedule == _SCHED["interleaved"]
    if vpp is not None:
        inter = inter & (np.asarray(vpp) > 1)
    mcore = ((pp == 1) | inter) & (np.asarray(recompute) != RECOMPUTE.index("full"))
    return (mcore | (schedule == _SCHED["dualpipe"])) & (np.asarray(n_micro) >= 2)


def bubble_fraction(pp, m, vpp, schedule):
    """Pipeline bubble as a fraction of the ideal per-stage time (Narayanan et al. 2021 §2.2).

    1F1B and GPipe ``(p−1)/m``; interleaved 1F1B ``(p−1)/(v·m)``; zero-bubble
    ``ZERO_BUBBLE_RESIDUAL·(p−1)/m``, ZB-H1 with ``T_F = T_B = T_W`` and ``m ≥ p`` (the engine uses
    each stage's own passes and recompute: :func:`zero_bubble_fraction`). Shapes broadcast.
    DualPipe depends on the forward / backward split of a stage: :func:`dualpipe_bubble_fraction`.
    """
    p = np.asarray(pp, dtype=np.float64)
    m = np.asarray(m, dtype=np.float64)
    v = np.asarray(vpp, dtype=np.float64)
    sched = np.asarray(schedule)
    base = (p - 1.0) / m
    return np.where(sched == _SCHED["interleaved"], base / np.maximum(v, 1.0),
                    np.where(sched == _SCHED["zero_bubble"], ZERO_BUBBLE_RESIDUAL * base, base))


def dualpipe_bubble_fraction(pp, m, t_fwd_s, t_bwd_s, t_recompute_s=0.0):
    """DualPipe's bubble as a fraction of the step's compute ``m·(F + B)`` (DeepSeek-V3 technical
    report, arXiv:2412.19437, §3.2.1 and Table 2: ``(PP/2 − 1)(F&B + B − 3W)``).

    ``F`` / ``B``: forward / full backward time of one micro-batch on one stage [s], ``R`` the
    recomputed forward inside ``B`` (full recompute; 0 otherwise). The weight-gradient part
    ``W = (B − R)/2`` (backward = input-gradient + weight-gradient GEMMs of equal FLOPs) and
    ``F&B = F + B`` (two chunks' compute, their communication hidden), so the bubble is
    ``(PP/2 − 1)(F + B/2 + 3R/2)``. A simplification: the attention core's backward has no
    weight-gradient part, so W is a little smaller in practice. Shapes broadcast."""
    p = np.asarray(pp, dtype=np.float64)
    F = np.asarray(t_fwd_s, dtype=np.float64)
    B = np.asarray(t_bwd_s, dtype=np.float64)
    R = np.asarray(t_recompute_s, dtype=np.float64)
    return (np.maximum(p / 2.0 - 1.0, 0.0) * (F + 0.5 * B + 1.5 * R)
            / (np.asarray(m, dtype=np.float64) * np.maximum(F + B, 1e-30)))


def zero_bubble_fraction(pp, m, t_fwd_s, t_bwd_s, t_recompute_s=0.0):
    """ZB-H1's bubble as a fraction of the step's compute ``m·(F + B)`` (Qi et al., "Zero Bubble
    Pipeline Parallelism", ICLR'24 §3.1), with a critical-path floor for few micro-batches.

    ``F`` / ``B``: forward / full backward of one micro-batch on one stage [s], ``R`` the recomputed
    forward inside ``B`` (full recompute; 0 otherwise). The backward splits into the input gradient
    ``B − W`` (with ``R``) and the weight gradient ``W = (B − R)/2`` (equal GEMM FLOPs, as
    :func:`dualpipe_bubble_fraction`), so ZB-H1's ``(p−1)(T_F + T_B − T_W)`` is ``(p−1)(F + R)``:
    a third of 1F1B's ``(p−1)(F + B)`` at ``B = 2F`` without recompute, a half with full recompute
    (review 48a: a fixed third was charged under recompute too). ZB-H1 assumes ``m ≥ p``; below it
    no schedule beats this critical path: the last stage starts after ``(p−1)F``, runs its ``m``
    forwards and ``m`` input-gradient passes ``B' = B − W``, and the last of those passes still runs
    down the other ``p − 1`` stages before stage 0's last weight pass, so the step is at least
    ``(m + p − 1)(F + B') + W`` and the bubble at least ``(p−1)(F + B − W) − (m−1)W``, which at
    ``m = p`` is ZB-H1's own ``(p−1)(F + B' − W)`` (review 48a: at m = 1, p = 4 a third of 1F1B's
    bubble was half that bound; the new-user review then found the first floor, ``(p−1)F + (p−m)B −
    (p−1)W``, 79 ms short at p = 4, m = 2 on the default preset: it let the last stage's passes
    overlap). Returns ``max`` of the two over ``m·(F + B)``. The attention core's backward has no
    weight-gradient part, so W is a little smaller in practice (a simplification). Shapes
    broadcast."""
    p = np.asarray(pp, dtype=np.float64)
    m = np.asarray(m, dtype=np.float64)
    F = np.asarray(t_fwd_s, dtype=np.float64)
    B = np.asarray(t_bwd_s, dtype=np.float64)
    R = np.asarray(t_recompute_s, dtype=np.float64)
    W = 0.5 * (B - R)
    k = np.maximum(p - 1.0, 0.0)
    bubble = np.maximum(k * (F + R), k * (F + B - W) - np.maximum(m - 1.0, 0.0) * W)
    return np.maximum(bubble, 0.0) / (m * np.maximum(F + B, 1e-30))


def dualpipe_middle_extra_stages(r_hi, pp):
    """Stages with the extra layer of an uneven split held by DualPipe's most loaded middle rank.

    DualPipe rank ``j`` holds stages ``j`` and ``p−1−j`` (DeepSeek-V3 technical report,
    arXiv:2412.19437, §3.2.1, Fig. 5); an uneven split gives the first ``r = L mod p`` stages
    (0 … r−1) one layer more. A middle rank (``1 ≤ j ≤ p−2``) holds two such stages when
    ``j ≤ r−1`` and ``p−1−j ≤ r−1`` for some ``j``, i.e. ``r ≥ p/2 + 1``; one when ``r ≥ 2``
    (rank 1's stage 1); else none. Returns 2, 1 or 0 (float arrays; shapes broadcast).
    """
    r = np.asarray(r_hi, dtype=np.float64)
    p = np.asarray(pp, dtype=np.float64)
    return np.where(r >= 0.5 * p + 1.0, 2.0, np.where(r >= 2.0, 1.0, 0.0))


def tp_bytes_per_layer(mb, seq_len, hidden, cp=1):
    """Bytes of one TP all-reduce (or RS + AG pair) per layer per micro-batch:
    ``b·(s/c)·h`` 16-bit values (Shoeybi et al. 2019 §3)."""
    return BYTES_16 * np.asarray(mb, dtype=np.float64) * np.asarray(seq_len, dtype=np.float64) / np.asarray(cp, dtype=np.float64) * np.asarray(hidden, dtype=np.float64)


#: Columns :func:`_terms` reads (explain builds a one-row batch of these only).
_TERM_INPUTS: tuple[str, ...] = (
    "tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch_size", "global_batch_size", "seq_len",
    "hidden_size", "n_layers", "n_heads", "n_kv_heads", "head_dim", "v_head_dim", "ffn_hidden_size",
    "vocab_size", "gated_mlp", "n_experts", "moe_top_k", "expert_ffn_hidden_size", "n_shared_experts",
    "shared_expert_ffn_hidden_size", "moe_capacity_factor", "precision", "accel_family", "recompute",
    "flash_attention", "attention_kernel", "sequence_parallel", "zero_stage", "schedule", "peak_flop_per_s",
    "peak_16bit_flop_per_s", "hbm_bw_bytes_per_s", "nvlink_domain_size", "scaleup_bw_bytes_per_s",
    "nic_bw_per_gpu_bytes_per_s", "in_network_reduction", "scaleup_mesh_links", "params_attention", "n_moe_layers",
    "params_total", "params_embedding", "params_expert", "grad_bytes", "tp_comm_overlap", "dp_comm_overlap", "ep_comm_overlap",
    "ep_dispatch_fp8", "ep_node_dispatch", "moe_max_nodes_per_token", "offload_optimizer", "sliding_window", "swa_layer_frac",
    "host_link_bw_bytes_per_s", "host_memory_bw_bytes_per_s", "gpus_per_node",
    "local_nvme_read_bw_bytes_per_s", "local_nvme_write_bw_bytes_per_s", "offload_activations",
    "act_offload_traffic_bytes", "offload_master_weights", "n_gpus", "model_flop_per_step", "hardware_flop_per_step",
    "mla", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "attn_dhead_knee",
    "mamf_frac_16bit", "mamf_frac_gemm", "power_limit_w", "tdp_w", "elem_eager", "fp8_rowwise", "layernorm", "rope",
    "dropout", "recompute_layers", "dp_shard", "mtp_layers", "etp", "fp8_attention", "peak_fp8_flop_per_s",
)


#: Per thread (the app serves sessions from threads): (inputs of the last one-row stage() call, its
#: terms), which explain() of that row reuses. Found by review: a module-level cache let one
#: session's explain read another's terms; and recompute_layers / dp_shard were missing from
#: _TERM_INPUTS, so a row rebuilt after a miss was costed without them (tests/test_timing.py
#: checks the list against the columns _terms reads).
_LAST = threading.local()


class _Consts:
    """Scalars and per-code tables derived once from a calibration dict."""

    def __init__(self, C: dict):
        e16, e8 = _family_tables(C)
        nf = len(FAMILIES)
        #: eff_max by ``family + n_families · low_precision_unit`` (16-bit table, then FP8/FP4).
        self.eff_gemm_tab = np.concatenate([e16, e8])
        self.eff16_tab = e16
        #: fitted scales by ``family`` (16-bit) and ``family + n_families`` (FP8/FP4): a part's own
        #: MAMF fraction (``mamf_frac_*`` columns) is multiplied by them in place of the family's
        s16, s8 = _family_scales(C)
        self.scale_tab = np.concatenate([s16, s8])
        self.attn_eff_rel = C["attn_eff_rel"]
        self.n_fam = nf
        self.attn_max_tab = np.minimum(C["attn_eff_rel"] * e16, 1.0)
        #: FP8 attention core (training.fp8_attention): the family's FP8 / 16-bit GEMM ceiling ratio
        #: (e8 / e16), by ``family``, on the 16-bit attention ceiling
        self.fp8_attn_ratio_tab = e8 / np.maximum(e16, 1e-300)
        self.knee_tab = np.array([ATTN_DHEAD_KNEE.get(fam, ATTN_DHEAD_KNEE_DEFAULT) for fam in FAMILIES])
        self.query_overhead_tab = np.array([ATTN_QUERY_OVERHEAD_KEYS.get(fam, 0.0) for fam in FAMILIES])
        #: FlashAttention-2-class kernels (FLASH2_PEAK_UTIL): the d_h-free part of the factor on
        #: the native Hopper kernels, and by ``family`` whether a row takes it
        amp, hop = FAMILIES.index("ampere"), FAMILIES.index("hopper")
        self.fa2_factor = float(e16[amp] / e16[hop] * FLASH2_PEAK_UTIL["hopper"] / FLASH2_PEAK_UTIL["ampere"])
        self.fa2_applies = np.array([fam in FLASH2_FAMILIES for fam in FAMILIES])
        # Bytes per GEMM element by ``precision + n_precisions · low_precision_unit``: 16-bit
        # (4 for FP32) without an FP8/FP4 unit; 1 (FP8) or 0.5 (FP4) with one.
        npr = len(PRECISIONS)
        bpe = np.full(2 * npr, 2.0)
        bpe[_FP32] = 4.0
        bpe[_TF32] = 4.0  # TF32 tensor cores read fp32 operands (found by review with the 4-byte activations)
        bpe[npr:] = 1.0
        bpe[npr + _FP4] = 0.5
        self.bpe_tab = bpe
        self.n_prec = npr
        self.hbm_eff = C["hbm_eff"]
        self.kk = C["gemm_ridge_mult"]
        self.eff_scaleup = C["link_eff"]["scaleup"]
        self.eff_network = C["link_eff"]["network"]
        self.eff_host = C["link_eff"]["host"]  # device↔host (PCIe / NVLink-C2C); checkpoint.host_copy_bw too
        self.alpha_scaleup_s = C["alpha_s"]["scaleup"]
        self.alpha_network_s = C["alpha_s"]["network"]
        self.tp_overlap_frac = C["tp_overlap_frac"]
        self.dp_overlap_frac = C["dp_overlap_frac"]


@lru_cache(maxsize=1)
def _default_consts() -> _Consts:
    return _Consts(_calibration())


def _consts(C: dict | None) -> _Consts:
    return _default_consts() if C is None else _Consts(C)


def _flash2_factor(K: _Consts, d_head):
    """Factor on the native Hopper attention efficiency for FlashAttention-2-class kernels:
    ``fa2_factor · (d'/(d' + FLASH2_DHEAD_KNEE)) / (d/(d + 64))``, d' = min(d, FLASH2_DHEAD_CAP)
    (:data:`FLASH2_PEAK_UTIL`); Blackwell rows take the same factor on their own native kernels.
    ``d_head`` scalar or (N,)."""
    dc = np.minimum(d_head, FLASH2_DHEAD_CAP)
    return K.fa2_factor * dc / (dc + FLASH2_DHEAD_KNEE) * (d_head + ATTN_DHEAD_KNEE["hopper"]) / d_head


def flash2_speed_ratio(family: str, d_head: float, C: dict | None = None) -> float:
    """Attention-core speed of FlashAttention-2-class kernels over the native ones, one family.

    Hopper and Blackwell (:data:`FLASH2_FAMILIES`): ``(eff_max(ampere)/eff_max(hopper)) ·
    (U_hopper/U_ampere) · (d'/(d' + FLASH2_DHEAD_KNEE)) / (d_h/(d_h + 64))``, d' = min(d_h,
    FLASH2_DHEAD_CAP) (:data:`FLASH2_PEAK_UTIL`); 1 for the others. ``d_head`` in elements (> 0);
    ``C`` a calibration dict (default: the fitted one). For notes and tests; :func:`stage`
    computes the same per row.
    """
    if family not in FLASH2_FAMILIES:
        return 1.0
    return float(_flash2_factor(_consts(C), float(d_head)))


def _blend(cond, x, y):
    """``np.where(cond, x, y)`` for finite arrays ``x``, ``y`` (N,) as ``x·cond + y·(1−cond)``:
    exact (a product with 1 or 0 and a sum with 0 round nothing), and a select on rows that
    vary at random costs several times these three passes. Uniform ``cond`` returns x or y."""
    if cond.all():
        return x
    if not cond.any():
        return y
    return x * cond + y * ~cond


def _terms(b: Batch, C: dict | None = None, detail: bool = True) -> dict[str, np.ndarray]:
    """Every intermediate term (per GPU of the slowest pipeline stage); see module docstring.

    ``C`` = calibration constants (None: ``hardware/calibration.json``). ``detail=False``
    leaves out the terms only :func:`explain` shows. Written to keep the number of array
    passes low (the engine's throughput target): shared factors are computed once and
    row-dependent selects are arithmetic (``x·cond``) where both sides are finite; every
    formula is the one the module docstring states.
    """
    K = _consts(C)
    n_rows = len(b["tp"])
    f = lambda k: _col(b, k, np.float64)  # noqa: E731
    g = lambda k: _col(b, k)  # noqa: E731  (integer codes)
    fl = lambda k: _col(b, k, np.bool_)  # noqa: E731  (flags)
    t, p, d, c, e = f("tp"), f("pp"), f("dp"), f("cp"), f("ep")
    mb, B, s = f("micro_batch_size"), f("global_batch_size"), f("seq_len")
    h, L, a = f("hidden_size"), f("n_layers"), f("n_heads")
    dqk, dv, ffn, V = f("head_dim"), f("v_head_dim"), f("ffn_hidden_size"), f("vocab_size")
    gated = fl("gated_mlp")
    prec = g("precision")
    fam = g("accel_family")
    rc = g("recompute")
    full = rc == 2
    rec_any = full | (rc == 1)  # full or selective: the attention core runs forward again
    partial = None
    if "recompute_layers" in b and any_true(np.asarray(b["recompute_layers"]) > 0):
        # full recompute of N layers per pipeline chunk: that share of the layers runs forward again
        # (the average over the stages here; the first and last stages' own shares below)
        partial = full & (f("recompute_layers") > 0)
        full = full * model_stats.full_recompute_fraction(f("recompute_layers"), L, f("pp"), f("vpp"), full)
        rec_any = full + (rc == 1)
    opsac = rc == _RC_OPSAC  # TorchTitan per-op SAC: some matmuls + all elementwise run forward again
    any_opsac = any_true(opsac)
    flash = fl("flash_attention")
    sp = fl("sequence_parallel") & (t > 1.0)
    zero = g("zero_stage")
    sched = g("schedule")
    inter = sched == _SCHED["interleaved"]
    # Virtual stages: vpp with the interleaved schedule, else 1 (integers: exact).
    v = 1.0 + (f("vpp") - 1.0) * inter
    peak = f("peak_flop_per_s")
    peak16 = f("peak_16bit_flop_per_s")
    # The attention core, the materialised scores and the router run at the 16-bit tensor peak
    # under FP8 / FP4 (not converted) and at the precision's own peak in fp32 / tf32 (found by
    # review: at the 16-bit peak an fp32 MPT-7B at seq 65,536 reached 2.31 × its fp32 peak).
    peak_core = np.minimum(peak16, f("peak_flop_per_s"))
    hbm_raw = f("hbm_bw_bytes_per_s")
    hbm_bw = hbm_raw * K.hbm_eff
    inv_hbm = 1.0 / hbm_bw
    # A job no larger than one NVLink domain sits inside it; a larger one fills each domain
    # in power-of-two blocks of nodes (64 of an NVL72 rack's 72 GPUs): comm.placement_domain.
    n_gpus = f("n_gpus")  # the job: how many group blocks it holds (comm.group_layout)
    dom = comm.placement_domain(f("nvlink_domain_size"), f("gpus_per_node"), n_gpus)
    nvl_e = f("scaleup_bw_bytes_per_s") * K.eff_scaleup
    # full-mesh scale-up fabrics (MI300X / Gaudi / GH200 quad): a group uses only its own g − 1
    # links of the domain's D − 1 (planner.comm.mesh_share); None where every row is switched
    mesh = (f("scaleup_mesh_links") if "scaleup_mesh_links" in b and any_true(np.asarray(b["scaleup_mesh_links"]) > 0)
            else None)
    nic_e = f("nic_bw_per_gpu_bytes_per_s") * K.eff_network
    a_s, a_n = K.alpha_scaleup_s, K.alpha_network_s
    inr = fl("in_network_reduction")
    any_moe = bool(np.asarray(b["n_experts"]).any())  # batch-level shortcut: skips dead work
    # Expert tensor parallelism (parallelism.etp; the column is optional, absent = tp): etp_diff when a
    # MoE row of the batch has etp ≠ tp. Every term below takes the etp = tp path (the formulas and
    # operations as before) unless it does, so a batch without such a row is costed bit for bit as
    # without the column.
    et = t
    etp_diff = False
    if any_moe and "etp" in b:
        et_col = f("etp")
        if any_true(et_col != t):
            et, etp_diff = et_col, True

    # GEMM eff_max and bytes per element: the FP8/FP4 unit when the row asks for it (the schema
    # refuses a precision the part has no peak for, so the unit exists), else 16-bit (table
    # lookups by code). Until 2026-11-30 the unit was taken only where its peak exceeded the
    # 16-bit one, so Gaudi 3 (FP8 = BF16 = 1,835 TFLOP/s) ran FP8 as BF16 — 2-byte operands, no
    # row-wise casts — and 2 % more FP8 peak made its row-wise FP8 step 9 % slower (found by a
    # property test).
    lowhp = (prec == _FP8) | (prec == _FP4)
    eff16 = K.eff16_tab[fam]
    eff_gemm_max = K.eff_gemm_tab[fam + K.n_fam * lowhp]
    attn_max = K.attn_max_tab[fam]
    own_hp = 0.0  # the part's own MAMF fraction in use (0: the family's), for explain
    # A part with its own MAMF (measured, or derived by the power rule: MAMF_POWER_EXPONENT)
    # replaces the family's fraction, times the same fitted scale. The roofline ridge moves with
    # it (R = peak · own eff_max / family eff_max / HBM bw, as the power rule's clock moves it
    # below): the MAMF measures large, compute-bound GEMMs, so memory-bound GEMMs keep the
    # family's speed per HBM byte. Until 2026-12-01 R stayed at peak / HBM bw, so a part's own
    # MAMF below its family's slowed its memory-bound GEMMs (GB200 6 %, MI300X 17 %), the
    # H100 with a MAMF derived by the power rule at 490 W ran 0.5 % slower than the same H100 at a
    # 490 W power limit (Llama 3 8B on 64 H100), and more peak at the same MAMF slowed a step
    # (GB200, 4 × peak: +22 %; found by a property test, review 14b).
    ridge16 = ridge_g = 1.0  # R's factor for the 16-bit and the GEMM-precision ceilings
    if "mamf_frac_16bit" in b:
        own16, own_g = f("mamf_frac_16bit"), f("mamf_frac_gemm")
        if any_true(own16 > 0) or any_true(own_g > 0):
            fam16, fam_g = eff16, eff_gemm_max
            eff16 = np.where(own16 > 0, np.minimum(own16 * K.scale_tab[fam], 1.0), eff16)
            attn_max = np.where(own16 > 0, np.minimum(K.attn_eff_rel * eff16, 1.0), attn_max)
            own_hp = np.where(lowhp, own_g, own16)
            eff_gemm_max = np.where(own_hp > 0, np.minimum(own_hp * K.scale_tab[fam + K.n_fam * lowhp], 1.0),
                                    eff_gemm_max)
            ridge16, ridge_g = eff16 / fam16, eff_gemm_max / fam_g
    # A power limit below the TDP (cluster.overrides.power_limit_w): the power rule on every
    # tensor-core ceiling (GEMMs and the attention core) and on the roofline ridge (peak·clock /
    # HBM bw), so memory-bound GEMMs and HBM-bound work keep their speed.
    clock = 1.0
    if "power_limit_w" in b:
        plim, tdp = f("power_limit_w"), f("tdp_w")
        if any_true(plim < tdp):
            clock = np.where(plim < tdp, (plim / tdp) ** MAMF_POWER_EXPONENT, 1.0)
            eff16, eff_gemm_max, attn_max = eff16 * clock, eff_gemm_max * clock, attn_max * clock
    bpe = K.bpe_tab[prec + K.n_prec * lowhp]
    # FP8 attention core (training.fp8_attention): where the row asks for it and it can run — an
    # FP8 / FP4 run (Transformer Engine's FP8 attention needs its FP8 recipe), FP8 units faster than
    # the 16-bit ones on a family it is modelled for (FP8_ATTENTION_FAMILIES) and the native flash
    # kernels (FlashAttention-2 has no FP8 path); the flash core only.
    # Rows without it keep the 16-bit core, operation for operation.
    fp8_attn = False
    if "fp8_attention" in b and any_true(np.asarray(b["fp8_attention"])):
        pk8 = f("peak_fp8_flop_per_s")
        fp8_attn = _fp8_attention_possible(fl("fp8_attention"), prec, pk8, peak16, g("attention_kernel"), fam)
        if not fp8_attn.any():
            fp8_attn = False

    m = B / (mb * d)  # micro-batches per step per pipeline
    # ep_comm_overlap hides one micro-batch's expert all-to-all behind another's compute, so it
    # needs a schedule that runs two at once — no pipeline (Megatron-Core's combined 1F1B), the
    # interleaved schedule (Megatron-Bridge: "if PP > 1, set VPP") without full recompute
    # (Megatron-Core's transformer_config.py refuses it), or DualPipe — and at least two
    # micro-batches: ep_overlap_possible. Elsewhere it is off, with a note (until 2026-12-01 the
    # engine hid it on any schedule while the sweep turned it off: a Mixtral plain-1F1B PP 4 row
    # read 3.08 s in Explore and 2.98 s on the Plan page, review 14j).
    eco = fl("ep_comm_overlap") & ep_overlap_possible(p, sched, m, rc, v) if "ep_comm_overlap" in b else False
    s_c = s / c
    tok = mb * s_c  # tokens of one micro-batch on one CP rank (GEMM M dimension)

    # GEMM time = flop / (peak · eff), eff = eff_max · I/(I + k·R), I = 2/(bytes·(1/M+1/K+1/N)):
    # flop · (1 + q·(1/M + 1/K + 1/N)) / (peak · eff_max), q = k·R·bytes/2 (gemm_efficiency).
    # Every layer GEMM has M = tokens and h as K or N, and flop/X = 2·M·h for its third
    # dimension X, so  t = (flop·(1 + q·(1/M + 1/h)) + q·2·M·h) / (peak · eff_max).
    inv_pe = 1.0 / (peak * eff_gemm_max)
    q = (0.5 * K.kk) * (peak * clock * ridge_g / hbm_raw) * bpe
    inv_h = 1.0 / h
    W = 2.0 * tok * h  # 2·M·h; also the bytes of one b·s·h 16-bit activation (BYTES_16 = 2)
    qW = q * W
    Wt = 2.0 * tok / t  # flop / (parameters of the layer) on one TP rank
    qu1 = 1.0 + q * (1.0 / tok + inv_h)

    # --- one forward pass of one layer, one micro-batch, per GPU ------------------------
    o_params = a * dv * h
    attn_params = f("params_attention")
    proj_params = np.maximum(attn_params - o_params, 0.0) + o_params  # QKV + O
    t_attn_proj = (Wt * proj_params * qu1 + 2.0 * qW) * inv_pe
    up1 = 2.0 + gated  # up (1 or 2 matrices) + down
    t_mlp_dense = (Wt * h * (up1 * ffn) * qu1 + 2.0 * qW) * inv_pe

    if any_moe:
        E, topk = f("n_experts"), f("moe_top_k")
        fe, n_sh, f_sh = f("expert_ffn_hidden_size"), f("n_shared_experts"), f("shared_expert_ffn_hidden_size")
        cf = np.maximum(f("moe_capacity_factor"), 1.0)
        is_moe = E > 0

        def mlp_t(tokens, fh):  # up + down GEMMs of tokens × h × fh on one TP rank
            return (2.0 * tokens * h * (up1 * fh) / t * (1.0 + q * (1.0 / tokens + inv_h))
                    + 4.0 * q * tokens * h) * inv_pe

        # Tokens reaching one local expert: tok·top_k·ep/E (balanced) times the imbalance factor.
        # Expert TP ≠ TP (etp_diff): tok·top_k·ep·(etp/tp)/E tokens per local expert and micro-batch
        # (each rank dispatches its s/(c·t) sequence-parallel tokens; the all-to-all over ep and the
        # all-gather over the etp ranks bring etp·ep of those shares to a rank), in GEMMs M × h ×
        # fe/etp: the FLOPs per GPU of etp = tp, in GEMMs tp/etp times taller and narrower
        # (Megatron-Core MoEAlltoAllTokenDispatcher: permute → A2A(EP) → AG(expert TP) → experts →
        # RS(expert TP) → A2A(EP) → unpermute).
        if etp_diff:
            tok_expert = np.where(is_moe, tok * topk * e * (et / t) / np.maximum(E, 1.0), 1.0)

            def mlp_e(tokens, fh):  # up + down GEMMs of tokens × h × fh on one expert-TP rank
                return (2.0 * tokens * h * (up1 * fh) / et * (1.0 + q * (1.0 / tokens + inv_h))
                        + 4.0 * q * tokens * h) * inv_pe
        else:
            tok_expert = np.where(is_moe, tok * topk * e / np.maximum(E, 1.0), 1.0)
            mlp_e = mlp_t
        n_local_experts = np.where(is_moe, E / e, 0.0)
        t_experts = np.where(is_moe, n_local_experts * mlp_e(tok_expert, np.maximum(fe, 1.0)) * cf, 0.0)
        t_shared = np.where(is_moe & (n_sh > 0), n_sh * mlp_t(tok, np.maximum(f_sh, 1.0)), 0.0)
        t_router = np.where(is_moe, 2.0 * tok * h * E / (peak_core * eff16), 0.0)
        t_mlp_moe = t_experts + t_shared + t_router
        # Routed experts' host time per layer and micro-batch, fwd + bwd (not a GEMM pass).
        t_moe_host = n_local_experts * MOE_HOST_S_PER_LOCAL_EXPERT
    else:
        t_mlp_moe = t_moe_host = 0.0

    # Attention core, one forward (full-count FLOPs 2·tok·keys·a·(dqk+dv)/t per CP rank; keys =
    # s, or fewer with sliding-window layers: model_stats.attention_keys).
    if "sliding_window" in b and any_true(np.asarray(b["sliding_window"]) > 0):
        keys, keys_causal = model_stats.attention_keys(s, f("sliding_window"), f("swa_layer_frac"))
        causal_frac = keys_causal / keys
    else:
        keys, causal_frac = s, CAUSAL_WORK_FRAC
    attn_full_flop = Wt * keys * a * (dqk + dv)

    # the row's head-dim knee at the 16-bit peak (exp vs matmul throughput): the family's, or the
    # accelerator's own where the catalogue gives one
    knee16 = K.knee_tab[fam]
    if "attn_dhead_knee" in b and flash.any():
        own = f("attn_dhead_knee")
        if any_true(own > 0):
            knee16 = np.where(own > 0, own, knee16)

    def core_flash_at(peak_a, a_max):
        """Forward time of the flash core at the matmul peak ``peak_a`` and ceiling ``a_max``."""
        # The knee is exp throughput against the 16-bit matmul peak; a core at a lower peak (fp32
        # / tf32, peak_core < peak16) waits on the exp units proportionally less: knee ×
        # peak_core / peak16 (until review 17c the 16-bit knee, so flash in fp32 could be slower
        # than materialised scores: Llama 2 7B on H100), a core at the FP8 peak more.
        knee = knee16 * (peak_a / np.maximum(peak16, 1.0))
        eff_attn = a_max * dqk / (dqk + knee)
        fa2_rows = (g("attention_kernel") == _FLASH2) & K.fa2_applies[fam]
        if any_true(fa2_rows):  # FlashAttention-2-class kernels: FLASH2_PEAK_UTIL, FLASH2_DHEAD_KNEE
            eff_attn = np.where(fa2_rows, eff_attn * _flash2_factor(K, dqk), eff_attn)
        cq = K.query_overhead_tab[fam]
        if any_true(cq > 0):  # per-query overhead (ATTN_QUERY_OVERHEAD_KEYS), per CP hop of k/cp keys,
            # held at the tables' shortest length below it (ATTN_QUERY_OVERHEAD_MIN_KEYS)
            k_hop = np.maximum(keys * causal_frac / c, ATTN_QUERY_OVERHEAD_MIN_KEYS)
            eff_attn = eff_attn * k_hop / (k_hop + cq)
        return causal_frac * attn_full_flop / (peak_a * eff_attn)

    def core_flash():
        """(forward time, backward / forward time) of the flash core."""
        t16 = core_flash_at(peak_core, attn_max)
        # one exp per score element in each pass, at the 16-bit core's knee (× its peak / the
        # 16-bit peak, as the forward). FlashAttention-2-class kernels take the native knee's
        # ratio: the exp units are the part's, and FA2's head-dim curve on Hopper (knee 32 in
        # _flash2_factor) is a fit to its forward speed, not an exp count (a stated
        # simplification; docs/timing.md, session 37)
        r16 = flash_bwd_over_fwd(dqk, knee16 * (peak_core / np.maximum(peak16, 1.0)))
        if fp8_attn is False:
            return t16, r16
        # FP8 attention: QKᵀ and PV at the FP8 peak, at the 16-bit attention ceiling times the
        # family's FP8 / 16-bit GEMM ceiling ratio (as FP8 GEMMs reach less of their peak); the exp
        # units are the 16-bit core's, so the knee doubles with the peak. The faster of the two
        # cores: nobody keeps a setting that slows the core (review 36: a small head dim under a
        # large knee, or a part whose FP8 peak barely passes its 16-bit one, can make FP8 slower)
        # (rows without it: the 16-bit inputs, so no row divides by a missing FP8 peak)
        # The FP8 core keeps the 16-bit core's backward / forward ratio (session 37): cuDNN's FP8
        # backward gains less over BF16 than its forward does (GB200, cuDNN 9.26, causal, d_h 128:
        # backward 0.92–1.39×, forward 1.22–1.36× at 2K–32K; flash_bwd_over_fwd's sources), so one
        # factor, the forward's, speeds up both passes, as in session 36.
        t8 = core_flash_at(np.where(fp8_attn, pk8, peak_core),
                           np.where(fp8_attn, np.minimum(attn_max * K.fp8_attn_ratio_tab[fam], 1.0), attn_max))
        return np.where(fp8_attn, np.minimum(t16, t8), t16), r16

    def core_materialised():  # the full s × s scores, computed then masked (a window saves nothing)
        x_core = gemm_efficiency(s_c, dqk, s, eff16, peak_core * clock * ridge16, hbm_raw, 2.0, K.kk)
        score_elems = mb * (a / t) * s_c * s
        score_bytes = SCORE_BYTES_SOFTMAX_FWD + SCORE_BYTES_DROPOUT_FWD * (f("dropout") > 0.0) if "dropout" in b \
            else SCORE_BYTES_FWD
        return Wt * s * a * (dqk + dv) / (peak_core * x_core) + score_bytes * score_elems * inv_hbm

    # r_flash: the flash core's backward / forward time (flash_bwd_over_fwd), per row; t_mat the
    # materialised core where it was computed (the bound below reuses it)
    t_mat = None
    if flash.all():
        t_core, r_flash = core_flash()
    elif not flash.any():
        t_core, r_flash = core_materialised(), FLASH_BWD_OVER_FWD  # (r_flash unused: no flash row)
    else:
        t_fl, r_flash = core_flash()
        t_mat = core_materialised()
        t_core = np.where(flash, t_fl, t_mat)
    # The per-query overhead on top of Blackwell's exp knee or the FlashAttention-2 factor can put
    # the flash core above materialised scores at a few hundred keys per query, and a core below
    # the 16-bit peak (fp32 / tf32, its backward near 2.5 × with the exp units scaled away) above
    # them on long sequences, which no kernel table shows: on those rows (per row, so a row's core
    # does not depend on its batch: review 20d), where the flash core's compute over a step, fwd +
    # r bwd (+ ρ recomputed fwd), would exceed the materialised scores' fwd + 2 bwd (+ ρ), the core
    # is costed as theirs, forward and backward — so flash is never slower, and a bounded row's
    # attention does not move with the knee (a step never shortens as the exp units slow: review 37).
    # r is the row's flash_bwd_over_fwd, ρ = 1 with full or selective recompute, else 0; with
    # partial recompute (a stage's share between 0 and 1) the row is bounded if either end exceeds.
    # Review 17c's invariant (3/3.5 × the materialised forward, r = 2.5 on every part, on the
    # overhead rows only, until session 37; review 37 found fp32 on A100 — no overhead, r 2.48 —
    # 0.3 % slower with flash than without).
    may_lose = flash & ((K.query_overhead_tab[fam] > 0) | (peak_core < peak16))
    if any_true(may_lose):
        if t_mat is None:
            t_mat = core_materialised()
        rho_b = ((rc == 1) | (rc == 2)).astype(float)  # the attention core's forward runs again
        over = t_core * (1.0 + r_flash + rho_b) > t_mat * (1.0 + BWD_OVER_FWD + rho_b)
        if partial is not None:  # either end of the stage's recomputed share
            over = over | (partial & (t_core * (1.0 + r_flash) > t_mat * (1.0 + BWD_OVER_FWD)))
        core_bounded = may_lose & over
        t_core = np.where(core_bounded, t_mat, t_core)
        r_flash = np.where(core_bounded, BWD_OVER_FWD, r_flash)
    else:
        core_bounded = False

    # Elementwise, one forward: h-sized ops sharded by TP only with SP (t is an integer).
    tok_ihbm = tok * inv_hbm
    sp_shard = 1.0 + (t - 1.0) * sp  # h-sized ops are split over TP ranks only with SP
    t_elem_h = ELEMWISE_H_BYTES_FWD * h * tok_ihbm / sp_shard
    act_b = ACT_BYTES_PLAIN_FWD + (ACT_BYTES_GATED_FWD - ACT_BYTES_PLAIN_FWD) * gated
    if "elem_eager" in b and any_true(b["elem_eager"]):
        # eager PyTorch (the RMSNORM / ROPE / ACT_..._EAGER constants above): two RMSNorms of 36 B
        # instead of 4 per hidden element, SwiGLU 10 B instead of 6 per FFN element, and RoPE
        eg = fl("elem_eager")
        rms = eg & ~fl("layernorm")
        t_elem_h = t_elem_h + rms * (2.0 * (RMSNORM_BYTES_EAGER_FWD - RMSNORM_BYTES_FUSED_FWD)) * h * tok_ihbm / sp_shard
        # RoPE per TP rank: a/t query heads and max(k, t)/t KV heads (replicated when k < t); MLA: the
        # rope part of a/t query heads and the one shared rope key on every rank; MLA's two
        # latent RMSNorms (q_lora_rank + kv_lora_rank wide, on every rank), which the fused count
        # leaves out (4 B per element, small), at their full eager 36 B
        mla_ = fl("mla")
        rope_elems = np.where(mla_, (a / t + 1.0) * f("qk_rope_head_dim"),
                              (a + np.maximum(f("n_kv_heads"), t)) / t * dqk)
        rope = eg & fl("rope")
        t_elem_h = t_elem_h + rope * ROPE_BYTES_EAGER_FWD * rope_elems * tok_ihbm
        t_elem_h = t_elem_h + (rms & mla_) * RMSNORM_BYTES_EAGER_FWD * (
            f("q_lora_rank") + f("kv_lora_rank")) * tok_ihbm
        act_b = act_b + (eg & gated) * (ACT_BYTES_GATED_EAGER_FWD - ACT_BYTES_GATED_FWD)
    t_elem_dense = t_elem_h + act_b * ffn / t * tok_ihbm
    if any_moe:
        t_elem_moe = t_elem_h + act_b * (tok * topk * cf * fe + n_sh * tok * f_sh) / t * inv_hbm
    else:
        t_elem_moe = 0.0

    # Passes: GEMMs and elementwise fwd + bwd (+1 fwd with full recompute); attention core
    # fwd + bwd (+1 fwd with full or selective recompute). op_sac (TorchTitan per-op SAC,
    # model_stats.op_sac_recompute_params): K and, without TP, O (share r_attn of the attention
    # projections' time) and W3 (1/3 of a gated MLP's) run forward again, and so does every
    # elementwise op; the attention core is saved (with flash attention).
    gp = (1.0 + BWD_OVER_FWD) + full
    # the attention core's backward: flash_bwd_over_fwd(d_h, knee) with flash, 2 without
    attn_bwd = np.where(flash, r_flash, BWD_OVER_FWD)
    ap = 1.0 + attn_bwd + rec_any
    ep_ = gp if ELEMWISE_BWD_OVER_FWD == BWD_OVER_FWD else (1.0 + ELEMWISE_BWD_OVER_FWD) + full
    gemm_dense = t_attn_proj + t_mlp_dense
    core_elem_fwd = t_core + t_elem_dense
    layer_fwd = gemm_dense + core_elem_fwd
    layer_mb = gp * gemm_dense + ap * t_core + ep_ * t_elem_dense
    if any_opsac:
        ko_params = model_stats.op_sac_recompute_params(  # the attention part: K (and O)
            h, f("n_kv_heads"), dqk, 0.0, gated=False, mla=fl("mla"), a=a, tp=t, sequence_parallel=sp,
            q_lora_rank=f("q_lora_rank"), kv_lora_rank=f("kv_lora_rank"),
            qk_nope_head_dim=f("qk_nope_head_dim"), qk_rope_head_dim=f("qk_rope_head_dim"), d_v=dv)
        r_attn = opsac * np.minimum(ko_params / np.maximum(proj_params, 1.0), 1.0)
        r_mlp = opsac * gated / (2.0 + gated)  # W3: one of a gated MLP's three equal matrices
        op_core = opsac * ~flash  # without flash attention the scores are not saved
        t_opsac_dense = (r_attn * t_attn_proj + r_mlp * t_mlp_dense + op_core * t_core
                         + opsac * t_elem_dense)
        layer_mb = layer_mb + t_opsac_dense

    # FP8 row-wise scaling (training.fp8_scaling = "rowwise", torchao): every nn.Linear casts its
    # own operands (TorchTitan's wq, wk, wv, wo, w1, w3, w2 are separate). Forward: the input
    # (M·K) and the weight (K·N); backward: the output gradient twice (M·N, along each axis) and
    # input and weight again along their other axis; a full recompute runs the forward casts
    # again. FP8_ROWWISE_BYTES of HBM traffic per cast element, on one TP rank's shapes: K, V
    # heads replicated when fewer than TP ranks (max(k, t)/t, as the RoPE term), MLA's q_a and
    # kv_a whole on every rank (TorchTitan NoParallel, Megatron-Core duplicated).
    rowwise = None
    if "fp8_rowwise" in b and any_true(b["fp8_rowwise"]):
        rowwise = fl("fp8_rowwise") & (prec == _FP8) & lowhp
        kv_r = np.maximum(f("n_kv_heads"), t) / t  # K, V heads on one rank
        k_attn = 3.0 * h + a * dv / t  # inputs of q, k, v (h each) and of o
        n_attn = a * dqk / t + kv_r * (dqk + dv) + h  # outputs of q, k, v and o
        w_attn = h * (a * dqk / t + kv_r * (dqk + dv) + a * dv / t)
        if any_true(fl("mla")):  # q_a (or q), q_b, kv_a, kv_b, o: DeepSeek-V3 §2.1.1
            mla_ = fl("mla")
            rq, rkv, dr = f("q_lora_rank"), f("kv_lora_rank"), f("qk_rope_head_dim")
            dn = dqk - dr
            k_attn = np.where(mla_, h + rq + h + rkv + a * dv / t, k_attn)
            n_attn = np.where(mla_, rq + a * dqk / t + rkv + dr + a * (dn + dv) / t + h, n_attn)
            w_q = np.where(rq > 0, h * rq + rq * a * dqk / t, h * a * dqk / t)
            w_attn = np.where(mla_, w_q + h * (rkv + dr) + rkv * a * (dn + dv) / t + a * dv * h / t, w_attn)
        k_mlp = (1.0 + gated) * h + ffn / t  # inputs of w1 (w3) and w2
        n_mlp = (1.0 + gated) * ffn / t + h
        w_mlp = h * up1 * ffn / t
        rw_b = rowwise * (FP8_ROWWISE_BYTES * inv_hbm)
        fwd_attn, fwd_mlp = tok * k_attn + w_attn, tok * k_mlp + w_mlp  # forward casts
        t_row_attn = rw_b * ((2.0 + full) * fwd_attn + 2.0 * tok * n_attn)
        t_row_dense = t_row_attn + rw_b * ((2.0 + full) * fwd_mlp + 2.0 * tok * n_mlp)
        t_row_attn_fwd, t_row_dense_fwd = rw_b * fwd_attn, rw_b * (fwd_attn + fwd_mlp)
        layer_mb = layer_mb + t_row_dense
        layer_fwd = layer_fwd + t_row_dense_fwd
        if any_moe:  # MoE layers: the attention projections and the shared experts (dense
            # nn.Linear); the routed experts' grouped GEMMs are not charged
            f_sh_ = np.maximum(f_sh, 0.0)
            fwd_sh = n_sh * (tok * ((1.0 + gated) * h + f_sh_ / t) + h * up1 * f_sh_ / t)
            out_sh = n_sh * tok * ((1.0 + gated) * f_sh_ / t + h)
            t_row_moe = t_row_attn + rw_b * ((2.0 + full) * fwd_sh + 2.0 * out_sh)
            t_row_moe_fwd = t_row_attn_fwd + rw_b * fwd_sh

    # Most loaded first rank and the last rank (which also carries the head): the shared
    # layout rule of model_stats.layers_on_rank (first L mod (p·v) virtual stages take +1):
    # rank 0 holds v·⌊L/(p·v)⌋ + ⌈r/p⌉ layers, rank p−1 v·⌊L/(p·v)⌋ + ⌊r/p⌋, r = L mod (p·v)
    # (integers below 2^53: the float quotients floor and ceil exactly).
    pv = p * v
    base = np.floor(L / pv)
    rem_p = (L - base * pv) / p
    vb = v * base
    per_stage_hi = vb + np.ceil(rem_p)
    per_stage_lo = vb + np.floor(rem_p)
    if any_moe:
        n_moe_l = f("n_moe_layers")
        moe_share = np.where(L > 0, n_moe_l / L, 0.0)
        # MoE share of the first and the last rank's own layers: the leading dense layers sit on the
        # first virtual stages (model_stats.dense_layers_on_rank, the memory stage's layout; found by
        # review: the average share on every stage put dense layers on the last stage too, Mixtral
        # with 16 of 32 layers dense at PP 2 came out 20 % fast). DualPipe ranks hold two stages: the
        # model's average there (a stated simplification).
        any_dense_moe = any_true(is_moe & (n_moe_l < L))  # an MoE model with leading dense layers
        if any_dense_moe:
            nd_hi = model_stats.dense_layers_on_rank(L, L - n_moe_l, p, v, 0.0)
            nd_lo = model_stats.dense_layers_on_rank(L, L - n_moe_l, p, v, p - 1.0)
            msh_hi = np.where(per_stage_hi > 0, (per_stage_hi - nd_hi) / np.maximum(per_stage_hi, 1.0), 0.0)
            msh_lo = np.where(per_stage_lo > 0, (per_stage_lo - nd_lo) / np.maximum(per_stage_lo, 1.0), 0.0)
        else:  # every MoE row all MoE (dense rows: share 0 everywhere): the average is each stage's
            msh_hi = msh_lo = moe_share
        if any_dense_moe and any_true(sched == _SCHED["dualpipe"]):
            is_dual = sched == _SCHED["dualpipe"]
            msh_hi, msh_lo = np.where(is_dual, moe_share, msh_hi), np.where(is_dual, moe_share, msh_lo)
        layer_moe_fwd = t_attn_proj + t_mlp_moe + t_core + t_elem_moe
        # the host time follows the expert kernels' passes: 1 of 1 + BWD_OVER_FWD in the forward, so a
        # recomputed forward (full recompute) launches them, and syncs, once more (review 48f: charged
        # once with any recompute)
        layer_moe_mb = (gp * (t_attn_proj + t_mlp_moe) + ap * t_core + ep_ * t_elem_moe
                        + t_moe_host * (1.0 + full / (1.0 + BWD_OVER_FWD)))
        if rowwise is not None:  # attention projections and shared experts (routed experts not charged)
            layer_moe_mb = layer_moe_mb + t_row_moe
            layer_moe_fwd = layer_moe_fwd + t_row_moe_fwd
        if any_opsac:  # routed up-projections (grouped GEMMs, not saved), shared W3, router
            r_exp = opsac * (up1 - 1.0) / up1  # up-projections of (up1 - 1) of up1 matrices
            layer_moe_mb = layer_moe_mb + (r_attn * t_attn_proj + r_exp * t_experts + r_mlp * t_shared
                                           + opsac * t_router + op_core * t_core + opsac * t_elem_moe)
        layer_mb_d, layer_fwd_d = layer_mb, layer_fwd  # a dense layer's (a middle rank's mix below)
        if any_dense_moe:
            layer_mb_hi = (1.0 - msh_hi) * layer_mb + msh_hi * layer_moe_mb
            layer_mb_lo = (1.0 - msh_lo) * layer_mb + msh_lo * layer_moe_mb
            layer_fwd_hi = (1.0 - msh_hi) * layer_fwd + msh_hi * layer_moe_fwd
            layer_fwd_lo = (1.0 - msh_lo) * layer_fwd + msh_lo * layer_moe_fwd
        layer_mb = (1.0 - moe_share) * layer_mb + moe_share * layer_moe_mb  # the model's average (explain)
        layer_fwd = (1.0 - moe_share) * layer_fwd + moe_share * layer_moe_fwd
        if not any_dense_moe:
            layer_mb_hi = layer_mb_lo = layer_mb
            layer_fwd_hi = layer_fwd_lo = layer_fwd
    else:
        layer_mb_hi = layer_mb_lo = layer_mb
        layer_fwd_hi = layer_fwd_lo = layer_fwd
        msh_hi = msh_lo = 0.0
    # Row-wise FP8 casts per layer, averaged over dense and MoE layers as layer_mb is (explain).
    t_row_layer = 0.0
    if rowwise is not None:
        t_row_layer = t_row_dense if not any_moe else (1.0 - moe_share) * t_row_dense + moe_share * t_row_moe
    # Output head + cross-entropy on the last stage (fwd + bwd; not recomputed).
    VWt = V * Wt
    t_head_fwd = (VWt * h * qu1 + qW) * inv_pe
    if any_true(lowhp):
        # The output head stays in 16 bits under FP8 / FP4 training: Megatron-Core's output_layer is a
        # ColumnParallelLinear, not a Transformer Engine module; DeepSeek-V3 §3.3.1 keeps "the output
        # head" in BF16; torchao's Float8 conversion leaves `output` out (found by review: it ran at
        # the FP8 peak). The same GEMM model at the 16-bit peak, efficiency and operand bytes.
        q16 = (0.5 * K.kk) * (peak16 * clock * ridge16 / hbm_raw) * BYTES_16
        t_head16 = (VWt * h * (1.0 + q16 * (1.0 / tok + inv_h)) + q16 * W) / (peak16 * eff16)
        t_head_fwd = np.where(lowhp, t_head16, t_head_fwd)
    t_head_mb = (1.0 + BWD_OVER_FWD) * t_head_fwd + LOGIT_BYTES * 0.5 * VWt * inv_hbm
    # Multi-token prediction (ModelSpec.mtp_layers = D; DeepSeek-V3 §2.2, Megatron-Core
    # MultiTokenPredictionLayer), on the head-carrying stage, per micro-batch: D × (one block of the
    # model's MoE-layer kind (a dense layer on a dense model), fwd + bwd as the model's layers, + the
    # eh_proj GEMM tok × 2h × h/t (column-parallel), fwd + bwd, + the output head and cross-entropy
    # again, t_head). Recompute as Megatron (MultiTokenPredictionLayer._checkpointed_forward): under
    # full recompute with the uniform method (recompute_layers = 0) the block and eh_proj run forward
    # again; with the block method (recompute_layers > 0) Megatron skips the MTP recompute
    # ("recompute_method == 'block' is not supported for MTP yet. Skipping recompute."), so nothing
    # of it runs again and its TP / CP / EP collectives carry no recompute share (full_flag, not the
    # stage-averaged `full`; until 2026-12-01 recomputed whole, review 16f); selective / op_sac as a
    # layer of its kind; the head is not recomputed.
    # Not counted: the three norms, the concatenation and the TP all-gather after eh_proj (h-wide
    # elementwise work and one b·s·h collective, small beside the block).
    has_mtp = "mtp_layers" in b and any_true(np.asarray(b["mtp_layers"]) > 0)
    if has_mtp:
        D = f("mtp_layers")
        # 1 where the MTP block is recomputed whole: full recompute, uniform method only
        full_flag = ((rc == 2) & ~partial) * 1.0 if partial is not None else (rc == 2) * 1.0
        if any_moe:
            blk_mb = np.where(is_moe, layer_moe_mb, layer_mb_d)
            blk_fwd = np.where(is_moe, layer_moe_fwd, layer_fwd_d)
        else:
            blk_mb, blk_fwd = layer_mb, layer_fwd
        if partial is not None:  # the block's own recompute (full_flag), not the average share in layer_mb
            blk_mb = blk_mb + (full_flag - full) * blk_fwd
        # GEMM M×K×N = tok × 2h × h/t: flop·(1 + q·(1/M + 1/K + 1/N)) / (peak·eff_max)
        eh_flop = 4.0 * tok * h * h / t
        t_eh_fwd = (eh_flop + q * (4.0 * h * h / t + 2.0 * tok * h / t + 4.0 * tok * h)) * inv_pe
        t_mtp_fwd = D * (blk_fwd + t_eh_fwd + t_head_fwd)
        t_mtp_mb = D * (blk_mb + (1.0 + BWD_OVER_FWD + full_flag) * t_eh_fwd + t_head_mb)
    else:
        D = 0.0
        t_mtp_fwd = t_mtp_mb = 0.0
    first_mb = per_stage_hi * layer_mb_hi
    last_mb = per_stage_lo * layer_mb_lo + t_head_mb
    if has_mtp:
        last_mb = last_mb + t_mtp_mb
    if partial is not None:  # each stage recomputes min(N·v, its layers): its own share of one forward
        nv = f("recompute_layers") * v
        for_hi = np.where(partial, np.minimum(nv, per_stage_hi) / np.maximum(per_stage_hi, 1.0), full)
        for_lo = np.where(partial, np.minimum(nv, per_stage_lo) / np.maximum(per_stage_lo, 1.0), full)
        # a recomputed MoE forward launches its expert kernels once more: the host time's forward
        # share per layer rides with it (layer_moe_mb charges it at the average fraction `full`)
        host_f = t_moe_host / (1.0 + BWD_OVER_FWD)
        first_mb = first_mb + per_stage_hi * (for_hi - full) * (layer_fwd_hi + msh_hi * host_f)
        last_mb = last_mb + per_stage_lo * (for_lo - full) * (layer_fwd_lo + msh_lo * host_f)
    # --- TP (0 s when t = 1: no volume and no latency) ----------------------------------
    # b·(s/c)·h values of the activations' width: 16 bits, 32 without mixed precision (fp32 / tf32
    # training keeps fp32 activations; found by review: charged at 2 B)
    abytes = np.where((prec == _FP32) | (prec == _TF32), 4.0, BYTES_16)
    tp_msg = W * (abytes / BYTES_16)
    tp_bw, tp_alpha, tp_intra = comm.ring_link(t, None, dom, nvl_e, nic_e, a_s, a_n, n_gpus, mesh)
    # in-network reduction is NVLink SHARP (NVLS) inside the NVSwitch domain: a ring that crosses
    # the network gets no speed-up (found by review: a DP all-reduce over InfiniBand ran above
    # the NIC's line rate)
    tp_inr = inr & ~sp & tp_intra
    if tp_inr.any():
        tp_bw = tp_bw * (1.0 + (comm.IN_NETWORK_ALLREDUCE_SPEEDUP - 1.0) * tp_inr)
    tp_ar = 2.0 * (t - 1.0) / t * tp_msg / tp_bw + 2.0 * tp_alpha
    # +2 with full recompute; op_sac: +1, with SP the two all-gathers feeding K and W3 run again
    # (not in TorchTitan's save list; the reduce-scatters are saved): an all-gather is half an
    # all-reduce's ring time, so the two are one all-reduce equivalent (session 25 review: they
    # were counted as two); without SP O's all-reduce
    n_tp_coll = 4.0 + 2.0 * full + opsac
    tp_exposed_frac = 1.0 - K.tp_overlap_frac * fl("tp_comm_overlap")
    c_tp = n_tp_coll * tp_ar * tp_exposed_frac  # per layer and micro-batch
    # op_sac without SP re-runs O's all-reduce: the attention half's, which MoE layers do not scale by
    # top_k·cf below (session 25 review: Mixtral at TP 2 read n_coll 7.5 for 4 × 1.5 + 1 = 7)
    # (scalar 0 in batches without op_sac: no whole-array work on the sweep's hot path)
    n_attn_only = opsac * (1.0 - sp) if any_opsac else 0.0
    c_tp_attn = n_attn_only * tp_ar * tp_exposed_frac if any_opsac else 0.0

    def _tp_mix(share):
        """A layer's TP time at MoE share ``share`` of its layers: the MLP half × moe_tp_x (a
        share of 0 the dense layer's own value, bit for bit: a dense row's result does not depend
        on an MoE row in its batch; review 38b found (c − a)·1 + a one ulp off c with op_sac)."""
        return np.where(share > 0.0, (c_tp_d - c_tp_attn) * ((1.0 - share) + share * moe_tp_x) + c_tp_attn, c_tp_d)
    # MoE layers with TP > 1 (expert TP = TP, Megatron-Core's default): the MLP half's two
    # collectives carry the routed tokens, top_k·cf of them per token (MoEAlltoAllTokenDispatcher
    # all-gathers the dispatched tokens over the TP group, "AllGather in Tensor Parallel dimension
    # (if TP > 1)", and the combine reduce-scatters them; found by review: charged as a dense
    # layer's b·s·h): half of a layer's collectives at × top_k·cf, the attention half as dense.
    # Expert TP ≠ TP (parallelism.etp, etp | tp): the dispatcher's all-gather and reduce-scatter of the
    # routed tokens run over the etp ranks (Megatron-Core MoEAlltoAllTokenDispatcher: "A2A(EP)->AG(TP)",
    # its tp_group the expert-TP group), each rank contributing its s/(c·t) tokens × top_k·cf: per
    # all-reduce equivalent (AG + RS) 2·(etp−1)/etp · (etp/t)·msg / bw_etp + 2·α_etp, the MLP half of
    # an MoE layer at × top_k·cf of that instead of tp's (none with etp = 1; the attention half stays
    # on tp). Folded into moe_tp_x as ½ + ½·top_k·cf·(etp collective / tp collective): tp > 1
    # wherever etp < tp. The shared experts' own all-gather / reduce-scatter over tp are not
    # counted, with any etp (as before).
    if any_moe:
        moe_tp_x = 0.5 + 0.5 * np.where(is_moe, f("moe_top_k") * np.maximum(f("moe_capacity_factor"), 1.0), 1.0)
        if etp_diff:
            e_bw, e_alpha, _ = comm.ring_link(et, None, dom, nvl_e, nic_e, a_s, a_n, n_gpus, mesh)
            etp_ar = 2.0 * (et - 1.0) / et * (et / t) * tp_msg / e_bw + 2.0 * e_alpha
            x_moe = np.where(is_moe, f("moe_top_k") * np.maximum(f("moe_capacity_factor"), 1.0), 1.0)
            moe_tp_x = np.where(et == t, moe_tp_x,
                                0.5 + 0.5 * x_moe * etp_ar / np.where(tp_ar > 0.0, tp_ar, 1.0))
        c_tp_d = c_tp  # a dense layer's (a middle rank's mix below)
        if any_dense_moe:
            c_tp_hi = _tp_mix(msh_hi)
            c_tp_lo = _tp_mix(msh_lo)
        c_tp = _tp_mix(moe_share)  # the model's average (DualPipe)
        if not any_dense_moe:
            c_tp_hi = c_tp_lo = c_tp
    else:
        moe_tp_x = 1.0
        c_tp_hi = c_tp_lo = c_tp

    # --- CP ring attention (0 s when c = 1) ----------------------------------------------
    if bool((c > 1.0).any()):
        kv_local = np.maximum(f("n_kv_heads") / t, 1.0)
        kv_block = abytes * tok * kv_local * (dqk + dv)  # K and V of the local heads
        cp_fwd = (c - 1.0) * comm.p2p_link_s(kv_block, c, t, dom, nvl_e, nic_e, a_s, a_n, mesh)
        cp_bwd = 2.0 * cp_fwd
        exp_fwd = np.maximum(cp_fwd - t_core, 0.0)
        exp_bwd = np.maximum(cp_bwd - attn_bwd * t_core, 0.0)
        c_cp = exp_fwd * (1.0 + rec_any) + exp_bwd  # per layer and micro-batch
    else:
        cp_fwd = cp_bwd = c_cp = exp_fwd = 0.0
    # per micro-batch on the first / last stage; with partial recompute each stage's recomputed
    # forward runs its ring exchange on its own share of the layers, as its compute does (found by a
    # property test: the average share on the CP term against the stage's own on the compute made
    # flash attention off shorten the step, Mixtral 8x7B PP 5 × VPP 4 × CP 8, one layer per chunk
    # recomputed: 0.64855 → 0.64853 s)
    cp_hi_mb = per_stage_hi * c_cp
    cp_lo_mb = per_stage_lo * c_cp
    if partial is not None:
        cp_hi_mb = cp_hi_mb + per_stage_hi * (for_hi - full) * exp_fwd
        cp_lo_mb = cp_lo_mb + per_stage_lo * (for_lo - full) * exp_fwd

    # --- EP all-to-all ---------------------------------------------------------------------
    n_a2a = 4.0 + 2.0 * full
    if any_moe:
        # bytes per element, averaged over the all-to-alls: with FP8 dispatch half of them
        # (forward dispatch, and the gradient sent to the experts) carry 1 B, the combines 2 B
        a2a_elem_bytes = abytes - (abytes - FP8_DISPATCH_BYTES) * EP_DISPATCH_SHARE * fl("ep_dispatch_fp8")
        ep_bytes = a2a_elem_bytes * tok * h * topk * cf / np.where(sp, t, 1.0)
        # node-limited routing: a token crosses the network once per destination node
        nodes = f("moe_max_nodes_per_token")
        if any_true(nodes > 0):
            # at most M of the group's D domains, (D − 1)/D of them remote: min(top_k, M, D)/top_k of one
            # copy per routed expert (review 48a: without D, EP 16 over two nodes with M = 4 sent 2 copies
            # a token where one remote node exists)
            _g_ep, d_ep = comm.group_layout(e, et, dom, n_gpus)
            net_frac = np.where(nodes > 0, np.minimum(np.minimum(topk, nodes), np.maximum(d_ep, 1.0))
                                / np.maximum(topk, 1.0), 1.0)
        else:
            net_frac = np.ones_like(topk * 1.0)
        if "ep_node_dispatch" in b and any_true(b["ep_node_dispatch"]):
            net_frac = np.where(fl("ep_node_dispatch"), np.minimum(net_frac, node_dispatch_network_frac(
                f("n_experts"), topk, e, et, dom, n_gpus)), net_frac)
        # the EP group: ep ranks etp apart (Megatron-Core's expert rank order tp-cp-ep-dp-pp with the
        # expert TP innermost and cp folded away: the expert group etp·ep is a block of consecutive
        # ranks of one pipeline stage)
        a2a = comm.a2a_link_s(ep_bytes, e, et, dom, nvl_e, nic_e, a_s, a_n, network_frac=net_frac,
                             n_total=n_gpus, mesh_links=mesh)
        # With ep_comm_overlap the all-to-all of one micro-batch runs while another computes
        # (DualPipe, DeepSeek-V3 §3.2.1): per MoE layer and micro-batch only what exceeds
        # tp_overlap_frac × that layer's compute stays exposed (the comm-overlap efficiency
        # fitted for TP, reused: the calibration file holds no MoE run to fit it).
        # The window is the layer's compute plus the exposed CP remainder of that layer ("Windows"
        # below: while the GPU waits on the ring, the all-to-all keeps running; found by review:
        # against compute alone, slower attention shrank the CP remainder by as much as it added
        # compute and the EP remainder shrank besides — Qwen3-30B-A3B, CP 4 × EP 8, half the TDP
        # power limit shortened the step 1.4344 → 1.4339 s, flash attention off to 1.4221 s).
        ep_hide = K.tp_overlap_frac * (layer_moe_mb + c_cp) * eco
        ep_layer = np.maximum(n_a2a * a2a - ep_hide, 0.0)
        c_ep = np.where((e > 1) & is_moe, moe_share * ep_layer, 0.0)  # per layer and micro-batch (average)
        if any_dense_moe:  # the first / last rank's own share
            c_ep_hi = np.where((e > 1) & is_moe, msh_hi * ep_layer, 0.0)
            c_ep_lo = np.where((e > 1) & is_moe, msh_lo * ep_layer, 0.0)
        else:
            c_ep_hi = c_ep_lo = c_ep
        # the remainders the EP overlap leaves widen the DP window (c_x_ep_s in _stage); their
        # forward share is 2 of n_a2a (dispatch + combine). Without the overlap the all-to-alls
        # are in series, as TP's.
    else:
        ep_bytes = a2a = c_ep = ep_hide = c_ep_hi = c_ep_lo = 0.0
        net_frac = a2a_elem_bytes = 1.0
    c_cp_mtp = c_cp
    if has_mtp:  # per MTP block and micro-batch: a layer of its kind (dense rows: a dense layer's)
        if any_moe:
            c_tp_mtp = _tp_mix(np.where(is_moe, 1.0, 0.0))
            c_ep_mtp = np.where((e > 1) & is_moe, ep_layer, 0.0)
        else:
            c_tp_mtp, c_ep_mtp = c_tp, 0.0
        if partial is not None:
            # its recompute collectives follow full_flag (the block's own recompute: none under the block
            # method), not the stage-averaged `full` that c_tp / c_cp / n_a2a carry: TP +2 all-reduce
            # equivalents, the CP ring's forward hops once more, EP +2 all-to-alls per recompute
            d_rc = full_flag - full
            c_tp_mtp = c_tp_mtp + d_rc * 2.0 * tp_ar * tp_exposed_frac * (
                np.where(is_moe, moe_tp_x, 1.0) if any_moe else 1.0)
            c_cp_mtp = c_cp + d_rc * exp_fwd
            if any_moe:  # hidden behind the block's own compute (its recompute share included)
                hide_mtp = K.tp_overlap_frac * (blk_mb + c_cp_mtp) * eco
                c_ep_mtp = np.where((e > 1) & is_moe,
                                    np.maximum((4.0 + 2.0 * full_flag) * a2a - hide_mtp, 0.0), 0.0)
    if partial is not None:
        # Partial recompute: each stage's recomputed forward repeats its TP collectives (+2 per
        # layer) and EP all-to-alls (+2 per MoE layer) on its own share of the layers, as its
        # compute and CP ring do (found by a property test: with the average share here, adding
        # layers that the pacing stage did not get moved the share and shortened the step,
        # Llama 3 70B at 5 → 7 layers on PP 4 × TP 16, one layer recomputed: 0.2338 → 0.2267 s).
        rec_tp = 2.0 * tp_ar * tp_exposed_frac
        rec_hi = rec_tp * ((1.0 - msh_hi) + msh_hi * moe_tp_x) if any_moe else rec_tp
        rec_lo = rec_tp * ((1.0 - msh_lo) + msh_lo * moe_tp_x) if any_moe else rec_tp
        tp_hi_mb = per_stage_hi * (c_tp_hi + (for_hi - full) * rec_hi)
        tp_lo_mb = per_stage_lo * (c_tp_lo + (for_lo - full) * rec_lo)
        if any_moe:
            def _c_ep(share, msh):
                n = 4.0 + 2.0 * share
                return np.where((e > 1) & is_moe, msh * np.maximum(n * a2a - ep_hide, 0.0), 0.0)
            ep_hi_mb, ep_lo_mb = per_stage_hi * _c_ep(for_hi, msh_hi), per_stage_lo * _c_ep(for_lo, msh_lo)
            xep_hi_mb, xep_lo_mb = ep_hi_mb * eco, ep_lo_mb * eco
        else:
            ep_hi_mb = ep_lo_mb = xep_hi_mb = xep_lo_mb = 0.0

    # The slowest stage (DualPipe: rank) sets the step. The candidates: the last stage (DualPipe:
    # rank 0, its two end stages), which carries the output head, and the first stage (DualPipe:
    # the most loaded middle rank), which holds the extra layer of an uneven split and its TP / CP /
    # EP time. Each is costed whole — compute, communication, bubble and the DP / offload windows
    # its own compute leaves — and the longer step is taken (found by review: chosen on compute
    # alone, an uneven split's extra layer of communication could make the other the slower; then
    # chosen on compute plus communication, a lower power limit could flip the choice to the stage
    # with the wider DP window and shorten the step, 1.220 → 1.204 s on a 48-GPU MPT-7B-like run).
    dual = sched == _SCHED["dualpipe"]
    any_dual = any_true(dual)

    def _rank_terms(j):
        """The per-micro-batch terms of pipeline rank ``j`` ((N,) float, a rank without the head), as
        the first stage's above: its own layers (model_stats.layers_on_rank), of which its own
        leading dense layers (model_stats.dense_layers_on_rank), MoE rows with leading dense layers."""
        n_j = model_stats.layers_on_rank(L, p, v, j).astype(np.float64)
        nd_j = np.minimum(model_stats.dense_layers_on_rank(L, L - n_moe_l, p, v, j), n_j)
        msh_j = np.where(n_j > 0, (n_j - nd_j) / np.maximum(n_j, 1.0), 0.0)
        lmb = (1.0 - msh_j) * layer_mb_d + msh_j * layer_moe_mb
        lfw = (1.0 - msh_j) * layer_fwd_d + msh_j * layer_moe_fwd
        cth = _tp_mix(msh_j)
        out = {"rank": j, "per_stage_hi": n_j, "msh_hi": msh_j, "layer_mb_hi": lmb, "layer_fwd_hi": lfw,
               "first_mb": n_j * lmb, "c_tp_hi": cth, "cp_hi_mb": n_j * c_cp,
               "c_ep_hi": np.where((e > 1) & is_moe, msh_j * ep_layer, 0.0)}
        if partial is not None:
            for_j = np.where(partial, np.minimum(nv, n_j) / np.maximum(n_j, 1.0), full)
            rec_j = rec_tp * ((1.0 - msh_j) + msh_j * moe_tp_x)
            ep_j = n_j * _c_ep(for_j, msh_j)
            out.update(first_mb=out["first_mb"] + n_j * (for_j - full) * (lfw + msh_j * host_f),
                       cp_hi_mb=out["cp_hi_mb"] + n_j * (for_j - full) * exp_fwd,
                       tp_hi_mb=n_j * (cth + (for_j - full) * rec_j), ep_hi_mb=ep_j,
                       xep_hi_mb=ep_j * eco, for_hi=for_j)
        return out

    if any_dual:  # a DualPipe rank runs half its micro-batches on each of its two stages (j, p−1−j)
        ends = 0.5 * (first_mb + last_mb)  # rank 0: the first and the last stage
        # the most loaded middle rank j (1 ≤ j < p/2) holds stages j and p−1−j; of the r = L mod p
        # stages with the extra layer (0 … r−1) it holds two when r ≥ p/2 + 1, one when r ≥ 2, else
        # none (found by review: two full stages were assumed, a rank that need not exist — the
        # DeepSeek-V3 preset at PP 6, 11 layers per middle rank where each holds 10)
        k_hi = dualpipe_middle_extra_stages(L - pv * base, p)
        mid_mb = 0.5 * (k_hi * first_mb + (2.0 - k_hi) * (last_mb - t_head_mb - t_mtp_mb))
        mid_layers = per_stage_lo + 0.5 * k_hi

    # --- PP (0 s when p = 1) ------------------------------------------------------------------
    # Bubble (p−1)/m, over v with interleaving (v = 1 otherwise); zero-bubble's depends on the stage's
    # passes (zero_bubble_fraction, in _stage)
    frac0 = (p - 1.0) / m / np.maximum(v, 1.0)
    zb = sched == _SCHED["zero_bubble"]
    any_zb = bool(zb.any())
    p2p_msg = tp_msg / t
    p2p = comm.p2p_link_s(p2p_msg, p, t * c * d, dom, nvl_e, nic_e, a_s, a_n, mesh)
    t_p2p = 2.0 * v * m * p2p

    # --- DP ----------------------------------------------------------------------------------
    tp_pp = t * p
    gb = f("grad_bytes")
    dp_dense_n = d * c
    ovl = K.dp_overlap_frac
    if any_moe:
        # 0 on dense rows (no MoE layers); an MoE model's MTP blocks hold E experts each (in params_total)
        P_expert = (n_moe_l + D * is_moe if has_mtp else n_moe_l) * E * f("params_expert")
        P_dense_local = (f("params_total") - P_expert) / tp_pp
        P_exp_local = P_expert / ((et * p if etp_diff else tp_pp) * e)  # over etp·pp·ep
    else:
        P_dense_local = f("params_total") / tp_pp
    # DualPipe: a rank holds two stages' parameters: the once-per-step collectives and the
    # optimizer step carry both (× f2); ZeRO-3's per-micro-batch gathers only the stage it runs
    f2 = (1.0 + dual) if any_dual else 1.0

    # HSDP (dp_shard < dp): ZeRO collectives over the shard group dp_shard·cp (the inner DP
    # ranks), plus one all-reduce of the gradient shard over the dp/dp_shard replicas per step.
    any_hsdp = "dp_shard" in b and any_true(f("dp_shard") < d)
    if any_hsdp:
        n_shard = f("dp_shard") * c
        n_rep = d / f("dp_shard")
        bw_r, al_r, _ = comm.ring_link(n_rep, t * n_shard, dom, nvl_e, nic_e, a_s, a_n, n_gpus, mesh)
    else:
        n_shard = dp_dense_n
    bw_d, al_d, intra_d = comm.ring_link(n_shard, t, dom, nvl_e, nic_e, a_s, a_n, n_gpus, mesh)
    X = (n_shard - 1.0) / n_shard * P_dense_local / bw_d  # (n−1)/n · params / BW
    inr_any = bool(inr.any())

    def dp_colls(Xq, al, intra):
        """(gradient reduce-scatter, 16-bit parameter all-gather, gradient all-reduce) [s] of
        ``Xq`` s per byte-per-parameter over a ring whose pass latency is ``al``; the all-reduce
        gets the in-network speed-up only on a group inside one NVLink domain (``intra``)."""
        rs = gb * Xq + al
        if inr_any:
            inr_f = 1.0 + (comm.IN_NETWORK_ALLREDUCE_SPEEDUP - 1.0) * (inr & intra)
            ar = 2.0 * (gb * Xq / inr_f + al)
        else:
            ar = 2.0 * rs
        return rs, abytes * Xq + al, ar  # the weights' width: 16 bits, fp32 without mixed precision

    t_grad_rs, t_param_ag, t_grad_ar = dp_colls(X, al_d, intra_d)
    X_e = al_e = 0.0  # the expert share of the ZeRO collectives (MoE rows below)
    bw_e = intra_e = 0.0  # its ring's achieved bandwidth and link (explain)
    if any_moe:
        # = dp·cp/ep; HSDP rows (ep = 1): the shard group. Expert TP ≠ TP: the expert data-parallel
        # group tp·cp·dp/(etp·ep), ranks etp·ep apart (Megatron-Core parallel_state)
        if etp_diff:
            dp_exp_n = n_shard * (t / et) / e
            bw_e, al_e, intra_e = comm.ring_link(dp_exp_n, et * e, dom, nvl_e, nic_e, a_s, a_n, n_gpus, mesh)
        else:
            dp_exp_n = n_shard / e
            bw_e, al_e, intra_e = comm.ring_link(dp_exp_n, t * e, dom, nvl_e, nic_e, a_s, a_n, n_gpus, mesh)
        has_e = P_exp_local > 0
        X_e = (dp_exp_n - 1.0) / np.maximum(dp_exp_n, 1.0) * P_exp_local / bw_e * has_e
        al_e = al_e * has_e
        rs_e, ag_e, ar_e = dp_colls(X_e, al_e, intra_e)
        t_grad_ar = t_grad_ar + ar_e * has_e
        t_grad_rs = t_grad_rs + rs_e * has_e
        t_param_ag = t_param_ag + ag_e * has_e
        P_local = P_dense_local + P_exp_local
    else:
        P_local = P_dense_local
    # ZeRO-3's (and ZeRO-2's floor) single units, one gather (16-bit) + one reduce-scatter
    # (grad_bytes) each with the ring's full latency: an average layer (its dense parameters
    # (P_dense − embedding)/L and its share P_expert/L of the experts, over the groups they sync on),
    # and the embedding V·h/tp (torchtitan's tok_embeddings FSDP unit), over the dense group
    emb_params = f("params_embedding")
    P_dense_all = P_dense_local * tp_pp
    ld = np.clip((P_dense_all - emb_params) / np.maximum(P_dense_all, 1.0) * p / np.maximum(L, 1.0), 0.0, 1.0)
    le = np.minimum(p / np.maximum(L, 1.0), 1.0)
    unit_rs_layer = gb * (X * ld + X_e * le) + al_d + al_e
    unit_layer = unit_rs_layer + abytes * (X * ld + X_e * le) + al_d + al_e
    emb_unit_params = np.minimum(V * h / t, P_dense_local)
    unit_emb = (gb + abytes) * X * emb_unit_params / np.maximum(P_dense_local, 1.0) + 2.0 * al_d
    bucket = np.maximum(DP_BUCKET_PARAMS, DP_BUCKET_PARAMS_PER_RANK * dp_dense_n)
    # The last bucket's collective cannot start before the backward that fills it ends: a floor on
    # what the windows hide, its own time over the dense DP group (one bucket of min(bucket, local
    # dense parameters), with the ring's full latency). Until 2026-11-30 the floor was the share
    # bucket / P_local of the whole collective: parameters on a cheaper path (experts over a group
    # of one, a larger vocabulary) lowered the per-parameter average and so the floor, and more
    # parameters shortened the step (found by a property test: FFN × 2, 0.141406 → 0.141240 s).
    Xb = (n_shard - 1.0) / n_shard * np.minimum(bucket, P_dense_local) / bw_d
    fb_rs, fb_ag, fb_ar = dp_colls(Xb, al_d, intra_d)
    z0 = zero == 0
    z3 = zero == 3
    zs = ~z0  # ZeRO >= 1 (stage codes 0-3)
    # one reduce-scatter of the gradients of the stage a micro-batch ran (before the HSDP replica
    # part; DualPipe: one of its two stages, as ZeRO-3's per-micro-batch collectives)
    t_rs_mb = t_grad_rs
    if any_hsdp:  # ring all-reduce of the local gradient shard across the replicas, once per step
        t_rep = 2.0 * ((n_rep - 1.0) / n_rep * gb * P_local / n_shard / bw_r + al_r) * (n_rep > 1.0)
        fb_rep = 2.0 * ((n_rep - 1.0) / n_rep * gb * np.minimum(bucket, P_local) / n_shard / bw_r + al_r) * (n_rep > 1.0)
        t_grad_rs = t_grad_rs + t_rep * ~z3  # ZeRO-1/2: in the same backward window as the reduce-scatter
    t_grad = _blend(z0, t_grad_ar, t_grad_rs) * f2
    # the floors, never above the collective; HSDP ZeRO-1/2: the last bucket's replica all-reduce
    # follows its reduce-scatter in the same window, so it is in the floor too (as in ZeRO-3's)
    fb_grad = np.minimum(_blend(z0, fb_ar, fb_rs + (fb_rep * ~z3 if any_hsdp else 0.0)), t_grad)
    fb_rs_mb = np.minimum(fb_rs, t_rs_mb)
    fb_ag_step = np.minimum(fb_ag, t_param_ag * f2)
    t_ag_step = t_param_ag * f2
    z3_mb = 2.0 * t_param_ag + t_grad_rs
    # dp_comm_overlap off: none of the DP collectives hidden (PyTorch FSDP1 as MosaicML Composer
    # ran it, docs/timing.md); the column is optional (absent = on).
    dpo = fl("dp_comm_overlap") if "dp_comm_overlap" in b else None
    serial = dpo is not None and not dpo.all()
    if detail or serial:
        # Every DP collective of the step: ZeRO-3 m·(2 gathers + reduce-scatter) per micro-batch
        # (+ the HSDP replica all-reduce), ZeRO-0 the all-reduce, ZeRO-1/2 reduce-scatter + gather.
        t_dp_total = _blend(z3, m * z3_mb + (t_rep * f2 if any_hsdp else 0.0),
                            _blend(z0, t_grad_ar * f2, (t_grad_rs + t_param_ag) * f2
                                   + (zero == 2) * np.maximum(m - 1.0, 0.0) * t_rs_mb))

    # --- optimizer and offload ---------------------------------------------------------------
    # Local shard: over dp·cp (dense) and dp·cp/ep (experts) with ZeRO >= 1 (dp·cp integer);
    # with HSDP over dp_shard·cp (ep = 1 there).
    zge1 = zero >= 1
    if any_moe:
        P_shard = _blend(zge1, P_dense_local / n_shard + P_exp_local / dp_exp_n, P_local) * f2
    else:
        P_shard = P_dense_local / (1.0 + (n_shard - 1.0) * zge1) * f2
    t_opt_gpu = P_shard * (gb + OPT_BYTES_BASE) * inv_hbm
    off_code = g("offload_optimizer")
    off = off_code > 0
    host_bw = f("host_link_bw_bytes_per_s") * K.eff_host
    if bool(off.any()):
        # the node's DRAM and NVMe are shared by the job's GPUs on it, min(gpus_per_node, n_gpus)
        # (review 47b: a one-GPU job on a 16-GPU node got 1/16 of them)
        gpn = np.minimum(f("gpus_per_node"), n_gpus)
        host_mem_share = f("host_memory_bw_bytes_per_s") / gpn
        t_down = P_shard * _mem.HOST_GRAD_BYTES / host_bw  # the fp32 gradient copy the host holds
        # up: the 16-bit weights the CPU step produced; with offload_master_weights off the GPU keeps
        # its own fp32 master, refreshed from the host's copy (4 B; Megatron-Core's CPU offload
        # without the precision-aware optimizer), which it then casts (found by review 39: the time
        # ignored the flag while the memory model kept the master on the GPU)
        if "offload_master_weights" in b:
            offw = np.asarray(b["offload_master_weights"], dtype=bool)
            t_up = P_shard * np.where(offw, abytes, np.maximum(abytes, MASTER_UP_BYTES)) / host_bw
        else:
            t_up = P_shard * abytes / host_bw
        t_cpu_step = P_shard * CPU_OPT_BYTES_PER_PARAM / host_mem_share
        nvme = off_code == 2
        if nvme.any():
            # ZeRO-Infinity: fp32 master, m, v (12 B) read from and written back to the node's NVMe,
            # each direction at its own rate, the drives shared by the node's GPUs (until review 39
            # both directions took the slower, write rate: 29 % more on the catalogue's NVMe)
            rd = np.maximum(f("local_nvme_read_bw_bytes_per_s") / gpn, 1.0)
            wr = np.maximum(f("local_nvme_write_bw_bytes_per_s") / gpn, 1.0)
            t_nvme = P_shard * NVME_OPT_BYTES_PER_PARAM * (1.0 / rd + 1.0 / wr) * nvme
        else:
            t_nvme = 0.0
    else:
        t_down = t_up = t_cpu_step = t_nvme = 0.0
    act_any = "act_offload_traffic_bytes" in b and bool(np.asarray(b["offload_activations"]).any())
    if act_any:
        # every micro-batch's activations of the busiest rank (memory stage: m × one
        # micro-batch's), written in the forward and read back in the backward (found by
        # review: first the GPU-side working set, then the peak stash was used)
        act = f("act_offload_traffic_bytes")
        t_act = 2.0 * act / host_bw
    else:
        t_act = act = 0.0
    t_optimizer = t_opt_gpu * ~off

    def _stage(last_is_slowest, rank=None):
        # One candidate's step, (N,) columns. last_is_slowest, (N,) bool: True costs the head-carrying
        # last stage (DualPipe: rank 0, its two end stages), False the first stage (DualPipe: the most
        # loaded middle rank) or, with ``rank`` (the terms of a middle rank, :func:`_rank_terms`), that
        # rank in its place.
        R = rank or {}
        # the costed rank holds the embedding: PP 1, the first stage, DualPipe's rank 0 (both ends);
        # not the last stage at PP > 1, a DualPipe middle rank or an MoE middle candidate (``rank``)
        has_emb = (np.zeros(np.shape(last_is_slowest), dtype=bool) if rank is not None else
                   np.where(dual, last_is_slowest, ~last_is_slowest | (p <= 1.0)))
        first_mb, per_stage_hi = R.get("first_mb", first_mb_0), R.get("per_stage_hi", per_stage_hi_0)
        cp_hi_mb, layer_fwd_hi, layer_mb_hi = R.get("cp_hi_mb", cp_hi_mb_0), R.get("layer_fwd_hi", layer_fwd_hi_0), \
            R.get("layer_mb_hi", layer_mb_hi_0)
        c_tp_hi, c_ep_hi, msh_hi = R.get("c_tp_hi", c_tp_hi_0), R.get("c_ep_hi", c_ep_hi_0), R.get("msh_hi", msh_hi_0)
        if partial is not None:
            tp_hi_mb, ep_hi_mb, xep_hi_mb = R.get("tp_hi_mb", tp_hi_mb_0), R.get("ep_hi_mb", ep_hi_mb_0), \
                R.get("xep_hi_mb", xep_hi_mb_0)
            for_hi = R.get("for_hi", for_hi_0)
        stage_mb = np.where(last_is_slowest, last_mb, first_mb)
        layers_stage = per_stage_hi - (per_stage_hi - per_stage_lo) * last_is_slowest
        head_share = last_is_slowest * 1.0  # share of the micro-batches that run the output head
        cp_mb = np.where(last_is_slowest, cp_lo_mb, cp_hi_mb)
        if any_dual:
            stage_mb = np.where(dual, np.where(last_is_slowest, ends, mid_mb), stage_mb)
            cp_mb = np.where(dual, np.where(last_is_slowest, 0.5 * (cp_hi_mb + cp_lo_mb),
                                            0.5 * (k_hi * cp_hi_mb + (2.0 - k_hi) * cp_lo_mb)), cp_mb)
            # the layers (and head) of the micro-batch the slowest rank runs: on average over its
            # two stages (found by review: TP / EP counted 11 layers where rank 0 averages 11.5)
            layers_stage = np.where(dual, np.where(last_is_slowest, 0.5 * (per_stage_hi + per_stage_lo), mid_layers),
                                    layers_stage)
            head_share = np.where(dual, 0.5 * last_is_slowest, head_share)
        t_compute = m * stage_mb

        def own(hi, lo):
            """The costed stage's own value of a per-layer term that depends on its mix of dense and
            MoE layers (the first / the last rank; DualPipe rows hold the model's average in both,
            their MoE shares being the average: msh_hi / msh_lo above)."""
            return np.where(last_is_slowest, lo, hi)

        fwd_layer = own(layer_fwd_hi, layer_fwd_lo)  # the stage's own mix of layers
        t_fwd_mb = layers_stage * fwd_layer + t_head_fwd * head_share
        if has_mtp:  # the MTP modules run with the head (DualPipe: on both end ranks)
            t_fwd_mb = t_fwd_mb + t_mtp_fwd * head_share
        if any_moe:
            # the routed experts' host time (fwd + bwd, in stage_mb) in the pass that launches the
            # kernels: the forward's one set of expert kernels of 1 + BWD_OVER_FWD (the backward's
            # data and weight gradients), as the GEMMs. Until 2026-12-01 all of it fell in the
            # backward window, so the forward window that hides the ZeRO-1/2 parameter gather was
            # the GPU's work alone (Qwen3-30B-A3B, TP 4 × CP 4 × EP 4 on 64 Gaudi 3: a 9 ms forward
            # beside a 301 ms backward, 276 ms of it host time; ZeRO-1 came out 8.5 % slower than
            # ZeRO-3, which pools both passes; found by a property test, review 14b)
            t_fwd_mb = t_fwd_mb + layers_stage * own(msh_hi, msh_lo) * t_moe_host / (1.0 + BWD_OVER_FWD)
        t_bwd_mb = np.maximum(stage_mb - t_fwd_mb, 0.0)
        m_layers = m * layers_stage
        t_cp = m * cp_mb
        c_ep_s = own(c_ep_hi, c_ep_lo) if any_moe else 0.0  # the stage's own MoE share
        c_x_ep_s = c_ep_s * eco if any_moe else 0.0
        if partial is not None:  # the stage's own recompute share (above), as cp_mb
            def _pick(hi_mb, lo_mb):
                x = np.where(last_is_slowest, lo_mb, hi_mb)
                if any_dual:
                    x = np.where(dual, np.where(last_is_slowest, 0.5 * (hi_mb + lo_mb),
                                                0.5 * (k_hi * hi_mb + (2.0 - k_hi) * lo_mb)), x)
                return m * x
            # rows without partial recompute as in a batch without any (the same sums in the same
            # order: a row's result does not depend on its batch; review 38 found a one-ulp change)
            t_tp = np.where(partial, _pick(tp_hi_mb, tp_lo_mb), m_layers * (own(c_tp_hi, c_tp_lo) if any_moe else c_tp))
            t_ep = np.where(partial, _pick(ep_hi_mb, ep_lo_mb), m_layers * c_ep_s)
            x_ep = np.where(partial, _pick(xep_hi_mb, xep_lo_mb), m_layers * c_x_ep_s)
        else:
            t_tp = m_layers * (own(c_tp_hi, c_tp_lo) if any_moe else c_tp)
            t_ep = m_layers * c_ep_s
            x_ep = m_layers * c_x_ep_s
        t_tp_mtp = t_cp_mtp = t_ep_mtp = 0.0
        if has_mtp:
            # the MTP blocks' collectives, with the head: TP per layer of the block's kind, EP all-to-all
            # (MoE blocks), CP ring remainder (head_share: 1 on the last stage, ½ on DualPipe's end ranks)
            mtp_n = m * head_share * D
            t_tp_mtp, t_cp_mtp = mtp_n * c_tp_mtp, mtp_n * c_cp_mtp
            t_tp = t_tp + t_tp_mtp
            t_cp = t_cp + t_cp_mtp
            if any_moe:
                t_ep_mtp = mtp_n * c_ep_mtp
                t_ep = t_ep + t_ep_mtp
                x_ep = x_ep + t_ep_mtp * eco
        # per micro-batch, forward pass ("Windows" below): CP's forward hops, 2 of EP's n_a2a all-to-alls
        x_fwd = layers_stage * (exp_fwd + c_x_ep_s * 2.0 / n_a2a)
        if has_mtp:
            # and the MTP blocks' forward remainders (t_fwd_mb holds their forward; review 45e: left out,
            # they fell in the backward window, and flash attention on made a CP run 1e-4 slower)
            x_fwd = x_fwd + head_share * D * (exp_fwd + (c_ep_mtp * eco * 2.0 / (4.0 + 2.0 * full_flag)
                                                        if any_moe else 0.0))

        # Windows. The CP ring and (with ep_comm_overlap) the EP all-to-all leave exposed remainders,
        # max(0, comm − compute), per layer; while the GPU waits on them a DP collective keeps running,
        # so the window it hides in is the compute plus those remainders (x_mb per micro-batch, x_fwd
        # of it in the forward, x_bwd in the backward). Adding remainders computed against the same
        # compute instead made the step shorter when compute grew (found by review: Llama 3 8B PP 8 ×
        # CP 4 ZeRO-3, flash attention on: −200 ms of compute, +39 ms of step). The exposed TP
        # collectives are not counted in the windows (a fixed share of their time, not a remainder;
        # the calibration is fitted that way). A simplification: a collective on the same link as the
        # one it waits behind would queue, not run alongside.
        x_mb = (t_cp + x_ep) / m
        x_bwd = x_mb - x_fwd

        frac = frac0  # PP bubble (above); DualPipe's and zero-bubble's depend on the rank's passes
        t_rec = full * layers_stage * fwd_layer if (any_dual or any_zb) else 0.0  # the full-recompute forward inside B
        if any_zb:  # ZB-H1 (p−1)(F + R), at least the critical path's bound below m = p (zero_bubble_fraction)
            frac = np.where(zb, zero_bubble_fraction(p, m, t_fwd_mb + x_fwd, t_bwd_mb + x_bwd, t_rec), frac)
        if any_dual:  # DualPipe (DeepSeek-V3 Table 2): (p/2 − 1)(F&B + B − 3W) per step, with F&B = F + B
            # (two chunks' compute, their communication overlapped) and W = half of the backward
            # without its recomputed forward: (p/2 − 1)(F + B/2 + 3R/2) over the step's m·(F + B)
            # F and B with the exposed CP / EP-overlap remainders of their own pass (x_fwd, x_bwd):
            # the fraction is applied to compute + communication, so weighing it on compute alone
            # let slower attention (its ring hops hidden instead of exposed) shift the split and
            # shorten the step (found by a property test: flash attention off, Llama 2 7B DualPipe
            # PP 6 × CP 8 on B300, selective recompute, 0.4880 → 0.4873 s; now 0.4869 s either way)
            dual_frac = dualpipe_bubble_fraction(p, m, t_fwd_mb + x_fwd, t_bwd_mb + x_bwd, t_rec)
            frac = np.where(dual, dual_frac, frac)
        t_bubble = frac * (t_compute + t_tp + t_cp + t_ep)

        # --- DP (the windows) ----
        exp_grad = np.maximum(t_grad - ovl * (t_bwd_mb + x_bwd), fb_grad)
        dp_tail = exp_grad  # what the last backward leaves exposed (ZeRO-0/1/2); the offload window
        # ZeRO-2 keeps only its gradient shard, so every micro-batch's backward reduce-scatters
        # (DeepSpeed stage 2: "gradient reduction is required after every backward", deepspeedai/
        # DeepSpeed#2252; FSDP SHARD_GRAD_OP): the m − 1 earlier ones each hidden behind its
        # micro-batch's slot (forward + backward, as ZeRO-3's per-micro-batch collectives) except the
        # last bucket, the last one (with the HSDP replica all-reduce of the accumulated shard) as
        # ZeRO-1's. Accumulating without them needs the full gradients: that is ZeRO-1.
        z2 = zero == 2
        if z2.any():
            m_prev = np.maximum(m - 1.0, 0.0)
            # the floor: the last bucket, or the last layer's reduce-scatter when a layer is smaller
            # (DeepSpeed stage 2 / FSDP SHARD_GRAD_OP reduce as the backward frees each unit, as
            # ZeRO-3's per-micro-batch reduce). Until 2026-12-01 the bucket alone, which grows with
            # dp·cp (1M parameters per rank) until it holds the stage's whole dense gradient, so
            # every micro-batch's reduce-scatter came out exposed where ZeRO-3, which adds two
            # gathers, hid its own (Qwen3-30B-A3B, TP 8 × PP 3 × CP 4 × DP 16 on 1,536 B200:
            # ZeRO-2 0.188 s of DP time against ZeRO-3's 0.033 s; found by a property test,
            # review 14b)
            fb_z2 = np.minimum(fb_rs_mb, np.minimum(unit_rs_layer, t_rs_mb))
            exp_grad = exp_grad + z2 * m_prev * np.maximum(t_rs_mb - ovl * (stage_mb + x_mb), fb_z2)
        exp_ag = np.maximum(t_ag_step - ovl * (t_fwd_mb + x_fwd), fb_ag_step) * (zero >= 1)
        # the first unit's all-gather and the last unit's reduce-scatter, exposed every micro-batch: a
        # layer's, or on the stage that holds the embedding (has_emb: PP 1, the first stage, DualPipe's
        # rank 0) the embedding's where larger — torchtitan wraps tok_embeddings as its own FSDP unit,
        # gathered before the first forward, its gradient reduced after the last backward (the output
        # head's gather is prefetched behind the last layer's forward, its reduce-scatter comes first in
        # the backward, hidden behind the layers'); the last stage's first and last units are layers.
        # Until 2026-12-04 1/layers of the stage's collectives, whose total holds the embedding and the
        # head: adding layers shortened the step where the head dominates (review h30b F1: vocabulary
        # 1M, 2 → 4 layers, 5.60 → 5.50 s), and the ring latency was divided too.
        z3_first_last = np.minimum(np.where(has_emb, np.maximum(unit_layer, unit_emb), unit_layer),
                                   t_param_ag + t_grad_rs)
        if z3.any():
            # never more than the collectives themselves (a stage of very few layers: first / last
            # layer's share plus what the window cannot hide would exceed m·z3_mb)
            z3_exposed = m * np.minimum(np.maximum(z3_mb - ovl * (stage_mb + x_mb), 0.0) + z3_first_last, z3_mb)
            z3_tail = z3_exposed / m  # ZeRO-3: the last micro-batch's share
            if any_hsdp:  # FSDP HSDP: the replica all-reduce in what the last micro-batch's window leaves
                left = np.maximum(ovl * (stage_mb + x_mb) - z3_mb, 0.0)
                rep_exposed = np.maximum(t_rep * f2 - left, np.minimum(fb_rep, t_rep * f2))
                z3_exposed = z3_exposed + rep_exposed
                # once per step, after the last backward: all of it at the step's end (review 45e: /m
                # shrank the window the offloaded gradients' copy hides in, so turning dp_comm_overlap
                # on made an HSDP + CPU-offload step 0.6 % slower)
                z3_tail = z3_tail + rep_exposed
            dp_tail = _blend(z3, z3_tail, dp_tail)
            t_dp_zero = _blend(z3, z3_exposed, exp_grad + exp_ag)
        else:
            t_dp_zero = exp_grad + exp_ag
        if serial:
            t_dp_zero = _blend(dpo, t_dp_zero, t_dp_total)
            # nothing hidden: the tail after the last backward is the whole gradient collective (ZeRO-3:
            # the last micro-batch's, + the HSDP replica all-reduce), whatever dp_overlap_frac is (found
            # by a property test: the offload window used the overlapped tail, so the fitted overlap
            # constant moved rows that overlap nothing, 5.254 → 5.302 s at 0 → 0.9)
            tail_serial = _blend(z3, z3_mb + (t_rep * f2 if any_hsdp else 0.0), t_grad) if z3.any() else t_grad
            dp_tail = _blend(dpo, dp_tail, tail_serial)
        t_dp = t_dp_zero * (dp_dense_n > 1.0)
        dp_tail = dp_tail * (dp_dense_n > 1.0)

        # --- offload (the windows) ----
        if bool(off.any()):
            # what the last backward (and the exposed collectives at its end, on other links) does not
            # hide: two remainders against one window added made more compute shorten the step
            # (found by a property test: 49.69 → 49.60 s with 2.67 s more compute)
            # (× off: a row without optimizer offload has nothing to download — its t_down_exp
            # must be 0, as in a batch without any offloading row, where the activation swap below
            # subtracts it; found by a batch-independence property test)
            t_down_exp = np.maximum(t_down - (t_bwd_mb + x_bwd + dp_tail), 0.0) * off
            t_off_opt = (t_down_exp + t_cpu_step + t_up + t_nvme) * off
        else:
            t_down_exp = t_off_opt = 0.0
        t_off_act = 0.0
        if act_any:
            # Each micro-batch's stash leaves the GPU during its own forward and comes back during its
            # own backward (Transformer Engine's CPU offload context: a layer group's copy is waited on
            # when the next group's forward ends, its reload prefetched one group ahead in the
            # backward), so the copy out hides behind the forward passes (+ their exposed CP / EP
            # remainders, x_fwd) and the copy back behind the backward passes (x_bwd). The host link
            # is full duplex: the reload (host to device) does not queue behind the optimizer
            # offload's gradient download (device to host). The waits these copies leave overlap the
            # exposed DP collectives and the download's exposure (other links, or the other
            # direction): the step pays max(t_dp + t_down_exp, waits), so more compute never
            # shortens it. Review 44: the swap hid behind the whole step's compute, so a copy out
            # longer than the forward showed 0 s exposed (default preset with activation offload:
            # 1.78 s each way against 1.15 s of forward and 2.53 s of backward passes).
            t_way = 0.5 * t_act
            waits = (np.maximum(t_way - m * (t_fwd_mb + x_fwd), 0.0)
                     + np.maximum(t_way - m * (t_bwd_mb + x_bwd), 0.0))
            t_off_act = np.where(np.asarray(b["offload_activations"], dtype=bool),
                                 np.maximum(waits - t_dp - t_down_exp, 0.0), 0.0)
            t_offload = t_off_opt + t_off_act
        else:
            t_offload = t_off_opt

        step = t_compute + t_tp + t_cp + t_ep + t_bubble + t_p2p + t_dp + t_offload + t_optimizer
        T = {
            "step_time_s": step, "t_compute_s": t_compute, "t_tp_comm_s": t_tp, "t_cp_comm_s": t_cp,
            "t_ep_comm_s": t_ep, "t_pp_bubble_s": t_bubble, "t_pp_p2p_s": t_p2p,
            "t_dp_comm_exposed_s": t_dp, "t_offload_s": t_offload, "t_optimizer_s": t_optimizer,
        }
        if detail:
            # the recompute share of the stage costed (partial recompute: its own; DualPipe: the average)
            d_share = 0.0 if partial is None else np.where(
                partial & ~dual if any_dual else partial, np.where(last_is_slowest, for_lo, for_hi), full) - full
            if partial is not None and any_dual:
                # DualPipe: its two stages' own shares weighted by their layers, as _pick costs them (found
                # by review: the model's average share made the TP explain's product 1.6 % off its total,
                # Megatron 3.6B, 30 layers on PP 8, 2 recomputed per chunk)
                w_hi = np.where(last_is_slowest, 1.0, k_hi) * per_stage_hi
                w_lo = np.where(last_is_slowest, 1.0, 2.0 - k_hi) * per_stage_lo
                d_dual = (w_hi * (for_hi - full) + w_lo * (for_lo - full)) / np.maximum(w_hi + w_lo, 1.0)
                d_share = np.where(partial & dual, d_dual, d_share)
            T.update({
                "_m": m, "_layers_stage": layers_stage, "_last_is_slowest": last_is_slowest,
                "_mid_rank": R.get("rank", -1.0), "_first_mb_0": first_mb_0,
                "_ends_slowest": (dual & last_is_slowest) if any_dual else 0.0,
                "_first_mb": first_mb, "_last_mb": last_mb, "_per_stage_hi": per_stage_hi, "_stage_mb": stage_mb, "_t_head_mb": t_head_mb,
                "_t_mtp_mb": t_mtp_mb, "_mtp_D": D, "_mtp_n": head_share * D,
                "_t_tp_mtp": t_tp_mtp, "_t_cp_mtp": t_cp_mtp, "_t_ep_mtp": t_ep_mtp,
                # the costed stage's own mix of dense and MoE layers (DualPipe: the model's average)
                "_layer_mb": own(layer_mb_hi, layer_mb_lo),
                "_t_attn_proj": t_attn_proj, "_t_mlp_dense": t_mlp_dense,
                "_gp": gp, "_ap": ap, "_ep_passes": ep_, "_attn_bwd": attn_bwd,  # passes per micro-batch (explain)
                "_t_mlp_moe": t_mlp_moe, "_t_moe_host": t_moe_host, "_t_row_layer": t_row_layer, "_t_core": t_core, "_core_bounded": core_bounded, "_t_elem_dense": t_elem_dense, "_t_elem_moe": t_elem_moe,
                "_eff_gemm_max": eff_gemm_max, "_q": q, "_mamf_own": own_hp, "_clock": clock,
                # collectives per layer of the costed stage, its MoE layers' MLP half at × top_k·cf
                # (op_sac's re-run O all-reduce without SP is the attention half's: not scaled)
                "_tp_ar": tp_ar, "_tp_msg": tp_msg, "_tp_bw": tp_bw, "_tp_intra": tp_intra, "_tp_inr": tp_inr,
                "_bw_d": bw_d, "_intra_d": intra_d, "_bw_e": bw_e, "_intra_e": intra_e, "_dp_inr": inr & intra_d, "_fb_grad": fb_grad,
                "_fb_ag_step": fb_ag_step, "_n_tp_coll": (n_tp_coll - n_attn_only + 2.0 * d_share) * (
                    1.0 if not any_moe else own((1.0 - msh_hi) + msh_hi * moe_tp_x, (1.0 - msh_lo) + msh_lo * moe_tp_x))
                    + n_attn_only,
                "_tp_exposed_frac": tp_exposed_frac,
                "_etp_ar": etp_ar if etp_diff else 0.0,
                "_cp_fwd": cp_fwd, "_cp_bwd": cp_bwd, "_a2a": a2a, "_ep_bytes": ep_bytes, "_ep_net_frac": net_frac, "_a2a_elem_bytes": a2a_elem_bytes,
                "_n_a2a": n_a2a + 2.0 * d_share, "_ep_hide": ep_hide,
                "_bubble_frac": frac, "_p2p": p2p, "_p2p_msg": p2p_msg, "_v": v,
                "_t_grad": t_grad, "_t_param_ag": t_param_ag, "_t_ag_step": t_ag_step, "_t_grad_rs": t_grad_rs, "_t_rs_mb": t_rs_mb, "_t_dp_total": t_dp_total, "_P_local": P_local, "_z3_first_last": z3_first_last, "_unit_layer": unit_layer, "_unit_emb": unit_emb, "_X": X, "_X_e": X_e, "_P_dense_local": P_dense_local, "_al_d": al_d, "_al_e": al_e, "_ld": ld, "_le": le, "_has_emb": has_emb,
                "_t_rep": t_rep if any_hsdp else 0.0, "_t_rec": t_rec, "_t_fwd_b": t_fwd_mb + x_fwd, "_t_bwd_b": t_bwd_mb + x_bwd,
                "_P_shard": P_shard, "_t_fwd_mb": t_fwd_mb, "_t_bwd_mb": t_bwd_mb,
                "_t_cpu_step": t_cpu_step, "_t_down": t_down, "_t_up": t_up, "_t_down_exp": t_down_exp,
                "_t_nvme": t_nvme, "_t_off_act": t_off_act, "_t_act": t_act, "_act_off_bytes": act,
                "_x_mb": x_mb, "_x_fwd": x_fwd, "_x_bwd": x_bwd, "_dp_tail": dp_tail,
            })
        return T

    # the closure's defaults (a candidate rank passes its own in their place)
    first_mb_0, per_stage_hi_0, cp_hi_mb_0, layer_fwd_hi_0, layer_mb_hi_0 = (
        first_mb, per_stage_hi, cp_hi_mb, layer_fwd_hi, layer_mb_hi)
    c_tp_hi_0, c_ep_hi_0, msh_hi_0 = c_tp_hi, c_ep_hi, msh_hi
    if partial is not None:
        tp_hi_mb_0, ep_hi_mb_0, xep_hi_mb_0, for_hi_0 = tp_hi_mb, ep_hi_mb, xep_hi_mb, for_hi

    # the head-carrying stage (DualPipe: rank 0) first; the other only where it can be the slower:
    # an uneven split (a DualPipe middle rank needs p > 2), or ZeRO-3 at PP > 1, whose first stage
    # exposes the embedding unit's gather and reduce-scatter (found by review h32: an even split never
    # costed it, so 31 → 32 layers shortened a TP 2 × PP 4 × CP 2 step 6.496 → 6.252 s)
    T = _stage(np.ones_like(first_mb, dtype=bool))
    other = (per_stage_hi > per_stage_lo) | ((zero == 3) & (p > 1.0))
    if any_moe and any_dense_moe:
        # and an MoE model's leading dense layers, on the first rank, even on an even split (review 45e:
        # Mixtral with 8 wide dense layers at PP 2: the first stage's 59.6 ms a micro-batch was never
        # costed beside the last stage's 53.4 ms)
        other = other | (is_moe & (n_moe_l < L) & (p > 1.0))
    if any_dual:
        other = np.where(dual, (per_stage_hi > per_stage_lo) & (p > 2.0), other)
    if any_true(other):
        T2 = _stage(np.zeros_like(first_mb, dtype=bool))
        pick = other & (T2["step_time_s"] > T["step_time_s"])
        if any_true(pick):
            T = {k: np.where(pick, T2[k], x) if k in T2 else x for k, x in T.items()}
    # MoE with leading dense layers (not DualPipe, whose ranks hold the average mix): the dense
    # layers sit on the first ranks, so a middle rank holding only MoE layers (or the rank before
    # it, its last dense layers beside MoE ones) can hold as many layers as rank 0 and each of them
    # slower. Costed as the memory stage's middle candidates (memory._candidates): the first virtual
    # stage without a dense layer, on rank sd mod p, and the rank before, clipped to 1 … p − 2 (found
    # by review: DeepSeek-V3-like, 61 layers of which 3 dense with a 1024-wide FFN, PP 16 1F1B: rank
    # 1's four MoE layers take 124 ms a micro-batch, the step was costed on the last stage's 105 ms).
    if any_moe and any_dense_moe:
        nd_tot = L - n_moe_l
        mid_rows = is_moe & (nd_tot > 0.0) & (n_moe_l > 0.0) & (p > 2.0) & ~dual
        if any_true(mid_rows):
            rem = L - base * pv
            big = rem * (base + 1.0)  # layers on the rem virtual stages that hold one more
            sd = np.where(nd_tot <= big, np.ceil(nd_tot / (base + 1.0)),
                          rem + np.ceil((nd_tot - big) / np.maximum(base, 1.0)))
            for jm in (sd, sd - 1.0):
                jm = jm - p * np.floor(jm / p)
                jm = np.where(mid_rows, np.clip(jm, 1.0, np.maximum(p - 2.0, 1.0)), 0.0)
                T3 = _stage(np.zeros_like(first_mb, dtype=bool), rank=_rank_terms(jm))
                pick = mid_rows & (T3["step_time_s"] > T["step_time_s"])
                if any_true(pick):
                    T = {k: np.where(pick, T3[k], x) if k in T3 else x for k, x in T.items()}
    # Results as (N,) arrays; the detail terms (explain only) may stay scalars.
    return {k: _expand(x, n_rows) if k[0] != "_" else x for k, x in T.items()}


def stage(b: Batch, consts: dict | None = None) -> dict[str, np.ndarray]:
    """Step-time columns for every row of a batch.

    Parameters
    ----------
    b : Batch — input columns plus the ``model_stats`` outputs, shape (N,) each.
    consts : dict, optional — calibration constants (``load_calibration()`` when omitted;
        ``tools/calibrate.py`` passes trial values).

    Returns
    -------
    dict of arrays (N,): ``step_time_s`` and its parts ``t_compute_s``, ``t_tp_comm_s``,
    ``t_cp_comm_s``, ``t_ep_comm_s``, ``t_pp_bubble_s``, ``t_pp_p2p_s``,
    ``t_dp_comm_exposed_s``, ``t_offload_s``, ``t_optimizer_s`` [s]; ``tokens_per_s``
    [tokens/s, whole job]; ``tflops_per_gpu`` [TFLOP/s = 1e12 FLOP/s, model FLOPs];
    ``mfu``, ``hfu`` (16-bit peak), ``mfu_precision_peak`` (GEMM precision's peak),
    fractions in [0, 1].
    """
    n_rows = len(b["tp"])
    if n_rows > CHUNK_ROWS + CHUNK_ROWS // 2:
        # rows are independent: cut into about cache-sized chunks of equal size (same result;
        # a batch up to 1.5 chunks goes in one pass: a small tail pass costs more than it saves)
        n_parts = -(-n_rows // CHUNK_ROWS)
        size = -(-n_rows // n_parts)
        parts = [stage({k: v[i:i + size] for k, v in b.items()}, consts) for i in range(0, n_rows, size)]
        return {k: np.concatenate([pt[k] for pt in parts]) for k in parts[0]}
    if n_rows == 1 and consts is None:
        # One scenario (planner.evaluate): keep every term for explain() of the same row.
        T = _terms(b, None, detail=True)
        _LAST.one_row = (tuple(np.asarray(b[k]).item(0) if k in b else None for k in _TERM_INPUTS), T)
        out = {k: v for k, v in T.items() if not k.startswith("_")}
    else:
        out = _terms(b, consts, detail=False)
    step = out["step_time_s"]
    f = lambda k: np.asarray(b[k], dtype=np.float64)  # noqa: E731
    mflop = f("model_flop_per_step")
    inv_sn = 1.0 / (step * f("n_gpus"))  # 1 / (step · N)
    mf = mflop * inv_sn  # model FLOP/s per GPU
    out["tokens_per_s"] = f("global_batch_size") * f("seq_len") / step
    out["tflops_per_gpu"] = mf * 1e-12
    # Not clipped above: with FP8 / FP4 GEMMs the 16-bit-peak MFU / HFU can exceed 1.
    out["mfu"] = np.maximum(mf / f("peak_16bit_flop_per_s"), 0.0)
    out["hfu"] = np.maximum(f("hardware_flop_per_step") * inv_sn / f("peak_16bit_flop_per_s"), 0.0)
    out["mfu_precision_peak"] = np.maximum(mf / f("peak_flop_per_s"), 0.0)
    return out


# ----------------------------------------------------------------------------- explain
def _row_batch(row: dict) -> Batch:
    return {k: np.asarray([row[k]]) for k in _TERM_INPUTS if k in row}


def _abytes(r: dict) -> float:
    """Bytes per activation element of a row: 4 without mixed precision (fp32 / tf32), else 2."""
    return 4.0 if r.get("precision") in (_FP32, _TF32) else BYTES_16


def _ms(x: float) -> str:
    return f"{1e3 * x:,.3g} ms"


def _bound_text(r: dict, T: dict) -> str:
    """``; costed as …`` of a flash core held at the materialised one's (review 17c's invariant, as
    :func:`_terms` applies it)."""
    rc = RECOMPUTE[int(r.get("recompute", 0))]
    plus = " + the recomputed fwd" if rc in ("full", "selective") else ""
    return (f"; costed as the materialised scores' core, forward and backward (fwd + 2 bwd{plus}): at its own rate "
            f"the flash core's compute over a step (fwd + r bwd{plus}, r = (2.5·d_h + knee)/(d_h + knee)) would be "
            "above theirs, which no kernel table shows")


def _passes_text(r: dict, T: dict) -> str:
    """How a layer's time per micro-batch follows from its forward parts (session 25 review: the
    multipliers were not shown, so the per-layer time could not be rebuilt)."""
    gp, ap, ep_ = (float(np.ravel(T[k])[0]) for k in ("_gp", "_ap", "_ep_passes"))
    extra = []
    if r.get("recompute") == _RC_OPSAC:
        extra.append("op_sac's re-run matmuls and elementwise ops")
    if r.get("fp8_rowwise") and float(np.ravel(T.get("_t_row_layer", 0.0))[0]) > 0:
        # only where they are charged: FP8 GEMMs (review 45e: also said on BF16 / FP4 runs)
        extra.append("the row-wise FP8 casts")
    if float(r.get("n_experts", 0) or 0) > 0 and float(r.get("n_moe_layers", 0) or 0) > 0:
        extra.append("MoE layers' host time")
    same = gp == ep_
    rb = float(np.ravel(T.get("_attn_bwd", BWD_OVER_FWD))[0])
    if r.get("flash_attention") and any_true(T.get("_core_bounded", False)):
        core_txt = f"attention core × {ap:.4g} (backward {rb:.4g} × its forward: costed as the materialised scores')"
    elif r.get("flash_attention"):  # flash_bwd_over_fwd: 2.5 × the matmuls, one exp per score as forward
        fa2_txt = (" with the native kernels' knee, for FlashAttention-2-class kernels too"
                   if r.get("attention_kernel") else "")
        core_txt = (f"attention core × {ap:.4g} (backward {rb:.4g} × its forward = (2.5·d_h + knee)/(d_h + knee)"
                    f"{fa2_txt}: 5 matmuls against 2, one exp per score element in each pass)")
    else:
        core_txt = f"attention core × {ap:.4g}"
    rc = int(r.get("recompute", 0) or 0)
    what = ("forward + backward" if rc == RECOMPUTE.index("none") else
            "forward + backward + recomputed forward" if rc == RECOMPUTE.index("full") else
            "forward + backward + what the recompute re-runs")  # review 48g: "recomputed forward" without recompute
    return (f"passes per micro-batch ({what}): "
            + (f"GEMMs and elementwise × {gp:.4g}" if same else f"GEMMs × {gp:.4g}, elementwise × {ep_:.4g}")
            + f", {core_txt}"
            + (f", plus {' and '.join(extra)}" if extra else "") + "; ")


def _stage_text(r: dict, T: dict) -> str:
    """How the slowest stage's time per micro-batch is made up, for explain."""
    n, per, head = T["_layers_stage"], T["_layer_mb"], T["_t_head_mb"]
    mtp, D = T.get("_t_mtp_mb", 0.0), T.get("_mtp_D", 0.0)
    # multi-token prediction: its D modules run with the head (the last stage; DualPipe: the end ranks)
    mtp_txt = (f" + MTP {D:g} module{'s' if D != 1 else ''} (block, eh_proj, head+loss again) {_ms(mtp)}"
               if mtp else "")
    hl = "head+loss and MTP" if mtp else "head+loss"
    ends = 0.5 * (T["_first_mb"] + T["_last_mb"])
    if r.get("schedule") == _SCHED["dualpipe"]:
        if T["_ends_slowest"]:
            return (f"(DualPipe: each rank runs half its micro-batches on each of its two stages, "
                    f"½ × (first stage {_ms(T['_first_mb'])} + last stage {_ms(T['_last_mb'])}"
                    + (f", with its head+loss {_ms(head)}{mtp_txt}" if mtp else "") + "))")
        txt, shown = (f"(= {n:.4g} layers × {_ms(per)}: DualPipe, the most loaded middle rank (stages j and p−1−j, "
                      f"{n:.4g} layers on average), its step — compute, its layers' TP / CP / EP time and what its "
                      f"windows leave of the DP / offload transfers — longer than rank 0's, whose two end stages "
                      f"average {_ms(ends)} of compute"), n * per
    elif T["_last_is_slowest"]:
        txt, shown = f"(= {n:.4g} layers × {_ms(per)} + head+loss {_ms(head)}{mtp_txt}", n * per + head + mtp
    elif T.get("_mid_rank", -1.0) >= 1.0:
        txt, shown = (f"(= {n:.4g} layers × {_ms(per)}, rank {T['_mid_rank']:.0f} of {r['pp']}: the leading dense "
                      f"layers sit on the first ranks, so this middle rank holds more MoE layers; its step is "
                      f"longer than the first stage's ({_ms(T['_first_mb_0'])}) and the last one's "
                      f"({_ms(T['_last_mb'])} with its {hl})"), n * per
    elif T["_last_mb"] > T["_first_mb"]:
        txt, shown = (f"(= {n:.4g} layers × {_ms(per)}, the first stage: the last one computes more "
                      f"({_ms(T['_last_mb'])} with its {hl}) but its layer fewer of TP / CP / EP "
                      "communication, and the DP / offload time its wider windows hide, leave its step shorter"), n * per
    else:
        txt, shown = (f"(= {n:.4g} layers × {_ms(per)}, the first stage; the last one's {_ms(head + mtp)} {hl} "
                      "leaves it faster"), n * per
    rest = T["_stage_mb"] - shown
    if abs(rest) > 1e-6 * max(T["_stage_mb"], 1e-30):  # partial recompute: this stage's own share
        txt += (f" {'+' if rest > 0 else '−'} {_ms(abs(rest))}: partial recompute, this stage recomputes its own "
                "share of layers, not the average the per-layer time holds")
    return txt + ")"



def _moe_dense_layers(r: dict) -> tuple[float, float]:
    """(MoE layers, dense layers) of one row (0 MoE layers for a dense model)."""
    n_moe = float(r.get("n_moe_layers", 0.0) or 0.0) if r.get("n_experts") else 0.0
    return n_moe, float(r["n_layers"]) - n_moe


def _mlp_text(r: dict, T: dict) -> str:
    """The MLP part of the per-layer explain: dense layers' MLP, MoE layers' experts + router, or both."""
    n_moe, n_dense = _moe_dense_layers(r)
    cf = max(float(r.get("moe_capacity_factor") or 1.0), 1.0)
    moe = (f"MoE MLP {_ms(T['_t_mlp_moe'])} (routed experts × load imbalance {cf:g} (moe_capacity_factor) + "
           f"shared experts + router, {n_moe:.0f} layers)")
    if n_moe <= 0:
        return f"MLP {_ms(T['_t_mlp_dense'])}"
    if n_dense <= 0:
        return moe
    return f"dense MLP {_ms(T['_t_mlp_dense'])} ({n_dense:.0f} layers), " + moe


def _etp(r: dict) -> float:
    """The row's expert TP (``etp`` column; absent = tp)."""
    return float(r.get("etp") or r["tp"])


def _expert_eff(r: dict, T: dict, tok: float, up: float) -> float:
    """GEMM efficiency of one routed expert's MLP (M = tokens per local expert, K/N = h and the
    expert width over the expert TP), as the MoE layer's time uses it."""
    etp = _etp(r)
    tok_e = tok * r["moe_top_k"] * r["ep"] * (etp / float(r["tp"])) / max(float(r["n_experts"]), 1.0)
    fe = max(float(r["expert_ffn_hidden_size"]), 1.0)
    return float(T["_eff_gemm_max"] / (1.0 + T["_q"] * (1.0 / tok_e + 1.0 / r["hidden_size"] + etp / (up * fe))))


def _etp_text(r: dict) -> str:
    """`` (expert TP … ≠ TP …: …)`` after the expert GEMM efficiency; empty when etp = tp."""
    etp, tp = _etp(r), float(r["tp"])
    if not r.get("n_experts") or etp == tp:
        return ""
    tok = r["micro_batch_size"] * r["seq_len"] / r["cp"]
    tok_e = tok * r["moe_top_k"] * r["ep"] * (etp / tp) / max(float(r["n_experts"]), 1.0)
    return (f" (expert TP {etp:g} ≠ TP {tp:g}: GEMMs of {tok_e:,.4g} tokens per local expert, "
            f"tok·top_k·ep·etp/(tp·E), × h × expert width/{etp:g})")


def _elem_text(r: dict, T: dict) -> str:
    """The elementwise part of the per-layer explain, dense and MoE layers apart."""
    n_moe, n_dense = _moe_dense_layers(r)
    if n_moe <= 0:
        return f"elementwise {_ms(T['_t_elem_dense'])}"
    if n_dense <= 0:
        return f"elementwise {_ms(T['_t_elem_moe'])}"
    return f"elementwise {_ms(T['_t_elem_dense'])} (dense layers) / {_ms(T['_t_elem_moe'])} (MoE layers)"

def explain(row: dict) -> dict[str, str]:
    """Formula strings with the numbers plugged in, one per result column, for one scenario.

    ``row``: dict of python scalars of every column (inputs and earlier stages)."""
    C = _calibration()
    last = getattr(_LAST, "one_row", None)
    if last is not None and last[0] == tuple(map(row.get, _TERM_INPUTS)):
        terms = last[1]  # stage() just computed this row (planner.evaluate)
    else:
        terms = _terms(_row_batch(row))
    # (the terms are (1,) arrays, numpy scalars or floats: ``.ndim`` where they have one, as np.ndim)
    T = {k: float(v[0]) if getattr(v, "ndim", 0) else float(v) for k, v in terms.items()}
    r = row
    n = r["n_gpus"]
    step = T["step_time_s"]
    ex: dict[str, str] = {}
    tok = r["micro_batch_size"] * r["seq_len"] / r["cp"]
    up = 2.0 if r["gated_mlp"] else 1.0
    eff_mlp = T["_eff_gemm_max"] / (1.0 + T["_q"] * (1.0 / tok + 1.0 / r["hidden_size"]
                                                   + r["tp"] / (up * r["ffn_hidden_size"])))
    ex["t_compute_s"] = (
        f"m·t_mb = {T['_m']:.4g} micro-batches × {_ms(T['_stage_mb'])} "
        + _stage_text(r, T) + "; "
        f"per layer fwd: attn proj {_ms(T['_t_attn_proj'])}, {_mlp_text(r, T)}, "
        f"attn core {_ms(T['_t_core'])} ({_attn_label(r)}"
        + (f"; layer average with a {r['sliding_window']}-token window in {r.get('swa_layer_frac', 1.0):.0%} of layers"
           if r.get("sliding_window") and r.get("flash_attention") else "")
        + (_bound_text(r, T) if any_true(T.get("_core_bounded", False)) else "")
        + f"), {_elem_text(r, T)}; "
        + _passes_text(r, T) +
        f"GEMM eff_max {T['_eff_gemm_max']:.3f} ({_eff_max_origin(r, T)}), "
        + (f"MLP up-projection GEMM eff {eff_mlp:.3f}" if _moe_dense_layers(r)[1] > 0 else "")
        + (("; " if _moe_dense_layers(r)[1] > 0 else "") + f"expert GEMM eff {_expert_eff(r, T, tok, up):.3f}"
           + _etp_text(r) if _moe_dense_layers(r)[0] > 0 else "")
        + (f"; MoE layers add the routed experts' host time {r['n_experts'] / r['ep']:.4g} local "
           f"expert{'s' if r['n_experts'] / r['ep'] != 1 else ''} × "
           f"{MOE_HOST_S_PER_LOCAL_EXPERT * 1e3:.3g} ms = {_ms(T['_t_moe_host'])} per layer and micro-batch"
           + (f" (fwd + bwd; × {1.0 + _full_share(r) / (1.0 + BWD_OVER_FWD):.4g} with the recomputed forward, which "
              "launches the experts again)" if _full_share(r) > 0 else "")
           if r.get("n_experts") and _moe_dense_layers(r)[0] > 0 else "")  # none charged without MoE layers (15e)
        + (f"; FP8 row-wise scaling adds {FP8_ROWWISE_BYTES:g} B per cast element (every linear: forward M·K + K·N, "
           f"backward 2·M·N + M·K + K·N{(', the forward again with full recompute' + (' of the layers it covers' if r.get('recompute_layers') else '')) if r.get('recompute') == RECOMPUTE.index('full') else ''}) "
           f"/ HBM bw = {_ms(T['_t_row_layer'])} per layer and micro-batch"
           + (" (MoE layers: their attention projections and shared experts; the routed experts are not charged)"
              if r.get("n_experts") and _moe_dense_layers(r)[0] > 0 else "")  # none charged without MoE layers (15e)
           if r.get("fp8_rowwise") and T["_t_row_layer"] else "")
    )
    ex["t_tp_comm_s"] = (
        f"m·layers·n_coll·t_AR·exposed = {T['_m']:.4g} × {T['_layers_stage']:.4g} × {T['_n_tp_coll']:.4g} × "
        f"{_ms(T['_tp_ar'])} (ring all-reduce of {_msg_text(r)} = {T['_tp_msg'] / 1e6:.4g} MB over "
        f"tp = {r['tp']}{_mesh_text(r, r['tp']) if bool(np.asarray(T['_tp_intra']).reshape(-1)[0]) else ''}"
        f"{'; ' + _link_text(r, T['_tp_bw'], T['_tp_intra'], T['_tp_inr']) if float(r['tp']) > 1 else ''}) × {T['_tp_exposed_frac']:.2f}{_mtp_comm_text(T, '_t_tp_mtp')} = {T['t_tp_comm_s']:.4g} s"
        + _tp_coll_text(r, T)
    )
    ex["t_cp_comm_s"] = _cp_text(r, T)
    ex["t_ep_comm_s"] = "no MoE layers (a dense model): no expert all-to-all, 0 s" if not r.get("n_experts") else (
        f"m·moe_layers·max(0, {T['_n_a2a']:.4g} all-to-all × {_ms(T['_a2a'])} − hidden {_ms(T['_ep_hide'])})"
        f"{_ep_layers_text(r, T)} "
        f"({_ep_msg_text(r, T)} = {T['_ep_bytes'] / 1e6:.4g} MB over ep = {r['ep']}"
        + (f" ranks {_etp(r):g} apart (expert TP {_etp(r):g} ≠ TP {float(r['tp']):g}: the expert group etp·ep = "
           f"{_etp(r) * float(r['ep']):g} consecutive ranks, Megatron's expert rank order)"
           if r.get("n_experts") and _etp(r) != float(r["tp"]) else "")
        + f"{' (FP8 dispatch: 1 B dispatch, 2 B combine)' if r.get('ep_dispatch_fp8') else ''}{_ep_link_text(r)}; "
        + (f"network share × {float(T['_ep_net_frac']):.3g} ({_ep_net_why(r, T)}); "
           if float(T["_ep_net_frac"]) != 1.0 and _ep_domains(r) > 1 else "")
        + f"hidden = overlap fraction × the MoE layer's compute of another micro-batch when ep_comm_overlap)"
        f"{_mtp_comm_text(T, '_t_ep_mtp')} = {T['t_ep_comm_s']:.4g} s"
    )
    if int(r.get("schedule", 0)) == _SCHED["dualpipe"]:
        ex["t_pp_bubble_s"] = (
            f"DualPipe (DeepSeek-V3 Table 2): (p/2 − 1)(F&B + B − 3W) with F&B = F + B, W = (B − R)/2 → "
            f"({r['pp']}/2 − 1) × (F {_ms(T['_t_fwd_mb'])} + B {_ms(T['_t_bwd_mb'])}/2 + 3/2 · recomputed "
            f"forward R {_ms(float(T['_t_rec']))} (full recompute only; a selective re-run of the attention core "
            f"and op_sac's re-run matmuls and elementwise ops are counted in B, like the core's backward, though "
            f"none of them has a weight-gradient part)) = bubble fraction "
            f"{T['_bubble_frac']:.4g} of the m = {T['_m']:.4g} micro-batches × (compute + TP + CP + EP) = "
            f"{T['t_pp_bubble_s']:.4g} s")
    elif int(r.get("schedule", 0)) == _SCHED["zero_bubble"]:
        F_, B_, R_ = float(T["_t_fwd_b"]), float(T["_t_bwd_b"]), float(T["_t_rec"])
        p_, m_ = float(r["pp"]), float(T["_m"])
        W_ = 0.5 * (B_ - R_)
        zb1, floor = (p_ - 1.0) * (F_ + R_), (p_ - 1.0) * (F_ + B_ - W_) - max(m_ - 1.0, 0.0) * W_
        ex["t_pp_bubble_s"] = (
            f"ZB-H1 (Qi et al. 2024): (p−1)(F + R) = ({r['pp']} − 1) × (F {_ms(F_)} + recomputed forward R {_ms(R_)}; "
            "R is full recompute's only: a selective re-run of the attention core and op_sac's re-run matmuls and "
            "elementwise ops are counted in B, though they have no weight-gradient part) "
            f"= {_ms(zb1)}, W = (B − R)/2 = {_ms(W_)} of the backward B {_ms(B_)} filling the rest"
            + (f"; below m = p the critical path's floor (p−1)(F + B − W) − (m−1)W = {_ms(floor)} binds"
               if floor > zb1 else "")
            + f" → bubble fraction {T['_bubble_frac']:.4g} of the m = {m_:.4g} micro-batches × (compute + TP + CP + EP) "
            f"= {T['t_pp_bubble_s']:.4g} s"
        )
    else:
        ex["t_pp_bubble_s"] = (
            f"bubble fraction {T['_bubble_frac']:.4g} (p−1)/(v·m) with p = {r['pp']}, v = {T['_v']:.0f}, "
            f"m = {T['_m']:.4g} × (compute + TP + CP + EP) = {T['t_pp_bubble_s']:.4g} s"
        )
    ex["t_pp_p2p_s"] = (
        f"2·v·m·t_p2p = 2 × {T['_v']:.0f} × {T['_m']:.4g} × {_ms(T['_p2p'])} ({_msg_text(r, '/t', '/' + format(float(r['tp']), 'g'))} "
        f"= {T['_p2p_msg'] / 1e6:.4g} MB{_p2p_link_text(r)}) = {T['t_pp_p2p_s']:.4g} s"
    )
    ds = r.get("dp_shard", r["dp"])
    where = ("in the grad time" if int(r["zero_stage"]) < 3 else
             "after the ZeRO-3 collectives, in what the last micro-batch's backward leaves")
    hsdp = (f"HSDP: shard over dp_shard·cp = {ds * r['cp']:g}, all-reduce of the gradient shard over "
            f"{r['dp'] / ds:g} replicas {float(T['_t_rep']):.4g} s once per step ({where}); "
            if ds < r["dp"] else "")
    wide = float(T["_x_mb"]) > 0  # the CP / EP-overlap remainders widen the windows
    if int(r["zero_stage"]) == 3:
        x_txt = (f" + the exposed CP / EP remainders it runs alongside {_ms(T['_x_mb'])}" if wide else "")
        win = (f"(each micro-batch's forward + backward {_ms(T['_stage_mb'])}{x_txt}) × {C['dp_overlap_frac']:.2f}, "
               f"except the first unit's gather and the last unit's reduce-scatter, {float(T['_z3_first_last']):.4g} s a "
               f"micro-batch ({_z3_unit_text(r, T)}); each micro-batch's exposed part at most its own collectives")
    elif int(r["zero_stage"]) == 0:  # no parameter gather: the backward window alone (review 25)
        x_txt = (f" (widened by the exposed CP / EP remainders it runs alongside, {_ms(T['_x_bwd'])})"
                 if wide else "")
        win = (f"backward {_ms(T['_t_bwd_mb'])}{x_txt} × {C['dp_overlap_frac']:.2f} except the last bucket's "
               f"all-reduce, {_ms(T['_fb_grad'])}, which starts when the backward ends (the floor of what stays "
               "exposed)")
    else:
        x_txt = (f" (each widened by the exposed CP / EP remainders it runs alongside, "
                 f"{_ms(T['_x_bwd'])} / {_ms(T['_x_fwd'])})" if wide else "")
        win = (f"backward {_ms(T['_t_bwd_mb'])} / forward {_ms(T['_t_fwd_mb'])}{x_txt} × "
               f"{C['dp_overlap_frac']:.2f} except the last bucket of each, {_ms(T['_fb_grad'])} of the gradient "
               f"reduce-scatter and {_ms(T['_fb_ag_step'])} of the gather (the floors of what stays exposed)")
    hidden = (f"hidden behind {win}" if r.get("dp_comm_overlap", True) else
              "not overlapped (dp_comm_overlap off): all of it in the step")
    zs = int(r["zero_stage"])
    dual_txt = " (DualPipe: both stages' parameters)" if r.get("schedule") == _SCHED["dualpipe"] else ""
    if zs == 3:
        parts_txt = (f"m = {T['_m']:.4g} micro-batches × (2 × param gather {T['_t_param_ag']:.4g} s + gradient "
                     f"reduce-scatter {T['_t_grad_rs']:.4g} s) of the stage it runs")
        if ds < r["dp"]:
            rep = float(T["_t_rep"]) * (2.0 if r.get("schedule") == _SCHED["dualpipe"] else 1.0)
            parts_txt += f" + replica all-reduce {rep:.4g} s{dual_txt}"
    elif zs == 0:
        parts_txt = f"gradient all-reduce {T['_t_grad']:.4g} s{dual_txt}"
    else:
        if ds < r["dp"]:  # HSDP: the replica all-reduce rides in the gradient's time (_t_grad holds both)
            rep = float(T["_t_rep"]) * (2.0 if r.get("schedule") == _SCHED["dualpipe"] else 1.0)
            parts_txt = (f"gradient reduce-scatter {T['_t_grad'] - rep:.4g} s + replica all-reduce {rep:.4g} s + "
                         f"param gather {T['_t_ag_step']:.4g} s{dual_txt}")
        else:
            parts_txt = f"gradient reduce-scatter {T['_t_grad']:.4g} s + param gather {T['_t_ag_step']:.4g} s{dual_txt}"
        if zs == 2 and T["_m"] > 1:
            parts_txt += (f" + {T['_m'] - 1:.4g} earlier micro-batches' reduce-scatters × {float(T['_t_rs_mb']):.4g} s "
                          "(ZeRO-2 keeps only its gradient shard: every backward reduces, each hidden behind its "
                          "micro-batch's forward + backward except the last bucket or, if smaller, the last layer's)")
    ring_word = ("the dense parameters' ring" if r.get("n_experts") and (
        float(r.get("ep", 1) or 1) > 1 or _etp(r) != float(r["tp"])) else "the ring")
    ex["t_dp_comm_exposed_s"] = (
        f"ZeRO-{r['zero_stage']}: {hsdp}DP collectives over {'dp_shard·cp' if hsdp else 'dp·cp'} = "
        f"{(ds if hsdp else r['dp']) * r['cp']:g}"
        + (f" (the routed experts' over the expert data-parallel group tp·cp·dp/(etp·ep) = "
           f"{float(r['tp']) * r['cp'] * r['dp'] / (_etp(r) * float(r['ep'])):g} ranks, {_etp(r) * float(r['ep']):g} "
           f"apart: expert TP {_etp(r):g} ≠ TP {float(r['tp']):g}; {_expert_ring_text(r, T)})"
           if r.get("n_experts") and _etp(r) != float(r["tp"]) else
           # review 48 (new-user check): with EP the expert gradients, most of an MoE model's bytes, sync
           # over dp·cp/ep ranks tp·ep apart on their own link, which the text did not name
           f" (the routed experts' over the expert data-parallel group dp·cp/ep = "
           f"{(ds if hsdp else r['dp']) * r['cp'] / float(r['ep']):g} ranks, {float(r['tp']) * float(r['ep']):g} "
           f"apart; {_expert_ring_text(r, T)})"
           if r.get("n_experts") and float(r.get("ep", 1) or 1) > 1 else "")
        + f": {parts_txt} = {T['_t_dp_total']:.4g} s in total"
        + (f" ({ring_word} "
           f"{_link_text(r, T['_bw_d'], T['_intra_d'], False)}"
           + (f"; the all-reduce × NVLS {comm.IN_NETWORK_ALLREDUCE_SPEEDUP:.4g}" if zs == 0 and bool(
               np.asarray(T['_dp_inr']).reshape(-1)[0]) else "") + ")"
           if (ds if hsdp else r['dp']) * r['cp'] > 1 else "")
        + f"; {hidden} → exposed {T['t_dp_comm_exposed_s']:.4g} s"
    )
    off_parts = []
    if r.get("offload_optimizer", 0):
        tail = float(T["_x_bwd"]) + float(T["_dp_tail"])
        tail_txt = (f" + the {tail:.4g} s of exposed collectives at its end, on other links" if tail > 0 else "")
        off_parts += [f"grads down {T['_t_down_exp']:.4g} s (the {T['_t_down']:.4g} s transfer beyond the last "
                      f"backward's {T['_t_bwd_mb']:.4g} s{tail_txt})", f"CPU Adam {T['_t_cpu_step']:.4g} s",
                      (f"weights up {T['_t_up']:.4g} s" if r.get("offload_master_weights") else
                       f"fp32 master up {T['_t_up']:.4g} s (the GPU keeps its own master: offload_master_weights off)")]
        if T["_t_nvme"]:
            off_parts.append(f"NVMe optimizer states read + write {T['_t_nvme']:.4g} s (12 B/param each way, at the "
                             "node's NVMe read and write rates shared by its GPUs)")
    if r.get("offload_activations"):
        way, m_ = 0.5 * float(T["_t_act"]), float(T["_m"])
        f_win = m_ * (float(T["_t_fwd_mb"]) + float(T["_x_fwd"]))
        b_win = m_ * (float(T["_t_bwd_mb"]) + float(T["_x_bwd"]))
        off_parts.append(f"activation swap {T['_t_off_act']:.4g} s ({T['_act_off_bytes'] / 2**30:.4g} GiB = m micro-batches' "
                         f"activations of the busiest rank, each way over the host link: {way:.4g} s out, beyond the "
                         f"{f_win:.4g} s of forward passes it hides in, + {way:.4g} s back, beyond the {b_win:.4g} s of "
                         "backward passes"
                         + (" (each with its exposed CP / EP remainders)" if float(T["_x_mb"]) > 0 else "")
                         + "; full duplex, so the reload does not queue behind a gradient download"
                         + (f"; less the {float(T['t_dp_comm_exposed_s']):.4g} s of exposed DP collectives"
                            + (" and the download's exposure" if r.get("offload_optimizer", 0) else "")
                            + " these waits overlap" if float(T["t_dp_comm_exposed_s"]) > 0 or r.get("offload_optimizer", 0)
                            else "")
                         + ")")
    ex["t_offload_s"] = (" + ".join(off_parts) + f" = {T['t_offload_s']:.4g} s") if off_parts else "no offload: 0 s"
    ex["t_optimizer_s"] = (
        "optimizer offloaded: its CPU step is in t_offload_s, 0 s on the GPU" if r.get("offload_optimizer", 0) else
        f"{T['_P_shard'] / 1e6:.4g} M params of the local shard (sized on the stages' average: {_shard_text(r)}, "
        f"docs/timing.md) × (grad {r['grad_bytes']:g} + {OPT_BYTES_BASE:g}) B / "
        f"(HBM {r['hbm_bw_bytes_per_s'] / 1e12:.3g} TB/s × {C['hbm_eff']}) = {T['t_optimizer_s']:.4g} s"
    )
    ex["step_time_s"] = " + ".join(
        f"{k[2:-2] if k.startswith('t_') else k} {T[k]:.4g}" for k in (
            "t_compute_s", "t_tp_comm_s", "t_cp_comm_s", "t_ep_comm_s", "t_pp_bubble_s", "t_pp_p2p_s",
            "t_dp_comm_exposed_s", "t_offload_s", "t_optimizer_s")
    ) + f" = {step:.4g} s"
    tokens = r["global_batch_size"] * r["seq_len"]
    ex["tokens_per_s"] = f"B·s / step = {tokens:,} / {step:.4g} s = {tokens / step:,.4g} tokens/s"
    mf = r["model_flop_per_step"]
    ex["tflops_per_gpu"] = f"model FLOP / (step · N) = {mf:.4g} / ({step:.4g} × {n}) = {mf / step / n / 1e12:.4g} TFLOP/s"
    pk = r["peak_16bit_flop_per_s"]
    ex["mfu"] = (f"model FLOP / (step · N · peak16) = {mf:.4g} / ({step:.4g} × {n} × "
                 f"{_flop_rate(pk)}) = {_frac(mf / (step * n * pk))}")
    pp_ = float(r.get("peak_flop_per_s") or 0.0)
    if pp_ > 0.0 and pp_ != pk:
        # an FP8 / FP4 (or fp32) run: the GEMM precision's own peak, right after mfu in evaluate's
        # table (review 34: the column had no formula, and the table's note named a row it never showed)
        prec = r.get("precision")
        if isinstance(prec, (int, float)) and 0 <= int(prec) < len(PRECISIONS):
            prec = PRECISIONS[int(prec)]
        ex["mfu_precision_peak"] = (
            f"model FLOP / (step · N · {str(prec).upper() if isinstance(prec, str) else 'the GEMM precision'} peak) = "
            f"{mf:.4g} / ({step:.4g} × {n} × {_flop_rate(pp_)}) = {_frac(mf / (step * n * pp_))}")
    if float(r.get("mtp_layers", 0) or 0) > 0:  # the model FLOPs include the MTP modules (model_stats)
        D = float(r["mtp_layers"])
        ex["mfu"] += (f" (model FLOP include the {D:g} MTP module{'s' if D != 1 else ''}: block, eh_proj and "
                      "one more output head each, as Megatron-LM's num_floating_point_operations counts them)")
    hf = r["hardware_flop_per_step"]
    ex["hfu"] = (f"hardware FLOP / (step · N · peak16) = {hf:.4g} / ({step:.4g} × {n} × "
                 f"{_flop_rate(pk)}) = {_frac(hf / (step * n * pk))}")
    return ex


def _row_layout(r: dict, n_group: float, stride: float, whole_job: bool = True) -> tuple[float, float]:
    """(members in the emptiest domain, domains spanned) of a group of ``n_group`` ranks ``stride``
    apart in row ``r``'s placement (comm.placement_domain, comm.group_layout; ``whole_job``: counting
    the blocks the job holds), as the step time places it; for the formula strings."""
    n = np.array([float(r.get("n_gpus", 1) or 1)])
    dom = comm.placement_domain(np.array([float(r.get("nvlink_domain_size", 1) or 1)]),
                                np.array([float(r.get("gpus_per_node", 1) or 1)]), n)
    g, nd = comm.group_layout(np.array([float(n_group)]), np.array([float(stride)]), dom, n if whole_job else None)
    return float(np.asarray(g).reshape(-1)[0]), float(np.asarray(nd).reshape(-1)[0])


def _scaleup_e(r: dict) -> tuple[float, float]:
    """(a GPU's achieved scale-up bandwidth [B/s], its full-mesh links; 0 behind a switch)."""
    links = float(r.get("scaleup_mesh_links", 0) or 0)
    return float(r.get("scaleup_bw_bytes_per_s", 0.0) or 0.0) * _calibration()["link_eff"]["scaleup"], links


def _ep_domains(r: dict) -> float:
    """NVLink domains the EP group of row ``r`` spans (comm.group_layout, as the step time places it):
    1 means nothing of the all-to-all crosses the network (review 48a: a network share was printed
    for EP 8 inside one node)."""
    return _row_layout(r, float(r.get("ep", 1) or 1), _etp(r))[1]


def _ep_link_text(r: dict) -> str:
    """The expert all-to-all's links, as comm.a2a_link_s costs them: ", inside one NVLink domain at X GB/s
    achieved" (on a full mesh the group's share of the links), or the domains it spans, members per
    domain and the network share per GPU; "" for EP 1. Review 48 (new-user check): the EP formula named
    no link or bandwidth."""
    e = float(r.get("ep", 1) or 1)
    if e <= 1:
        return ""
    g, nd = _row_layout(r, e, _etp(r))
    bw, links = _scaleup_e(r)
    if nd <= 1.0:
        share = float(np.asarray(comm.mesh_share(np.array([e]), np.array([links]))).reshape(-1)[0])
        mesh = f" ({e - 1:g} of the full mesh's {links:g} links)" if links > 0 and share < 1.0 else ""
        return f"; inside one {_dom_word(r)} at {bw * share / 1e9:.4g} GB/s achieved{mesh}"
    share = float(np.asarray(comm.mesh_share(np.array([g]), np.array([links]))).reshape(-1)[0])
    return (f"; across {nd:g} {_dom_word(r)}s, {g:g} members in the emptiest: the scale-up part at "
            f"{bw * share / 1e9:.4g} GB/s, the (ep − {g:g})/ep sent over the network at {_nic_e(r) / 1e9:.4g} GB/s "
            "per GPU, the slower setting the time")


def _ep_net_why(r: dict, T: dict) -> str:
    """Why the expert all-to-all's network share is below 1: node-limited routing, node-aware
    dispatch, or both (the smaller share is used)."""
    node = ("node-aware dispatch (DeepEP): one copy per destination node, D·(1 − p₀)/top_k, p₀ = C(E − E/D, k)/C(E, k) "
            "the chance a domain gets none of a token's k experts")
    if not r.get("ep_node_dispatch"):
        return "node-limited routing: min(top_k, M, D)/top_k, D the domains the EP group spans"
    if float(r.get("moe_max_nodes_per_token", 0) or 0) > 0:
        return "the smaller of node-limited routing's min(top_k, M, D)/top_k and " + node
    return node


def node_dispatch_network_frac(n_experts, top_k, ep, stride, domain_size, n_gpus=None) -> np.ndarray:
    """Network share of a node-aware expert dispatch (DeepEP's internode kernels), against one copy
    per routed expert: ``D·(1 − p₀)/k``, arrays (N,).

    The EP group's ``ep`` ranks (``stride`` apart) span ``D`` NVLink domains
    (:func:`planner.comm.group_layout`), each holding ``E/D`` of the ``E`` routed experts. A token
    picks ``k`` distinct experts; with the choice taken uniform (balanced routing), a given other
    domain receives none of them with probability ``p₀ = C(E − E/D, k) / C(E, k)`` = Π_{i<k} (E −
    E/D − i)/(E − i), so ``(D − 1)(1 − p₀)`` copies cross the network (one per destination domain,
    which NVLink then forwards to its experts: DeepEP, deepseek-ai/DeepEP README, "internode"
    kernels; DeepSeek-V3 report §3.2.2) against ``k·(D − 1)/D`` when every routed copy is sent on
    its own (:func:`planner.comm.a2a_link_s`'s network term). 1 inside one domain (no network).
    E.g. 128 experts, top-8, EP 32 on four 8-GPU nodes: p₀ = Π (96 − i)/(128 − i) = 0.0927, share
    4 × 0.9073 / 8 = 0.454. Simplification: routing is taken as uniform over the experts. The
    NVLink forwarding inside the destination node is in the NVLink term (:func:`planner.comm.a2a_link_s`).
    """
    E = np.maximum(np.asarray(n_experts, dtype=float), 1.0)
    k = np.maximum(np.asarray(top_k, dtype=float), 1.0)
    _g, D = comm.group_layout(ep, stride, domain_size, n_gpus)
    D = np.maximum(np.asarray(D, dtype=float), 1.0)
    per = E / D  # experts per domain
    p0 = np.ones(np.broadcast(E, k, D).shape)
    for i in range(int(np.max(k))):  # over the routed experts of a token, not over configurations
        on = i < k
        p0 = np.where(on, p0 * np.maximum(E - per - i, 0.0) / np.maximum(E - i, 1.0), p0)
    frac = D * (1.0 - p0) / k
    return np.where(D > 1.0, np.minimum(frac, 1.0), 1.0)


def _z3_unit_text(r: dict, T: dict) -> str:
    """Which unit ZeRO-3's exposed first gather / last reduce-scatter is, and its parameters."""
    emb = bool(np.asarray(T["_has_emb"]).reshape(-1)[0])
    u_l, u_e = float(T["_unit_layer"]), float(T["_unit_emb"])
    lat = f"each with the ring's latency {_ms(float(T['_al_d']) + float(T['_al_e']))}"
    if emb and u_e > u_l:
        n = float(r["vocab_size"]) * float(r["hidden_size"]) / float(r["tp"])
        cap = float(T["_P_dense_local"])
        n_txt = (f"V·h/tp = {n / 1e6:.4g} M parameters" if n <= cap else
                 f"V·h/tp = {n / 1e6:.4g} M parameters, taken as the average stage's dense {cap / 1e6:.4g} M "
                 "the collectives are sized on")
        return (f"the embedding, torchtitan's tok_embeddings FSDP unit: {n_txt}, "
                f"gathered in 16 bits and reduced in grad_bytes over the dense group, {lat}; "
                f"a layer's would be {u_l:.4g} s")
    where = "" if emb else "; the costed stage holds no embedding"
    e_txt = (f" and {float(T['_le']):.4g} of its expert parameters" if float(T["_al_e"]) > 0 or
             float(np.asarray(T.get("_X_e", 0.0)).reshape(-1)[0]) > 0 else "")
    return (f"an average layer: {float(T['_ld']):.4g} of the stage's dense parameters{e_txt}, "
            f"gathered in 16 bits and reduced in grad_bytes, {lat}{where}")


def _msg_text(r: dict, extra_sym: str = "", extra_val: str = "") -> str:
    """A message size as its formula and the row's numbers: ``b·(s/c)·h{extra}·B B = 1·8192/4·8192{…}·2 B``
    (one activation of a micro-batch, ``/c`` only with context parallelism)."""
    cp = float(r.get("cp", 1) or 1)
    sym = "b·(s/c)·h" if cp > 1 else "b·s·h"
    s_txt = f"{r['seq_len']:g}/{cp:g}" if cp > 1 else f"{r['seq_len']:g}"
    return (f"{sym}{extra_sym}·B = {r['micro_batch_size']:g}·{s_txt}·{r['hidden_size']:g}{extra_val}·"
            f"{_abytes(r):g} B")


def _ep_msg_text(r: dict, T: dict) -> str:
    """The all-to-all message b·(s/c)·h·top_k·cf (/t with SP) × bytes per element, numbers in."""
    cp = float(r.get("cp", 1) or 1)
    sym = ("b·(s/c)·h" if cp > 1 else "b·s·h") + "·top_k·cf"
    s_txt = f"{r['seq_len']:g}/{cp:g}" if cp > 1 else f"{r['seq_len']:g}"
    val = (f"{r['micro_batch_size']:g}·{s_txt}·{r['hidden_size']:g}·{float(r['moe_top_k']):g}·"
           f"{max(float(r.get('moe_capacity_factor') or 1.0), 1.0):g}")
    if r.get("sequence_parallel") and float(r["tp"]) > 1:
        sym, val = sym + "/t (SP)", val + f"/{float(r['tp']):g}"
    return f"{sym}·B = {val}·{float(T['_a2a_elem_bytes']):.3g} B"


def _tp_coll_text(r: dict, T: dict) -> str:
    """Where a collective count other than 4 (+2 full recompute) comes from: MoE layers' MLP half
    carries top_k·cf tokens; partial recompute averages the +2."""
    if not r.get("n_experts") or float(r.get("n_moe_layers", 0) or 0) <= 0:
        return ""
    x = float(r["moe_top_k"]) * max(float(r.get("moe_capacity_factor") or 1.0), 1.0)
    etp, tp = _etp(r), float(r["tp"])
    # op_sac without SP: O's re-run all-reduce is the attention half's, added unscaled
    o_txt = (" + 1 (op_sac without SP: O's all-reduce, the attention half's)"
             if r.get("recompute") == _RC_OPSAC and not r.get("sequence_parallel", True) else "")
    sac = "with SP" if o_txt else ""
    if etp != tp:
        e_ar = float(T.get("_etp_ar", 0.0) or 0.0)
        how = ("none: with expert TP 1 each rank dispatches its own sequence-parallel tokens, Megatron's "
               "alltoall dispatcher all-gathers / reduce-scatters nothing" if etp == 1 else
               f"an all-gather + reduce-scatter of the routed tokens over the {etp:g} expert-TP ranks, "
               f"{_ms(e_ar)} per all-reduce equivalent, 2·(etp−1)/etp · (etp/tp)·msg")
        return (f"; n_coll = (a dense layer's 4, + 2 with full recompute, + 1 with op_sac{' ' + sac if sac else ''}) "
                f"× (½ + ½·top_k·cf "
                f"× (expert-TP collective / TP collective), top_k·cf = {x:g}, on MoE layers: expert TP {etp:g} ≠ TP {tp:g}, "
                f"their MLP half moves the routed tokens over the expert-TP group ({how}); the attention half "
                f"stays on TP){o_txt}, averaged over the stage's layers")
    return (f"; n_coll = (a dense layer's 4, + 2 with full recompute, + 1 with op_sac{' ' + sac if sac else ''}) "
            f"× (½ + ½·top_k·cf "
            f"= ½ + ½·{x:g} on MoE layers: their MLP half moves "
            f"the routed tokens){o_txt}, averaged over the stage's layers")


def _mtp_comm_text(T: dict, key: str) -> str:
    """`` + MTP …`` : the MTP blocks' share of a communication term (empty without MTP)."""
    x = float(T.get(key, 0.0) or 0.0)
    if not x:
        return ""
    n = float(T["_mtp_n"])
    return f" + the MTP blocks with the head (m × {n:g} block{'s' if n != 1 else ''} of their kind) {x:.4g} s"


def _cp_text(r: dict, T: dict) -> str:
    """The CP ring's exposed time: m·layers × per layer max(0, fwd − core)·(1 + re-run) + max(0, bwd − k·core)."""
    mtp_cp = float(T.get("_t_cp_mtp", 0.0) or 0.0)
    t_cp, m, n = float(T["t_cp_comm_s"]) - mtp_cp, float(T["_m"]), float(T["_layers_stage"])
    head = (f"ring attention (cp = {r['cp']}): per layer, fwd (c−1) hops {_ms(T['_cp_fwd'])} and bwd "
            f"{_ms(T['_cp_bwd'])}, exposed beyond the attention core ({_ms(T['_t_core'])} fwd")
    if float(r.get("cp", 1) or 1) <= 1 or t_cp == 0.0:
        return head + f"); m·layers = {m:.4g} × {n:.4g} × 0 ms = 0 s"
    k = float(T.get("_attn_bwd", FLASH_BWD_OVER_FWD if r.get("flash_attention") else BWD_OVER_FWD))
    core = float(T["_t_core"])
    e_f, e_b = max(float(T["_cp_fwd"]) - core, 0.0), max(float(T["_cp_bwd"]) - k * core, 0.0)
    rc = RECOMPUTE[int(r.get("recompute", 0))]
    rerun = 1.0 if rc in ("full", "selective") else 0.0
    why = "a recomputed forward replays its hops" if rerun else "no re-run forward"
    n_rcl = float(r.get("recompute_layers") or 0) if rc == "full" else 0.0
    if n_rcl > 0 and n > 0:  # partial recompute: the stage's own recomputed share min(N·vpp, n)/n
        rerun = min(n_rcl * float(r.get("vpp", 1) or 1), n) / n
        why = f"its {min(n_rcl * float(r.get('vpp', 1) or 1), n):g} of {n:g} recomputed layers replay their hops"
    per = t_cp / (m * n) if m * n > 0 else 0.0
    formula = (f"max(0, {_ms(T['_cp_fwd'])} − {_ms(core)}) × {1 + rerun:.4g} + max(0, {_ms(T['_cp_bwd'])} − "
               f"{k:.4g} × {_ms(core)}) = {_ms(e_f * (1 + rerun) + e_b)}")
    if abs(e_f * (1 + rerun) + e_b - per) <= 1e-6 * max(per, 1e-30):
        body = (f"; × {1 + rerun:.4g}: {why}, backward {k:.4g} × the core): {formula} per layer")
    else:  # partial recompute or DualPipe: the stage's own recompute share / the two stages' average
        whose = ("DualPipe: the rank's two stages average" if r.get("schedule") == _SCHED["dualpipe"]
                 else "the costed stage's layers average")
        body = f"; {formula} per layer with × {1 + rerun:.4g} ({why})); {whose} {_ms(per)} per layer"
    if mtp_cp:
        return (head + body + f"; m·layers = {m:.4g} × {n:.4g} × {_ms(per)} = {t_cp:.4g} s"
                + _mtp_comm_text(T, "_t_cp_mtp") + f" = {t_cp + mtp_cp:.4g} s")
    return head + body + f"; m·layers = {m:.4g} × {n:.4g} × {_ms(per)} = {t_cp:.4g} s"


def _ep_layers_text(r: dict, T: dict) -> str:
    """m × the costed stage's MoE layers × the exposed all-to-all time of one layer, numbers in."""
    m, t_ep = float(T["_m"]), float(T["t_ep_comm_s"]) - float(T.get("_t_ep_mtp", 0.0) or 0.0)
    per = max(float(T["_n_a2a"]) * float(T["_a2a"]) - float(T["_ep_hide"]), 0.0)
    if per <= 0.0 or t_ep <= 0.0 or m <= 0.0:
        # fully hidden (or no MoE layer): nothing exposed per layer (review 34: "× moe_layers × 0 ms"
        # read as a formula with a placeholder left in)
        return " = 0 (each MoE layer's all-to-all hidden: nothing exposed)"
    n_moe = t_ep / (m * per)  # the costed stage's MoE layers (its own share of dense and MoE layers)
    return f" = {m:.4g} × {n_moe:.4g} MoE layers of the costed stage × {_ms(per)}"


def _flop_rate(x: float) -> str:
    """A peak in FLOP/s as the explain strings write it: ``989.4e12`` (TFLOP/s scale; ``10000e12``, not
    ``1e+04e12``: review 34, the GB200's FP4 peak), else ``%.4g``."""
    if not 1e9 <= x < 1e17:
        return f"{x:.4g}"
    t = f"{x / 1e12:.4g}"
    return (f"{x / 1e12:.0f}" if "e" in t else t) + "e12"


def _frac(x: float) -> str:
    """A utilisation: 4 decimals, or 3 significant digits when that would print 0.0000."""
    return f"{x:.4f}" if x == 0 or abs(x) >= 1e-3 else f"{x:.3g}"


def _fp8_attention_possible(asked, precision, peak_fp8, peak_16bit, attention_kernel, family):
    """Where the FP8 attention core can run (broadcast bool array; batch codes for ``precision``,
    ``attention_kernel`` and ``family``): asked for, an FP8 / FP4 run (Transformer Engine's FP8
    attention needs its FP8 recipe), FP8 units faster than the 16-bit ones on a family it is modelled
    for (:data:`FP8_ATTENTION_FAMILIES`), the native kernels (FlashAttention-2 has no FP8 path). The
    engine (:func:`_terms`) and :func:`fp8_attention_applies` both read it."""
    prec = np.asarray(precision)
    return (np.asarray(asked, dtype=bool) & ((prec == _FP8) | (prec == _FP4))
            & (np.asarray(peak_fp8, dtype=float) > np.asarray(peak_16bit, dtype=float))
            & (np.asarray(attention_kernel) != _FLASH2) & _FP8_ATTN_FAMILY[np.asarray(family)])


def fp8_attention_applies(r: dict) -> bool:
    """Whether a row's ``training.fp8_attention`` can change its step (the engine's condition in
    :func:`_terms`): asked for, an FP8 / FP4 run, FP8 units faster than the 16-bit ones on a family
    it is modelled for (:data:`FP8_ATTENTION_FAMILIES`), flash attention with the native kernels.
    ``r``: a row of python scalars (batch columns)."""
    if not (r.get("fp8_attention") and r.get("flash_attention")):  # (most rows: no array work)
        return False
    return bool(_fp8_attention_possible(
        bool(r.get("fp8_attention")), int(r.get("precision", -1)), float(r.get("peak_fp8_flop_per_s") or 0.0),
        float(r.get("peak_16bit_flop_per_s") or 0.0), int(r.get("attention_kernel") or 0),
        int(r.get("accel_family", FAMILIES.index("other")))))


def fp8_attention_factor(r: dict) -> float:
    """Rate of the FP8 flash core over the 16-bit one for a row where :func:`fp8_attention_applies`
    (the forms of :func:`_terms`' core, whose FLOPs, ceiling and per-query factor cancel):
    ``ρ · e8/e16 · (d_h + knee)/(d_h + ρ · knee)``, ``ρ`` = FP8 / 16-bit peak, ``e8/e16`` the
    family's GEMM ceiling ratio, ``knee`` the row's head-dim knee (exp vs matmul throughput,
    FlashAttention-3 §3.1; :data:`ATTN_DHEAD_KNEE`), docs/timing.md. The forward's factor, applied
    to the backward too (the FP8 core keeps the 16-bit core's backward / forward ratio,
    :func:`flash_bwd_over_fwd`: cuDNN's FP8 backward gains less than its forward). Below 1 the
    engine keeps the 16-bit core. Returns a float (dimensionless)."""
    fam = FAMILIES[int(r.get("accel_family", FAMILIES.index("other")))]
    rho = float(r["peak_fp8_flop_per_s"]) / float(r["peak_16bit_flop_per_s"])
    ratio = float(_default_consts().fp8_attn_ratio_tab[FAMILIES.index(fam)])
    knee = float(r.get("attn_dhead_knee") or ATTN_DHEAD_KNEE.get(fam, ATTN_DHEAD_KNEE_DEFAULT))
    d = float(r.get("head_dim") or 128.0)
    return rho * ratio * (d + knee) / (d + rho * knee)


def _attn_label(r: dict) -> str:
    if not r.get("flash_attention"):
        return "materialised scores"
    fam = FAMILIES[int(r.get("accel_family", FAMILIES.index("other")))]
    knee = r.get("attn_dhead_knee") or ATTN_DHEAD_KNEE.get(fam, ATTN_DHEAD_KNEE_DEFAULT)
    p16, pk = float(r.get("peak_16bit_flop_per_s") or 0.0), float(r.get("peak_flop_per_s") or 0.0)
    if 0.0 < pk < p16:  # fp32 / tf32: the core at its own lower peak (_terms' core_flash)
        knee = knee * pk / p16
    if r.get("attention_kernel") and fam in FLASH2_FAMILIES:
        rel = flash2_speed_ratio(fam, float(r.get("head_dim") or 128.0))
        how = ("the A100-calibrated FA2 × 35/73, head-dim knee "
               f"{FLASH2_DHEAD_KNEE:g}" if fam == "hopper" else "Hopper's factor, assumed")
        return (f"flash, FlashAttention-2-class kernels at {rel:.2f} × the native ones ({how}; native knee {knee:g})"
                + _query_overhead_text(r, fam))
    if fp8_attention_applies(r):
        pk8 = float(r["peak_fp8_flop_per_s"])
        ratio = float(_default_consts().fp8_attn_ratio_tab[FAMILIES.index(fam)])
        x = fp8_attention_factor(r)
        if x > 1.0:
            return (f"flash, native kernels in FP8 (training.fp8_attention: the FP8 peak {_flop_rate(pk8)} FLOP/s, "
                    f"the 16-bit attention ceiling × {ratio:.3f}, the family's FP8 / 16-bit GEMM ceiling ratio, "
                    f"head-dim knee {knee * pk8 / p16:.4g} = {knee:g} × FP8 / 16-bit peak as the exp units do not "
                    f"speed up: {x:.3f}× the 16-bit core)" + _query_overhead_text(r, fam))
        return (f"flash, native kernels, head-dim knee {knee:g} (training.fp8_attention kept off: the FP8 core would "
                f"run at {x:.3f}× this one)" + _query_overhead_text(r, fam))
    return f"flash, native kernels, head-dim knee {knee:g}" + _query_overhead_text(r, fam)


def _query_overhead_text(r: dict, fam: str) -> str:
    """``; × k/(k + C) = …`` of the flash core's per-query overhead (ATTN_QUERY_OVERHEAD_KEYS), or ""."""
    cq = ATTN_QUERY_OVERHEAD_KEYS.get(fam, 0.0)
    if cq <= 0:
        return ""
    s, cp = float(r.get("seq_len") or 0.0), max(float(r.get("cp") or 1.0), 1.0)
    sw, frac = float(r.get("sliding_window") or 0.0), float(r.get("swa_layer_frac") or 0.0)
    if sw > 0:
        keys, keys_causal = (float(np.asarray(x)) for x in model_stats.attention_keys(s, sw, frac))
    else:
        keys, keys_causal = s, s * CAUSAL_WORK_FRAC
    k0 = keys_causal / cp
    k = max(k0, ATTN_QUERY_OVERHEAD_MIN_KEYS)
    held = f" (held at {ATTN_QUERY_OVERHEAD_MIN_KEYS:g}, the tables' shortest)" if k0 < k else ""
    return (f"; per-query overhead × k/(k + {cq:g}) = {k:,.6g}/{k + cq:,.6g} = {k / (k + cq):.3f}, "
            f"k = {'keys visited per query' if sw > 0 else 's/2'}{'/cp' if cp > 1 else ''} = {k0:,.6g}{held}")


#: Per layer and micro-batch (forward + backward), the step below which kernel launches (about
#: 30–100 kernels per layer fwd + bwd, a few µs of launch latency each) would dominate: a note,
#: not a floor (no launch overhead is modelled).
HOST_BOUND_LAYER_S = 50e-6


#: ZeRO-3 / FSDP sharding groups at least this large, spanning NVLink domains, get the note of
#: :func:`_zero3_scale_note` (the smallest of the published runs it quotes is 384 GPUs).
ZERO3_SCALE_NOTE_RANKS = 256


def _zero3_scale_note(row: dict) -> str | None:
    """The ZeRO-3 / FSDP caveat at scale, or None. The model times the parameter all-gathers and
    gradient reduce-scatters by their bytes at NCCL's bandwidth-optimal rate (a group that spans
    NVLink domains: every NIC of a domain in parallel, :func:`planner.comm.ring_link`), one ring
    pass of latency each, and (with ``dp_comm_overlap``) hides them behind compute. A stack whose
    collectives run far below that rate pays them: DeepSpeed ZeRO-3 without model parallelism,
    174.6B on A100 80GB, 144 / 88 / 44 TFLOP/s per GPU on 384 / 768 / 1,536 GPUs (Narayanan et
    al. 2021, Table 2; validation/out_of_sample.csv rows ``narayanan21_t2_zero3_*``, where this
    model gives 214 / 211 / 205), a step that stayed at about 66 s as the GPUs doubled from 768 to
    1,536 — about 1 TB of parameter and gradient traffic per GPU and step at roughly 16 GB/s per
    GPU (docs/timing.md) — quoted, not modelled. Shown where ZeRO stage 3 shards over
    ``dp_shard·cp`` (HSDP) or ``dp·cp`` ranks, at least :data:`ZERO3_SCALE_NOTE_RANKS` of them,
    whose span (× tp, the group's stride) leaves the job's NVLink placement domain
    (:func:`planner.comm.placement_domain`, as the comm model decides it)."""
    if int(row.get("zero_stage", 0) or 0) != 3:
        return None
    dp, cp = float(row.get("dp", 1) or 1), float(row.get("cp", 1) or 1)
    ds = float(row.get("dp_shard") or dp)
    ranks = min(ds, dp) * cp
    tp = float(row.get("tp", 1) or 1)
    gpn = float(row.get("gpus_per_node", 8) or 8)
    dom_size = float(row.get("nvlink_domain_size") or gpn)
    n_gpus = float(row.get("n_gpus") or ranks * tp)
    dom = float(comm.placement_domain(np.array([dom_size]), np.array([gpn]), np.array([n_gpus]))[0])
    if ranks < ZERO3_SCALE_NOTE_RANKS or ranks * tp <= dom:
        return None
    overlap = bool(row.get("dp_comm_overlap", True))
    how = ("hidden behind compute as FSDP2 and Megatron-FSDP hide them" if overlap else
           "not hidden here (parallelism.dp_comm_overlap off)")
    return (f"ZeRO-3 / FSDP over {ranks:,.0f} ranks: the model counts the parameter all-gathers (forward and "
            "backward, each micro-batch) and the gradient reduce-scatter by their bytes at NCCL's bandwidth-optimal "
            f"rate (the NICs of each NVLink domain in parallel), with one ring pass of latency each, {how}. A stack "
            "whose collectives run far below that rate is much slower: DeepSpeed ZeRO-3 without model parallelism "
            "reached 144 / 88 / 44 TFLOP/s per GPU for a 174.6B model on 384 / 768 / 1,536 A100s (Narayanan et al. "
            "2021, Table 2), where this model gives 212 / 209 / 204; its step stayed at about 66 s as the GPUs "
            "doubled, about 1 TB of traffic per GPU and step at roughly 16 GB/s (docs/timing.md). Read the step here "
            "as what a stack with bandwidth-optimal collectives reaches.")


def _expert_ring_text(r: dict, T: dict) -> str:
    """The expert data-parallel ring's link and achieved bandwidth (the dense one's words)."""
    if float(np.asarray(T.get("_bw_e", 0.0)).reshape(-1)[0]) <= 0.0:
        return "a group of one: no collective"
    return "their ring " + _link_text(r, T["_bw_e"], T["_intra_e"], False)


def _dom_word(r: dict) -> str:
    """"NVLink domain", or "scale-up domain" on a full-mesh fabric (AMD Infinity Fabric, Gaudi's RoCE
    links, the GH200 quad's NVLink without a switch; review 48: the AMD and Gaudi texts said NVLink)."""
    return "scale-up domain" if float(r.get("scaleup_mesh_links", 0) or 0) > 0 else "NVLink domain"


def _link_text(r: dict, bw, intra, inr) -> str:
    """Which link a ring ran over and at what achieved bandwidth (review 48a: no collective's formula
    said NVLink or network, nor the NVLS factor it carried)."""
    bw, intra, inr = float(np.asarray(bw).reshape(-1)[0]), bool(np.asarray(intra).reshape(-1)[0]), \
        bool(np.asarray(inr).reshape(-1)[0])
    if intra:
        txt = f"inside one {_dom_word(r)} at {bw / 1e9:.4g} GB/s achieved"
        if inr:
            txt += (f" (ring {bw / comm.IN_NETWORK_ALLREDUCE_SPEEDUP / 1e9:.4g} GB/s × NVLS "
                    f"{comm.IN_NETWORK_ALLREDUCE_SPEEDUP:.4g}, NVLink SHARP)")
        return txt
    link = "NVLink" if _dom_word(r) == "NVLink domain" else "scale-up"
    return (f"crossing {_dom_word(r)}s: min({link}, members per domain × network {_nic_e(r) / 1e9:.4g} GB/s) = "
            f"{bw / 1e9:.4g} GB/s achieved")


def _p2p_link_text(r: dict) -> str:
    """The pipeline send's link, as comm.p2p_link_s picks it: NVLink (one link on a full mesh) when the
    PP group stays in one domain, else the per-GPU network share (review 48a); "" without a pipeline."""
    p_ = float(r.get("pp", 1) or 1)
    if p_ <= 1:
        return ""
    stride = float(r.get("tp", 1) or 1) * float(r.get("cp", 1) or 1) * float(r.get("dp", 1) or 1)
    if _row_layout(r, p_, stride, whole_job=False)[1] > 1.0:
        return f" over the network at {_nic_e(r) / 1e9:.4g} GB/s achieved"
    bw, links = _scaleup_e(r)
    bw = bw / links if links > 0 else bw
    return f" over NVLink at {bw / 1e9:.4g} GB/s achieved" + (" (one link of the full mesh)" if links > 0 else "")


def _nic_e(r: dict) -> float:
    """The per-GPU network share at the fitted network efficiency [B/s]."""
    return float(r.get("nic_bw_per_gpu_bytes_per_s", 0.0) or 0.0) * _calibration()["link_eff"]["network"]


def _shard_text(r: dict) -> str:
    """The divisor of the optimizer's local shard as ``_terms`` sizes it (review 48a: the text said
    params_total / (tp·pp) under every ZeRO stage)."""
    zs = int(r.get("zero_stage", 0) or 0)
    dual = " × 2 (DualPipe: two stages)" if int(r.get("schedule", 0)) == _SCHED["dualpipe"] else ""
    if zs == 0:
        return f"params_total / (tp·pp), no ZeRO sharding{dual}"
    ds = float(r.get("dp_shard") or r.get("dp", 1))
    grp = "dp_shard·cp" if ds < float(r.get("dp", 1)) else "dp·cp"
    if float(r.get("n_experts", 0) or 0) > 0:
        return (f"the dense parameters / (tp·pp·{grp}) + the routed experts' / (etp·pp·ep · the expert data-parallel "
                f"group){dual}")
    return f"params_total / (tp·pp·{grp}), ZeRO-{zs}{dual}"


def _full_share(r: dict) -> float:
    """Share of the layers full recompute re-runs for row ``r`` (0 without full recompute), the
    ``full`` of :func:`_terms` (model_stats.full_recompute_fraction)."""
    if int(r.get("recompute", 0) or 0) != RECOMPUTE.index("full"):
        return 0.0
    return float(model_stats.full_recompute_fraction(float(r.get("recompute_layers", 0) or 0), r.get("n_layers", 1),
                                                     r.get("pp", 1), r.get("vpp", 1), True))


def _mesh_text(r: dict, g) -> str:
    """", on g − 1 of the full mesh's D − 1 links" for a group of ``g`` inside a full-mesh domain
    smaller than the domain (planner.comm.mesh_share); "" behind a switch or for the whole domain."""
    links = float(r.get("scaleup_mesh_links", 0) or 0)
    g = float(g)
    if links <= 0 or g <= 1 or g - 1 >= links or g > float(r.get("nvlink_domain_size", 0) or 0):
        return ""
    return f", on {g - 1:g} of the full mesh's {links:g} links per GPU: {g - 1:g}/{links:g} of its scale-up bandwidth"


def notes(row: dict) -> list[str]:
    """Stated simplifications of the step-time model for this scenario."""
    out = [
        "Step time: the slowest pipeline stage (layers split as parallelism.layer_split says; the last "
        "stage carries the output head and loss); GEMM efficiency by arithmetic intensity (roofline knee), "
        "constants fitted on ../shared/validation/calibration.csv (hardware/calibration.json).",
        "Collectives: α-β ring model with achieved link bandwidths; groups placed TP innermost, then CP, "
        "EP, DP, PP outermost; a job larger than one NVLink domain fills each domain in power-of-two "
        "blocks of nodes (64 of an NVL72 rack's 72 GPUs); network bandwidth shared per GPU (no congestion "
        "or rail topology).",
    ]
    links = float(row.get("scaleup_mesh_links", 0) or 0)
    if links > 0:
        d_ = links + 1.0
        out.append(f"Full-mesh scale-up fabric (no switch): each GPU has one direct link to each of the {links:g} "
                   f"other GPUs of its {d_:g}-GPU domain, 1/{links:g} of its scale-up bandwidth apiece. A group of g "
                   "GPUs inside the domain drives only its g − 1 links ((g − 1)/"
                   f"{links:g} of the bandwidth: TP 2 one link, TP 4 three), a pipeline or CP send one link; the "
                   f"whole bandwidth needs all {d_:g} GPUs in the group (hardware.md §6b: MI300X all-reduce busBW "
                   "47.7 GB/s on 2 GPUs against 312.9 GB/s on 8).")
    if row.get("fabric_adapted"):
        mesh_ = int(row.get("scaleup_mesh_links", 0) or 0)
        out.append(f"Accelerator override: the node's scale-up fabric was adapted to the part in its slots: scale-up "
                   f"domain {int(row.get('nvlink_domain_size', 0) or 0)} GPUs (at most the part's own scale-up domain), "
                   + (f"a full mesh of {mesh_} links per GPU (the part's own links, as on the catalogue system built "
                      "around it)" if mesh_ else "behind a switch")
                   + ("" if row.get("in_network_reduction") else ", no NVLink SHARP (an NVSwitch feature of "
                      "NVIDIA Hopper / Blackwell parts filling the domain)")
                   + "; the node's network, host memory and storage are the system's. Groups beyond that domain "
                   "are costed on the per-GPU network share.")
    tp_, cp_, s_ = float(row.get("tp", 1) or 1), float(row.get("cp", 1) or 1), float(row.get("seq_len", 0) or 0)
    if row.get("sequence_parallel") and tp_ > 1 and s_ > 0 and (s_ / cp_) % tp_:
        # review 42a: seq_len 8191 on TP 8 + SP was costed without a word (the export alone said it)
        per = s_ / cp_
        per_t = f"{int(per):,}" if per.is_integer() else f"{per:,.2f}"  # exact (review 43a: 1e+06 for 1,000,001)
        out.append(f"Sequence parallelism with seq_len / cp = {per_t} tokens per rank, not a multiple of tp = "
                   f"{tp_:g}: Megatron-LM (the SP reduce-scatter splits the sequence dimension) and TorchTitan "
                   "(seq_len_divisor) refuse this split; it is costed here as s / (cp·tp) tokens per rank, as if "
                   f"it divided. Pad the sequence to a multiple of {tp_ * cp_:g}, or turn sequence parallelism off.")
    if cp_ > 1 and s_ > 0 and s_ % (2.0 * cp_):
        # review 48 (new-user check): the sweep leaves these splits out; evaluate costed them without a word
        out.append(f"Context parallelism with seq_len = {s_:,.0f}, not a multiple of 2·cp = {2 * cp_:g}: Megatron-Core "
                   "(get_batch_on_this_cp_rank) and PyTorch's load-balanced context_parallel (TorchTitan) cut each "
                   "sequence into 2·cp chunks for causal load balancing and refuse this split; it is costed here as "
                   f"s / cp tokens per rank, as if it divided. Pad the sequence to a multiple of {2 * cp_:g}.")
    if float(row.get("mtp_layers", 0) or 0) > 0:
        kind = "the model's MoE-layer kind" if float(row.get("n_experts", 0) or 0) > 0 else "a dense layer"
        rc_txt = ("recomputed whole under full recompute (Megatron's uniform method), not under partial recompute "
                  "(recompute_layers, the block method: Megatron skips the MTP recompute)")
        out.append(f"Multi-token prediction ({float(row['mtp_layers']):g} module(s), DeepSeek-V3 §2.2): each runs a block "
                   f"of {kind}, the eh_proj GEMM and the output head + loss once more on the "
                   f"head-carrying stage (DualPipe: the end ranks), fwd + bwd, {rc_txt}; "
                   "not counted: its norms, concatenation and the all-gather after eh_proj. Its parameters enter "
                   "the DP collectives and optimizer step through params_total, spread over the stages as every "
                   "parameter is there (the last stage holds them all: its DP time is underestimated). The layer "
                   "split does not make room for it (DeepSeek balanced its stages by hand).")
    if row.get("fp8_attention"):
        x = fp8_attention_factor(row) if fp8_attention_applies(row) else None
        if x is not None and x > 1.0:
            out.append(f"FP8 attention (training.fp8_attention): the flash core at the FP8 peak with the family's "
                       f"FP8 / 16-bit GEMM ceiling ratio and the exp units of the 16-bit core (the head-dim knee scales "
                       f"with the peak): {x:.3f}× the 16-bit core here (at d_h 128: 1.15× on B200 / GB200, 1.16× on "
                       "H100 / H200, 1.30× on B300 / GB300), one factor at every sequence length and on both passes, "
                       "where NVIDIA's cuDNN benchmark measures 1.15× at 4K rising to 1.30× at 32K and 1.40× at 128K on "
                       "B200 (docs/timing.md). Activation memory is counted as for the 16-bit core.")
        elif x is not None:
            out.append(f"training.fp8_attention is set, but the FP8 flash core would run at {x:.3f}× the 16-bit one "
                       "here (a small head dim against the exp units' knee, or FP8 units barely faster): the 16-bit "
                       "core is kept.")
        else:
            out.append("training.fp8_attention is set but changes nothing here: the FP8 attention core is modelled for "
                       "fp8 or fp4 runs (precision) with flash attention and the native kernels on NVIDIA Hopper or "
                       "Blackwell parts (FP8 units faster than the 16-bit ones; Transformer Engine / cuDNN FP8 "
                       "attention), not elsewhere.")
    if row.get("n_experts"):
        out.append("MoE: expert GEMMs, all-to-all, load imbalance and the routed experts' host time (0.18 ms per "
                   "local expert per layer and micro-batch: the lower bound NVIDIA's DeepSeek-V3 GB200 guide gives for "
                   "a fully tuned stack) are modelled; other host / kernel-launch overhead is not. NVIDIA's published "
                   "MoE runs (Megatron-Bridge 25.11 / 26.02, validation/out_of_sample.csv): this model predicts "
                   "0.82–1.15× their throughput on GB200 / GB300 NVL72 (GPT-OSS up to 1.6×) and 1.06–3.6× on 8-GPU "
                   "B200 / B300 / H100 nodes (GPT-OSS up to 2.0×; worst at micro-batch 1 with 16 experts per GPU). Read MoE step times as what a well-tuned "
                   "stack (CUDA graphs, fused router, DeepEP / HybridEP) reaches; prefer splits that give each local "
                   "expert several thousand tokens per micro-batch.")
        etp, tp = _etp(row), float(row["tp"])
        if etp != tp:
            out.append(f"Expert TP {etp:g} ≠ TP {tp:g} (parallelism.etp, Megatron-Core --expert-tensor-parallel-size): "
                       "expert GEMMs, the expert-TP all-gather / reduce-scatter of the routed tokens, the EP all-to-all "
                       "group (ep ranks etp apart), the expert data-parallel group tp·cp·dp/(etp·ep) and the routed experts' "
                       "saved fc1 input, gathered over the expert-TP group (2h·r·etp/t B per token, docs/memory.md), "
                       "follow it; not counted: the shared experts' own TP all-gather / reduce-scatter (with any etp) "
                       "(docs/timing.md). The sweep keeps expert TP = TP.")
    tp_, pp_ = float(row.get("tp", 1) or 1), float(row.get("pp", 1) or 1)
    sp_on = bool(row.get("sequence_parallel", True))
    if tp_ > 1 and pp_ > 1 and not sp_on:
        # session 25 review: Megatron-Core sizes the pipeline send by tp only with SP (get_tensor_shapes);
        # the scatter/gather of Narayanan et al. 2021 §4.1 is what the Megatron-LM 2021 rows ran
        p2p = float(row.get("t_pp_p2p_s", 0.0) or 0.0)
        out.append(f"Pipeline sends without sequence parallelism are sized as Megatron-LM 2021's scatter/gather "
                   f"(Narayanan et al. 2021 §4.1: each TP rank sends b·s·h/t, the next stage all-gathers over NVLink). "
                   f"Megatron-Core no longer has that option: without sequence parallelism every TP rank sends the "
                   f"full b·s·h, {tp_:g}× the bytes, so its PP p2p time is up to {tp_:g} × {p2p:.4g} s = "
                   f"{tp_ * p2p:.4g} s per step.")
    if float(row.get("n_experts", 0) or 0) > 0 and tp_ > 1 and not sp_on:
        a2a = ("each TP rank dispatches every token of its micro-batch through the expert all-to-all (t× the "
               "bytes of the sequence-parallel layout). " if float(row.get("ep", 1) or 1) > 1 else "")
        out.append(f"MoE with TP {tp_:g} and sequence parallelism off: {a2a}Megatron-LM refuses this combination "
                   "(arguments.py: \"When using MoE and tensor parallelism, sequence parallelism must be used.\"): "
                   "set parallelism.sequence_parallel = true for what it runs.")
    # Below tens of µs per layer and micro-batch the host sets the pace (found by review: a tiny
    # model on one GPU had a 6.75 ns step): a layer's forward + backward launches a few dozen
    # kernels, each a few µs of launch latency (CUDA), none of which is modelled.
    m_ = row.get("global_batch_size", 0) / max(row.get("micro_batch_size", 1) * row.get("dp", 1), 1)
    per_layer = row.get("step_time_s", 0.0) / max(m_ * row.get("n_layers", 1) / max(row.get("pp", 1), 1), 1e-30)
    if 0 < per_layer < HOST_BOUND_LAYER_S:
        out.append(f"Each layer's forward + backward of a micro-batch takes {per_layer * 1e6:.3g} µs here, "
                   f"under {HOST_BOUND_LAYER_S * 1e6:g} µs: about what launching its few dozen kernels alone takes "
                   "(a few µs each). Kernel-launch and framework overhead are not modelled: at this size the "
                   "host, not the GPU, sets the step; read the throughput as an upper bound.")
    zero3_note = _zero3_scale_note(row)
    if zero3_note:
        out.append(zero3_note)
    plim, tdp = row.get("power_limit_w"), row.get("tdp_w")
    if plim and tdp and plim < tdp:
        ratio = plim / tdp
        out.append(f"Power limit {plim:g} W of a {tdp:g} W part: matmul and attention ceilings × "
                   f"{ratio ** MAMF_POWER_EXPONENT:.3f} = ({ratio:.3f})^{MAMF_POWER_EXPONENT:g}, a power rule from one "
                   "measured same-die pair (GB200 / B200 MAMF; other pairs give exponents 0.15–0.29: docs/timing.md); "
                   "the GPUs' share of the node's power × limit / TDP, taken to be drawn in full at load."
                   + (" The limit is below 0.7·TDP, outside the power ratios the exponent was derived on: an "
                      "extrapolation." if ratio < 0.7 else ""))
    if row.get("precision") in (_FP8, _FP4):
        out.append("MFU divides by the 16-bit peak; mfu_precision_peak divides by the FP8/FP4 peak.")
    if row.get("offload_optimizer"):
        out.append("Optimizer offload: gradients go to the host beyond the last backward, the CPU Adam step and "
                   "the weights' return are in series; the gradients' trip to the host hides behind the last "
                   "backward and the DP collectives still exposed at its end (on another link; docs/timing.md).")
    if row.get("fp8_rowwise"):
        if row.get("precision") == _FP8:
            out.append(f"FP8 row-wise scaling: {FP8_ROWWISE_BYTES:g} HBM bytes per element of every cast torchao's "
                       "row-wise recipe makes (each linear's input and weight in the forward; the output gradient "
                       "twice, input and weight again in the backward), one effective figure derived from torchao's "
                       "Llama 3 8B table (tensorwise +25 %, rowwise +10 % over bf16 on 8 H100s), not fitted on other "
                       "shapes. The routed experts' grouped GEMMs and the matmuls op_sac recomputes are not charged. On "
                       "TorchTitan's own FSDP + TP 8 runs it over-predicts rowwise by 2–18 % (docs/timing.md).")
        else:
            out.append("FP8 scaling 'rowwise' has no effect: the GEMMs do not run in FP8 (training.precision "
                       "is not fp8).")
    if row.get("precision") == _FP4:
        out.append("FP4: every GEMM at the FP4 peak with the FP8 efficiency; NVFP4 recipes keep some layers in "
                   "BF16 and add quantisation work (scaling, Hadamard transforms) not counted here. NVIDIA's NVFP4 "
                   "runs (Megatron-Bridge 26.02, Llama 3 70B / 405B on GB200 / GB300): this model predicts 1.12–1.34× "
                   "their throughput.")
    if row.get("flash_attention") and row.get("attention_kernel"):
        fam = FAMILIES[int(row.get("accel_family", FAMILIES.index("other")))]
        rel = flash2_speed_ratio(fam, float(row.get("head_dim") or 128.0))
        if fam not in FLASH2_FAMILIES:
            out.append("Attention kernel 'flash2' (FlashAttention-2 class): no change on " + fam + " ("
                       + ("FlashAttention-2 is this generation's native kernel" if fam == "ampere"
                          else "no FlashAttention-2 figure for this family; its native kernels are used") + ").")
        else:
            out.append(f"Attention kernel 'flash2' (FlashAttention-2 class) on {fam}: {rel:.2f}× the native kernels' "
                       f"speed at this head dim — the Ampere-calibrated FlashAttention-2 efficiency × "
                       f"{FLASH2_PEAK_UTIL['hopper']:.0%} / {FLASH2_PEAK_UTIL['ampere']:.0%}, the kernel's published "
                       "peak utilisation on H100 / A100 (FlashAttention-3 and -2 papers)"
                       + (", Hopper's factor assumed (no published figure on Blackwell)" if fam == "blackwell" else "")
                       + ".")
    elif row.get("attention_kernel") and not row.get("flash_attention"):
        out.append("attention_kernel 'flash2' has no effect: flash attention is off.")
    ep_opts = [k for k in ("ep_comm_overlap", "ep_dispatch_fp8") if row.get(k)]
    if ep_opts and not (row.get("n_moe_layers") and float(row.get("ep", 1)) > 1):
        why = "the model has no MoE layer" if not row.get("n_moe_layers") else "ep = 1 (no all-to-all)"
        out.append(f"{' and '.join('parallelism.' + k for k in ep_opts)} "
                   f"{'have' if len(ep_opts) > 1 else 'has'} no effect: {why}.")
    elif row.get("ep_comm_overlap"):
        n_micro = float(row["global_batch_size"]) / (float(row["micro_batch_size"]) * float(row["dp"]))
        vpp_ = float(row.get("vpp", 1) or 1)
        if not bool(ep_overlap_possible(float(row["pp"]), int(row["schedule"]), n_micro, int(row["recompute"]), vpp_)):
            sched = SCHEDULES[int(row["schedule"])]
            why = ("one micro-batch per step: there is no other micro-batch to hide it behind" if n_micro < 2 else
                   f"full recompute (Megatron-Core refuses the overlap with it)" if int(row["recompute"]) == RECOMPUTE.index("full")
                   and (float(row["pp"]) == 1 or (sched == "interleaved" and vpp_ > 1)) else
                   f"the interleaved schedule with one chunk (vpp = 1) is 1F1B, and with pp = {float(row['pp']):g} "
                   "Megatron-Core needs vpp > 1 for the overlap" if sched == "interleaved" else
                   f"the {sched} schedule with pp = {float(row['pp']):g} runs one micro-batch at a time (PP 1, the "
                   "interleaved schedule or DualPipe can overlap)")
            out.append(f"parallelism.ep_comm_overlap has no effect here: {why}; the expert all-to-all is counted "
                       "exposed, as the sweep counts it.")
    if "dp_comm_overlap" in row and not row["dp_comm_overlap"]:
        if float(row.get("dp", 1)) * float(row.get("cp", 1)) > 1:
            out.append("DP communication not overlapped (parallelism.dp_comm_overlap off): every gradient "
                       "reduction and parameter all-gather adds to the step in full"
                       + (", with ZeRO-3 / FSDP two all-gathers and a reduce-scatter per micro-batch"
                          if int(row.get("zero_stage", 0)) == 3 else "")
                       + ". Measured for PyTorch FSDP1 in MosaicML Composer (2023); FSDP2, DeepSpeed overlap_comm "
                       "and Megatron's --overlap-grad-reduce / --overlap-param-gather overlap it.")
        else:
            out.append("parallelism.dp_comm_overlap off has no effect: dp·cp = 1 (no DP collective).")
    if row.get("flash_attention") and FAMILIES[int(row.get("accel_family", FAMILIES.index("other")))] == "volta":
        out.append("V100: FlashAttention kernels need Ampere or newer; flash_attention here stands for a "
                   "memory-efficient fused attention (xformers, PyTorch SDPA), whose speed on Volta is taken from "
                   "the Ampere-fitted attention efficiency, not measured (no V100 run in the calibration file).")
    if row.get("sliding_window"):
        out.append(f"Sliding window: {row['sliding_window']} tokens in {row.get('swa_layer_frac', 1.0):.0%} of the layers. "
                   "With flash attention those layers count min(window, s) keys per query (FlashAttention's windowed "
                   "kernels skip the tiles outside the window; partial tiles are not counted); without it the full "
                   "scores are computed and masked (no saving). Context-parallel ring attention still sends every "
                   "KV block.")
    eager_nothing = (row.get("elem_eager") and row.get("layernorm") and not row.get("rope")
                     and not row.get("gated_mlp"))
    if eager_nothing:
        out.append("Elementwise 'eager' changes nothing for this model: its LayerNorm and activation are single "
                   "kernels in eager PyTorch too and it has no RoPE.")
    elif row.get("elem_eager"):
        out.append(f"Elementwise 'eager' (PyTorch eager, one kernel per op): "
                   + ("" if row.get("layernorm") else f"each RMSNorm {RMSNORM_BYTES_EAGER_FWD:g} B per hidden element "
                      f"instead of {RMSNORM_BYTES_FUSED_FWD:g}, ")
                   + (f"RoPE {ROPE_BYTES_EAGER_FWD:g} B per query / key element, " if row.get("rope") else "")
                   + ("MLA's two latent RMSNorms as well, " if row.get("mla") and not row.get("layernorm") else "")
                   + (f"SwiGLU {ACT_BYTES_GATED_EAGER_FWD:g} B per FFN element instead of {ACT_BYTES_GATED_FWD:g}, "
                      if row.get("gated_mlp") else "")
                   + "forward (backward 2×), counted op by op on TorchTitan's 2024 Llama; torch.compile fuses "
                   "them ('fused'). Other norms a model may have (Qwen3's QK-norm) are not counted, nor the "
                   "extra activation memory of eager ops (nor, in the memory, a QK-norm's saved input: docs/memory.md).")
    if row.get("recompute") == _RC_OPSAC:
        out.append("op_sac (TorchTitan per-op selective checkpointing): the matmuls whose outputs the backward needs "
                   "among those the policy marks for recompute (every second matmul of a block: K, O and W3 of a Llama "
                   "block, O only where no saved reduce-scatter rebuilds the residual: without TP, or with TP but sequence "
                   "parallelism off; routed experts' "
                   "up-projections and the router in MoE layers) run forward again, as do norms, RoPE and activations; "
                   "the flash-attention output is saved. As compiled (torch.compile); eager PyTorch with TP also "
                   "replays O (not counted). TP collectives run again: with sequence parallelism the two all-gathers feeding "
                   "K and W3 (one all-reduce's time), without it O's all-reduce.")
    if row.get("schedule") == _SCHED["zero_bubble"]:
        out.append("Zero-bubble schedule taken as ZB-H1 (Qi et al. 2024): bubble (p−1)(F + R), the weight gradients "
                   "(taken as half the backward without its recomputed forward R) filling the rest of 1F1B's "
                   "(p−1)(F + B): a third of it without recompute, a half with full recompute; with fewer micro-batches "
                   "than stages at least the critical path's (p−1)(F + B − W) − (m−1)W. Activation memory as 1F1B.")
    if row.get("schedule") == _SCHED["dualpipe"]:
        out.append("DualPipe: bubble (p/2 − 1)(F + B/2) per step (weight gradients taken as half the backward; "
                   "with full recompute (p/2 − 1)(F + B/2 + 3R/2), R the recomputed forward inside B, whose half "
                   "is no weight-gradient work); "
                   "two stages' parameters and p + 1 micro-batches of activations per rank (DeepSeek-V3 Table 2); "
                   "the second stage's layers counted as the first's.")
    return out
