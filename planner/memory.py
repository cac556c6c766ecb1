"""Stage 2: memory per GPU for every pipeline stage, vectorised.

Every quantity is bytes per GPU. ``stage(b)`` evaluates the first and the last pipeline stage
of each configuration (the most loaded stage is always one of them, see *Stages* below) and
reports the components of the most loaded one; ``per_stage(out, i)`` gives every stage of one
configuration (used by the UI chart and the CLI table). All formulas live in
:func:`_common` and :func:`_stage_parts`, which take the stage index as an array, so the sweep
path and the per-stage path share one formula.

Model states (Rajbhandari et al. 2020 [1] §3, Fig. 1; Megatron-LM ``theoretical_memory_usage.py``)
    Mixed-precision Adam keeps ``WEIGHT_BYTES`` = 2 B of bf16/fp16 weights, ``grad_bytes`` of
    gradient (column: 4 = fp32 accumulation as in Megatron, 2 = 16-bit) and
    ``OPTIMIZER_BYTES`` = 12 B of fp32 master weights + Adam m + v per parameter. fp32/tf32
    training keeps 4 B weights and 8 B (m, v) with no separate master. ZeRO-1 / the Megatron
    distributed optimizer shards the optimizer, ZeRO-2 also the gradients, ZeRO-3 / FSDP also
    the weights. The sharding group is **dp·cp**, or ``dp_shard·cp`` with hybrid sharding (HSDP:
    the states replicated over dp/dp_shard groups) (Megatron shards the distributed optimizer
    and reduces gradients over the data-parallel group *with* context parallelism,
    ``get_data_parallel_group(with_context_parallel=True)``). TP and PP divide the layer
    parameters; the input embedding sits on the first stage and the output head on the last,
    both sharded by TP (a tied head is still kept on the last stage when pp > 1, as Megatron
    does); a learned position table (GPT-3) is replicated over TP, as Megatron's serial
    ``position_embeddings`` (``torch.nn.Embedding``) is. Attention K/V weights are replicated when tp > n_kv_heads (each TP rank keeps
    ``max(k, t)/t`` of them). MoE: routed experts are divided by EP and the expert TP
    ``etp`` (``parallelism.etp``, = tp unless set: Megatron-Core ``--expert-tensor-parallel-size``) and
    sharded over the expert-data-parallel group ``tp·cp·dp/(etp·ep)`` (``dp·cp/ep`` when etp = tp;
    Megatron-Core ``parallel_state``: ``expert_data_parallel_size = world_size / (etp·ep·pp)``);
    attention, shared experts, router and norms over ``dp·cp``. The routed experts' activations
    follow etp: the dispatched input gathered over the etp ranks is ``2h·etp/t`` per routed copy
    and token (``r·cf·(2h·etp + 2h + I_e)/t`` per token with SP; until 2026-12-01 ``2h/t``, as if
    etp = 1: review 16e, fixed in 16h; derivation under Activations). Norm weights are counted as TP-sharded (they
    are replicated in reality; < 0.01 % of a layer); the final norm is whole on the last
    stage, ``h`` (RMSNorm) or ``2h`` (LayerNorm weight and bias), as ``model_stats`` counts it.
    fp8 / fp4 precision: weights stay in bf16 with fp32 master + Adam states, as Transformer
    Engine and Megatron do. Our choice: **no** extra persistent fp8 weight copy
    (``LOWP_WEIGHT_COPY_BYTES`` = 0): the cast is taken as transient, or as replacing the
    16-bit copy (Megatron ``--fp8-param-gather``). With a cached 1 B copy the NeMo FP8 runs
    of ``calibration.csv`` (Nemotron-340B on 128 H100) would be predicted not to fit.

Activations per layer and micro-batch (Korthikanti et al. 2022 [2] §4, Table 2)
    Derivation of the tensors kept for backward, in bytes per token (``sb`` = (s/c)·b tokens):

    ===============================  ===========================  ==================
    tensor                           16-bit MHA, 4h MLP (Table 2)  general
    ===============================  ===========================  ==================
    two norm inputs                  4h                           4h
    QKV GEMM input                   2h                           2h
    Q, K (for QKᵀ)                   4h                           2q + 2kv
    V                                2h                           2kv_v
    attention output (O GEMM input) 2h                           2q_v
    attention dropout mask           h                            h
    MLP input                        2h                           2h
    MLP intermediate                 16h (GeLU in + out, 4h wide) 4f plain, 6f gated
    MLP dropout mask                 h                            h
    softmax, its mask and dropout    5·a·s                        5·a·s (dropped with
                                                                  flash / selective)
    ===============================  ===========================  ==================

    with ``q = a·d_h`` and ``kv = max(k, t)·d_h`` (GQA; KV heads replicated when t > k), and
    ``q_v = a·d_v``, ``kv_v = max(k, t)·d_v`` with the V head ``d_v`` (``v_head_dim``: MLA's 128
    beside its 192-wide Q/K heads, DeepSeek-V3; ``d_h`` for every other model, where ``q_v = q``
    and ``kv_v = kv``; until 2026-12-03 V and the attention output were charged at ``d_h``, found
    by review 26: +24,576 B per token and layer on DeepSeek-V3 in fp8). MLA's compressed
    latents (q_a / kv_a inputs and norms, k_pe: ~6.3 kB per token and layer on DeepSeek-V3,
    under 4 % of the layer) are not counted: the decompressed heads stand for the layer. A gated
    MLP (SwiGLU) keeps its fc1 output of width 2f (4f bytes) and the fc2 input (2f bytes) = 6f;
    a plain MLP keeps the GeLU input and output, 4f. For MHA and f = 4h the sum is 34h, as in
    Table 2; Megatron-LM's ``18 + 4f/h`` form is the same split for a plain MLP. The parts
    ``10h`` (norm inputs, QKV and MLP inputs, two dropout masks) are replicated over TP
    without sequence parallelism and split with it; the rest is split by TP:
    ``sb·(10h + S/t + 5·a·s/t)`` without SP, ``sb·(10h + S + 5·a·s)/t`` with SP
    (``S`` = 2q + 2kv + 2kv_v + 2q_v + MLP intermediate = 4q + 4kv + MLP intermediate where
    ``d_v = d_h``; equals 24h for MHA and f = 4h). Dropout masks (2h) and the
    softmax dropout mask and output (3·a·s) are kept only when the model trains with dropout
    (``ModelSpec.dropout > 0``; GPT-3 and Megatron 2021-22 use 0.1, Llama, MPT, Mistral,
    DeepSeek and Nemotron-4 use 0), so the no-dropout sum is 32h, not 34h. A flash-attention logsumexp (4·a·s bytes per sequence) is not counted.
    MoE layer: the MLP intermediate becomes ``r·cf·(2h + I_e + 2h) + n_shared·I_s + 8E``
    (each of the r routed copies keeps its dispatched input, the expert intermediate ``I_e``
    and its output for the gate-weighted combine; fp32 router logits and probabilities). With
    TP > 1 each at its per-rank size (Megatron-Core MoEAlltoAllTokenDispatcher,
    "A2A(EP)->AG(TP)" over the etp expert-TP ranks): the dispatched input is all-gathered, so
    ``2h·etp`` (``/t`` like the rest), the ``I_e``-wide tensors are split by etp as the tokens
    grow by it (``/t``), the combined output is the rank's own (``2h``, ``/t`` with SP); without
    SP (etp = tp) the dispatched input and the output are replicated, ``2h·t`` each (review 16h),
    and so are the router's ``8E`` (``/t`` with SP: the rank routes its own tokens).
    Selective recompute or flash attention removes the ``5·a·s`` term; full recompute keeps
    only the layer input ``2h`` per token (``/t`` with SP) plus, as a working set, one whole
    layer of one micro-batch while it is recomputed, of the largest kind (dense, MoE) that the
    stage recomputes. Partial recompute (``recompute_layers`` = N, Megatron's block method: the
    first N layers of a chunk checkpointed one by one, the rest run plainly) recomputes after
    the backward of the chunk's later layers freed their activations of that micro-batch, so
    the working set is charged less those (a lower bound of them for v > 1), floored at 0.
    Context parallelism: s -> s/c for a rank's tokens; without flash attention its queries' scores
    against all s keys (the ``5·a·s`` per token stays: a rank holds (s/c)·s scores per head).
    fp8 / fp4: the inputs of the low-precision GEMMs are saved for backward as their 1-byte
    casts (Transformer Engine ``Linear`` / ``LayerNormLinear`` save the fp8 input): QKV and MLP
    inputs (2h -> h each, in the replicated part), attention output (2q_v -> q_v) and fc2 input
    (2f -> f), for MoE each routed copy's input and fc2 input; everything else stays 16-bit. An MoE
    layer's MLP input is the router's (Megatron-Core's TE spec: a separate pre-MLP ``TENorm`` when
    ``num_experts`` is set, fused into fc1 otherwise): it stays 2h, and shared experts keep a
    1-byte cast of it besides (h).
    fp32 / tf32 (no mixed precision): Table 2's bytes assume 16-bit activations (§4.1: 2 B per
    element, 1 B per dropout-mask element); without mixed precision each of those tensors is
    fp32, 4 B (TF32 is a math mode on fp32 tensors), so every 16-bit term above is doubled
    (``ACT_FP32_SCALE``): ``R = 16h + 2h`` masks, ``S`` and the MoE terms ×2, the score term
    ``(2·4 + 1)·a·s``, full recompute ``4h``, op_sac's outputs ×2. Masks stay 1 B; the fp32
    router logits, log-sum-exp and output logits are 4 B already. With dropout and no
    parallelism: ``s·b·h·(66 + 9·a·s/h)`` instead of ``(34 + 5·a·s/h)``.

Pipeline stages (Narayanan et al. 2021 [3]; Korthikanti 2022 §4.2.3; Qi et al. 2023 [4])
    Rank j of p holds ``layers_j`` layers; with ``uneven_layers`` (and in general) the first
    ``L mod (p·v)`` virtual stages take one extra layer; rank j owns virtual stages
    ``j, j+p, …``. Micro-batches in flight on rank j (each of ``layers_j`` layers):
    1F1B ``min(m, p − j)``; GPipe ``m``; interleaved (v > 1) the peak of Megatron's schedule counted
    per chunk (:func:`_interleaved_inflight`): ``W + 1`` micro-batch-chunks in flight after each
    steady-state forward (``W = (v−1)·p + 2(p−j−1)``, Megatron's warm-up; all ``m·v`` when
    ``m·v <= W``), weighted by the layers of each chunk, which differ by one on an uneven split;
    with even chunks ``min(m·v, W + 1)/v`` micro-batches of ``layers_j`` layers, for j = 0
    ``p·(1 + (p−1)/(p·v))`` layer-stashes per layer, Korthikanti's factor; zero-bubble is taken
    as ZB-H1, whose peak activation memory equals 1F1B's (Qi et al. 2023 §3; ZB-H2 would need
    about twice). The first stage holds the input embedding and the most micro-batches; the
    last holds the output head, final norm, logits and loss (fp32 ``s·b·V/t``, one
    micro-batch; under GPipe the loss's saved 4 B of all m, whose forwards all run before the
    first backward, ``LOSS_SAVED_BYTES``; with an eager PyTorch cross-entropy, ``training.cross_entropy``, 12 B per logit,
    16 B under TP where it runs as ``loss_parallel()``, and with pp > 1 PyTorch pipelining's last
    stage also keeps every micro-batch's fp32 logits until the step ends, + 4 B × m:
    :func:`_logit_bytes_per_element`). A middle stage never exceeds the first in any component (no more layers, no
    more micro-batches, no embedding), so the most loaded stage is the max of first and last;
    with MoE leading dense layers (placed from rank 0 on; approximate when v > 1) the first
    rank holding only MoE layers is evaluated too (:func:`candidate_stages`). DualPipe
    (DeepSeek-V3 §3.2.1): rank j holds stage j of the forward pipeline and stage p−1−j of the
    reverse one, ``p + 1`` micro-batches in flight (Table 2): ``p − h`` on the stage
    ``h = min(j, p−1−j)`` and ``h + 1`` on the other (the peak of ``DualPipe.step()``,
    deepseek-ai/DualPipe; 1F1B's counts at those two stage indices).

Multi-token prediction (``mtp_layers`` = D, DeepSeek-V3 §2.2)
    Megatron-Core puts every MTP module on the last pipeline stage (``mtp_on_this_rank``); here it
    sits with the output head (DualPipe: both end ranks). Per GPU: D × (a block of the model's
    MoE-layer kind, a dense layer on a dense model, experts over ep·etp and sharded over the expert
    group; ``eh_proj`` 2h·h/t; three
    norms) and, with pp > 1 outside DualPipe, a copy of the input embedding (Megatron builds it on
    the MTP stage, ``tie_word_embeddings_state_dict``; a tied model's head weight is that copy), under
    the row's ZeRO stage like the stage's other parameters. Activations: D × (the block's kept bytes
    as a layer of its kind + ``ACT_MTP_INPUTS_PER_H`` = 10h per token of inputs, concatenation and
    final-norm input, 4h under full recompute) for 1 micro-batch in flight (1F1B, zero-bubble,
    interleaved: the last (virtual) stage runs each backward after its forward), m under GPipe,
    1 under DualPipe (the end rank's chunk p−1, see Pipeline stages). Full recompute checkpoints the module with Megatron's uniform
    method only: under partial recompute (``recompute_layers`` > 0, the block method)
    ``MultiTokenPredictionLayer._checkpointed_forward`` skips it ("Skipping recompute"), so the
    module keeps its no-recompute activations (the block's and 10h of inputs). With
    ``offload_activations`` they are in the host stash and cross the host link with the layers'
    (``act_offload_traffic_bytes``). Logits × (1 + D): each depth has its own logits and loss.

Margin (``mem_buffers_bytes`` = comm + ZeRO-3 prefetch + fragmentation), shown on its own
    * ``mem_comm_buffers_bytes``: a fixed CUDA context + NCCL reserve ``CONTEXT_NCCL_RESERVE_BYTES``
      (1 GiB). Gradient communication buckets add nothing: Megatron-Core's DDP buckets are views
      of its contiguous gradient buffer (``_ParamAndGradBuffer``: "Groups parameters and
      gradients into a contiguous buffer, and then breaks the buffer into buckets"), reduced in
      place, so ``mem_grads_bytes`` already holds them; under ZeRO-3 the unsharded gradients
      awaiting their reduce-scatter are in the prefetch term. (Until 2026-11-30 two buckets of
      ``max(40e6, 1e6·dp·cp)`` parameters were added here, which made memory per GPU grow with
      the GPU count: +6.7 GiB at dp = 1024 with fp32 gradients. DeepSpeed's constant-size
      buffers, ``reduce_bucket_size``, are real copies and are not modelled.)
    * ``mem_zero3_prefetch_bytes`` (ZeRO-3 with more than one shard rank, ``dp_shard·cp > 1``):
      ``ZERO3_PREFETCH_LAYERS`` = 2 whole units (TP-sharded, gathered over DP) of weights, plus
      ``ZERO3_GRAD_LAYERS`` = 1 unit of unsharded gradients before its reduce-scatter; a unit is
      the largest that the stage holds of its embedding (first stage), output head (last
      stage), a dense layer and an MoE layer, whose experts count only where ZeRO-3 shards them
      (expert group ``dp_shard·cp/ep > 1``); each part is capped at the stage's own gathered
      parameters (a stage of one layer gathers it once). Stated limit: on a stage of few
      layers with a small shard group ZeRO-3 can still exceed ZeRO-2 (the shard, the gathered
      units and the unsharded gradients outweigh the saving, as in FSDP; ZeRO-2's transient
      gradient buckets are not counted).
    * ``mem_fragmentation_bytes``: ``FRAGMENTATION_FRAC`` = 5 % of everything else (PyTorch
      caching allocator). The lower end of the usual 5–10 %: from 7.6 % one calibration run
      (NeMo's Nemotron-4 340B FP8 on 128 H100, 97.6 % of usable HBM at 5 %) would be predicted
      not to fit, from about 12.2 % a second (MPT-3B, seq 8192, micro-batch 3, A100 80GB).

    How it is set: Fujii et al. 2024 [5] found that none of 454 Llama runs whose estimate
    (model states + activations, without margin) stayed below 80 % of HBM ran out of memory.
    Our margin is explicit rather than a flat 20 %: ``fits`` is
    ``mem_total_bytes <= hbm_usable_bytes``, and ``fits_conservative`` additionally applies
    the 80 % rule to the margin-free estimate. Every run of
    ``validation/calibration.csv`` (all ran on real hardware) is predicted to fit
    (``tests/test_memory.py``).

Offload (ZeRO-Offload [6], ZeRO-Infinity [7]; KARMA, Wahib et al. SC'20 for activations)
    ``offload_optimizer`` "cpu" moves Adam m, v (and the fp32 master if
    ``offload_master_weights``, the gradients if ``offload_grads``) to host memory. Gradients:
    ZeRO-2/3 move each reduce-scattered partition to the host as it is produced ([6] §4), so none
    stay in HBM; ZeRO-0/1 accumulate the full gradient on the GPU over the micro-batches and
    reduce it there after the last backward (as the step time does), so it stays in HBM, and the
    host holds the optimizer's partition of it for the CPU step (all of it under ZeRO-0, 1/dp
    under ZeRO-1); "nvme" to
    local NVMe, with a host staging buffer of ``NVME_STAGING_BYTES_PER_GPU`` (DeepSpeed's
    default 4 buffers of 1e8 fp32 elements). ``offload_activations`` keeps one layer of one
    micro-batch in HBM and moves the stash to host. ``host_mem_per_node_bytes`` =
    ``min(gpus_per_node, n_gpus)`` (the job's GPUs on its busiest node) × the host bytes of the
    worst stage; ``host_fits`` compares it with
    ``host_memory_bytes``. Superchips (GH200/GB200, ``host_link_c2c``) offload to their CPU
    memory with the same accounting. Host memory used by the OS, data loaders and
    checkpoints is not counted.

References
----------
[1] S. Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter
    Models", SC'20, arXiv:1910.02054.
[2] V. Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models",
    MLSys'23, arXiv:2205.05198.
[3] D. Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters Using
    Megatron-LM", SC'21, arXiv:2104.04473.
[4] P. Qi et al., "Zero Bubble Pipeline Parallelism", arXiv:2401.10241 (2023).
[5] K. Fujii et al., "Accelerating Large Language Model Training with 4D Parallelism and
    Memory Consumption Estimator", arXiv:2411.06465 (2024).
[6] J. Ren et al., "ZeRO-Offload", USENIX ATC'21. [7] S. Rajbhandari et al., "ZeRO-Infinity",
    SC'21.
"""

from __future__ import annotations

import numpy as np

from .batch import OFFLOAD, PRECISIONS, RECOMPUTE, SCHEDULES, Batch, OneRow, any_true
from .model_stats import layers_on_rank

# --------------------------------------------------------------------------------------
# Constants (each with its source)
# --------------------------------------------------------------------------------------

#: 16-bit weight bytes per parameter (ZeRO [1] §3.1: "2Ψ" for fp16 parameters).
WEIGHT_BYTES = 2.0
#: fp32 master + Adam m + v bytes per parameter (ZeRO [1] §3.1: K = 12).
OPTIMIZER_BYTES = 12.0
#: fp32 training: 4 B weights, Adam m + v 8 B, no separate master copy.
FP32_WEIGHT_BYTES = 4.0
FP32_OPTIMIZER_BYTES = 8.0
#: Bytes of the fp32 master inside OPTIMIZER_BYTES (moved by offload_master_weights).
MASTER_BYTES = 4.0
#: The gradient copy the CPU optimizer step reads on the host, fp32 whatever ``grad_dtype``
#: (ZeRO-Offload's fp32 host buffer; planner.timing moves 4 B per parameter down).
HOST_GRAD_BYTES = 4.0
#: Cached low-precision copy of the weights (our choice, see module docstring): fp8, fp4.
LOWP_WEIGHT_COPY_BYTES = {"fp8": 0.0, "fp4": 0.0}

#: Korthikanti 2022 Table 2 coefficients, bytes per token per hidden unit.
ACT_REPLICATED_PER_H = 10.0   # norm inputs 4, QKV input 2, MLP input 2, two dropout masks 2
ACT_ATTN_CORE_PER_AS = 5.0    # softmax output 2, its dropout mask 1, dropout output 2 (× a·s)
#: Bytes of the above that exist only with dropout > 0 (Korthikanti 2022 §4.1): the two 1-byte
#: masks of the attention and MLP outputs (× h), and the softmax dropout mask + output (× a·s).
ACT_DROPOUT_MASKS_PER_H = 2.0
ACT_ATTN_CORE_DROPOUT_PER_AS = 3.0
ACT_FULL_RECOMPUTE_PER_H = 2.0  # layer input kept under full recompute
#: The 16-bit bytes among the above: of ACT_REPLICATED_PER_H all but the two masks (8 per h); of
#: ACT_ATTN_CORE_PER_AS all but the softmax dropout mask (1 per a·s).
ACT_REPLICATED_16BIT_PER_H = ACT_REPLICATED_PER_H - ACT_DROPOUT_MASKS_PER_H
ACT_ATTN_CORE_MASK_PER_AS = 1.0
#: fp32 / tf32 training (no mixed precision): every tensor that Table 2 counts at 2 B (16-bit;
#: Korthikanti 2022 §4.1 assumes 16-bit activations, 1-byte dropout masks) is an fp32 tensor of
#: 4 B (IEEE 754 binary32; TF32 is a Tensor Core math mode on fp32 tensors, their storage stays
#: fp32: NVIDIA A100 Tensor Core GPU Architecture whitepaper, 2020, "TF32"): × 4/2. Dropout
#: masks stay 1 B; the fp32 router logits, log-sum-exp and output logits are 4 B already.
ACT_FP32_SCALE = 4.0 / 2.0
#: TorchTitan per-op SAC (``op_sac``, model_stats.op_sac_recompute_params): what a layer keeps,
#: 16-bit outputs of the saved ops: the layer input (2 per h), Q and V (2 per output element),
#: the attention output (2 per a·d_h) and its fp32 log-sum-exp (4 per head), W1 (2 per f).
ACT_OPSAC_INPUT_PER_H = 2.0
ACT_OPSAC_PER_OUT = 2.0
ACT_OPSAC_LSE_PER_HEAD = 4.0
#: ... and in eager PyTorch W2's output too (2 per h, the full width on each TP rank; with TP + SP
#: its reduce-scatter output 2h/t as well): the selective-checkpoint cache keeps every saved op's
#: output, the compiled partitioner only what the backward reads (:func:`_common`).
ACT_OPSAC_W2_OUT_PER_H = 2.0
ACT_MLP_PLAIN_PER_F = 4.0     # GeLU input + output, 16-bit
ACT_MLP_GATED_PER_F = 6.0     # fc1 output (2f wide) + fc2 input, 16-bit
ACT_MOE_ROUTED_IO_PER_H = 4.0  # dispatched input 2h + expert output 2h, per routed copy
#: Its two parts, 16-bit, per routed token-copy that the rank holds: the experts' fc1 input (the
#: dispatched token, saved by the grouped GEMM for its weight gradient) and the combined expert
#: output (the unpermute input, saved for the gate-probability product). With TP > 1 the rank holds
#: different numbers of each (Megatron-Core MoEAlltoAllTokenDispatcher, "permute->A2A(EP)->AG(TP)",
#: its TP group the expert-TP group): the fc1 input after the all-gather over the etp ranks, etp
#: times the rank's own routed tokens; the output after the reduce-scatter, the rank's own
#: (derivation in :func:`_common` and docs/memory.md; review 16h).
ACT_MOE_FC1_IN_PER_H = 2.0
ACT_MOE_OUT_PER_H = 2.0
ACT_MOE_ROUTER_PER_E = 8.0    # fp32 router logits + probabilities
#: Multi-token prediction, bytes per token (× h) kept besides its block, 16-bit (Megatron-Core
#: MultiTokenPredictionLayer): the inputs of enorm (the embedding) and hnorm (the incoming hidden
#: state) 2 + 2, their concatenation (eh_proj's input) 4, the final norm's input 2.
ACT_MTP_CONCAT_PER_H = 4.0
ACT_MTP_INPUTS_PER_H = 2.0 + 2.0 + ACT_MTP_CONCAT_PER_H + 2.0
#: Under full recompute the checkpointed function's two inputs (hidden state and embedding), 2 + 2.
ACT_MTP_FULL_RECOMPUTE_PER_H = 4.0
#: Logits and loss on the last stage, bytes per (token × vocabulary) element: fp32 logits
#: kept for the loss (Korthikanti et al. 2022 §4: 4·s·b·v/t; a fused, vocab-parallel or
#: compiled cross-entropy).
LOGITS_BYTES = 4.0
#: The same with PyTorch's eager ``F.cross_entropy`` on fp32 logits (TorchTitan's 2024 loss,
#: ``torchtitan/train.py``: ``F.cross_entropy(pred.flatten(0, 1), ...)`` on the model's
#: ``self.output(h).float()``): at the start of the backward the saved fp32 log-softmax output
#: (4 B), the gradient reaching it from the NLL loss (4 B, dense) and the gradient it returns
#: for the logits (4 B) are alive together, while every layer's activations are still stashed.
LOGITS_BYTES_EAGER = 12.0
#: The eager loss with TP > 1: the logits are vocab-sharded DTensors and ``F.cross_entropy`` runs
#: under PyTorch's ``loss_parallel()`` (TorchTitan applies it whenever TP is on), whose fused
#: backward (``torch/distributed/tensor/parallel/loss.py``, ``_nll_loss_and_log_softmax_backward``)
#: computes ``(grad_input + torch.exp(x)) * grad_output`` with ``grad_input = torch.zeros_like(x)``
#: and ``x`` the saved log-softmax output: ``x``, ``grad_input``, their sum and its product with
#: the scalar gradient (or ``torch.exp(x)`` before the sum is taken) are alive together, 4 fp32
#: tensors of the local vocabulary shard = 16 B per logit (found by review against TorchTitan's
#: 70B FSDP 32 × TP 8 runs, 0.78–0.83 of the published peak with 12 B; 0.89–0.95 with 16 B).
LOGITS_BYTES_LOSS_PARALLEL = 16.0
#: PyTorch pipelining (``torch.distributed.pipelining``, the pipeline of the PyTorch-native stacks
#: that run an eager loss, ``training.cross_entropy = "eager"``): the last stage appends every
#: micro-batch's output (the fp32 logits, 4 B each) to ``output_chunks`` in ``forward_one_chunk``
#: and frees them only in ``clear_runtime_states`` at the next step (``stage.py``; pytorch/pytorch
#: issue #159251: "the forward output of each micro batch ... keeps alive during the step
#: period"), so at the last micro-batch's backward all m are held beside the loss's own bytes.
PP_OUTPUT_CACHE_BYTES = 4.0
#: The loss's own saved fp32 tensor per logit of a micro-batch between its forward and its
#: backward: Megatron's ``_VocabParallelCrossEntropy`` saves the softmax (``exp_logits``,
#: ``ctx.save_for_backward``), PyTorch's eager ``F.cross_entropy`` / ``loss_parallel()`` its
#: log-softmax output; 4 B either way. Held for every micro-batch whose forward ran and whose
#: backward has not: one under 1F1B / interleaved / ZB-H1 (the last stage runs each backward
#: right after its forward), m under GPipe (:func:`_logit_bytes_per_element`).
LOSS_SAVED_BYTES = 4.0

#: CUDA context + NCCL communicator buffers, fixed per GPU (1 GiB). The CUDA context of a
#: PyTorch process takes about 0.3–0.6 GiB (PyTorch "CUDA semantics" notes on memory
#: management); NCCL allocates NCCL_BUFFSIZE = 4 MiB per channel and peer for each
#: communicator (NCCL environment-variable docs), a few hundred MiB with TP, PP and DP groups.
CONTEXT_NCCL_RESERVE_BYTES = float(2**30)
#: ZeRO-3 / FSDP: whole layers of weights gathered ahead (current + prefetched).
ZERO3_PREFETCH_LAYERS = 2.0
#: ZeRO-3 / FSDP: layers of unsharded gradients held before their reduce-scatter.
ZERO3_GRAD_LAYERS = 1.0
#: Allocator fragmentation as a fraction of all other memory (stated choice, 5–10 % range).
FRAGMENTATION_FRAC = 0.05
#: Fujii et al. 2024: estimates below this fraction of HBM never ran out of memory.
FUJII_SAFE_FRAC = 0.80
#: Host staging buffer for NVMe offload per GPU: DeepSpeed offload_optimizer buffer_count=4
#: × buffer_size 1e8 elements × 4 B.
NVME_STAGING_BYTES_PER_GPU = 4 * 1.0e8 * 4.0

_FP32_CODES = (PRECISIONS.index("fp32"), PRECISIONS.index("tf32"))
_FP8 = PRECISIONS.index("fp8")
_FP4 = PRECISIONS.index("fp4")
_RC_NONE, _RC_SEL, _RC_FULL, _RC_OP = (RECOMPUTE.index(x) for x in ("none", "selective", "full", "op_sac"))
_S_1F1B, _S_INTER, _S_GPIPE, _S_ZB, _S_DUAL = (
    SCHEDULES.index(x) for x in ("1f1b", "interleaved", "gpipe", "zero_bubble", "dualpipe"))
_OFF_NONE, _OFF_CPU, _OFF_NVME = (OFFLOAD.index(x) for x in ("none", "cpu", "nvme"))

COMPONENTS = (
    "mem_weights_bytes", "mem_grads_bytes", "mem_optimizer_bytes", "mem_activations_bytes",
    "mem_logits_bytes", "mem_comm_buffers_bytes", "mem_zero3_prefetch_bytes",
    "mem_fragmentation_bytes", "mem_buffers_bytes", "mem_total_bytes", "host_bytes_per_gpu",
    "mem_act_offload_bytes",
)


# --------------------------------------------------------------------------------------
# Small pure functions (used by the stage and directly by tests)
# --------------------------------------------------------------------------------------


def model_state_bytes(params, dp_shard, zero_stage, *, grad_bytes=4.0, weight_bytes=WEIGHT_BYTES,
                      optimizer_bytes=OPTIMIZER_BYTES):
    """Weights, gradients and optimizer bytes per GPU for ``params`` parameters (ZeRO [1] §5.1).

    Parameters
    ----------
    params : array-like
        Parameters held by this GPU before data-parallel sharding [count].
    dp_shard : array-like
        Size of the sharding group (dp, or dp·cp in Megatron).
    zero_stage : array-like of int
        0: none; 1: optimizer sharded (P_os); 2: + gradients (P_os+g); 3: + weights (P_os+g+p).
    grad_bytes, weight_bytes, optimizer_bytes : float
        Bytes per parameter (ZeRO paper: 2, 2, K = 12).

    Returns
    -------
    (weights, grads, optimizer) : tuple of arrays [bytes]
        ``(2Ψ, 2Ψ, KΨ)`` divided by ``N_d`` where the stage shards them: ZeRO-1 gives
        ``2Ψ + 2Ψ + KΨ/N_d``, ZeRO-2 ``2Ψ + (2+K)Ψ/N_d``, ZeRO-3 ``(2+2+K)Ψ/N_d`` (Fig. 1).
    """
    P = np.asarray(params, dtype=np.float64)
    nd = np.asarray(dp_shard, dtype=np.float64)
    z = np.asarray(zero_stage)
    w = weight_bytes * P / np.where(z >= 3, nd, 1.0)
    g = grad_bytes * P / np.where(z >= 2, nd, 1.0)
    o = optimizer_bytes * P / np.where(z >= 1, nd, 1.0)
    return w, g, o


def activation_bytes_per_layer(s, b, h, a, t=1, *, sequence_parallel=False, recompute="none",
                               flash_attention=False, n_kv_heads=None, head_dim=None, ffn=None,
                               gated_mlp=False, cp=1, lowp=False, dropout=True, fp32=False,
                               v_head_dim=None, eager=False):
    """Activation bytes per GPU of one dense transformer layer and one micro-batch.

    Korthikanti et al. 2022 [2] Table 2, generalised to GQA and gated MLPs (derivation in the
    module docstring). With ``n_kv_heads = a``, ``head_dim = h/a``, ``ffn = 4h``, plain MLP:

    * no parallelism: ``s·b·h·(34 + 5·a·s/h)``
    * TP: ``s·b·h·(10 + 24/t + 5·a·s/(h·t))``
    * TP + SP: ``s·b·h·(34 + 5·a·s/h)/t``
    * TP + SP + selective recompute (or flash attention): ``34·s·b·h/t``
    * full recompute: ``2·s·b·h`` (``/t`` with SP)
    * ``op_sac`` (TorchTitan per-op SAC): ``s·b·(2h/t_sp + (2·a·d_h + 2·a·d_v + 2·k·d_v + 4·a + 2f)/t)``:
      the layer input, Q, V, the attention output and its log-sum-exp, and W1's output; with
      TP + SP also the reduce-scatter output after O (``2h/t``); never above no recompute.
      ``eager`` (no torch.compile): + ``2h`` for W2's output, full width on each TP rank, and
      with TP + SP its reduce-scatter output ``2h/t`` (PyTorch's selective-checkpoint cache
      keeps every saved op's output; the compiled partitioner only what the backward reads)

    Parameters
    ----------
    s, b, h, a : array-like
        Sequence length [tokens], micro-batch [sequences], hidden size, attention heads.
    t : array-like
        Tensor-parallel size.
    recompute : "none" | "selective" | "full" | "op_sac"
    cp : array-like
        Context-parallel size: a rank holds s/c of the tokens (s -> s/c), and without flash
        attention its queries' scores against all s keys (``5·a·s`` per token stays).
    lowp : bool array-like
        fp8/fp4 GEMMs: their inputs are saved in 1 byte (module docstring).
    dropout : bool array-like
        The model trains with dropout (Table 2 assumes it). Without dropout the two 1-byte
        masks (2h) and the softmax dropout mask and output (3·a·s) are not kept.
    fp32 : bool array-like
        fp32 / tf32 training: the 16-bit tensors are 4 B (× ``ACT_FP32_SCALE``), the dropout
        masks stay 1 B, the log-sum-exp of ``op_sac`` is fp32 either way. With dropout, no
        parallelism and no recompute: ``s·b·h·(66 + 9·a·s/h)`` (34 − 2 masks = 32, doubled,
        + 2; 5·a·s − 1 mask = 4, doubled, + 1).
    eager : bool array-like
        Elementwise ops and checkpointing in eager PyTorch (``training.elementwise = "eager"``);
        changes ``op_sac`` only (above).

    Returns
    -------
    array [bytes]
    """
    rc = RECOMPUTE.index(recompute) if isinstance(recompute, str) else recompute
    s, b, h, a, t, cp = (np.asarray(x, dtype=np.float64) for x in (s, b, h, a, t, cp))
    k = a if n_kv_heads is None else np.asarray(n_kv_heads, dtype=np.float64)
    d = h / a if head_dim is None else np.asarray(head_dim, dtype=np.float64)
    dv = d if v_head_dim is None else np.asarray(v_head_dim, dtype=np.float64)
    f = 4.0 * h if ffn is None else np.asarray(ffn, dtype=np.float64)
    sl = s / cp
    e16 = np.where(fp32, ACT_FP32_SCALE, 1.0)
    # the scores of a CP rank's s/c queries against all s keys (ring attention visits every key
    # block): the core term is per query token × s keys, not s/c (found by review 24: (s/c)², a
    # 4× under-count at CP 2 without flash attention)
    R, S, core = _layer_terms(h, a, d, np.maximum(k, t), f, gated_mlp, s, dropout, e16, dv)
    R = R - np.where(lowp, 2.0 * h, 0.0)
    S = S - np.where(lowp, a * dv + f, 0.0)
    core = np.where((rc == _RC_NONE) & ~np.asarray(flash_attention), core, 0.0)
    kept = np.where(sequence_parallel, (R + S + core) / t, R + (S + core) / t)
    full = ACT_FULL_RECOMPUTE_PER_H * e16 * h / np.where(sequence_parallel, t, 1.0)
    rs_saved = np.asarray(sequence_parallel, dtype=bool) & (t > 1)
    op = ACT_OPSAC_INPUT_PER_H * e16 * h * (1.0 + rs_saved) / np.where(sequence_parallel, t, 1.0) + _opsac_split(
        a * d, np.maximum(k, t) * dv, a, f, e16, a * dv) / t
    op = op + np.where(eager, ACT_OPSAC_W2_OUT_PER_H * e16 * h * (1.0 + rs_saved / t), 0.0)
    return sl * b * np.where(rc == _RC_FULL, full, np.where(rc == _RC_OP, np.minimum(op, kept), kept))


def _opsac_split(q, kv_v, a, f, e16=1.0, q_v=None):
    """Per-token bytes ``op_sac`` keeps of a layer's TP-split tensors: Q (``q = a·d_h``) and V
    (``kv_v = k·d_v``) projections, attention output (``q_v = a·d_v``; None: ``q``, the V head
    as wide as Q's) and log-sum-exp, W1's output (``e16``: the 16-bit outputs' scale,
    ``ACT_FP32_SCALE`` in fp32 training; the log-sum-exp is fp32)."""
    qo = 2.0 * q if q_v is None else q + q_v
    return ACT_OPSAC_PER_OUT * e16 * (qo + kv_v + f) + ACT_OPSAC_LSE_PER_HEAD * a


def _layer_terms(h, a, d, kv_heads_eff, f, gated, keys, dropout=True, e16=1.0, dv=None):
    """Per-token bytes of a dense layer: replicated part R, TP-split part S, attention core
    (``keys``: the keys each query scores, the whole sequence s, also under CP; ``e16``: the scale
    of the 16-bit tensors, ``ACT_FP32_SCALE`` in fp32 training; masks 1 B; ``dv``: the V head,
    ``d`` if None)."""
    dv = d if dv is None else dv
    q = a * d
    masks = np.where(dropout, ACT_DROPOUT_MASKS_PER_H, 0.0) * h
    R = ACT_REPLICATED_16BIT_PER_H * e16 * h + masks
    S = (2.0 * (q + a * dv) + 2.0 * kv_heads_eff * (d + dv)
         + np.where(gated, ACT_MLP_GATED_PER_F, ACT_MLP_PLAIN_PER_F) * f) * e16
    core_mask = np.where(dropout, ACT_ATTN_CORE_MASK_PER_AS, 0.0)
    core = ((ACT_ATTN_CORE_PER_AS - np.where(dropout, 0.0, ACT_ATTN_CORE_DROPOUT_PER_AS) - core_mask) * e16
            + core_mask) * a * keys
    return R, S, core


# --------------------------------------------------------------------------------------
# Vectorised stage
# --------------------------------------------------------------------------------------


def _f(b, k):
    return b[k].astype(np.float64)


def _u(b: Batch, k: str, dtype=np.float64):
    """Column ``k`` for arithmetic: a numpy scalar when every row holds the same value (a
    broadcast column of a sweep chunk, a batch of one, a uniform column), else the (N,) array,
    cast once to ``dtype`` (None: as stored). Same IEEE operations on the same values either
    way; results go back to (N,) in :func:`candidate_stages`."""
    x = np.asarray(b[k])
    if x.ndim == 1 and x.shape[0] > 0 and (
            x.strides == (0,) or x.shape[0] == 1 or (x[0] == x[-1] and (x == x[0]).all())):
        x = x[0]
        return x if dtype is None else dtype(x)
    return x if dtype is None or x.dtype == dtype else x.astype(dtype)


_any = any_true  # np.any's dispatch costs more than a one-row reduction (batch.any_true)


_ARANGE = np.arange(0, dtype=np.intp)


class _Chooser:
    """``np.where(cond, x, y)`` for many pairs (x, y) and one bool condition of shape (n,),
    as a gather: ``[y, x][cond·n + i]`` from a buffer of 2n. Exact for any values (NaN
    included), and ~3x faster than ``np.where`` on float64 when ``cond`` is irregular (as a
    sweep's row masks are). Operands are scalars or arrays of shape (n,)."""

    def __init__(self, cond: np.ndarray):
        global _ARANGE
        n = cond.shape[0]
        if _ARANGE.shape[0] < n:
            _ARANGE = np.arange(n, dtype=np.intp)
        idx = cond.astype(np.intp)
        idx *= n
        idx += _ARANGE[:n]
        self.n, self.idx = n, idx
        self.buf = np.empty(2 * n)

    def __call__(self, x, y):
        n = self.n
        if not (np.result_type(x, y) == np.float64 and np.shape(x) in ((), (n,)) and np.shape(y) in ((), (n,))):
            return np.where(self.idx >= n, x, y)
        buf = self.buf
        buf[:n] = y
        buf[n:] = x
        return buf.take(self.idx)


def _sel(cond, x, y):
    """``np.where(cond, x, y)``; for a scalar ``cond`` the chosen operand itself; for a 1-D
    mask and float operands a gather (:class:`_Chooser`, same values)."""
    if np.ndim(cond) == 0:
        return x if cond else y
    if cond.ndim == 1 and cond.dtype == bool:
        return _Chooser(cond)(x, y)
    return np.where(cond, x, y)


def _common(b: Batch) -> dict:
    """Quantities shared by all pipeline stages of each configuration (arrays of shape (N,),
    or scalars where every row holds the same value).

    Speed: terms that no row of the batch needs (MoE, fp8, offload, ZeRO-3, interleaving,
    replicated KV heads) are skipped with a batch-level ``np.any`` test; uniform columns are
    scalars (:func:`_u`); a choice between two finite values is written ``x + cond·(y − x)``
    only where that is exact (small integers), else ``np.where``. The formulas are the same
    either way.
    """
    if "params_layer_dense" not in b:
        from . import model_stats

        b = {**b, **model_stats.stats(b)}
    F = lambda k: _u(b, k)  # noqa: E731
    G = lambda k: _u(b, k, None)  # noqa: E731
    t, p, v = F("tp"), F("pp"), F("vpp")
    h, L, a, dh = F("hidden_size"), F("n_layers"), F("n_heads"), F("head_dim")
    V = F("vocab_size")
    mb = F("micro_batch_size")
    c = F("cp")
    dp = F("dp")
    dpc = dp * c
    sb = F("seq_len") * mb / c  # tokens per GPU and micro-batch (s/c · b)
    m = F("global_batch_size") / (mb * dp)
    sp = G("sequence_parallel")
    gated = G("gated_mlp")
    rc = G("recompute")
    prec = G("precision")
    zs = G("zero_stage")
    n_moe = F("n_moe_layers")
    any_moe = _any(n_moe > 0)
    lowp = (prec == _FP8) | (prec == _FP4)
    any_lowp = _any(lowp)

    # ---- parameters per GPU --------------------------------------------------------
    k = F("n_kv_heads")
    kv_eff = np.maximum(k, t)
    if _any(t > k):  # replicated K/V weights (summed over TP ranks)
        kv_extra = 2.0 * h * dh * (kv_eff - k)
        p_dense = (F("params_layer_dense") + kv_extra) / t
    else:
        kv_eff = k
        kv_extra = 0.0
        p_dense = F("params_layer_dense") / t
    if any_moe:
        p_exp_all = F("n_experts") * F("params_expert")
        p_moe_ne = (F("params_layer_moe_total") - p_exp_all + kv_extra) / t  # non-expert part
        # routed experts over ep·etp (expert TP; = tp unless parallelism.etp says otherwise)
        et = F("etp") if "etp" in b else t
        p_moe_ex = p_exp_all / (F("ep") * et)
    else:
        p_moe_ne = p_moe_ex = None
    Vh_t = V * h / t
    lpe = F("learned_pos_embeddings")
    # the learned position table is replicated over TP (Megatron's "Position embedding (serial)":
    # a plain nn.Embedding beside the VocabParallelEmbedding); only the word embedding is split
    p_emb = Vh_t + lpe * h if (np.ndim(lpe) or lpe) else Vh_t
    tied = G("tied_embeddings")
    # the final norm, whole on the last stage: h weights (RMSNorm), + h biases (LayerNorm), as
    # model_stats counts it (until 2026-12-01 h for both: a LayerNorm model's stages summed to h
    # parameters fewer than params_total, found by review 15k against DeepSpeed's 18·Ψ/N)
    ln = G("layernorm") if "layernorm" in b else False
    norm_f = h * (1.0 + ln) if (np.ndim(ln) or ln) else h
    if _any(tied):  # tied head: none on a single stage (the embedding is the head)
        p_head = _sel(tied & (p == 1), 0.0, Vh_t) + norm_f
    else:
        p_head = Vh_t + norm_f

    # bytes per parameter
    is32 = (prec == _FP32_CODES[0]) | (prec == _FP32_CODES[1])
    any32 = _any(is32)
    wb = _sel(is32, FP32_WEIGHT_BYTES, WEIGHT_BYTES) if any32 else WEIGHT_BYTES
    if any_lowp and (LOWP_WEIGHT_COPY_BYTES["fp8"] or LOWP_WEIGHT_COPY_BYTES["fp4"]):
        wb = wb + _sel(prec == _FP8, LOWP_WEIGHT_COPY_BYTES["fp8"],
                       _sel(prec == _FP4, LOWP_WEIGHT_COPY_BYTES["fp4"], 0.0))
    gb = F("grad_bytes")
    ob = _sel(is32, FP32_OPTIMIZER_BYTES, OPTIMIZER_BYTES) if any32 else OPTIMIZER_BYTES
    off = G("offload_optimizer") != _OFF_NONE
    any_off = _any(off)
    if any_off:
        master = _sel(is32, 0.0, MASTER_BYTES) if any32 else MASTER_BYTES
        ob_dev = _sel(off, _sel(G("offload_master_weights"), 0.0, master), ob)
        # the CPU step (ZeRO-Offload; Megatron-Core's HybridDeviceOptimizer) updates an fp32 copy of the
        # weights with Adam m, v, all in host memory: 12 B per parameter of the optimizer's shard on the
        # host whatever offload_master_weights says (fp32 training: the weights' copy 4 + m, v 8). With
        # the flag off the GPU keeps its fp32 master as well, refreshed after the step (planner.timing).
        # Until review 39 the host held only m, v then (8 B), which the CPU step cannot run on.
        ob_host = _sel(off, OPTIMIZER_BYTES, 0.0)
        # offload_grads: ZeRO-2/3 move each reduce-scattered gradient partition to the host as it
        # is produced (ZeRO-Offload [6] §4), so none stays in HBM; ZeRO-0/1 accumulate the full
        # gradient over the micro-batches and reduce it on the GPU after the last backward, so it
        # stays resident and is then copied to the host for the CPU step: counted on both (until
        # 2026-11-30 it was taken off the GPU for every stage; found by review: the default preset
        # at ZeRO-1 showed 0 B of gradients while the step time reduces 8.46 GiB of them on the GPU)
        og = off & G("offload_grads")
        gb_dev = _sel(og & (zs >= 2), 0.0, gb)
        # the host always holds the gradient partition the CPU step reads (the step time moves it
        # down in every case); offload_grads decides only whether the GPU frees its own (ZeRO-2/3).
        # Until review 39 it was counted only with offload_grads: 239 GiB per node missing on Llama 3
        # 8B at ZeRO-0 on 64 H100.
        # fp32 (4 B) whatever grad_dtype: the CPU step's buffer and the 4 B the step time moves down
        # (review 39c: bf16 gradients counted 2 B here)
        gb_host = _sel(off, HOST_GRAD_BYTES, 0.0)
    else:
        ob_dev, ob_host, gb_dev, gb_host = ob, 0.0, gb, 0.0

    # ZeRO sharding groups: dp_shard·cp where the stage shards (= dp·cp unless HSDP), else 1
    # (x + cond·(n − 1), exact)
    dpc_s = F("dp_shard") * c if "dp_shard" in b else dpc
    dpc1 = dpc_s - 1.0
    shard_w = 1.0 + (zs >= 3) * dpc1
    shard_g = 1.0 + (zs >= 2) * dpc1
    shard_o = 1.0 + (zs >= 1) * dpc1
    if any_moe:
        # the expert data-parallel group tp·cp·dp/(etp·ep) (Megatron-Core parallel_state); = dp·cp/ep when
        # etp = tp. HSDP with ep > 1 (or etp ≠ tp) is refused by the schema: dpc_s = dpc there
        edp = dpc_s / F("ep") if "etp" not in b or not _any(et != t) else dpc_s * (t / et) / F("ep")
        eshard = (_sel(zs >= 3, edp, 1.0), _sel(zs >= 2, edp, 1.0), _sel(zs >= 1, edp, 1.0))
    else:
        eshard = (None, None, None)

    # ---- activations per layer and micro-batch (bytes per token, then × sb) ---------
    f = F("ffn_hidden_size")
    q = a * dh
    dv = F("v_head_dim")  # the V head (MLA: 128 beside Q/K's 192); = dh for every other model
    qv = a * dv
    i_gate = _sel(gated, ACT_MLP_GATED_PER_F, ACT_MLP_PLAIN_PER_F)
    # Q, K (2q + 2kv), V (2kv_v) and the attention output (2q_v); 4q + 4kv where dv = dh (exact:
    # whole numbers)
    S_attn = 2.0 * (q + qv) + 2.0 * kv_eff * (dh + dv)
    # fp32 / tf32 training: the 16-bit tensors are 4 B (ACT_FP32_SCALE; until 2026-11-30 all
    # counted at 2 B, found by review: tf32 showed bf16's activations). e16 multiplies every 16-bit
    # term below (× 1.0 elsewhere: the same values); masks, router logits, log-sum-exp stay.
    e16 = _sel(is32, ACT_FP32_SCALE, 1.0) if any32 else 1.0
    if any32:
        S_attn = S_attn * e16
        i_gate = i_gate * e16
    S = S_attn + i_gate * f
    has_dropout = F("dropout") > 0
    R = (ACT_REPLICATED_PER_H - _sel(has_dropout, 0.0, ACT_DROPOUT_MASKS_PER_H)) * h
    if any32:  # the replicated 16-bit part (norm, QKV and MLP inputs) once more on fp32 rows
        R = R + (e16 - 1.0) * ACT_REPLICATED_16BIT_PER_H * h
    if any_lowp:  # inputs of fp8 GEMMs saved in 1 byte
        R = R - _sel(lowp, 2.0 * h, 0.0)
        S = S - _sel(lowp, qv + f, 0.0)
    flash_on = G("flash_attention")
    no_core = (rc != _RC_NONE) | flash_on
    core_w = 0.0  # the scores of the layer being recomputed (any recompute, without flash)
    if np.ndim(no_core) == 0 and no_core and np.ndim(flash_on) == 0 and flash_on:
        core_t = 0.0
    else:
        core_per_as = ACT_ATTN_CORE_PER_AS - _sel(has_dropout, 0.0, ACT_ATTN_CORE_DROPOUT_PER_AS)
        if any32:  # fp32: the softmax output (and dropout output) at 4 B, the 1-byte mask as it is
            core_per_as = core_per_as + (e16 - 1.0) * (
                core_per_as - _sel(has_dropout, ACT_ATTN_CORE_MASK_PER_AS, 0.0))
        # Without flash attention the whole s × s score matrix is stored, a sliding window only
        # masks it (so no window term here). Under CP a rank holds its s/c queries' scores against
        # all s keys (ring attention visits every key block): a·s per query token, times the
        # rank's s/c tokens in sb (found by review 24: a·s/c here made it (s/c)², 1/4 of the
        # scores at CP 2, while the timing charged s/c × s)
        core_val = core_per_as * a * F("seq_len")
        core_t = core_val * ~no_core if np.ndim(no_core) else (0.0 if no_core else core_val)
        core_w = core_val * ~flash_on if np.ndim(flash_on) else (0.0 if flash_on else core_val)
    sp_t = _sel(sp, t, 1.0)
    R_t = R / sp_t
    work_dense = sb * (R_t + (S + core_t) / t)
    is_full = rc == _RC_FULL
    full_keep = sb * (ACT_FULL_RECOMPUTE_PER_H * h) / sp_t
    if any32:
        full_keep = full_keep * e16
    is_op = rc == _RC_OP
    any_op = _any(is_op)
    if any_op:  # op_sac keeps the saved ops' outputs (ACT_OPSAC_*), never more than no recompute
        # layer input; with TP + SP also the reduce-scatter output after O (2h/t, in the save list)
        rs_saved = np.asarray(sp, dtype=bool) & (np.asarray(t) > 1)
        op_in = sb * (ACT_OPSAC_INPUT_PER_H * h) * (1.0 + rs_saved) / sp_t * e16
        op_attn = _opsac_split(q, kv_eff * dv, a, 0.0, e16, qv)  # Q, V, attention output, log-sum-exp
        op_save = sb * _opsac_split(q, kv_eff * dv, a, f, e16, qv) / t
        if "elem_eager" in b and _any(G("elem_eager")):
            # Eager PyTorch (no torch.compile): the selective-checkpoint cache
            # (torch.utils.checkpoint._CachingTorchDispatchMode) keeps every MUST_SAVE output from
            # the forward to the backward, needed or not, so also W2's (the block's 7th matmul, odd,
            # saved): [sb, h] 16-bit, full width on each TP rank (a row-parallel partial sum), and
            # with TP + SP the reduce-scatter after it (in the save list), 2h/t. The compiled
            # partitioner saves only what the backward reads, and W2's output is not (review 45c:
            # TorchTitan's Llama 3.1 8B, 81.9 GiB eager against 77.0 compiled, 4.0 GiB of it this).
            w2_out = sb * ACT_OPSAC_W2_OUT_PER_H * h * e16 * (1.0 + rs_saved / np.maximum(t, 1.0))
            op_save = op_save + w2_out * G("elem_eager")
        op_keep_dense = np.minimum(op_in + op_save, work_dense)
    if np.ndim(is_full) or np.ndim(is_op):  # x·cond (both finite): the same values as np.where
        full_f = np.asarray(is_full, dtype=np.float64)
        op_f = np.asarray(is_op, dtype=np.float64)
        part_f = 1.0 - full_f - op_f
        keep_dense = full_keep * full_f + work_dense * part_f
        if any_op:
            keep_dense = keep_dense + op_keep_dense * op_f
    else:
        full_f, op_f = float(is_full), float(is_op)
        keep_dense = full_keep if is_full else (op_keep_dense if is_op else work_dense)
    if any_moe:
        rcf = F("moe_top_k") * F("moe_capacity_factor")
        fe, fs, nsh = F("expert_ffn_hidden_size"), F("shared_expert_ffn_hidden_size"), F("n_shared_experts")
        # Routed experts, per rank (S_moe is divided by t below; r = top_k·cf routed copies per token).
        # Megatron-Core MoEAlltoAllTokenDispatcher: "permute->A2A(EP)->AG(TP)", its TP group the
        # expert-TP group of etp ranks. With SP the rank routes its own sb/t tokens: sb·r/t copies
        # leave it and, balanced, sb·r/t arrive over the EP all-to-all; the all-gather over the etp
        # ranks makes them sb·r·etp/t, the tokens every expert GEMM of the rank runs on. Saved for
        # backward, by shape:
        #   fc1 input      [sb·r·etp/t, h]         2h·r·etp/t per token  (h-wide, replicated over etp)
        #   fc1 output     [sb·r·etp/t, 2fe/etp]   4fe·r/t   (gated; plain fe/etp wide: 2fe·r/t)
        #   fc2 input      [sb·r·etp/t, fe/etp]    2fe·r/t   (the i_gate·fe·r/t of Table 2, generalised)
        #   expert output  [sb·r/t, h]             2h·r/t    (after the reduce-scatter over etp and the
        #                                                      combine all-to-all: the unpermute input)
        # so per token r·(2h·etp + 2h + i_gate·fe)/t: only the fc1 input grows with etp (until 2026-12-01
        # r·(4h + i_gate·fe)/t, as if etp = 1; review 16e/16h). Without SP (etp = tp only) every TP rank
        # holds all sb tokens and routes them all: fc1 input and output sb·r each (replicated, no
        # gather needed), the fe-wide tensors sharded as above: 2h·r·etp/t and 2h·r·t/t with etp = t.
        # TP = 1: 4h·r, as before (the same operations on the same values).
        io = ACT_MOE_FC1_IN_PER_H * et + ACT_MOE_OUT_PER_H * (t / sp_t)
        S_moe = S_attn + (rcf * (io * e16 * h + i_gate * fe) + nsh * i_gate * fs)
        # The router's fp32 logits and probabilities (8E per token) are of the tokens the rank
        # routes: its own sb/t with SP, all sb without (every TP rank runs the router on the whole
        # replicated input), so they divide by sp_t like the replicated part R, not by t (until
        # 2026-12-03 by t; review h26a: 0.02 % on Mixtral at TP 2 without SP).
        router = ACT_MOE_ROUTER_PER_E * F("n_experts")
        R_moe_t = (R + router) / sp_t
        if any_lowp:  # the 1-byte casts of the fc1 input (etp/t of a token-copy per token) and fc2 input
            S_moe = S_moe - _sel(lowp, qv + rcf * (h * et + fe) + nsh * fs, 0.0)
            # An MoE layer's MLP input stays 16-bit: the pre-MLP norm is its own module there
            # (Megatron-Core's TE layer spec: pre_mlp_layernorm = TENorm if num_experts, else fused
            # into fc1), and the router's linear keeps its 16-bit output; the shared experts' fc1
            # (TE Linear) keeps a 1-byte cast of it besides (h per token). Until 2026-12-03 the
            # dense layer's 1-byte MLP input was charged (review 26: Qwen3-235B fp8 +1.5 %).
            R_moe_t = (R + router + _sel(lowp, h * (1.0 + (nsh > 0)), 0.0)) / sp_t
        work_moe = sb * (R_moe_t + (S_moe + core_t) / t)
        if any_op:  # + the dispatched and combined tokens (saved all-to-all outputs; ep > 1), shared W1
            a2a = (F("ep") > 1) * 1.0
            op_keep_moe = np.minimum(op_in + sb * (op_attn + a2a * rcf * ACT_MOE_ROUTED_IO_PER_H * e16 * h
                                                   + nsh * ACT_OPSAC_PER_OUT * e16 * fs) / t, work_moe)
        else:
            op_keep_moe = 0.0
        if np.ndim(is_full) or np.ndim(is_op):
            keep_moe = full_keep * full_f + work_moe * part_f + op_keep_moe * op_f
        else:
            keep_moe = full_keep if is_full else (op_keep_moe if is_op else work_moe)
    else:
        keep_moe = None
        work_moe = None
    # Full recompute and op_sac: the layer being recomputed holds its working set on top of
    # what the other layers keep (its own kept part is already in the stash). One extra per
    # layer kind; the stage charges the largest of the kinds it holds (_stage_parts: until
    # 2026-11-30 the largest kind of the model, found by review: a stage of MoE layers charged the
    # dense layer's working set and full recompute came out above none)
    rec_extra_dense = (work_dense - full_keep) * full_f
    rec_extra_moe = (work_moe - full_keep) * full_f if work_moe is not None else None
    if any_op:  # op_sac: what the layer keeps under op_sac is in the stash
        rec_extra_dense = rec_extra_dense + np.maximum(work_dense - op_keep_dense, 0.0) * op_f
        if work_moe is not None:
            rec_extra_moe = rec_extra_moe + np.maximum(work_moe - op_keep_moe, 0.0) * op_f
    rec_extra_core = 0.0
    if np.ndim(core_w) or core_w:  # without flash the recomputed layer materialises its scores
        sel_f = np.asarray(rc == _RC_SEL, dtype=np.float64)
        rec_extra_core = sb * core_w / t * (full_f + op_f + sel_f)

    # ---- layers per rank ----------------------------------------------------------
    # The shared layout rule (model_stats.layers_on_rank, inlined for ranks 0 and p−1 with the
    # same float operations): first L mod (p·v) virtual stages +1.
    pv = p * v
    base = np.floor(L / pv)
    rem = L - base * pv
    vbase = v * base
    layers_first = vbase + np.minimum(np.ceil(rem / p), v)
    layers_last = vbase + np.minimum(np.maximum(np.ceil((rem - (p - 1.0)) / p), 0.0), v)
    sched = G("schedule")
    inter = (sched == _S_INTER) & (v > 1)
    # Micro-batches in flight on rank j (see _stage_parts): 1F1B min(m, p − j); interleaved rows
    # the exact count per chunk of Megatron's schedule (_interleaved_inflight)
    any_inter = _any(inter)

    # ---- buffers -----------------------------------------------------------------
    # ZeRO-3 gathers only what it shards: with one shard rank (dp_shard·cp = 1) the weights are
    # resident and there is nothing to prefetch (found by review: 1 GPU, +3.9 GiB of buffers).
    # The gathered units are those of the stage (_stage_parts); here only what they are made of:
    # an MoE layer's experts count only where ZeRO-3 shards them (expert shard group
    # dp_shard·cp/ep > 1): over a group of one they stay resident, nothing is gathered (the
    # timing stage's expert gathers are 0 there) and their gradients accumulate in place in
    # mem_grads_bytes (found by a property test: ZeRO-3 above ZeRO-2 on the same stage,
    # DeepSeek-V3 TP 8 PP 3 DP 8 EP 8, 81.54 GB against 80.89 GB, from two MoE layers' resident
    # experts counted as gathered)
    z3 = (zs >= 3) & (dpc_s > 1.0)
    any_z3 = _any(z3)
    z3_f = z3 * 1.0 if np.ndim(z3) else float(z3)
    ex_gathered = (edp > 1.0) * 1.0 if any_moe and any_z3 else 0.0
    off_act = G("offload_activations")

    # ---- multi-token prediction (ModelSpec.mtp_layers = D; DeepSeek-V3 §2.2) ------------
    # On the head-carrying stage (Megatron-Core: every MTP layer on the last pipeline stage,
    # mtp_on_this_rank; DualPipe: both end ranks, which hold the head), per GPU: D × (one block of the
    # model's MoE-layer kind (a dense layer on a dense model), its experts over ep·etp and the expert
    # group; eh_proj 2h·h/t, column-parallel; enorm, hnorm, final_layernorm whole) and, with pp > 1
    # outside DualPipe, a copy of the
    # input embedding (Megatron builds the embedding on the MTP stage and ties it to the first stage's,
    # tie_word_embeddings_state_dict; a tied model's head weight on that stage already is that copy,
    # only a learned position table is added). Activations per micro-batch: D × (the block's kept
    # activations, as a layer of its kind, + the MTP inputs: enorm and hnorm inputs 2h + 2h, the
    # concatenation 4h (eh_proj's input, 1 B per element under fp8), the final norm's input 2h; under
    # full recompute with Megatron's uniform method only the two checkpointed inputs, 4h), h-wide:
    # split by TP with SP only. Partial recompute (recompute_layers > 0, Megatron's block method):
    # MultiTokenPredictionLayer._checkpointed_forward skips the MTP recompute ("recompute_method ==
    # 'block' is not supported for MTP yet. Skipping recompute."), so the module keeps what it keeps
    # without recompute: its block's no-recompute activations (work_*, with the score matrix when
    # flash attention is off) and the 10h of inputs (until 2026-12-01 the checkpointed 4h, review 16f).
    any_mtp = "mtp_layers" in b and _any(np.asarray(b["mtp_layers"]) > 0)
    if any_mtp:
        D = F("mtp_layers")
        mtp_rc = is_full  # the MTP module is checkpointed: full recompute, uniform method
        part_rows = None
        if "recompute_layers" in b and _any(np.asarray(b["recompute_layers"]) > 0):
            part_rows = is_full & (F("recompute_layers") > 0)
            mtp_rc = is_full & ~part_rows
        if any_moe:
            is_moe_row = F("n_experts") > 0
            blk_ne = _sel(is_moe_row, p_moe_ne, p_dense)
            p_mtp_ex = D * _sel(is_moe_row, p_moe_ex, 0.0)
            keep_blk = _sel(is_moe_row, keep_moe, keep_dense)
            if part_rows is not None:
                keep_blk = _sel(part_rows, _sel(is_moe_row, work_moe, work_dense) + sb * core_w / t, keep_blk)
        else:
            blk_ne, p_mtp_ex, keep_blk = p_dense, None, keep_dense
            if part_rows is not None:
                keep_blk = _sel(part_rows, work_dense + sb * core_w / t, keep_blk)
        emb_copy = _sel(tied, p_emb - Vh_t, p_emb) if _any(tied) else p_emb
        dual_rows = sched == _S_DUAL
        p_mtp_ne = D * (blk_ne + 2.0 * h * h / t + 3.0 * norm_f) + emb_copy * ((p > 1) & ~dual_rows & (D > 0))  # (review 16i: D > 0, or a batch neighbour's MTP charged it)
        mtp_in = ACT_MTP_INPUTS_PER_H - _sel(mtp_rc, ACT_MTP_INPUTS_PER_H - ACT_MTP_FULL_RECOMPUTE_PER_H, 0.0)
        mtp_in = mtp_in * e16 * h
        if any_lowp:  # eh_proj's input in 1 byte (an fp8 GEMM), when it is kept
            mtp_in = mtp_in - _sel(lowp & ~mtp_rc, ACT_MTP_CONCAT_PER_H / 2.0 * h, 0.0)
        keep_mtp = D * (keep_blk + sb * mtp_in / sp_t)
    else:
        D = p_mtp_ne = p_mtp_ex = keep_mtp = None

    return dict(
        any_mtp=any_mtp, D=D, p_mtp_ne=p_mtp_ne, p_mtp_ex=p_mtp_ex, keep_mtp=keep_mtp,
        t=t, p=p, v=v, m=m, L=L, n_dense_tot=L - n_moe, any_moe=any_moe,
        p_dense=p_dense, p_moe_ne=p_moe_ne, p_moe_ex=p_moe_ex, p_emb=p_emb, p_head=p_head,
        wb=wb, gb_dev=gb_dev, gb_host=gb_host, ob_dev=ob_dev, ob_host=ob_host, gb=gb,
        shard_w=shard_w, shard_g=shard_g, shard_o=shard_o,
        eshard_w=eshard[0], eshard_g=eshard[1], eshard_o=eshard[2],
        keep_dense=keep_dense, keep_moe=keep_moe, is_full=is_full,
        # one layer's working set (offload_activations keeps one in HBM), per layer kind
        work_layer_dense=work_dense, work_layer_moe=work_moe,
        # partial full recompute (N layers per chunk, Megatron "block"): the other layers keep
        # what no recompute keeps; rc_layers = 0 on every other row
        rc_layers=(F("recompute_layers") * is_full if "recompute_layers" in b
                   and _any(np.asarray(b["recompute_layers"]) > 0) else None),
        # what a layer that is not recomputed keeps: the no-recompute activations, i.e. with the
        # score matrix when flash attention is off (work_* drop it on recompute rows)
        work_dense=work_dense + sb * core_w / t,
        work_moe=(work_moe + sb * core_w / t) if any_moe else None,
        full_keep=full_keep, rec_extra_dense=rec_extra_dense, rec_extra_moe=rec_extra_moe,
        rec_extra_core=rec_extra_core,
        logits=_logit_bytes_per_element(G("ce_eager"), t, p, m, gpipe=sched == _S_GPIPE) * sb * V / t,
        base=base, rem=rem, layers_first=layers_first, layers_last=layers_last,
        inter=inter, any_inter=any_inter,
        gpipe=sched == _S_GPIPE, any_gpipe=_any(sched == _S_GPIPE),
        dual=sched == _S_DUAL, any_dual=_any(sched == _S_DUAL),
        any_z3=any_z3, z3_f=z3_f, ex_gathered=ex_gathered, any_off=any_off, any_host=any_off or _any(off_act),
        off_act=off_act, nvme=G("offload_optimizer") == _OFF_NVME,
        any_nvme=_any(G("offload_optimizer") == _OFF_NVME), any_off_act=_any(off_act),
    )


def _logit_bytes_per_element(ce_eager, t, p, m, gpipe=False):
    """Bytes per logit of one micro-batch on the last stage (× s·b/c·V/t): 4 with a fused /
    vocab-parallel / compiled loss (``LOGITS_BYTES``); the eager PyTorch loss 12 B without TP
    (``LOGITS_BYTES_EAGER``) and 16 B with TP, where it runs under ``loss_parallel()``
    (``LOGITS_BYTES_LOSS_PARALLEL``; until 2026-11-30 12 B either way); with the eager loss and
    pp > 1, PyTorch pipelining's last stage also holds the fp32 logits of all m micro-batches
    (``PP_OUTPUT_CACHE_BYTES`` × m; until 2026-11-30 not counted, found by review: TorchTitan's
    405B CP runs at 0.80–0.90 of their published peak).

    ``gpipe`` (the GPipe schedule, every row or an array): the last stage runs all m forwards,
    each with its loss, before the first backward, so the loss's saved fp32 tensor (Megatron's
    vocab-parallel softmax, the eager loss's log-softmax: ``LOSS_SAVED_BYTES`` = 4 B per logit)
    is held for the m − 1 micro-batches not yet in their backward (PyTorch
    ``pipelining/schedules.py``, ``ScheduleGPipe._step_microbatches``: every forward's loss is
    computed and kept in ``_internal_losses`` before the backward loop). Until 2026-12-01 one
    micro-batch's was counted whatever the schedule (found by review 15k: GPipe's last stage
    held m micro-batches of activations but one of logits)."""
    gp = _any(gpipe)
    held = np.where(gpipe, LOSS_SAVED_BYTES * (m - 1.0), 0.0) if gp else 0.0
    if not _any(ce_eager):
        return LOGITS_BYTES + held if gp else LOGITS_BYTES
    eager = np.where(t > 1, LOGITS_BYTES_LOSS_PARALLEL, LOGITS_BYTES_EAGER) + np.where(
        p > 1, PP_OUTPUT_CACHE_BYTES * m, 0.0)
    out = _sel(ce_eager, eager, LOGITS_BYTES)
    return out + held if gp else out


def _dense_on_rank(cm: dict, j):
    """Leading dense layers held by pipeline rank ``j``: over its virtual stages ``s = j + k·p``
    (``k < v``), each holding ``base + [s < rem]`` layers after ``s·base + min(s, rem)`` earlier
    ones (the layout of :func:`model_stats.layers_on_rank`), the dense layers being the first
    ``n_dense`` of the model. Exact on uneven splits (found by review: ``j·L/p`` placed them
    fractionally and missed the most loaded rank)."""
    p, v, nd = cm["p"], cm["v"], cm["n_dense_tot"]
    base, rem = cm["base"], cm["rem"]
    out = 0.0
    for k in range(int(np.max(v))):
        held = _virtual_stage(base, rem, nd, j + k * p)[1]
        out = out + (held * (k < v) if np.ndim(v) else held)
    return out


def _virtual_stage(base, rem, nd, s):
    """(layers, leading dense layers) of virtual stage ``s``: ``base + [s < rem]`` layers after
    ``s·base + min(s, rem)`` earlier ones (:func:`model_stats.layers_on_rank`'s layout), the dense
    ones being the model's first ``nd``."""
    n = base + (s < rem)
    return n, np.clip(nd - (s * base + np.minimum(s, rem)), 0.0, n)


def _interleaved_inflight(cm: dict, j, layers):
    """Micro-batches in flight on pipeline rank ``j`` under Megatron's interleaved 1F1B schedule,
    as the peak of the rank's layer-weighted stash divided by its ``layers`` (so that
    ``inflight × one micro-batch's activations of the rank`` is the stash at its peak).

    Megatron-Core (``pipeline_parallel/schedules.py``, ``get_pp_rank_microbatches`` and
    ``get_schedule_table``, with the default ``microbatch_group_size_per_vp_stage`` = p and m a
    multiple of p, as the schema requires) runs ``W = 2(p − j − 1) + (v − 1)·p`` warm-up forwards
    on rank j (all ``m·v`` if that is no fewer), then, for ``i = 0, 1, …``, forward ``W + i``
    followed by backward ``i``; forward ``k`` runs chunk ``(k mod p·v) // p`` and backward ``k``
    chunk ``v − 1 − (k mod p·v) // p``. Rank j's chunk c is virtual stage ``j + c·p`` and holds
    ``base + 1`` layers for ``c < K = clip(ceil((rem − j)/p), 0, v)``, ``base`` after (the
    layout of :func:`model_stats.layers_on_rank`). The stash is largest right after a steady-state
    forward, when ``W + 1`` micro-batch-chunks are in flight: ``base·(W + 1) + E(i)`` layer-stashes,
    with ``E(i) = A(W + 1 + i) − B(i)`` the chunks of ``base + 1`` layers in flight, ``A(n)`` the
    forwards among the first n that ran one (``⌊n/pv⌋·K·p + min(n mod pv, K·p)``) and ``B(n)`` the
    backwards (``⌊n/pv⌋·K·p + max(n mod pv − (pv − K·p), 0)``). ``E`` has period p·v in ``i`` and
    changes slope only where ``(W + 1 + i) mod pv ∈ {0, K·p}`` or ``i mod pv ∈ {0, pv − K·p}``,
    so its maximum over ``0 <= i <= min(m·v − W − 1, pv − 1)`` is at one of those points or at an
    end: 5 candidates, each an array operation. Even chunks (K = 0 or v) give ``min(m·v, W + 1)/v``
    (the form used until 2026-11-30, Korthikanti's ``p·(1 + (p−1)/(p·v))`` for j = 0); uneven ones
    more: Llama 3 405B (126 layers, p 16, v 7, m 32) holds 31 micro-batches in its 2-layer chunk
    0 after W + 1 = 127 forwards and 32 one step later, 159 layer-stashes on rank 0, not
    ``127/7 × 8`` = 145.1 (found by review). Checked against a step-by-step replay of the schedule
    (``tests/test_memory.py``)."""
    p, v, m = cm["p"], cm["v"], cm["m"]
    base, rem = cm["base"], cm["rem"]
    P = p * v
    Kp = np.clip(np.ceil((rem - j) / p), 0.0, v) * p
    W = 2.0 * (p - j - 1.0) + (v - 1.0) * p
    d = W + 1.0
    even = np.minimum(m * v, d) / v  # even chunks: the closed form
    uneven = (Kp > 0.0) & (Kp < P)
    if not _any(uneven):
        return even
    # the exact count on the rows with uneven chunks only (a sweep's are a minority: gathered, then
    # scattered back; found by the speed benchmark, 45 % on the memory stage when run on every row)
    shape = np.broadcast(even, layers, base).shape
    if shape:
        idx = np.flatnonzero(np.broadcast_to(uneven, shape))
        pick = lambda x: np.broadcast_to(x, shape).reshape(-1)[idx]  # noqa: E731  (flat: j may be (k, N))
        p, v, m, base, P, Kp, W, d, layers = (pick(x) for x in (p, v, m, base, P, Kp, W, d, layers))
    i_max = np.maximum(np.minimum(m * v - d, P - 1.0), 0.0)

    def mod(n):
        return n - P * np.floor(n / P)

    def E(i):
        A = np.floor((d + i) / P) * Kp + np.minimum(mod(d + i), Kp)
        B = np.floor(i / P) * Kp + np.maximum(mod(i) - (P - Kp), 0.0)
        return A - B

    e = E(0.0)
    for c in (i_max, -d, Kp - d, P - Kp):  # 4 candidates (a loop over them, not over rows)
        e = np.maximum(e, E(np.minimum(mod(c), i_max)))
    exact = np.where(W >= m * v, m, (base * d + e) / np.maximum(layers, 1.0))
    if not shape:
        return np.where(uneven, exact, even)
    out = np.array(np.broadcast_to(even, shape), dtype=np.float64)
    out.reshape(-1)[idx] = exact
    return out


def _interleaved_stash_mixed(cm: dict, j, need):
    """Rank ``j``'s activation stash at its peak under the interleaved schedule when its chunks
    hold different layer kinds (an MoE model's leading dense layers in chunk 0), [bytes]; the
    shape of ``need`` (True where computed, NaN elsewhere).

    :func:`_interleaved_inflight` weighs the chunks by their layer counts and multiplies by the
    rank's mean layer, exact when every layer of the rank keeps the same; chunk 0 (the dense
    layers of an MoE model) holds the most micro-batches, so that mean was 7–12 % off either way
    (review 45c: DeepSeek-V3 at pp 8, vpp 2, +11.5 %; four 16,384-wide dense layers before 2,048-wide
    MoE ones, −11.8 %, a plan shown fitting that does not). Here chunk c (virtual stage
    ``s = j + c·p``, ``L_c = base + [s < rem]`` layers, ``D_c`` of them dense) costs
    ``w_c = D_c·keep_dense + (L_c − D_c)·keep_moe`` per micro-batch (partial recompute: its first
    ``N`` layers checkpointed, the rest kept whole, as ``stage_mb``); after forward ``W + i`` and
    before backward ``i`` (the schedule of :func:`_interleaved_inflight`) chunk c holds
    ``n_c(i) = F_c(W + 1 + i) − B_c(i)`` micro-batches, ``F_c(n) = ⌊n/pv⌋·p + clip(n mod pv − c·p,
    0, p)`` forwards and ``B_c(n)`` the same with ``v − 1 − c`` for c. ``Σ_c w_c·n_c(i)`` is
    piecewise linear in i with breaks where ``W + 1 + i`` or ``i`` is a multiple of p, so its
    maximum over ``0 ≤ i ≤ min(m·v − W − 1, pv − 1)`` is at one of 2v + 2 candidates (a loop over
    chunks and candidates, not rows). With every ``w_c`` its layer count it is
    :func:`_interleaved_inflight` × layers (tests/test_review45.py)."""
    # the shape of every input read below (found by review 51: the rank, need, p, v and m alike in
    # every row but keep_dense not, as a batch of two recompute modes has, broke the one-row reading)
    used = ["p", "v", "m", "base", "rem", "n_dense_tot", "keep_dense", "keep_moe"]
    if cm.get("rc_layers") is not None:
        used += ["rc_layers", "work_dense", "work_moe", "full_keep"]
    shape = np.broadcast_shapes(np.shape(j), np.shape(need), *(np.shape(cm[k]) for k in used))
    out = np.full(shape, np.nan)
    idx = np.flatnonzero(np.broadcast_to(need, shape))
    if idx.size == 0:
        return out

    def pick(x):
        return np.broadcast_to(np.asarray(x, dtype=np.float64), shape).reshape(-1)[idx] if shape else np.asarray(
            x, dtype=np.float64).reshape(1)

    p, v, m, base, rem, nd = (pick(cm[k]) for k in ("p", "v", "m", "base", "rem", "n_dense_tot"))
    jj = pick(j)
    kd, km = pick(cm["keep_dense"]), pick(cm["keep_moe"])
    rcl = cm.get("rc_layers")
    if rcl is not None:
        rcl = pick(rcl)
        wd_x, wm_x = pick(cm["work_dense"]) - pick(cm["full_keep"]), pick(cm["work_moe"]) - pick(cm["full_keep"])
    # rows grouped by their v: the loops run over v chunks and 2v + 2 candidates of each group's own v,
    # Σ n_v·v² operations, not n·max(v)² (review 48e: one VPP 16 row made a whole chunk's VPP 2 rows pay
    # for 16 × 16; DeepSeek-V3's default sweep took 6.2 s, 3.6–3.9 s before the chunk-by-chunk stash)
    best = np.empty(p.shape)
    for vv in np.unique(v):
        g = v == vv
        sub = [None if x is None else x[g] for x in (p, v, m, base, rem, nd, jj, kd, km, rcl)]
        xs = (wd_x[g], wm_x[g]) if rcl is not None else (None, None)
        best[g] = _stash_peak(*sub, *xs, int(vv))
    if not shape:
        return best.reshape(())
    out.reshape(-1)[idx] = best
    return out


def _stash_peak(p, v, m, base, rem, nd, jj, kd, km, rcl, wd_x, wm_x, vmax: int):
    """:func:`_interleaved_stash_mixed`'s peak for rows of one ``v`` (``vmax``): arrays (n,) [bytes]."""
    P = p * v
    W = 2.0 * (p - jj - 1.0) + (v - 1.0) * p
    d = W + 1.0
    w = []
    for c in range(vmax):
        Lc, Dc = _virtual_stage(base, rem, nd, jj + c * p)
        Lc, Dc = Lc * (c < v), Dc * (c < v)
        wc = Dc * kd + (Lc - Dc) * km
        if rcl is not None:  # Megatron "block": the chunk's first N layers recomputed (dense first)
            part = rcl > 0
            n_rc = np.minimum(rcl, Lc)
            rc_d = np.minimum(n_rc, Dc)
            wc = wc + part * ((Dc - rc_d) * wd_x + ((Lc - Dc) - (n_rc - rc_d)) * wm_x)
        w.append(wc)
    i_max = np.maximum(np.minimum(m * v - d, P - 1.0), 0.0)

    def mod(n):
        return n - P * np.floor(n / P)

    w_sum = sum(w)

    def stash(i):
        # Σ_c w_c·(F_c − B_c): the whole rounds ⌊n/P⌋·p, the same for every chunk, once; the partial
        # round per chunk (mod and floor hoisted out of the chunk loop: review 48e, the sweep's hot spot)
        nf, nb = d + i, i
        qf, qb = np.floor(nf / P), np.floor(nb / P)
        rf, rb = nf - P * qf, nb - P * qb
        tot = (qf - qb) * p * w_sum
        for c in range(vmax):
            f_c = np.minimum(np.maximum(rf - c * p, 0.0), p)
            b_c = np.minimum(np.maximum(rb - (v - 1.0 - c) * p, 0.0), p)
            tot = tot + w[c] * (f_c - b_c)
        return tot

    best = np.maximum(stash(0.0), stash(i_max))
    for k in range(vmax):
        for cand in (k * p - d, k * p):
            best = np.maximum(best, stash(np.minimum(mod(cand), i_max)))
    all_in = W >= m * v  # every forward in the warm-up: all m micro-batches of every chunk
    return np.where(all_in, m * w_sum, best)


def _rank_layer_params(cm: dict, j, layers, is_first, is_last, first_known: bool):
    """(dense layers, non-expert and expert parameters of the layers) on pipeline rank ``j``
    holding ``layers`` layers; leading dense layers are placed from rank 0 onwards
    (:func:`_dense_on_rank`)."""
    if cm["any_moe"]:
        n_dense = np.minimum(cm["n_dense_tot"], layers) if first_known and np.max(cm["v"]) == 1 else \
            np.minimum(_dense_on_rank(cm, j), layers)
        n_moe = layers - n_dense
        return n_dense, n_dense * cm["p_dense"] + n_moe * cm["p_moe_ne"], n_moe * cm["p_moe_ex"]
    return layers, layers * cm["p_dense"], None


def _stage_parts(cm: dict, j, *, first=None, last=None, detail: bool = False) -> dict:
    """Components of pipeline rank ``j`` (array broadcasting with the batch; scalars where the
    inputs are).

    ``first`` / ``last`` may be given as ``True`` when ``j`` is known to be 0 or p−1 (saves
    work in the sweep path); otherwise they are computed from ``j``. ``detail`` adds
    ``_stash_own`` / ``_stash_mirror``: one micro-batch's kept activations on stage j and on its
    DualPipe mirror stage p−1−j (:func:`explain`).
    """
    p, v, m = cm["p"], cm["v"], cm["m"]
    is_first = (j == 0) if first is None else first
    is_last = (j == p - 1) if last is None else last
    # layers on rank j: v·base + #{k < v : j + k·p < rem}
    if first is True:
        layers = cm["layers_first"]
    elif last is True:
        layers = cm["layers_last"]
    else:
        layers = layers_on_rank(cm["L"], p, v, j)

    # parameters (before DP sharding), split by sharding group
    n_dense, P_ne, P_ex = _rank_layer_params(cm, j, layers, is_first, is_last, first is True)
    n_moe = layers - n_dense
    emb = cm["p_emb"] if first is True else _sel(is_first, cm["p_emb"], 0.0)
    head = cm["p_head"] if last is True else _sel(is_last, cm["p_head"], 0.0)
    if cm.get("any_dual"):  # DualPipe: each rank holds stage j and stage p−1−j (DeepSeek-V3 Table 2:
        # parameters 2×); both end ranks hold the embedding and the output head
        dual = cm["dual"]
        jm = p - 1.0 - j
        if first is True:
            layers_m = cm["layers_last"]
        elif last is True:
            layers_m = cm["layers_first"]
        else:
            layers_m = layers_on_rank(cm["L"], p, v, jm)
        n_dense_m, P_ne_m, P_ex_m = _rank_layer_params(cm, jm, layers_m, is_last, is_first, last is True)
        P_ne = P_ne + _sel(dual, P_ne_m, 0.0)
        if P_ex is not None:
            P_ex = P_ex + _sel(dual, P_ex_m, 0.0)
        end = np.logical_or(is_first, is_last)
        emb = _sel(dual, _sel(end, cm["p_emb"], 0.0), emb)
        head = _sel(dual, _sel(end, cm["p_head"], 0.0), head)
        # the mirror stage's layer kinds: the rank also runs, recomputes and gathers them
        mirror_d, mirror_m = dual & (n_dense_m > 0), dual & (layers_m - n_dense_m > 0)
    else:
        mirror_d = mirror_m = False
    P_ne = P_ne + emb
    P_ne = P_ne + head
    if cm.get("any_mtp"):  # the MTP modules sit with the head (DualPipe: both end ranks)
        at_head = is_last
        if cm.get("any_dual"):
            at_head = _sel(cm["dual"], np.logical_or(is_first, is_last), at_head)
        P_ne = P_ne + _sel(at_head, cm["p_mtp_ne"], 0.0)
        if P_ex is not None and cm["p_mtp_ex"] is not None:
            P_ex = P_ex + _sel(at_head, cm["p_mtp_ex"], 0.0)
    w_sh = P_ne / cm["shard_w"]
    gsh = P_ne / cm["shard_g"]
    osh = P_ne / cm["shard_o"]
    P_all = P_ne
    if P_ex is not None:
        w_sh = w_sh + P_ex / cm["eshard_w"]
        gsh = gsh + P_ex / cm["eshard_g"]
        osh = osh + P_ex / cm["eshard_o"]
        P_all = P_ne + P_ex
    weights = cm["wb"] * w_sh
    grads = cm["gb_dev"] * gsh
    optim = cm["ob_dev"] * osh

    # activations: micro-batches in flight × layers
    inflight = np.minimum(m, p - j)
    if cm["any_inter"]:
        inflight = _sel(cm["inter"], _interleaved_inflight(cm, j, layers), inflight)
    if cm.get("any_gpipe", True):
        inflight = _sel(cm["gpipe"], m, inflight)
    if cm.get("any_dual"):  # DualPipe: pp + 1 micro-batches in flight (Table 2), split over its two stages (below)
        inflight = _sel(cm["dual"], np.minimum(m, p + 1.0), inflight)
    def stage_mb(layers, n_dense):
        """One micro-batch's kept activations on a stage of ``layers`` layers (``n_dense`` dense),
        and the dense / MoE layers it recomputes."""
        n_moe = layers - n_dense
        if cm["any_moe"]:
            per_mb = n_dense * cm["keep_dense"] + n_moe * cm["keep_moe"]
        else:
            per_mb = layers * cm["keep_dense"]
        if cm.get("rc_layers") is None:
            return per_mb, n_dense, n_moe
        # partial full recompute: only n_rc of the stage's layers, the first ones (Megatron "block"):
        # leading dense layers before MoE layers; the others keep what no recompute keeps
        n_rc = _sel(cm["rc_layers"] > 0, np.minimum(cm["rc_layers"] * v, layers), layers)
        rc_d = np.minimum(n_rc, n_dense)
        per_mb = per_mb + (n_dense - rc_d) * (cm["work_dense"] - cm["full_keep"]) * (cm["rc_layers"] > 0)
        if cm["any_moe"]:
            per_mb = per_mb + (n_moe - (n_rc - rc_d)) * (cm["work_moe"] - cm["full_keep"]) * (cm["rc_layers"] > 0)
        return per_mb, rc_d, n_rc - rc_d

    per_mb, rc_d, rc_m = stage_mb(layers, n_dense)
    stash_mb = per_mb_m = per_mb
    mrec_d, mrec_m = mirror_d, mirror_m  # the mirror stage's recomputed layer kinds (DualPipe)
    n_own = n_mir = None
    if cm.get("any_dual"):
        # DualPipe: the rank's micro-batches in flight run on its two stages (the mirror's layer
        # kinds also set the recomputed working set below); until 2026-11-30 all were counted on
        # stage j, so a rank whose mirror holds wider (MoE) layers charged their working set under
        # recompute but not their stash without it, and more recompute came out higher (found by
        # the random property test: op_sac 18.94 MB against none 18.87 MB). How many on each:
        # DualPipe's step() (deepseek-ai/DualPipe, dualpipe.py) runs rank j's chunk j in the
        # forward pipeline and its chunk p−1−j in the reverse one; at the rank's peak (the first
        # forward of its step 4, "nF0B1F1B0") the chunk h = min(j, p−1−j) holds p − h micro-batches
        # and the chunk p−1−h holds h + 1 — 1F1B's counts at those stage indices — together p + 1
        # (DeepSeek-V3 Table 2). Until 2026-12-03 half on each (review 26: rank 0 holds 16
        # micro-batches of stage 0's layers and 1 of stage 15's, with the head and MTP; 8.5 each
        # took its activations 8 % below the schedule's, and an MTP module's 8.5 times too high).
        per_mb_m, rc_d_m, rc_m_m = stage_mb(layers_m, n_dense_m)
        hh = np.minimum(j, p - 1.0 - j)
        fill = np.minimum(m, p + 1.0) / (p + 1.0)  # 1 where m >= p + 1 (the schema asks m >= 2p)
        low = j <= p - 1.0 - j  # stage j is the rank's earlier chunk (the first half of the ranks)
        n_own = _sel(low, p - hh, hh + 1.0) * fill
        n_mir = _sel(low, hh + 1.0, p - hh) * fill
        # per micro-batch of the step, for the host traffic: half of them run on each chunk
        stash_mb = _sel(dual, 0.5 * (per_mb + per_mb_m), per_mb)
        mrec_d, mrec_m = dual & (rc_d_m > 0), dual & (rc_m_m > 0)
        stash = _sel(dual, n_own * per_mb + n_mir * per_mb_m, inflight * per_mb)
    else:
        stash = inflight * stash_mb
    if cm["any_inter"] and (cm["any_moe"] or cm.get("rc_layers") is not None):
        cond = ((n_dense > 0) & (n_dense < layers)) if cm["any_moe"] else False
        if cm.get("rc_layers") is not None:
            Kc = np.clip(np.ceil((cm["rem"] - j) / p), 0.0, v)
            cond = cond | ((cm["rc_layers"] > 0) & (Kc > 0) & (Kc < v))
        mixed = cm["inter"] & cond & (v > 1)
        if _any(mixed):
            cmx = cm if cm["any_moe"] else {**cm, "keep_moe": cm["keep_dense"], "work_moe": cm["work_dense"]}
            ex = _interleaved_stash_mixed(cmx, j, mixed)
            stash = np.where(mixed, ex, stash)
            # shown as per micro-batch × in flight: the chunk-weighted count (explain)
            inflight = np.where(mixed, ex / np.where(mixed, stash_mb, 1.0), inflight)
    if cm.get("any_mtp"):
        # the MTP blocks' activations with the head: of the micro-batches in flight on the stage that
        # carries it (1F1B, zero-bubble and interleaved: the last (virtual) stage runs each backward
        # right after its forward, 1; GPipe: all m; DualPipe: the end rank's chunk p−1, h + 1 = 1)
        mtp_inflight = _sel(cm["inter"], 1.0, inflight) if cm["any_inter"] else inflight
        if cm.get("any_dual"):
            mtp_inflight = _sel(cm["dual"], (hh + 1.0) * fill, mtp_inflight)
        stash = stash + _sel(at_head, mtp_inflight * cm["keep_mtp"], 0.0)
    # The layer being recomputed (full, op_sac; selective and the others without flash: its
    # scores) holds its working set on top of the stash: the largest of the layer kinds that the
    # rank recomputes (rec_extra_* = 0 on rows without recompute). Partial recompute (Megatron
    # "block": the first N layers of each chunk checkpointed one by one) recomputes a chunk's
    # first layers only after the backward has freed what its later, whole-kept layers stored
    # for that micro-batch, so their activations are taken off the working set (at least
    # max(chunk − N, 0) layers in the smallest chunk of the rank, base layers when v > 1; each
    # at least the smallest kind's no-recompute activations), floored at 0
    # A DualPipe rank also runs (and recomputes) its mirror stage p−1−j: its layer kinds count
    # too (found by review: rank 0 of a dense-then-MoE model charged the dense working set while
    # its mirror, the last stage, recomputes MoE layers)
    if cm["any_moe"]:
        rec_d, rec_m = (rc_d > 0) | mrec_d, (rc_m > 0) | mrec_m
        # x·cond (finite values): one array operation where a select takes four
        rec_extra = np.maximum(cm["rec_extra_dense"] * rec_d, cm["rec_extra_moe"] * rec_m)
    else:
        rec_extra = cm["rec_extra_dense"]
    rec_extra = rec_extra + cm["rec_extra_core"]
    if cm.get("rc_layers") is not None:
        def freed_on(n_l, n_d, r_d, r_m):
            """What a stage's later, whole-kept layers (n_l layers, n_d dense; r_d / r_m recomputed)
            freed of one micro-batch before its first layers are recomputed (v = 1)."""
            if cm["any_moe"]:
                return (n_d - r_d) * cm["work_dense"] + (n_l - n_d - r_m) * cm["work_moe"]
            return (n_l - (r_d + r_m)) * cm["work_dense"]

        freed_v1 = freed_on(layers, n_dense, rc_d, rc_m)
        if cm["any_moe"]:
            w_min = np.minimum(_sel(n_dense > 0, cm["work_dense"], cm["work_moe"]),
                               _sel(n_moe > 0, cm["work_moe"], cm["work_dense"]))
        else:
            w_min = cm["work_dense"]
        freed = _sel(v > 1, np.maximum(cm["base"] - cm["rc_layers"], 0.0) * w_min, freed_v1)
        rec_part = np.maximum(rec_extra - freed, 0.0)
        if cm.get("any_dual"):
            # DualPipe (v = 1): each of the rank's two stages recomputes its first layers after its
            # own later layers freed theirs, so the working set is the larger of the two stages' own
            # (its layer kinds less what it freed); ranks j and p−1−j, which hold the same two
            # stages, stay loaded alike (review 26: the rank's own stage's freed layers alone made
            # rank p−1−j heavier than rank j on an uneven split, and the candidate ranks, which
            # rely on that symmetry, missed the most loaded one by up to 1.1 %)
            def kinds(r_d, r_m):
                if cm["any_moe"]:
                    return np.maximum(cm["rec_extra_dense"] * (r_d > 0), cm["rec_extra_moe"] * (r_m > 0)) + cm["rec_extra_core"]
                return cm["rec_extra_dense"] + cm["rec_extra_core"]

            w_own = np.maximum(kinds(rc_d, rc_m) - freed_v1, 0.0)
            w_mir = np.maximum(kinds(rc_d_m, rc_m_m) - freed_on(layers_m, n_dense_m, rc_d_m, rc_m_m), 0.0)
            rec_part = _sel(cm["dual"], np.maximum(w_own, w_mir), rec_part)
        rec_extra = _sel(cm["rc_layers"] > 0, rec_part, rec_extra)
    traffic_mb = stash_mb  # DualPipe: half the micro-batches on each of the rank's two stages
    if cm.get("any_mtp"):
        # the MTP modules' activations go to the host and back with the layers' (they are in the host
        # stash above): one micro-batch's keep_mtp per micro-batch on the head-carrying stage, half the
        # rank's micro-batches on DualPipe's end ranks (until 2026-12-01 left out of the traffic, so of
        # t_offload_s, while the host stash held them; review 16f)
        mtp_tr = cm["keep_mtp"]
        if cm.get("any_dual"):
            mtp_tr = _sel(cm["dual"], 0.5 * mtp_tr, mtp_tr)
        traffic_mb = traffic_mb + _sel(at_head, mtp_tr, 0.0)
    acts = stash + rec_extra
    if cm["any_host"]:
        any_off_act = cm.get("any_off_act", True)
        if any_off_act:
            # one layer's working set (what offload_activations keeps in HBM): the rank's largest
            # kind (DualPipe: of its two stages)
            if cm["any_moe"]:
                hold_d, hold_m = (n_dense > 0) | mirror_d, (n_moe > 0) | mirror_m
                work = np.maximum(cm["work_layer_dense"] * hold_d, cm["work_layer_moe"] * hold_m)
            else:
                work = cm["work_layer_dense"]
            acts = _sel(cm["off_act"], work, acts)
        # the gradients the CPU step reads: the optimizer's partition (all of them under ZeRO-0,
        # 1/dp under ZeRO-1, as the step time moves them; found by review: ZeRO-1 counted each
        # GPU's whole gradient on the host, 67.7 GiB per node too many on the default preset)
        host = (cm["gb_host"] + cm["ob_host"]) * osh
        if cm.get("any_nvme", True):
            host = _sel(cm["nvme"], np.minimum(host, NVME_STAGING_BYTES_PER_GPU), host)
        if any_off_act:
            host = host + _sel(cm["off_act"], stash, 0.0)
    else:
        host = 0.0
    logits = cm["logits"] if last is True else _sel(is_last, cm["logits"], 0.0)
    if cm.get("any_dual"):  # the reverse pipeline's head sits on rank 0
        logits = _sel(cm["dual"], _sel(np.logical_or(is_first, is_last), cm["logits"], 0.0), logits)
    if cm.get("any_mtp"):  # each MTP depth computes its own logits and loss over the vocabulary
        logits = logits * (1.0 + cm["D"])

    comm = np.full(np.shape(P_all), CONTEXT_NCCL_RESERVE_BYTES)  # buckets are views of the grads
    if cm["any_z3"]:
        # ZeRO-3 / FSDP (dp_shard·cp > 1): ZERO3_PREFETCH_LAYERS units of 16-bit weights gathered
        # (current + prefetched) and ZERO3_GRAD_LAYERS of unsharded gradients, of the largest unit
        # the rank holds (its embedding, output head, a dense layer, an MoE layer with its experts
        # where they are sharded), never more than the rank's own gathered parameters: a stage
        # of one layer gathers one (until 2026-11-30 every stage took two of the model's largest
        # unit, the embedding even on middle stages; found by review: ZeRO-3 at 10.29 GB of
        # prefetch on a stage holding 2.98 GB of unsharded weights)
        has_d, has_m = (n_dense > 0) | mirror_d, (n_moe > 0) | mirror_m
        unit = np.maximum(cm["p_dense"] * has_d, np.maximum(emb, head))  # x·cond: finite
        P_g = P_ne
        if P_ex is not None:
            unit = np.maximum(unit, (cm["p_moe_ne"] + cm["p_moe_ex"] * cm["ex_gathered"]) * has_m)
            P_g = P_ne + P_ex * cm["ex_gathered"]
        prefetch = cm["z3_f"] * (cm["wb"] * np.minimum(ZERO3_PREFETCH_LAYERS * unit, P_g)
                                 + cm["gb"] * np.minimum(ZERO3_GRAD_LAYERS * unit, P_g))
    else:
        prefetch = 0.0
    rest = weights + grads + optim + acts + logits
    frag_base = rest + comm + prefetch
    frag = FRAGMENTATION_FRAC * frag_base
    buffers = comm + prefetch + frag
    return {
        "mem_weights_bytes": weights, "mem_grads_bytes": grads, "mem_optimizer_bytes": optim,
        "mem_activations_bytes": acts, "mem_logits_bytes": logits,
        "mem_comm_buffers_bytes": comm, "mem_zero3_prefetch_bytes": prefetch,
        "mem_fragmentation_bytes": frag, "mem_buffers_bytes": buffers,
        "mem_total_bytes": frag_base + frag, "host_bytes_per_gpu": host,
        # the stash that activation offload keeps on the host (0 without it): what crosses the
        # host link each step (timing.t_offload_s)
        "mem_act_offload_bytes": (_sel(cm["off_act"], stash, 0.0) if cm["any_host"] and cm.get("any_off_act", True)
                                  else 0.0),
        # every micro-batch's activations go to the host and come back: m × one micro-batch's
        # activations of the rank's layers per step, each way (timing.t_offload_s)
        "_act_traffic": (_sel(cm["off_act"], traffic_mb * m, 0.0) if cm["any_host"] and cm.get("any_off_act", True)
                         else 0.0),
        "_core_bytes": rest, "_inflight": inflight, "_P_ne": P_ne, "_P_ex": 0.0 if P_ex is None else P_ex,
        "_rec_extra": rec_extra,
        **({"_stash_own": per_mb, "_stash_mirror": per_mb_m if cm.get("any_dual") else per_mb,
            "_n_own": inflight if n_own is None else n_own, "_n_mirror": 0.0 if n_mir is None else n_mir}
           if detail else {}),
    }


def _first_dense_free_stage(cm: dict):
    """The first virtual stage holding no leading dense layer: the smallest s with
    ``s·base + min(s, rem) >= n_dense`` (the layout of :func:`_dense_on_rank`)."""
    base, rem, nd = cm["base"], cm["rem"], cm["n_dense_tot"]
    big = rem * (base + 1.0)  # layers on the rem stages that hold one more
    return np.where(nd <= big, np.ceil(nd / (base + 1.0)), rem + np.ceil((nd - big) / np.maximum(base, 1.0)))


def _candidates(b: Batch) -> list:
    """(stage index, components) of the stages that can be the most loaded (scalars where every
    row is the same); see :func:`candidate_stages`."""
    cm = _common(b)
    p = cm["p"]
    n = _size(b)
    single = p == 1
    extra: list = []  # the other ranks to try, in order: arrays (k, N) or (k, 1) (:func:`_more_candidates`)
    out = [(0.0, _stage_parts(cm, 0, first=True, last=single if np.ndim(single) else bool(single))),
           (p - 1.0, _stage_parts(cm, p - 1.0, first=single if np.ndim(single) else bool(single), last=True))]
    # The middle candidate exists only where leading dense layers push the first MoE-only rank
    # past rank 0; with none (Mixtral), every rank j >= 1 holds at most rank 0's layers and
    # parameters and fewer micro-batches in flight, so rank 0 already bounds it.
    base, rem, nd = cm["base"], cm["rem"], cm["n_dense_tot"]
    if cm["any_moe"] and any_true(p > 2) and any_true(nd > 0):
        # the first virtual stage with no dense layer (s·base + min(s, rem) >= n_dense): the
        # first rank with MoE layers only when it is below p; and the rank before it (its last
        # dense layers beside MoE layers, one more micro-batch in flight)
        sd = _first_dense_free_stage(cm)
        # with interleaving the virtual stage sd sits on rank sd mod p (found by review: sd >= p
        # was clipped to p − 2, 43 % under the most loaded rank)
        # rows without both kinds of layer look at rank 0 again (no change), so a row's result
        # (its worst stage too, on ties) is the same alone and in a batch (found by review)
        both = (nd > 0) & (cm["L"] - nd > 0)
        jm = np.stack(np.broadcast_arrays(sd, sd - 1.0)).reshape(2, -1)  # the two ranks, (2, N) or (2, 1)
        jm = jm - p * np.floor(jm / p)
        extra.append(np.where(both, np.minimum(np.maximum(jm, 1.0), np.maximum(p - 2.0, 0.0)), 0.0))
    # DualPipe: rank j holds stages j and p−1−j, so with an uneven split or leading dense layers
    # a middle rank can outweigh both ends (found by review: DeepSeek-V3 at pp 16, ranks 3–12).
    # Rank j's layers are constant between the breakpoints where its own or its mirror stage
    # gains or loses a layer (p − rem, rem; layers_on_rank with v = 1, which DualPipe has) or its
    # own or mirror stage stops holding dense layers (jd, p − jd); its micro-batches in flight,
    # p − h on the stage h = min(j, p−1−j) and h + 1 on the other, move linearly with h. Ranks j
    # and p−1−j hold the same two stages with the same counts (and both ends the embedding and
    # the head), so their loads are equal and the first half of the ranks is enough: there, each
    # breakpoint b, mirrored (min(b, p−1−b)), starts a piece on which the load is linear in j, so
    # largest at an end of it. Tried: each breakpoint t and the rank t − 1 before it, mirrored,
    # and the first half's ends 1 and p/2 − 1 (review 26, when the split stopped being half and
    # half; the symmetry is checked in tests/test_dualpipe.py).
    if cm.get("any_dual") and any_true(cm["dual"] & (p > 2)):
        dual = cm["dual"]
        jd = _first_dense_free_stage(cm)  # v = 1 under DualPipe: stages are ranks
        top = np.maximum(0.5 * p - 1.0, 1.0)  # the last rank of the first half
        starts = (jd - 1.0, jd, p - rem, rem, p - 1.0 - jd, p - jd)
        # the 14 ranks as one array (14, N) (or (14, 1): the same in every row), one operation each
        J = np.stack(np.broadcast_arrays(*starts, *(t - 1.0 for t in starts), 1.0, top)).reshape(14, -1)
        J = np.where(dual, np.clip(np.minimum(J, p - 1.0 - J), 1.0, top), 0.0)
        extra.append(J)
    return out + _more_candidates(cm, out, extra, n)


#: Rows up to which :func:`_more_candidates` costs its ranks in one stacked call: a batch of one
#: saves ~0.1 ms a rank; past a few thousand rows the Python overhead is nothing and the (k, N)
#: temporaries cost time and memory (review 51: one memory.stage call on 10^6 DeepSeek-V3 rows
#: took 21 s and 4.0 GiB stacked against 11 s and 2.3 GiB rank by rank). Sweeps run chunks of
#: engine.DEFAULT_CHUNK_ROWS = 16,384 rows, where both ways cost the same (0.08-0.09 s).
STACK_MAX_ROWS = 4096


def _more_candidates(cm: dict, out: list, extra: list, n: int) -> list:
    """The candidates at the ranks ``extra`` (arrays (k, N) or (k, 1): k ranks each, in order) that
    no earlier candidate (of ``out``, then of ``extra``) is at in every row (:func:`_repeats`), as
    (rank, components). Their components come from one :func:`_stage_parts` call on the ranks
    stacked as an array (k, N), or (k, 1) where the ranks are alike in every row: an operation on
    k·N elements instead of k operations on N (a batch of one paid ~0.1 ms per call: DeepSeek-V3's
    DualPipe layout at pp 16 has 4 such ranks); above :data:`STACK_MAX_ROWS` rows one call per rank. Every
    operation there is elementwise or broadcasts a column with the ranks (its reductions only
    choose which exact branches run, the same values either way: a row's result does not depend
    on the rows beside it), so each candidate's components are the ones a call at its rank alone
    gives, bit for bit (tests/test_dualpipe.py)."""
    if not extra:
        return []
    # (k, 1) where every rank is the same in every row (a uniform batch: review 51 found (k, N) made
    # the stage 6-8x slower on 16,384 like rows), else (k, N)
    w = max([j.shape[1] for j in extra] + [np.size(j) for j, _ in out])
    E = np.concatenate([np.broadcast_to(np.asarray(j, dtype=np.float64), (j.shape[0], w)) for j in extra])
    prior = np.stack([np.broadcast_to(np.asarray(j, dtype=np.float64).reshape(-1), (w,)) for j, _ in out])
    J = E[~_repeats(E, prior)]
    if not J.shape[0]:
        return []
    if w > STACK_MAX_ROWS:  # a large block: one call per rank (no (k, N) temporaries; the same values)
        return [(j, _stage_parts(cm, j)) for j in J]
    parts = _stage_parts(cm, J)
    split = [(k, v) for k, v in parts.items() if np.ndim(v) == 2]
    return [(J[i], {**parts, **{k: v[i] for k, v in split}}) for i in range(J.shape[0])]


def _repeats(E: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """Which candidate ranks ``E`` (k, N) are, in every row, at an earlier rank of ``E`` or at one
    of ``prior`` (m, N): bools (k,). Their components would be the same, and a stage is kept only
    where it is strictly larger, so skipping them changes nothing (DeepSeek-V3's DualPipe layout
    at pp 16 asks for 16 ranks past the ends, 4 of them distinct). NaN never equals: such a rank
    is evaluated. Equality in every row is transitive, so "an earlier rank" and "an earlier kept
    rank" are the same test."""
    dup = np.tril((E[:, None, :] == E[None, :, :]).all(axis=2), -1).any(axis=1)
    return dup | (E[:, None, :] == prior[None, :, :]).all(axis=2).any(axis=1)


def candidate_stages(b: Batch) -> list[tuple[np.ndarray, dict]]:
    """(stage index, components) of the stages that can be the most loaded, for every row.

    The first and the last stage; with MoE leading dense layers also the first rank that
    holds only MoE layers (it carries more parameters and activations per layer than rank 0
    and more micro-batches than later ranks); with DualPipe both ends of each stretch of the
    first half's ranks on which the load is linear in j (ranks j and p−1−j are loaded alike). Arrays of shape (N,), bytes per GPU;
    the stage index int64.
    """
    n = _size(b)
    return [(_expand(j, n, np.int64), {k: _expand(v, n) for k, v in parts.items()})
            for j, parts in _candidates(b)]


def _size(b: Batch) -> int:
    return int(np.asarray(b["tp"]).shape[0])


def _expand(x, n: int, dtype=np.float64) -> np.ndarray:
    """``x`` (array (n,) or scalar) as a new-or-same array (n,) of ``dtype``."""
    if np.ndim(x) == 1 and np.shape(x)[0] == n:
        x = np.asarray(x)
        return x if x.dtype == dtype else x.astype(dtype)
    return np.full(n, x, dtype=dtype)


def first_last(b: Batch) -> tuple[dict, dict]:
    """Components of the first and of the last pipeline stage of every row (bytes, shape (N,))."""
    c = candidate_stages(b)
    return c[0][1], c[1][1]


def stage(b: Batch) -> Batch:
    """Memory per GPU of the most loaded pipeline stage, for every configuration.

    Parameters
    ----------
    b : Batch
        Input columns (see :mod:`planner.batch`) and model_stats outputs; shape (N,).

    Returns
    -------
    dict of arrays, shape (N,)
        ``mem_weights_bytes, mem_grads_bytes, mem_optimizer_bytes, mem_activations_bytes,
        mem_logits_bytes, mem_comm_buffers_bytes, mem_zero3_prefetch_bytes,
        mem_fragmentation_bytes, mem_buffers_bytes, mem_total_bytes`` [bytes] of the most
        loaded stage (components sum to the total); ``mem_worst_stage`` (its index);
        ``fits`` (total <= hbm_usable_bytes); ``fits_conservative`` (also model states +
        activations + logits <= 80 % of usable HBM, Fujii et al. 2024);
        ``mem_headroom_bytes`` (usable − total; negative = does not fit);
        ``host_mem_per_node_bytes`` [bytes] (min(gpus_per_node, n_gpus), the job's GPUs on its
        busiest node, × the largest host bytes of a stage), ``host_fits``.
    """
    n = _size(b)
    cands = _candidates(b)
    j_w, out = cands[0]
    host_gpu = out["host_bytes_per_gpu"]
    traffic = out["_act_traffic"]
    for j, parts in cands[1:]:
        sel = parts["mem_total_bytes"] > out["mem_total_bytes"]
        host_gpu = np.maximum(host_gpu, parts["host_bytes_per_gpu"])
        traffic = np.maximum(traffic, parts["_act_traffic"])
        if not any_true(sel):
            continue
        if np.ndim(sel):
            ch = _Chooser(sel)
            out = {k: ch(parts[k], out[k]) for k in out}
            j_w = ch(j, j_w)
        else:  # every row the same (a uniform batch): the chosen components themselves
            out, j_w = dict(parts), j
    usable = _u(b, "hbm_usable_bytes")
    total = out["mem_total_bytes"]
    core = out.pop("_core_bytes")
    for k in ("_inflight", "_P_ne", "_P_ex", "_act_traffic", "_rec_extra"):
        out.pop(k)
    out.pop("host_bytes_per_gpu")
    # the busiest node holds min(gpus_per_node, n_gpus) of the job's GPUs: a job smaller than a node
    # leaves the rest idle (found by review 47b: ZeRO-Offload's 13B on one V100 of a DGX-2 was
    # counted 16 × its 194 GiB), as the checkpoint and reload models count their writers
    gpus_node = _u(b, "gpus_per_node")
    if "n_gpus" in b:
        gpus_node = np.minimum(gpus_node, _u(b, "n_gpus"))
    host_node = gpus_node * host_gpu
    fits = total <= usable
    res = {k: _expand(v, n) for k, v in out.items()}
    # the stage index is an integer (int64 in every batch: a column's dtype must not depend on
    # which rows share the batch, engine.run_batch's chunks; the middle and DualPipe ranks'
    # indices are computed in floats, whole numbers)
    res.update(
        mem_worst_stage=_expand(np.rint(np.nan_to_num(j_w, nan=0.0)), n, np.int64),
        fits=_expand(fits, n, bool),
        fits_conservative=_expand(fits & (core <= FUJII_SAFE_FRAC * usable), n, bool),
        mem_headroom_bytes=_expand(usable - total, n),
        host_mem_per_node_bytes=_expand(host_node, n),
        act_offload_traffic_bytes=_expand(traffic, n),
        host_fits=_expand(host_node <= _u(b, "host_memory_bytes"), n, bool),
    )
    return res


def per_stage(out: Batch, i: int) -> list[dict]:
    """Every pipeline stage's memory components for row ``i`` (bytes per GPU).

    Loops over nothing: the stage index is an array ``arange(p)`` broadcast against row i.
    Returns a list of p dicts (first stage first) with keys ``stage`` and the ``mem_*``
    component columns, plus ``host_bytes_per_gpu``.
    """
    row = {k: np.asarray(v)[i:i + 1] for k, v in out.items()}
    p = int(row["pp"][0])
    return _per_stage_rows(_stage_parts(_common(row), np.arange(p, dtype=np.float64)), p)


_PRIVATE_PARTS = ("_core_bytes", "_inflight", "_P_ne", "_P_ex", "_act_traffic", "_rec_extra",
                  "_stash_own", "_stash_mirror", "_n_own", "_n_mirror")


def _at(v, j: int = 0) -> float:
    """Element ``j`` of ``v`` along the stage axis, as a float: ``v`` a scalar or an array of
    shape (1,) (the same at every stage) or (p,) — ``float(np.broadcast_to(v, (p,))[j])``
    without building the broadcast view (the explanation reads ~60 such values)."""
    a = v if isinstance(v, np.ndarray) else np.asarray(v)
    return float(a.flat[j] if a.size > 1 else a.flat[0])


def _stage_values(v, p: int) -> list:
    """``v`` (a scalar or an array of shape (1,) or (p,)) as a list of p Python floats, one per
    stage: ``[float(x) for x in np.broadcast_to(v, (p,))]`` in one conversion."""
    a = np.asarray(v, dtype=np.float64).reshape(-1)
    if a.size == 1:
        return [a.item(0)] * p
    return np.broadcast_to(a, (p,)).tolist()


def _per_stage_rows(parts: dict, p: int) -> list[dict]:
    """:func:`per_stage`'s list from :func:`_stage_parts` evaluated at ``arange(p)``."""
    cols = {k: _stage_values(v, p) for k, v in parts.items() if k not in _PRIVATE_PARTS}
    return [{"stage": j, **{k: cols[k][j] for k in cols}} for j in range(p)]


def report(row: dict) -> tuple[dict[str, str], list[dict], list[str]]:
    """(:func:`explain`, :func:`per_stage`, :func:`notes`) of one scenario's row, sharing one
    :func:`_common` and one :func:`_stage_parts` over every stage (``planner.evaluate``'s path:
    the same values as the three calls, about 0.2 ms less)."""
    cm = _common(OneRow(row))
    p = int(row["pp"])
    parts = _stage_parts(cm, np.arange(p, dtype=np.float64), detail=True)
    return explain(row, _shared=(cm, parts)), _per_stage_rows(parts, p), notes(row)


# --------------------------------------------------------------------------------------
# Explanations and notes
# --------------------------------------------------------------------------------------


def _gib(x, decimals: int = 2) -> str:
    return f"{float(x) / 2**30:.{decimals}f} GiB"


def gib_decimals(*values_bytes, start: int = 2, most: int = 9) -> int:
    """Decimals of GiB (2^30 B) that tell ``values_bytes`` apart: ``start``, or more (up to
    ``most``) while two different values would read the same. Non-finite or None values are
    ignored. Used wherever a peak is shown beside the capacity it is compared with (the notes,
    the explanation, the CLI table, the dashboard): found by reviews, a peak above the usable HBM
    read "41.32 GiB > usable HBM 41.32 GiB"."""
    v = [float(x) / 2**30 for x in values_bytes if x is not None and np.isfinite(float(x))]
    d = start
    while d < most and any(a != b and round(a, d) == round(b, d) for a in v for b in v):
        d += 1
    return d


def explain(row: dict, *, _shared=None) -> dict[str, str]:
    """Formula strings with the numbers of one scenario plugged in (most loaded stage).

    ``_shared`` (internal, :func:`report`): the row's :func:`_common` and its
    :func:`_stage_parts` (detail) at every stage ``arange(pp)``, computed once."""
    p = int(row["pp"])
    j = int(row.get("mem_worst_stage", 0))
    if _shared is None:
        cm = _common(OneRow(row))
        parts = {k: float(np.ravel(v)[0]) for k, v in _stage_parts(cm, float(j), detail=True).items()}
    else:
        cm, all_parts = _shared
        parts = {k: _at(v, j) for k, v in all_parts.items()}
    g = {k: _at(v) for k, v in cm.items()
         if v is not None and not isinstance(v, bool) and np.asarray(v).dtype != bool}
    w, gr, o = parts["mem_weights_bytes"], parts["mem_grads_bytes"], parts["mem_optimizer_bytes"]
    a, lg, bu = parts["mem_activations_bytes"], parts["mem_logits_bytes"], parts["mem_buffers_bytes"]
    layers = float(layers_on_rank(g["L"], p, g["v"], j))
    dualpipe = SCHEDULES[int(row["schedule"])] == "dualpipe"
    end_rank = j in (0, p - 1)
    inflight = parts["_inflight"]  # micro-batches in flight on rank j
    # parameters on this rank before DP sharding, recovered for display
    P_ne, P_ex = parts["_P_ne"], parts["_P_ex"]
    n_par = P_ne + P_ex

    # expert tensor parallelism ≠ TP (parallelism.etp): the routed experts over ep·etp, their ZeRO group
    # the expert data-parallel group tp·cp·dp/(etp·ep) (Megatron-Core parallel_state)
    etp, tp_ = float(row.get("etp", row["tp"]) or row["tp"]), float(row["tp"])
    etp_txt = ""
    if P_ex and etp != tp_:
        etp_txt = (f" (routed experts over ep·etp = {float(row['ep']):g}·{etp:g}, expert TP {etp:g} ≠ TP {tp_:g}; "
                   f"their ZeRO group the expert data-parallel ranks tp·cp·dp/(etp·ep) = "
                   f"{tp_ * float(row['cp']) * float(row['dp']) / (etp * float(row['ep'])):g})")

    def shards(nbytes: float, sh: str) -> str:  # bytes × params / shard, experts over their own group
        if P_ex:
            return (f"{nbytes:g} B × ({_params_text(P_ne)} non-expert params / {g['shard_' + sh]:g} + "
                    f"{_params_text(P_ex)} expert params / {g['eshard_' + sh]:g}){etp_txt}")
        return f"{nbytes:g} B × {_params_text(n_par)} params / {g['shard_' + sh]:g}"

    st = f"stage {j} of {p}"
    dt = gib_decimals(parts["mem_total_bytes"], row["hbm_usable_bytes"])  # peak and capacity read apart
    zs = int(row["zero_stage"])
    hsdp = float(row.get("dp_shard", row["dp"])) < float(row["dp"])
    rc = RECOMPUTE[int(row["recompute"])]
    sched = SCHEDULES[int(row["schedule"])]
    moe_layers = "keep_moe" in g  # MoE layers present (an MoE model with every layer dense has none)
    per_layer = g["keep_moe"] if moe_layers else g["keep_dense"]
    n_rcl = int(row.get("recompute_layers", 0) or 0) if rc == "full" else 0
    n_rc = min(n_rcl * int(row["vpp"]), layers) if n_rcl else layers
    # the stash per micro-batch and the recomputed layer's working set, as the stage computed
    # them (a = inflight × per micro-batch + working layer): the text adds up by construction
    rec_extra = parts["_rec_extra"]
    # multi-token prediction: its modules sit with the head (the last stage; DualPipe: the end ranks)
    D = g.get("D", 0.0) if cm.get("any_mtp") else 0.0
    mtp_here = bool(D) and (j == p - 1 or (dualpipe and end_rank))
    mtp_mb = 0.0
    if mtp_here and not row.get("offload_activations"):
        mtp_mb = inflight if not (sched == "interleaved" and int(row["vpp"]) > 1) else 1.0
        # DualPipe: the end rank's chunk p−1 (rank 0's mirror, rank p−1's own): h + 1 = 1 micro-batch
        mtp_mb = (parts["_n_mirror"] if j == 0 else parts["_n_own"]) if dualpipe else mtp_mb
    mtp_stash = mtp_mb * g["keep_mtp"] if mtp_mb else 0.0
    mtp_params = (g["p_mtp_ne"] + g.get("p_mtp_ex", 0.0)) if mtp_here else 0.0
    mods = f"{D:g} MTP module{'s' if D != 1 else ''}"
    # the MTP block is a layer of the model's MoE-layer kind, a dense layer on a dense model
    mtp_kind = "the MoE-layer kind" if float(row.get("n_experts", 0) or 0) > 0 else "a dense layer"
    mtp_rc_txt = ("; not recomputed: Megatron skips the MTP recompute under the block method"
                  if n_rcl else "")
    per_mb_b = (a - rec_extra - mtp_stash) / inflight if inflight else 0.0
    nd_j = float(np.ravel(_dense_on_rank(cm, float(j)))[0]) if moe_layers and g.get("n_dense_tot", 0) else 0.0
    nd_j = min(nd_j, layers)
    if n_rcl and not (moe_layers and nd_j > 0):  # recomputed layers keep their input, the others all
        work_l = g["work_moe"] if moe_layers else g["work_dense"]
        mix = (f"{n_rc:g} recomputed layers × {per_layer / 2**20:.1f} MiB + {layers - n_rc:g} kept whole × "
               f"{work_l / 2**20:.1f} MiB")
    elif moe_layers and nd_j > 0:
        mix = (f"{nd_j:g} dense × {g['keep_dense'] / 2**20:.1f} MiB + {layers - nd_j:g} MoE × "
               f"{g['keep_moe'] / 2**20:.1f} MiB" + ("; the layers kept whole hold more" if n_rcl else ""))
    else:
        mix = f"{layers:g} layers × {per_layer / 2**20:.1f} MiB"
    if dualpipe:
        # the micro-batches in flight on each of the rank's two stages (DualPipe's step(): p − h on the
        # chunk h = min(j, p−1−j), h + 1 on the other)
        n_o, n_m = parts["_n_own"], parts["_n_mirror"]
        mix = (f"DualPipe: ({n_o:g} × stage {j}'s {parts['_stash_own'] / 2**20:,.1f} MiB ({mix}) + {n_m:g} × its "
               f"mirror stage {p - 1 - j}'s {parts['_stash_mirror'] / 2**20:,.1f} MiB) / {inflight:g}: DualPipe's "
               f"schedule holds p − h micro-batches on the stage h = min(j, p−1−j) = {min(j, p - 1 - j)} and h + 1 "
               "on the other")
    stash_txt = f"{layers:g} layers × {inflight:g} micro-batches"
    if dualpipe:  # p − h micro-batches of the earlier stage h = min(j, p−1−j), h + 1 of the later
        layers_mir = float(layers_on_rank(g["L"], p, 1.0, p - 1 - j))
        stash_txt = (f"{parts['_n_own']:g} micro-batches × {layers:g} layers of stage {j} + "
                     f"{parts['_n_mirror']:g} × {layers_mir:g} of stage {p - 1 - j}")
    return {
        "mem_weights_bytes": (
            f"{shards(g['wb'], 'w')} on {st} ("
            + ("DualPipe: its stages j and p−1−j, embedding and head on both end ranks"
               if dualpipe else "layers / tp; embedding on the first, head on the last stage")
            + "; "
            + (f"ZeRO-{zs}, {'dp_shard·cp (HSDP)' if hsdp else 'dp·cp'} shard" if zs >= 3 else
               f"ZeRO-{zs}: weights not sharded")
            + (("; experts over dp·cp/ep" if etp == tp_ else "; experts over tp·cp·dp/(etp·ep)")
               if P_ex and zs >= 3 else "")
            + (f"; with the head, {mods}: {_params_text(mtp_params)} params per GPU before sharding (each a "
               f"block of {mtp_kind}, eh_proj 2h·h/t, 3 norms"
               + ("; + a copy of the input embedding, Megatron's MTP stage" if p > 1 and not dualpipe else "")
               + ")" if mtp_here else "")
            + f") = {_gib(w)}"),
        "mem_grads_bytes": (
            f"{shards(g['gb_dev'], 'g')}"
            + (((" (offloaded: each reduce-scattered partition moves to the host, ZeRO-Offload)" if zs >= 2 else
                 " (kept on the GPU under offload_grads: ZeRO-0/1 reduce the whole accumulated gradient there "
                 "after the last backward; the optimizer's partition of it, which the CPU step reads, is counted "
                 "in host memory)")
                if row.get("offload_grads") else
                " (kept on the GPU, offload_grads off; the optimizer's partition of it, which the CPU step "
                "reads, is copied to the host and counted in host memory)")
               if int(row.get("offload_optimizer", 0)) else "")
            + f" = {_gib(gr)}"),
        "mem_optimizer_bytes": (
            f"{shards(g['ob_dev'], 'o')} ("
            + (("Adam m, v and the CPU step's copy of the fp32 weights (the master) offloaded to " + _offload_target(row)
                if int(row.get("precision", -1)) in _FP32_CODES else
                "fp32 master and Adam m, v offloaded to " + _offload_target(row) if row.get("offload_master_weights") else
                "fp32 master kept on the GPU as well (offload_master_weights off: refreshed after each step); "
                "Adam m, v and the CPU step's fp32 master offloaded to " + _offload_target(row))
               if int(row.get("offload_optimizer", 0))
               else ("Adam m, v kept on GPU; the fp32 weights are the master copy"
                     if int(row.get("precision", -1)) in _FP32_CODES else "fp32 master + Adam m, v kept on GPU"))
            + f") = {_gib(o)}"),
        "mem_activations_bytes": (
            f"activations offloaded to the host (the stash of {stash_txt} "
            + (f"and of the {mods} with the head " if mtp_here else "")
            + f"lives there and crosses the host link each micro-batch): one layer's working set on the GPU = "
            f"{_gib(a)}" if row.get("offload_activations") else
            f"{per_mb_b / 2**20:,.1f} MiB per micro-batch ({mix}"
            + (f"; full recompute of {n_rc:g} of the rank's layers ({n_rcl} per chunk), the other "
               f"{layers - n_rc:g} kept whole" if n_rcl else ("; no recompute" if rc == "none" else f"; {rc} recompute"))
            + ("; outputs of TorchTitan's op-SAC save list" if rc == "op_sac" else "; Korthikanti 2022 Table 2, generalised")
            + f") × {inflight:g} micro-batches in flight ({sched}, p = {p}, m = {g['m']:g}"
            + (": p + 1, DeepSeek-V3 Table 2" if dualpipe else "")
            + ("; the peak of Megatron's interleaved schedule, each chunk's micro-batches weighted by its layers' "
               "activations"
               if sched == "interleaved" and int(row["vpp"]) > 1 else "") + ")"
            + (f" + the recomputed layer's working set {rec_extra / 2**20:,.1f} MiB" if rec_extra else "")
            + (f" + {mods} with the head: {mtp_mb:g} micro-batch{'es' if mtp_mb != 1 else ''} × "
               f"{g['keep_mtp'] / 2**20:,.1f} MiB (a block of {mtp_kind} + its inputs, concatenation and final-norm "
               f"input{mtp_rc_txt})" if mtp_stash else "")
            + f" = {_gib(a)}"),
        "mem_logits_bytes": (
            f"{_logit_bytes(row):g} B per logit ({_logit_kind(row)}) × s·b/c·V/t = {row['seq_len']:g}·{row['micro_batch_size']:g}/{row['cp']:g}·"
            f"{row['vocab_size']:g}/{row['tp']:g}" + (f" × (1 + {D:g}): the main head and {mods}, each with its "
                                                     "own logits and loss" if D else "") + " on the last stage"
            + (" (DualPipe: and on the first, the reverse pipeline's last)" if dualpipe else "") + f" = {_gib(lg)}"
            if (j == p - 1 or (dualpipe and end_rank)) else
            f"the logits live on the {'end ranks' if dualpipe else 'last stage'}, not on {st}: 0 GiB"),
        "mem_buffers_bytes": (
            f"comm {_gib(parts['mem_comm_buffers_bytes'])} (1 GiB CUDA/NCCL reserve; gradient "
            f"buckets are views of the gradients) + ZeRO-3 prefetch "
            f"{_gib(parts['mem_zero3_prefetch_bytes'])} + fragmentation {FRAGMENTATION_FRAC:.0%} of the rest "
            f"{_gib(parts['mem_fragmentation_bytes'])} = {_gib(bu)}"),
        "mem_total_bytes": (
            f"{_gib(w)} + {_gib(gr)} + {_gib(o)} + {_gib(a)} + logits {_gib(lg)} + buffers {_gib(bu)} = "
            f"{_gib(parts['mem_total_bytes'], dt)} ({st}, the most loaded) vs usable HBM "
            f"{_gib(row['hbm_usable_bytes'], dt)}"),
    }


def _offload_target(row: dict) -> str:
    """Where offloaded optimizer states live: the host's memory, or NVMe (ZeRO-Infinity)."""
    code = int(row.get("offload_optimizer", 0))
    return "NVMe (ZeRO-Infinity)" if code == _OFF_NVME else "the host"


def _params_text(n: float) -> str:
    """A parameter count for the explain: ``70.554e9`` (3 decimals of 1e9, as before), or 4
    significant digits in powers of ten beyond 1e15 (found by review: a 7e12-parameter model read
    ``7000000400000.010e9``); below 1e9 ``18.35e6`` and below 1e6 the count itself (a tiny model read
    ``0.018e9``, a 600-parameter one ``0.000e9``: review h32)."""
    if abs(n) >= 1e15:
        return f"{n:.4g}"
    if abs(n) >= 0.9995e9:
        return f"{n / 1e9:.3f}e9"
    return f"{n / 1e6:.4g}e6" if abs(n) >= 1e6 else f"{n:.4g}"


def _is_gpipe(row: dict) -> bool:
    return int(row.get("schedule", -1)) == SCHEDULES.index("gpipe")


def _logit_bytes(row: dict) -> float:
    return float(_logit_bytes_per_element(bool(row.get("ce_eager")), float(row["tp"]), float(row["pp"]),
                                          float(row["global_batch_size"]) / (float(row["micro_batch_size"])
                                                                             * float(row["dp"])),
                                          gpipe=_is_gpipe(row)))


def _logit_kind(row: dict) -> str:
    m = float(row["global_batch_size"]) / (float(row["micro_batch_size"]) * float(row["dp"]))
    # GPipe: every forward's loss is kept until the backward loop (review 15k)
    held = (f" + GPipe's {m - 1:g} other micro-batches' saved loss, {LOSS_SAVED_BYTES:g} B × {m - 1:g}"
            if _is_gpipe(row) and m > 1 else "")
    if not row.get("ce_eager"):
        return "fused / vocab-parallel cross-entropy" + held
    kind = ("eager PyTorch cross-entropy under loss_parallel(), 16 B" if float(row["tp"]) > 1
            else "eager PyTorch cross-entropy, 12 B")
    if float(row["pp"]) > 1:
        kind += (f" + PyTorch pipelining's last stage holding the fp32 logits of all {m:g} micro-batches "
                 f"until the step ends, 4 B × {m:g}")
    return kind + held


def notes(row: dict) -> list[str]:
    """Stated simplifications of the memory model that apply to this scenario."""
    out = ["Memory margin: 1 GiB CUDA/NCCL reserve + "
           f"{FRAGMENTATION_FRAC:.0%} fragmentation (+ under ZeRO-3 2 layers gathered and 1 of "
           "gradients, at most the stage's own); "
           "fits = total <= usable HBM.",
           "Activations: Korthikanti et al. 2022 Table 2, generalised (docs/memory.md); not counted: MLA's "
           "compressed latents and a QK-norm's saved input (Qwen3, OLMo 2, Gemma 3 normalise Q and K: about 8 % "
           "more activations on the Qwen3-235B preset; the scenario has no QK-norm field)."]
    gib = 2.0 ** 30
    if "fits" in row and not row["fits"]:
        d = gib_decimals(row["mem_total_bytes"], row["hbm_usable_bytes"])  # the two read apart (review 15c)
        out.append(f"Does not fit in GPU memory: {row['mem_total_bytes'] / gib:,.{d}f} GiB on pipeline stage "
                   f"{int(row.get('mem_worst_stage', 0))} > usable HBM {row['hbm_usable_bytes'] / gib:,.{d}f} GiB "
                   "(GiB = 2^30 B); the step time, time to train and cost are computed as if it ran.")
    if row.get("fits") and "fits_conservative" in row and not row["fits_conservative"]:
        # review 49: a plan near the limit said "fits" without a word, where the runs that publish their
        # memory measured more than this model estimates (docs/memory.md, "Predicted / published")
        core = sum(float(row.get(c, 0.0)) for c in ("mem_weights_bytes", "mem_grads_bytes", "mem_optimizer_bytes",
                                                     "mem_activations_bytes", "mem_logits_bytes"))
        usable = float(row["hbm_usable_bytes"])
        d = gib_decimals(core, usable)  # the two read apart, as the other memory texts write them
        frac = core / usable
        # whole percent, or one decimal where that would read as the threshold itself (80.09 % → "80.1 %")
        pct = f"{frac:.0%}" if round(frac * 100) > round(FUJII_SAFE_FRAC * 100) else f"{frac:.1%}"
        out.append(f"Tight fit: model states + activations + logits {core / gib:,.{d}f} GiB are {pct} of "
                   f"the usable HBM {usable / gib:,.{d}f} GiB (GiB = 2^30 B), above the {FUJII_SAFE_FRAC:.0%} below which "
                   "none of 454 Llama runs ran out of memory (Fujii et al. 2024; fits_conservative = no). The runs that "
                   "publish their peak memory mostly measured more than this model estimates (docs/memory.md, "
                   "'Predicted / published'): leave room, or try the plan in a short run first.")
    lpe, seq = int(row.get("learned_pos_embeddings", 0) or 0), int(row.get("seq_len", 0) or 0)
    if 0 < lpe < seq:  # session 51 (new-user report): a GPT-2/3-style table shorter than the sequence, unsaid
        out.append(f"The model's learned position table has {lpe:,} rows, fewer than seq_len = {seq:,}: positions "
                   f"past {lpe:,} have no embedding, so the model as defined cannot train at this length. Parameters, "
                   f"memory and step time count the table as given ({lpe:,} × hidden); set "
                   "model.learned_pos_embeddings to at least seq_len for a model that does.")
    if "host_fits" in row and not row["host_fits"]:
        d = gib_decimals(row["host_mem_per_node_bytes"], row["host_memory_bytes"])
        out.append(f"Does not fit in host memory: offload needs {row['host_mem_per_node_bytes'] / gib:,.{d}f} GiB per "
                   f"node > the node's {row['host_memory_bytes'] / gib:,.{d}f} GiB (GiB = 2^30 B); the step time, "
                   "time to train and cost are computed as if it ran.")
    if float(row.get("mtp_layers", 0) or 0) > 0:
        out.append(f"Multi-token prediction ({float(row['mtp_layers']):g} module(s)): parameters, gradients, optimizer "
                   "states, activations and logits on the head-carrying stage (DualPipe: the end ranks), plus a copy "
                   "of the input embedding there when pp > 1 (Megatron-Core); each depth's logits at the main "
                   "head's bytes per logit; not in the ZeRO-3 prefetch unit or the recomputed working set.")
    if int(row.get("schedule", 0)) == _S_ZB:
        out.append("Zero-bubble schedule taken as ZB-H1: activation memory as 1F1B.")
    m_gp = float(row["global_batch_size"]) / (float(row["micro_batch_size"]) * float(row["dp"]))
    if _is_gpipe(row) and float(row["pp"]) == 1 and m_gp > 1:
        # review 15k: GPipe at pp = 1 keeps every micro-batch's activations (PyTorch's ScheduleGPipe runs
        # all forwards first); plain gradient accumulation is the 1F1B setting here
        out.append(f"GPipe with pp = 1 runs all {m_gp:g} forwards before any backward, so every micro-batch's "
                   "activations are held; plain gradient accumulation (one micro-batch at a time) is "
                   "schedule = 1f1b.")
    if int(row.get("recompute", 0)) == _RC_SEL and row.get("flash_attention"):
        out.append("Selective recompute with flash attention saves no activation memory here: flash attention "
                   "already keeps no score matrix; it still re-runs the attention core (step time). Less "
                   "activation memory: full recompute, or op_sac (TorchTitan's per-op checkpointing).")
    if not row.get("flash_attention", True) and float(row.get("cp", 1) or 1) > 1:
        # review 24: the combination was costed without a word (and its scores as (s/c)², now (s/c)·s)
        out.append(f"Materialised-score attention (flash attention off) under context parallelism (CP "
                   f"{float(row['cp']):g}): counted as each rank keeping its s/c queries' scores against all s "
                   "keys for the backward pass; no Megatron-LM / Transformer Engine backend runs this "
                   "(Transformer Engine disables unfused attention under CP, PyTorch's context_parallel "
                   "needs the flash or efficient kernels): turn flash attention on, or cp = 1.")
    if int(row.get("precision", 0)) in (_FP8, _FP4):
        out.append("fp8/fp4: bf16 weights + fp32 master and Adam states kept (as Transformer Engine does); "
                   "no persistent low-precision weight copy is counted; the inputs of fp8 GEMMs are saved "
                   "in 1 byte, other activations in 16 bits.")
    if int(row.get("precision", -1)) in _FP32_CODES:
        out.append("fp32/tf32 (no mixed precision): 4 B weights, 8 B Adam m, v (the weights are the master), "
                   "activations 4 B per element (dropout masks 1 B).")
    return out
