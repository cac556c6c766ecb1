"""A scenario as a launch configuration: Megatron-LM arguments, a TorchTitan TOML or a
DeepSpeed config JSON.

Users of planners ask for the chosen split as something they can run (the George614 web
calculator exports DeepSpeed configs; ``../shared/reference/anchors.md`` §8, theme 4). These
functions write the scenario's model, split, batch, precision and recompute choices in the
framework's own names, and list in notes every choice the framework cannot take as such —
never a silent approximation.

Names verified against the frameworks' sources (``tests/data/framework_flags.json`` records
every flag: existence, type, choices, default):

* Megatron-LM ``megatron/training/arguments.py`` at commit ``000c4ac2`` (2025);
* TorchTitan ``torchtitan/config/job_config.py`` at commit ``6404b932`` (2025; newer
  TorchTitan moves ``compile`` and ``float8`` to other sections).

Checkpoint intervals are written in steps (:func:`checkpoint_plan`: the engine's interval for each
tier over the step time); the checkpoint paths, like data, tokenizer, optimizer and learning-rate
schedule, are the user's: the Megatron export uses ``NullTokenizer`` with the model's vocabulary (Megatron's synthetic-data
benchmarking setup), and says so.
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

from . import schema as _schema
from ._export_checkpoint import (TierPlan, CheckpointPlan, checkpoint_plan, deepspeed_checkpoint_notes,  # noqa: F401
                                 megatron_checkpoint, torchtitan_checkpoint)
from .schema import Scenario, validate_scenario


def _fp8_attention_used(s: Scenario) -> bool:
    """Whether the planner's step time ran the scenario's attention core in FP8
    (``training.fp8_attention`` set, possible there and faster: planner.timing's own test)."""
    if not s.training.fp8_attention:
        return False
    from . import batch, timing  # (import here: the export needs neither otherwise)

    row = batch.scenario_row(s)
    return timing.fp8_attention_applies(row) and timing.fp8_attention_factor(row) > 1.0


def _fp8_attention_note(s: Scenario, where: str) -> list[str]:
    """The export note of ``training.fp8_attention`` (``where``: how the framework sets it, or why it
    cannot): what the planner's step time assumed."""
    if not s.training.fp8_attention:
        return []
    used = _fp8_attention_used(s)
    return [f"FP8 attention (training.fp8_attention): {where}; not written, and the planner's step time "
            + ("assumed it." if used else "did not use it either (planner evaluate's notes say why).")]

#: The sources the names were checked against (see the module docstring).
MEGATRON_COMMIT = "000c4ac24f61159c138b0975def722c65245983c"
TORCHTITAN_COMMIT = "6404b932421f5ce382e7dac5ad381b2c17b1373c"


class Export(NamedTuple):
    """A launch configuration as text, and what it could not carry."""

    text: str
    notes: list[str]


def _name(x: str) -> str:
    """A scenario or model name (from a link, an imported JSON or config.json) for a comment, a
    note or a TOML string: ``schema.one_line`` (line breaks spaces, invisible characters dropped,
    at most ``schema.NAME_MAX_CHARS``), so a newline in the name cannot start a line of shell
    arguments or TOML keys of its own."""
    return _schema.one_line(x)


def _comment(prefix: str, text: str) -> str:
    """One ``#`` comment line: ``text`` as one line (``schema.one_line``, not cut)."""
    return prefix + _schema.one_line(text, None)


def _gpus_per_node(s) -> int:
    """GPUs per node of the scenario's system (the torchrun ``--nproc-per-node``), at most the job's
    GPUs (found by review, session 21: 8 was written for every system, GB200 NVL72's 4 too)."""
    from . import catalog

    try:
        return min(int(catalog.resolve_system(s.cluster.system).gpus_per_node), int(s.cluster.n_gpus))
    except Exception:  # noqa: BLE001 - the scenario validated: the system resolves
        return 8


def _nodes(s) -> int:
    return -(-int(s.cluster.n_gpus) // _gpus_per_node(s))


def _hardware_notes(s: Scenario) -> list[str]:
    """What the scenario sets outside any framework's configuration."""
    lim = s.cluster.overrides.power_limit_w
    return [f"GPU power limit {lim:g} W: set on every node outside the framework "
            f"(nvidia-smi -pl {lim:g})."] if lim else []


def _attn_family(s: Scenario) -> str:
    """The accelerator family the attention-kernel notes name (hopper, blackwell, ampere, ...)."""
    try:
        return s.resolved_accelerator().family
    except Exception:  # noqa: BLE001 - a note only
        return ""


def _steps(s: Scenario) -> int:
    t = s.training
    return max(1, math.ceil(t.tokens_total / (t.global_batch_size * t.seq_len)))


def _window_skip(frac: float) -> int | None:
    """Megatron ``--window-attn-skip-freq N``: one full-attention layer after every N−1 window
    layers, i.e. a window share of (N−1)/N; None when no N gives ``frac``."""
    if frac >= 1.0:
        return None
    n = round(1.0 / (1.0 - frac))
    return n if n >= 2 and abs((n - 1) / n - frac) < 1e-9 else -1


def stage_layers(n_layers: int, n_stages: int) -> list[int]:
    """Transformer layers of each (virtual) pipeline stage in model order, the planner's split:
    ``floor(L / S)`` each and the first ``L mod S`` stages one more (the scalar, per-stage form of
    :func:`planner.model_stats.layers_on_rank`, which sums a rank's stages)."""
    return [n_layers // n_stages + (i < n_layers % n_stages) for i in range(n_stages)]


def megatron_layout(n_layers: int, n_stages: int, mtp_layers: int = 0) -> str:
    """Megatron-Core's ``--pipeline-model-parallel-layout`` string for the planner's split.

    The planner (``model_stats.layers_on_rank``) gives each of the ``n_stages = pp·vpp``
    (virtual) stages, in model order, ``floor(L / n_stages)`` transformer layers and the first
    ``L mod n_stages`` one more; the embedding sits on the first stage, the MTP modules and the
    loss on the last. The grammar is ``PipelineParallelLayerLayout.parse_str_to_list``
    (``megatron/core/transformer/pipeline_parallel_layer_layout.py``): ``E`` embedding, ``t``
    transformer layer, ``m`` MTP module, ``L`` loss, ``|`` between stages listed in model order
    (stage ``k`` is virtual chunk ``k // pp`` of rank ``k mod pp``), ``x*n`` repeats a symbol and
    ``(…)*n`` a group. Runs of equal stages are written as ``(t*c|)*k``.

    Example: DeepSeek-V3, 61 layers and 1 MTP module over PP 16 → ``Et*4|(t*4|)*12t*3|t*3|t*3mL``
    (13 stages of 4 layers, 3 of 3).
    """
    if n_stages < 1 or n_layers < n_stages:
        raise ValueError(f"{n_layers} layers cannot fill {n_stages} pipeline stages")
    counts = stage_layers(n_layers, n_stages)
    body = [f"t*{c}" if c > 1 else "t" for c in counts]
    body[0] = "E" + body[0]
    body[-1] = body[-1] + "m" * mtp_layers + "L"
    out, i = [], 0
    while i < n_stages:
        j = i
        while j + 1 < n_stages and body[j + 1] == body[i]:
            j += 1
        k = j - i + 1
        out.append(f"({body[i]}|)*{k}" if k > 2 else (body[i] + "|") * k)
        i = j + 1
    return "".join(out)[:-1]  # the last stage (loss) ends the string, no separator after it


def megatron_args(scenario: Scenario | dict) -> Export:
    """Megatron-LM (Megatron-Core) command-line arguments for a scenario.

    Parameters
    ----------
    scenario : a :class:`Scenario` or its JSON dict (validated; :class:`InputError` when bad).

    Returns
    -------
    Export : ``text`` — the arguments, one per line with shell continuations, after comment
        lines naming the scenario, the world size and the split; ``notes`` — each choice
        Megatron-LM cannot take as given (also written as ``# note:`` comments).

    Mapping (flags of ``arguments.py`` at :data:`MEGATRON_COMMIT`): ZeRO-0 = DDP, ZeRO-1 =
    ``--use-distributed-optimizer`` (HSDP: ``--num-distributed-optimizer-instances``), ZeRO-2 /
    ZeRO-3 = ``--use-megatron-fsdp`` with ``--data-parallel-sharding-strategy optim_grads`` /
    ``optim_grads_params`` and ``--use-distributed-optimizer`` (required by Megatron-FSDP); recompute selective = ``--recompute-granularity selective`` (the
    attention core), full = ``full`` with ``uniform`` method, 1 layer per checkpoint; the
    interleaved schedule = ``--num-virtual-stages-per-pipeline-rank``; flash attention =
    ``--attention-backend flash`` (``fused`` for MLA, whose Q/K and V head sizes differ);
    FP8 = ``--fp8-format hybrid`` on ``--bf16``; fp32 gradients under ``--fp16`` =
    ``--accumulate-allreduce-grads-in-fp32``, bf16 gradients = ``--grad-reduce-in-bf16`` (with ``--bf16``).
    """
    s = validate_scenario(scenario)
    m, p, t = s.resolved_model(), s.parallelism, s.training
    notes: list[str] = []
    a: list[str] = []

    def arg(flag: str, value=None) -> None:
        a.append(flag if value is None else f"{flag} {value}")

    # model
    arg("--num-layers", m.n_layers)
    arg("--hidden-size", m.hidden_size)
    arg("--ffn-hidden-size", m.ffn_hidden_size)
    arg("--num-attention-heads", m.n_heads)
    if m.kv_heads < m.n_heads:
        arg("--group-query-attention")
        arg("--num-query-groups", m.kv_heads)
    if m.head_dim is not None and m.head_dim * m.n_heads != m.hidden_size:
        arg("--kv-channels", m.head_dim)
    arg("--seq-length", t.seq_len)
    arg("--max-position-embeddings", max(t.seq_len, m.learned_pos_embeddings))
    if m.learned_pos_embeddings:
        arg("--position-embedding-type", "learned_absolute")
        if m.learned_pos_embeddings < t.seq_len:  # session 51 (new-user report): written longer, unsaid
            notes.append(f"the model's learned position table has {m.learned_pos_embeddings:,} rows, fewer than "
                         f"seq_len = {t.seq_len:,}: written as --max-position-embeddings {t.seq_len} (Megatron needs a "
                         f"position for every token), a model with {(t.seq_len - m.learned_pos_embeddings) * m.hidden_size:,} "
                         "more parameters than the planner's, which counts the table as given.")
    elif m.rope:
        arg("--position-embedding-type", "rope")
    else:
        arg("--position-embedding-type", "none")
        notes.append("no RoPE and no learned positions (an ALiBi model such as MPT or BLOOM): Megatron-LM has no "
                     "ALiBi; written as --position-embedding-type none.")
    if m.gated_mlp:
        arg("--swiglu")
        notes.append("gated MLP written as --swiglu (SiLU gate); a GeGLU model needs its activation set too.")
    arg("--normalization", "RMSNorm" if m.norm == "rmsnorm" else "LayerNorm")
    if not m.tied_embeddings:
        arg("--untie-embeddings-and-output-weights")
    if not m.linear_bias:
        arg("--disable-bias-linear")
    arg("--attention-dropout", f"{m.dropout:g}")
    arg("--hidden-dropout", f"{m.dropout:g}")
    arg("--tokenizer-type", "NullTokenizer")
    # _NullTokenizer.vocab_size is the given size + 1 (its EOD token; megatron/training/tokenizer/
    # tokenizer.py): V − 1 gives the model's V, which Megatron then pads to a multiple of
    # --make-vocab-size-divisible-by × TP (review 47f: Mixtral's 32,000 became 32,128 rows)
    arg("--vocab-size", m.vocab_size - 1)
    notes.append(f"NullTokenizer with the model's vocabulary (--vocab-size {m.vocab_size - 1:,}: the tokenizer adds "
                 f"its EOD token, {m.vocab_size:,} in all; Megatron pads the embedding to a multiple of "
                 "--make-vocab-size-divisible-by (128) × TP, where the planner's memory and FLOPs count the "
                 "unpadded vocabulary); synthetic data, as Megatron's benchmarks: set your tokenizer and "
                 "--data-path for real data.")
    notes.append("details the planner's model does not hold are not written: rotary base and scaling, "
                 "activation other than SiLU, router scoring / bias / scaling, optimizer and learning rate.")
    # A window in none of the layers (sliding_window_layer_frac = 0) is full attention everywhere, as
    # the planner counts it: no --window-size, which Megatron would apply to every layer.
    if m.sliding_window is not None and m.sliding_window_layer_frac > 0:
        arg("--window-size", f"{m.sliding_window},0")
        n = _window_skip(m.sliding_window_layer_frac)
        if n == -1:
            notes.append(f"sliding window in {m.sliding_window_layer_frac:.3g} of the layers: no "
                         "--window-attn-skip-freq N gives that share; set the pattern by hand.")
        elif n is not None:
            arg("--window-attn-skip-freq", n)
    if m.moe is not None:
        e = m.moe
        arg("--num-experts", e.n_experts)
        arg("--moe-router-topk", e.top_k)
        arg("--moe-ffn-hidden-size", e.expert_ffn_hidden_size)
        if e.n_shared_experts:
            arg("--moe-shared-expert-intermediate-size",
                e.n_shared_experts * (e.shared_expert_ffn_hidden_size or e.expert_ffn_hidden_size))
        if e.first_dense_layers:
            arg("--moe-layer-freq", f"'([0]*{e.first_dense_layers}+[1]*{m.n_layers - e.first_dense_layers})'")
        arg("--moe-token-dispatcher-type", "alltoall")
        if t.precision in ("bf16", "fp8", "fp4"):  # grouped GEMM needs --bf16
            arg("--moe-grouped-gemm")
        if e.capacity_factor > 1.0:
            notes.append(f"capacity factor {e.capacity_factor:g} is the planner's load-imbalance factor "
                         "(dropless routing): not written as --moe-expert-capacity-factor, which drops tokens.")
        if e.max_nodes_per_token:
            notes.append(f"node-limited routing ({e.max_nodes_per_token} nodes per token) is set with "
                         "Megatron's group-limited routing options; not written.")
    if m.mla is not None:
        arg("--multi-latent-attention")
        if m.mla.q_lora_rank:
            arg("--q-lora-rank", m.mla.q_lora_rank)
        arg("--kv-lora-rank", m.mla.kv_lora_rank)
        arg("--qk-head-dim", m.mla.qk_nope_head_dim)
        arg("--qk-pos-emb-head-dim", m.mla.qk_rope_head_dim)
        arg("--v-head-dim", m.mla.v_head_dim)
    if m.mtp_layers:
        # Megatron-LM docs/user-guide/features/multi_token_prediction.md: mtp_num_layers (D modules on
        # the last pipeline stage), loss weight mtp_loss_scaling_factor (default 0.1, not modelled)
        arg("--mtp-num-layers", m.mtp_layers)

    # parallelism
    arg("--tensor-model-parallel-size", p.tp)
    if p.tp > m.kv_heads:
        # Megatron-Core TransformerConfig.__post_init__ raises "num_query_groups (…) must be a multiple
        # of tensor_model_parallel_size (…)" and Attention divides num_query_groups by the TP size;
        # NVIDIA/Megatron-LM PR #2565 (Dec 2025) later accepts a TP that is a multiple of it.
        notes.append(f"TP {p.tp} > {m.kv_heads} KV heads (--num-query-groups {m.kv_heads}): Megatron-Core before "
                     "Megatron-LM PR #2565 (Dec 2025) requires num_query_groups to be a multiple of "
                     "tensor_model_parallel_size (TransformerConfig) and cannot run this split; later versions "
                     "all-gather the QKV activations, which the planner does not model (it replicates the KV "
                     f"heads on each TP rank). Choose a tp that divides {m.kv_heads}.")
    arg("--pipeline-model-parallel-size", p.pp)
    if p.layer_split == "uneven" and m.n_layers % (p.pp * p.vpp):
        # Found by review (2026-12, h27a). validate_args (arguments.py at MEGATRON_COMMIT) asserts
        # "Number of layers should be divisible by the pipeline-model-parallel size" without a layout
        # or virtual stages, and allows at most one of --num-layers-per-virtual-pipeline-stage,
        # --num-virtual-stages-per-pipeline-rank and --pipeline-model-parallel-layout (the layout sets
        # the virtual stages itself): the planner's split is written as the layout.
        arg("--pipeline-model-parallel-layout", "'" + megatron_layout(m.n_layers, p.pp * p.vpp, m.mtp_layers) + "'")
        notes.append(f"uneven layer split: the planner gives the first {m.n_layers % (p.pp * p.vpp)} of "
                     f"{p.pp * p.vpp} (virtual) stages one extra layer, written as --pipeline-model-parallel-layout "
                     "(Megatron-Core's custom layout, marked experimental: E embedding, t layer, m MTP module, "
                     "L loss, | between stages in model order); it sets the virtual stages, so "
                     "--num-virtual-stages-per-pipeline-rank is not written.")
    elif p.vpp > 1:
        arg("--num-virtual-stages-per-pipeline-rank", p.vpp)
    arg("--context-parallel-size", p.cp)
    if p.cp > 1 and t.seq_len % (2 * p.cp):
        notes.append(f"context parallelism: Megatron splits each sequence into 2·cp = {2 * p.cp} chunks (load-balanced "
                     f"causal attention) and asserts seq_length % (2·cp) == 0; seq_len {t.seq_len} is not a "
                     f"multiple of {2 * p.cp}: pad the sequences or choose another CP.")
    if p.ep > 1:
        arg("--expert-model-parallel-size", p.ep)
    if m.moe is not None and p.etp is not None:
        # Megatron-LM arguments.py: --expert-tensor-parallel-size, default = --tensor-model-parallel-size
        # (parallel_state.initialize_model_parallel: "if expert_tensor_parallel_size is None:
        # expert_tensor_parallel_size = tensor_model_parallel_size"); written when the scenario sets it
        arg("--expert-tensor-parallel-size", p.etp)
    if p.ep > 1:
        if t.precision == "fp16":
            # validate_args in arguments.py: assert not args.fp16, "Expert parallelism is not supported
            # with fp16 training."
            notes.append(f"expert parallelism (EP {p.ep}) with fp16: Megatron-LM asserts \"Expert parallelism is "
                         "not supported with fp16 training.\" (arguments.py): use bf16 or ep = 1.")
    if p.sequence_parallel and p.tp > 1:
        arg("--sequence-parallel")
        s_rank = t.seq_len // p.cp if t.seq_len % p.cp == 0 else None
        if s_rank is None or s_rank % p.tp:
            # megatron/core/tensor_parallel/mappings.py _reduce_scatter_along_first_dim: "First
            # dimension of the tensor should be divisible by tensor parallel size" (found by review)
            notes.append(f"sequence parallelism: Megatron splits each sequence (seq_len / cp = "
                         f"{t.seq_len} / {p.cp} on a CP rank) over the {p.tp} TP ranks and asserts the first "
                         "dimension of the tensor is divisible by the tensor parallel size (reduce-scatter "
                         f"along the sequence): pad the sequences to a multiple of tp·cp = {p.tp * p.cp}, or "
                         "turn sequence parallelism off.")
    elif p.tp > 1 and p.ep > 1:
        # megatron/core/model_parallel_config.py ModelParallelConfig.__post_init__: "When using expert
        # parallelism and tensor parallelism, sequence parallelism must be used" (a ValueError in
        # 2024-25 Megatron-Core, a warning in later versions).
        notes.append(f"TP {p.tp} with EP {p.ep} without sequence parallelism: Megatron-Core requires "
                     "--sequence-parallel when expert and tensor parallelism are combined (ModelParallelConfig: "
                     "\"When using expert parallelism and tensor parallelism, sequence parallelism must be "
                     "used\"); written without it, as planned: set parallelism.sequence_parallel = true.")
    fsdp = p.zero_stage in (2, 3)
    if fsdp:
        notes.append("CUDA_DEVICE_MAX_CONNECTIONS: leave it unset (or above 1) in the launch environment: "
                     "validate_args asserts it is not 1 with Megatron-FSDP.")
    elif p.tp > 1 or p.cp > 1:
        notes.append("CUDA_DEVICE_MAX_CONNECTIONS=1 must be set in the launch environment: with TP or CP > 1 "
                     "validate_args asserts it on GPUs before Blackwell.")
    if p.schedule in ("gpipe", "zero_bubble", "dualpipe"):
        notes.append(f"schedule '{p.schedule}': Megatron-LM runs 1F1B (interleaved with virtual stages); "
                     "not written.")
    hsdp = p.dp_shard is not None and p.dp_shard < p.dp
    if p.zero_stage == 1:
        arg("--use-distributed-optimizer")
        if hsdp:
            arg("--num-distributed-optimizer-instances", p.dp // p.dp_shard)
    elif p.zero_stage in (2, 3):
        if p.pp > 1:
            # Found by review (2026-12, h27a): Megatron-FSDP's user guide lists TP, EP and CP as the
            # parallelisms it composes with, not PP (NVIDIA/Megatron-LM issue #1455, "Is there any
            # plan to make custom_fsdp compatible with PP?", open); validate_args at MEGATRON_COMMIT
            # has no assert on it.
            notes.append(f"ZeRO-{p.zero_stage} is written as Megatron-FSDP with PP {p.pp}: Megatron-FSDP's documentation "
                         "lists TP, EP and CP as compatible, not pipeline parallelism (NVIDIA/Megatron-LM issue #1455, "
                         "open): check that your version runs it, or plan ZeRO-1 (--use-distributed-optimizer), "
                         "which Megatron runs with PP.")
        arg("--use-megatron-fsdp")
        arg("--data-parallel-sharding-strategy", "optim_grads" if p.zero_stage == 2 else "optim_grads_params")
        # Megatron-LM's Megatron-FSDP user guide lists --use-distributed-optimizer among the required
        # flags (Megatron-Bridge switches it on: "Megatron-FSDP always uses a distributed optimizer");
        # without it get_megatron_optimizer builds a Float16OptimizerWithFloat16Params.
        arg("--use-distributed-optimizer")
        arg("--ckpt-format", "fsdp_dtensor")
        notes.append("Megatron-FSDP: the Megatron-FSDP user guide also lists --no-gradient-accumulation-fusion "
                     "(arguments.py at this commit only warns that Transformer Engine must support FSDP with "
                     "gradient-accumulation fusion): add it if yours does not; not written.")
        if hsdp:
            notes.append(f"hybrid sharding (dp_shard = {p.dp_shard}) is not written for Megatron-FSDP: set it the "
                         "way your Megatron version does (not checked here).")
    if p.dp_comm_overlap:
        arg("--overlap-grad-reduce")
        if p.zero_stage >= 1:
            arg("--overlap-param-gather")
    if p.recompute == "selective":
        arg("--recompute-granularity", "selective")
    elif p.recompute == "full" and p.recompute_layers:
        arg("--recompute-granularity", "full")
        arg("--recompute-method", "block")  # the first N layers of each chunk, the rest not at all
        arg("--recompute-num-layers", p.recompute_layers)
    elif p.recompute == "full":
        arg("--recompute-granularity", "full")
        arg("--recompute-method", "uniform")
        arg("--recompute-num-layers", 1)
    elif p.recompute == "op_sac":
        notes.append("op_sac is TorchTitan's per-op checkpointing: Megatron has no such mode (its nearest is "
                     "--recompute-granularity selective with --recompute-modules); not written.")
    if t.elementwise == "eager":
        notes.append("elementwise 'eager' (PyTorch ops one kernel each) has no Megatron-LM setting: Megatron fuses "
                     "norms, RoPE and SwiGLU (Transformer Engine); the planner's step time assumed eager kernels.")
    # Found by review (2026-12). Transformer Engine get_attention_backend
    # (transformer_engine/pytorch/attention/dot_product_attention/utils.py, NVIDIA/TransformerEngine at
    # a0b36d0c): "if head_dim_qk != head_dim_v: ... Disabling FlashAttention as it does not support MLA."
    # (FlashAttention 2 and 3), FusedAttention kept for the hd_hd_hd layouts; --attention-backend flash
    # switches the other backends off, so an MLA model gets no backend at all. Fused (cuDNN) attention
    # keeps no s×s scores either: the planner's flash_attention = true.
    mla_dims = m.mla is not None and m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim != m.mla.v_head_dim
    if p.flash_attention and mla_dims:
        arg("--attention-backend", "fused")
        notes.append(f"MLA (Q/K head {m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim}, V head {m.mla.v_head_dim}): "
                     "--attention-backend fused (cuDNN), not flash: Transformer Engine disables FlashAttention when "
                     "the Q/K and V head sizes differ (\"Disabling FlashAttention as it does not support MLA.\", "
                     "attention/dot_product_attention/utils.py), and flash alone would leave no backend.")
        if p.cp > 1:
            notes.append(f"MLA with context parallelism (CP {p.cp}): Transformer Engine (at a0b36d0c) also disables "
                         "FusedAttention (\"does not support context parallelism with MLA\") and the unfused backend "
                         "under CP, leaving no attention backend: check your Transformer Engine version or set cp = 1.")
    elif p.flash_attention and p.attention_kernel == "native" and _attn_family(s) in ("hopper", "blackwell"):
        # review 47h: --attention-backend flash sets NVTE_FUSED_ATTN=0 (Megatron's AttnBackend.flash), and
        # Transformer Engine's get_attention_backend keeps FlashAttention-3 to sm90 with the flash-attn-3
        # package: on Blackwell (or Hopper without it) that is FlashAttention-2, the planner's 'flash2'.
        # auto leaves the choice to Transformer Engine, which prefers cuDNN fused attention on Hopper+
        # ("Disabling FlashAttention to give FusedAttention preference on Hopper+").
        arg("--attention-backend", "auto")
        notes.append("--attention-backend auto: Transformer Engine then prefers cuDNN fused attention on Hopper and "
                     "Blackwell, the planner's 'native' speed; --attention-backend flash would switch cuDNN off and run "
                     "FlashAttention-2 (FlashAttention-3 only on Hopper with the flash-attn-3 package): the planner's "
                     "parallelism.attention_kernel = 'flash2'.")
    else:
        arg("--attention-backend", "flash" if p.flash_attention else "unfused")
    if not p.flash_attention and p.cp > 1:
        # Found by review. Transformer Engine get_attention_backend
        # (transformer_engine/pytorch/attention/dot_product_attention/utils.py, NVIDIA/TransformerEngine
        # at 002a3e57): "if context_parallel and use_unfused_attention: ... Disabling
        # UnfusedDotProductAttention as it does not support context parallelism"; Megatron's own
        # (--attention-backend local) DotProductAttention asserts "Context parallelism is only supported
        # by TEDotProductAttention!" (megatron/core/transformer/dot_product_attention.py at 00caa53a).
        # Written as planned: the planner's flash_attention = false is materialised scores (memory.py
        # counts the s×s core), which neither backend runs under CP; flash / fused would be another plan.
        notes.append(f"--attention-backend unfused with context parallelism (CP {p.cp}): no Megatron-LM backend "
                     "runs materialised-score attention under CP — Transformer Engine disables it (\"Disabling "
                     "UnfusedDotProductAttention as it does not support context parallelism\", "
                     "attention/dot_product_attention/utils.py) and Megatron's local DotProductAttention asserts "
                     "context_parallel_size == 1. Written as planned: set parallelism.flash_attention = true "
                     "(--attention-backend flash) or cp = 1.")
    if p.tp_comm_overlap:
        if p.sequence_parallel and p.tp > 1:
            arg("--tp-comm-overlap")
        else:
            notes.append("TP communication overlap needs sequence parallelism with tp > 1: not written.")
    if p.ep_comm_overlap or p.ep_dispatch_fp8 or p.ep_node_dispatch:
        notes.append("EP all-to-all overlap / FP8 dispatch / node-aware (DeepEP) dispatch are recipe options of the "
                     "Megatron version at hand: not written.")
    if p.offload_optimizer == "cpu" and p.zero_stage == 0:
        notes.append("optimizer CPU offload: Megatron's precision-aware optimizer it needs runs only with the "
                     "distributed optimizer (ZeRO-1); not written for ZeRO-0.")
    elif p.offload_optimizer == "cpu":
        arg("--optimizer-cpu-offload")
        arg("--use-precision-aware-optimizer")
        if not (p.offload_master_weights and p.offload_grads):
            # megatron/core/optimizer/__init__.py: optimizer_cpu_offload builds a HybridDeviceOptimizer
            # (offload_fraction 1.0 by default): fp32 master weights and Adam states live on the CPU and
            # the gradients are copied there for the CPU step.
            notes.append("Megatron's optimizer CPU offload (HybridDeviceOptimizer, --optimizer-offload-fraction "
                         "1.0) keeps the fp32 master weights and optimizer states on the CPU and copies the "
                         "gradients there; the planner's scenario also keeps a GPU copy of some of them "
                         "(offload_master_weights / offload_grads off), which Megatron frees.")
    elif p.offload_optimizer == "nvme":
        notes.append("NVMe optimizer offload (DeepSpeed ZeRO-Infinity) has no Megatron-LM flag: not written.")
    if p.offload_activations:
        notes.append("activation offload: not written (Megatron's fine-grained activation offloading is "
                     "version-specific).")

    # training
    arg("--micro-batch-size", t.micro_batch_size)
    arg("--global-batch-size", t.global_batch_size)
    arg("--train-iters", _steps(s))
    if t.precision in ("bf16", "fp8", "fp4"):
        arg("--bf16")
    elif t.precision == "fp16":
        arg("--fp16")
    else:
        notes.append(f"precision '{t.precision}': Megatron trains in fp32 without --bf16 / --fp16 "
                     "(tf32 is PyTorch's matmul setting).")
    if t.precision == "fp8":
        arg("--fp8-format", "hybrid")
        if t.fp8_scaling == "rowwise":
            notes.append("fp8_scaling 'rowwise' is torchao's recipe; Megatron-LM's --fp8-recipe has delayed, "
                         "tensorwise, mxfp8 and blockwise, none row-wise: its default written, and the planner's "
                         "row-wise step time does not describe it.")
    elif t.precision == "fp4":
        arg("--fp4-format", "e2m1")
    # _add_transformer_engine_args (arguments.py at MEGATRON_COMMIT) has --fp8-format / --fp8-recipe /
    # --fp8-param-gather but no FP8 attention flag; Megatron-Core's TransformerConfig has the field
    notes.extend(_fp8_attention_note(s, "Megatron-LM's arguments.py at this commit has no flag for it; set "
                                        "Megatron-Core's TransformerConfig.fp8_dot_product_attention = True "
                                        "(Transformer Engine's FP8 fused attention) in the model provider"))
    # Found by review (2026-12). validate_args (arguments.py at MEGATRON_COMMIT) reads --grad-reduce-in-bf16
    # and switches accumulate_allreduce_grads_in_fp32 on only under "if args.bf16:"; get_model
    # (megatron/training/training.py) builds the DDP gradient buffers with grad_reduce_in_fp32 =
    # args.accumulate_allreduce_grads_in_fp32, else in the parameters' dtype: fp16 gradients under --fp16,
    # fp32 ones without --bf16 / --fp16.
    bf16_run = t.precision in ("bf16", "fp8", "fp4")
    if t.grad_dtype == "bf16" and bf16_run:
        arg("--grad-reduce-in-bf16")
    elif t.grad_dtype == "fp32" and t.precision == "fp16":
        arg("--accumulate-allreduce-grads-in-fp32")
        notes.append("fp32 gradients with --fp16: --accumulate-allreduce-grads-in-fp32 written (Megatron sets it by "
                     "itself only for --bf16; without it the gradient buffers are fp16).")
    elif t.grad_dtype == "fp16":
        pass  # precision fp16 (the schema's rule): Megatron's own fp16 gradient buffers, no flag
    elif t.grad_dtype == "bf16":
        notes.append(f"grad_dtype 'bf16' with precision '{t.precision}': Megatron takes --grad-reduce-in-bf16 only "
                     "with --bf16 (validate_args) and keeps the gradient buffers in the parameters' dtype, "
                     + ("fp16 (2 B, the planner's size, another format)" if t.precision == "fp16" else
                        "fp32 (4 B, where the planner counted 2 B: evaluate grad_dtype = 'fp32')")
                     + "; not written.")
    if t.cross_entropy == "fused":
        arg("--cross-entropy-loss-fusion")
    else:
        # review 47f: dropped without a word; Megatron has no eager PyTorch loss
        notes.append("cross-entropy 'eager' (12-16 B per logit on the last stage, + 4 B × micro-batches with PP): "
                     "Megatron-LM has no eager "
                     "PyTorch loss; without --cross-entropy-loss-fusion it runs its vocab-parallel cross-entropy, "
                     "which keeps fp32 logits, 4 B per logit: the planner's 'fused' memory (evaluate "
                     "training.cross_entropy = 'fused').")
    if p.flash_attention and p.attention_kernel == "flash2" and _attn_family(s) in ("hopper", "blackwell") \
            and not mla_dims:
        notes.append("attention kernel 'flash2': --attention-backend flash switches cuDNN fused attention off "
                     "(NVTE_FUSED_ATTN=0), so Transformer Engine runs FlashAttention-2, as planned, except on Hopper "
                     "with the flash-attn-3 package installed, where FlashAttention-3 runs at the planner's 'native' "
                     "speed.")
    megatron_checkpoint(s, arg, "--ckpt-format fsdp_dtensor" in a, notes, _steps(s))

    head = [f"# Megatron-LM arguments for '{_name(s.name or m.name)}', written by clusterplan",
            f"# (flags of megatron/training/arguments.py at {MEGATRON_COMMIT[:8]}).",
            f"# World size {s.cluster.n_gpus} = TP {p.tp} x PP {p.pp} x CP {p.cp} x DP {p.dp}"
            + ((f" (EP {p.ep} inside DP x CP)" if p.etp is None or p.etp == p.tp else
                f" (ETP {p.etp} x EP {p.ep} x expert DP {s.cluster.n_gpus // (p.pp * p.etp * p.ep)} = TP x CP x DP "
                f"per stage: the expert grid folds over the TP ranks)") if p.ep > 1 and m.moe is not None else "") + ".",
            f"# Paste after the launch command on {s.cluster.n_gpus} ranks, e.g. "
            f"torchrun --nnodes {_nodes(s)} --nproc-per-node {_gpus_per_node(s)} ... pretrain_gpt.py \\"]
    notes.extend(_hardware_notes(s))
    head += [_comment("# note: ", n) for n in notes]
    text = "\n".join(head) + "\n" + " \\\n".join(a) + "\n"
    return Export(text, notes)


_TT_SCHEDULE = {"1f1b": "1F1B", "interleaved": "Interleaved1F1B", "gpipe": "GPipe",
                "zero_bubble": "InterleavedZeroBubble", "dualpipe": "DualPipeV"}
#: TorchTitan model names / flavors with the planner's catalogue architecture.
_TT_FLAVOR = {"llama3-8b": ("llama3", "8B"), "llama3-70b": ("llama3", "70B"), "llama3-405b": ("llama3", "405B"),
              "deepseek-v3": ("deepseek_v3", "671B")}


_ARCH_FIELDS = ("n_layers", "hidden_size", "n_heads", "kv_heads", "d_head", "ffn_hidden_size", "vocab_size",
                "gated_mlp", "tied_embeddings", "norm", "linear_bias", "learned_pos_embeddings", "rope",
                "sliding_window")


def _arch(m) -> tuple:
    moe = None if m.moe is None else (m.moe.n_experts, m.moe.top_k, m.moe.expert_ffn_hidden_size,
                                      m.moe.n_shared_experts, m.moe.first_dense_layers)
    arch = tuple(getattr(m, f) if f != "sliding_window" or m.sliding_window_layer_frac > 0 else None
                 for f in _ARCH_FIELDS)  # a window in no layer is full attention
    return arch + (moe, None if m.mla is None else m.mla.model_dump())


def _tt_flavor(m) -> tuple[str, str] | None:
    """The TorchTitan (name, flavor) whose catalogue architecture equals ``m``'s (by
    architecture, not by id: an imported config.json of Llama 3.1 8B is the llama3 8B flavor)."""
    from . import catalog

    models = catalog.models()
    for mid, nf in _TT_FLAVOR.items():
        if mid in models and _arch(models[mid]) == _arch(m):
            return nf
    return None


#: TorchTitan schedules with one stage per rank (PipelineScheduleSingle); the others are looped or
#: V-shaped (PipelineScheduleMulti) and get 2 stages per rank unless
#: pipeline_parallel_layers_per_stage says otherwise.
_TT_SINGLE_STAGE = ("1f1b", "gpipe")


def _tt_split(n_layers: int, n_stages: int, w_in: int, w_out: int) -> list[int] | None:
    """Transformer layers per pipeline stage as TorchTitan's ``generate_llm_fqn_per_model_part``
    cuts them (``torchtitan/distributed/pipeline_parallel.py``; ``generate_split_points`` of
    ``distributed/pipeline.py`` before it, same arithmetic): the embedding counts as ``w_in``
    layers on the first stage and norm + output as ``w_out`` on the last
    (``pipeline_parallel_first_stage_less_layers`` / ``..._last_stage_less_layers``, 1 by default
    in ``job_config.py`` at :data:`TORCHTITAN_COMMIT`); ``n_layers + w_in + w_out`` effective layers
    are shared out evenly, the remainder one each to the first stages. None where TorchTitan
    raises (more stages than effective layers, or a weight above the layers per stage)."""
    eff = n_layers + w_in + w_out
    per, extra = divmod(eff, n_stages)
    if n_stages < 2 or per == 0 or max(w_in, w_out) > per:
        return None
    split = [per + (i < extra) for i in range(n_stages)]
    split[0] -= w_in
    split[-1] -= w_out
    return split


def _fmt_split(split: list[int]) -> str:
    """[a, b, b, c] written short: runs of equal counts as ``b×k``."""
    runs: list[list[int]] = []
    for x in split:
        if runs and runs[-1][0] == x:
            runs[-1][1] += 1
        else:
            runs.append([x, 1])
    return "[" + ", ".join(f"{x}×{k}" if k > 1 else f"{x}" for x, k in runs) + "]"


def _tt_schedule(p) -> str:
    """The schedule written for TorchTitan: interleaved with one virtual stage per rank is 1F1B (as
    the planner and Megatron run it); TorchTitan's multi-stage schedules refuse one stage per rank
    ("Multi-stage schedule requires at least 2 stages per rank", found by review h27d, 2026-12)."""
    return "1f1b" if p.schedule == "interleaved" and p.vpp == 1 else p.schedule


def _tt_stage_plan(n_layers: int, p) -> tuple[dict[str, int], list[str]]:
    """How TorchTitan would cut the planner's pipeline stages: the ``[parallelism]`` keys that give
    the planner's split (written) and what the export says about it.

    Found by review, 2026-12: TorchTitan's default first / last-stage weights of 1 give the first
    and last stage one layer fewer than Megatron's and the planner's split, which puts the embedding
    and the output on top of an equal share of layers; with weights 0 its cut
    (:func:`_tt_split`) is the planner's. Interleaved schedules run 2 stages per rank unless
    ``pipeline_parallel_layers_per_stage`` says otherwise. All three keys are fields of
    ``Parallelism`` in ``job_config.py`` at :data:`TORCHTITAN_COMMIT` (defaults 1, 1 and None);
    until review h27a (2026-12) they were only named in a note, so the TOML as written ran
    another split."""
    S = p.pp * p.vpp  # the planner's (virtual) stages, in model order
    planned = stage_layers(n_layers, S)
    zero = {"pipeline_parallel_first_stage_less_layers": 0, "pipeline_parallel_last_stage_less_layers": 0}
    sched = _tt_schedule(p)
    tt_stages = p.pp * (1 if sched in _TT_SINGLE_STAGE else 2)  # without layers_per_stage
    if sched in ("zero_bubble", "dualpipe"):
        # TorchTitan's 2 stages per rank are a schedule of their own (noted with the schedule)
        return {}, [f"pipeline split: {_TT_SCHEDULE[p.schedule]} runs 2 stages per rank, {2 * p.pp} in all, cut by "
                    "TorchTitan's first / last-stage weights (pipeline_parallel_first_stage_less_layers and "
                    f"pipeline_parallel_last_stage_less_layers, 1 each by default), where the planner counts {S} stages "
                    f"of {_fmt_split(planned)} layers; list the stages' modules in module_fqns_per_model_part for "
                    "another cut (not written)."]
    share = "an equal share" + (f", the first {n_layers % S} stages one more" if n_layers % S else "")
    if tt_stages == S:
        default = _tt_split(n_layers, S, 1, 1)
        if default == planned or _tt_split(n_layers, S, 0, 0) != planned:
            return {}, []
        return zero, [f"pipeline split: TorchTitan's default first / last-stage weights (1 each: the embedding and "
                      f"the output counted as a layer) would cut the {n_layers} layers into {S} stages as "
                      + (_fmt_split(default) if default else "an error (too few layers per stage)")
                      + f", not the planner's {_fmt_split(planned)} ({share}): written with "
                      "pipeline_parallel_first_stage_less_layers = 0 and pipeline_parallel_last_stage_less_layers = 0, "
                      "which give the planner's split."]
    # interleaved with vpp != 2: TorchTitan would run 2 stages per rank without layers_per_stage
    if n_layers % S == 0:
        return {"pipeline_parallel_layers_per_stage": n_layers // S, **zero}, [
            f"interleaved with {p.vpp} virtual stages per rank: without pipeline_parallel_layers_per_stage "
            f"TorchTitan runs 2 stages per rank; written with pipeline_parallel_layers_per_stage = {n_layers // S} and "
            f"both stage weights 0: TorchTitan then cuts ceil({n_layers} / {n_layers // S}) = {S} stages, {p.vpp} per "
            "rank, the planner's split."]
    return {}, [f"interleaved with {p.vpp} virtual stages per rank: without pipeline_parallel_layers_per_stage "
                f"TorchTitan runs 2 stages per rank; {n_layers} layers do not divide into {S} equal stages, so no "
                f"pipeline_parallel_layers_per_stage gives the planner's split {_fmt_split(planned)} ({share}): list "
                "the stages' modules in module_fqns_per_model_part (not written)."]


def _toml_str(x: str) -> str:
    """A TOML basic string: backslash and quote escaped, and every control character TOML 1.0
    does not allow raw in one (U+0000–U+001F but tab, U+007F) as a ``\\u`` escape of four hex
    digits."""
    body = x.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + re.sub("[\x00-\x08\x0a-\x1f\x7f]", lambda c: f"\\u{ord(c.group(0)):04X}", body) + '"'


def torchtitan_toml(scenario: Scenario | dict) -> Export:
    """A TorchTitan job TOML (``[job]``, ``[model]``, ``[training]``, ``[parallelism]``,
    ``[activation_checkpoint]``) for a scenario.

    Parameters
    ----------
    scenario : a :class:`Scenario` or its JSON dict (validated; :class:`InputError` when bad).

    Returns
    -------
    Export : ``text`` — the TOML, with ``# note:`` comments; ``notes`` — each choice
        TorchTitan cannot take as given.

    Mapping (keys of ``job_config.py`` at :data:`TORCHTITAN_COMMIT`): data parallelism is FSDP2
    — ``data_parallel_shard_degree`` = dp_shard (dp; 1 for ZeRO-0) and
    ``data_parallel_replicate_degree`` = dp / dp_shard; ZeRO-1/2 are written as FSDP (TorchTitan
    shards the weights too: ZeRO-3 memory). Recompute ``op_sac`` = ``selective`` with
    ``selective_ac_option = "op"``; the Megatron-style ``selective`` has no TorchTitan mode (a
    note). The model must be a TorchTitan model flavor: the catalogue's Llama 3 and DeepSeek-V3
    are named, any other architecture gets a note.
    """
    s = validate_scenario(scenario)
    m, p, t = s.resolved_model(), s.parallelism, s.training
    notes: list[str] = []
    match = _tt_flavor(m)
    if match is not None:
        name, flavor = match
    else:
        llama_like = m.gated_mlp and m.norm == "rmsnorm" and not m.learned_pos_embeddings and m.rope
        name = "deepseek_v3" if m.mla is not None else ("llama3" if m.moe is None and llama_like else "CHOOSE")
        flavor = "custom"
        notes.append(f"'{_name(m.name)}' has none of the architectures of the TorchTitan flavors the planner knows "
                     "(Llama 3 8B/70B/405B, DeepSeek-V3): register it as a flavor of "
                     + ({"llama3": "the llama3 model", "deepseek_v3": "the deepseek_v3 model"}.get(name,
                        "a TorchTitan MoE model" if m.moe is not None else
                        "a TorchTitan model that has its LayerNorm / plain MLP / positions (llama3 has not)")
                        + " and set [model] name / flavor."))
    if m.mtp_layers:
        # torchtitan/models/deepseek_v3/README.md "Supported Features": FSDP, HSDP, activation
        # checkpointing, TP, EP; no multi-token prediction
        notes.append(f"{m.mtp_layers} multi-token-prediction module{'s' if m.mtp_layers != 1 else ''} (model.mtp_layers): "
                     "TorchTitan's models have none (torchtitan/models/deepseek_v3/README.md lists FSDP, HSDP, "
                     "activation checkpointing, TP and EP); not written. The planner's step time and memory "
                     "include them: set model.mtp_layers = 0 to plan the run this file describes.")
    if name == "llama3" and p.tp > m.kv_heads:
        # torchtitan/models/llama3/model/model.py (TORCHTITAN_COMMIT): wk / wv are nn.Linear(dim,
        # n_kv_heads·head_dim), sharded column-wise by the TP plan (ColwiseParallel), and
        # Attention.forward views each rank's keys as (bs, seqlen, -1, head_dim).
        notes.append(f"TP {p.tp} > {m.kv_heads} KV heads: TorchTitan's llama3 shards wk / wv column-wise over TP "
                     "and views each rank's keys as whole heads (models/llama3/model/model.py), so a rank with "
                     "less than one KV head cannot run; the planner models replicated KV heads. Choose a tp "
                     f"that divides {m.kv_heads}.")
    if p.zero_stage == 0:
        shard, rep = 1, p.dp
        if p.cp > 1:
            # Found by review: ParallelDims.fsdp_enabled = dp_shard_enabled or cp_enabled
            # (torchtitan/distributed/parallel_dims.py at 0119de15; the file is not stored at
            # TORCHTITAN_COMMIT, and indexed copies of the version with EP but without
            # expert_tensor_parallel_degree, as this commit's job_config.py has, say the same), and parallelize_llama
            # applies fully_shard on the ("dp_replicate", "dp_shard_cp") mesh when it is set
            # (models/llama3/infra/parallelize.py at 81c12433; ["dp_replicate", "fsdp"] at 018740b7).
            # job_config.py at TORCHTITAN_COMMIT: mixed_precision_param "takes effect via fully_shard
            # when data_parallel_shard_degree > 1 or context_parallel_degree > 1".
            notes.append(f"ZeRO-0 with CP {p.cp}: TorchTitan turns FSDP on whenever context_parallel_degree > 1 "
                         "(ParallelDims.fsdp_enabled = dp_shard_enabled or cp_enabled) and shards the weights, "
                         f"gradients and optimizer states over the dp_shard·cp = {p.cp} ranks of each CP group"
                         + (f" (HSDP, replicated over the {rep} data_parallel_replicate ranks)" if rep > 1 else "")
                         + ": ZeRO-3 over the CP ranks, not the planner's replicated ZeRO-0 (less memory, plus "
                         "all-gathers and reduce-scatters the planner did not count).")
    else:
        shard = p.dp_shard or p.dp
        rep = p.dp // shard
        if p.zero_stage in (1, 2) and shard * p.cp > 1 and p.pp == 1:
            notes.append(f"ZeRO-{p.zero_stage} is written as FSDP2 with fsdp_reshard_after_forward = \"never\": "
                         "the weights stay gathered from each micro-batch's forward to its backward (ZeRO-2's "
                         "memory while it runs) and are resharded after it, so TorchTitan shards the weights "
                         "between micro-batches and gathers them once per micro-batch, where the planner's "
                         f"ZeRO-{p.zero_stage} keeps them whole (its memory is the upper bound).")
    fsdp_on = shard > 1 or p.cp > 1  # ParallelDims.fsdp_enabled = dp_shard_enabled or cp_enabled
    # Review 44f. TorchTitan's apply_fsdp under fsdp_reshard_after_forward = "default" sets
    # reshard_after_forward = not pp_enabled, and torch.distributed.pipelining's schedules
    # (backward_maybe_with_nosync) call set_reshard_after_backward(False) and
    # set_requires_gradient_sync(False) until a stage's last micro-batch: with PP a stage keeps its
    # parameters and its gradients unsharded through the step, one all-gather and one reduce-scatter
    # per step. The note said "ZeRO-3 memory" for ZeRO-1/2 with PP, and nothing for ZeRO-3 with PP.
    reshard = None
    if fsdp_on and p.zero_stage >= 1:
        if p.pp > 1:
            if p.zero_stage == 3:
                reshard = "always"
            notes.append(f"PP {p.pp} with FSDP2: PyTorch's pipeline schedules keep each stage's gradients unsharded "
                         "until its last micro-batch (reshard-after-backward and gradient sync off before it), "
                         "and TorchTitan's default keeps the gathered weights after the forward "
                         "(reshard_after_forward = not pp_enabled)"
                         + ("; fsdp_reshard_after_forward = \"always\" is written so the weights are resharded "
                            "after each forward as ZeRO-3 does, but the unsharded gradients of the stage "
                            "(fp32 under mixed_precision_reduce) stay through the step: more memory than the "
                            "planner's ZeRO-3 counts, and one reduce-scatter per step instead of one per micro-batch"
                            if p.zero_stage == 3 else
                            f": whole weights and gradients through the step, one all-gather and one reduce-scatter "
                            f"per step — the planner's ZeRO-1 memory"
                            + (", more than its ZeRO-2 (sharded gradients)" if p.zero_stage == 2 else "")) + ".")
        elif p.zero_stage in (1, 2):
            reshard = "never"
    if not fsdp_on and p.zero_stage >= 1 and p.dp > 1:
        # Found by review (2026-12, h27a): a sharding group of one rank (dp_shard = 1) shards nothing.
        notes.append(f"ZeRO-{p.zero_stage} with dp_shard = 1: data_parallel_shard_degree = 1 shards nothing, so "
                     f"TorchTitan runs plain replication (DDP over {rep} ranks), not FSDP2: ZeRO-0 memory, not "
                     "the planner's; evaluate zero_stage = 0 to see that plan, or a dp_shard above 1.")
    if not fsdp_on and rep > 1 and (p.tp > 1 or p.pp > 1):
        # parallelize_llama: without FSDP, "elif parallel_dims.dp_replicate_enabled: if
        # world_mesh.ndim > 1: raise RuntimeError("DDP has not supported > 1D parallelism")"
        # (81c12433; world_size != dp_replicate mesh size at 018740b7). Found by review (2026-12, h27a):
        # keyed on zero_stage == 0 until then, so ZeRO ≥ 1 with dp_shard = 1 went without it.
        notes.append(f"data parallelism is written as pure replication (DDP over {rep} ranks, "
                     "data_parallel_shard_degree 1): TorchTitan applies DDP only when data parallelism is the sole "
                     "parallelism and raises \"DDP has not supported > 1D parallelism\" with TP / PP "
                     "(parallelize_llama): it refuses this split; use ZeRO ≥ 1 with dp_shard ≥ 2.")
    if not fsdp_on and (p.tp > 1 or p.pp > 1) and t.precision not in ("fp32", "tf32"):  # tf32: float32 written (review 47h)
        # Found by review (2026-12, h27a). maybe_enable_amp (torchtitan/distributed/utils.py): without
        # FSDP, "if parallel_dims.tp_enabled or parallel_dims.pp_enabled: logger.warning('Mixed precision
        # training with TP or PP is only supported when FSDP/HSDP/CP is enabled.') ... 'Mixed precision
        # training is disabled'"; job_config.py at TORCHTITAN_COMMIT: mixed_precision_param "takes effect
        # via fully_shard when data_parallel_shard_degree > 1 or context_parallel_degree > 1".
        notes.append(f"no FSDP dimension (data_parallel_shard_degree 1, context_parallel_degree 1) with "
                     f"{'TP' if p.tp > 1 else 'PP'}: TorchTitan applies mixed_precision_param only through FSDP "
                     "(or through autocast when no other parallelism is on) and otherwise logs \"Mixed precision "
                     "training is disabled\" (maybe_enable_amp): this job would train in float32, twice the "
                     "weight and activation bytes and the fp32 GEMM rate, not the planner's "
                     f"{t.precision}; use ZeRO ≥ 1 with dp ≥ 2 (FSDP) or cp ≥ 2.")
    if m.moe is not None and p.etp is not None and p.etp != p.tp:
        # job_config.py at TORCHTITAN_COMMIT: [parallelism] has expert_parallel_degree and no expert
        # tensor-parallel degree (the field list of class Parallelism)
        notes.append(f"expert TP {p.etp} ≠ TP {p.tp} (parallelism.etp): TorchTitan's job_config.py at this commit has "
                     "expert_parallel_degree but no expert tensor-parallel degree, so its experts follow its own "
                     "TP / EP plan; not written. The planner's step time and memory are for expert TP "
                     f"{p.etp}: evaluate etp = tp to compare.")
    if p.ep > 1 and (p.ep % p.cp or (shard * p.cp) % p.ep):
        # Found by review. ParallelDims._validate: "if ep > 1: # EP would borrow all cp and some dp_shard
        # degree / assert ep % cp == 0 and (dp_shard * cp) % ep == 0" (torchtitan/distributed/
        # parallel_dims.py: indexed copies of the version without expert_tensor_parallel_degree, as this
        # commit's job_config.py has; the same under etp == tp at 0119de15); job_config.py at
        # TORCHTITAN_COMMIT: "context_parallel_degree <= expert_parallel_degree <=
        # data_parallel_shard_degree * context_parallel_degree".
        notes.append(f"EP {p.ep} with CP {p.cp} and data_parallel_shard_degree {shard}: TorchTitan's expert "
                     "parallelism borrows all of CP and part of the shard degree and asserts ep % cp == 0 and "
                     f"(dp_shard·cp) % ep == 0 (ParallelDims._validate), here {p.ep} % {p.cp} = {p.ep % p.cp} and "
                     f"{shard * p.cp} % {p.ep} = {(shard * p.cp) % p.ep}: it refuses this split; choose an ep that "
                     f"is a multiple of cp and divides dp_shard·cp.")
    divisor = p.tp * 2 * p.cp
    if t.seq_len % divisor:
        # Found by review. parallelize_llama (and the other models' parallelize functions) asserts
        # "job_config.training.seq_len % parallel_dims.seq_len_divisor == 0" with
        # ParallelDims.seq_len_divisor = self.tp * (self.cp * 2): TP's sequence sharding and PyTorch's
        # load-balanced CP (2·cp chunks). The ×2 is there without CP too (cp = 1 gives 2). Neither file is
        # stored at TORCHTITAN_COMMIT; every indexed parallel_dims.py that defines the divisor has the ×2
        # (pytorch/torchtitan at 0119de15, and copies of the version without expert_tensor_parallel_degree,
        # this commit's era; the older 73bb964d has no divisor), and the assertion is in parallelize.py at
        # 018740b7 (not in the older 81c12433). PyTorch's load-balanced context_parallel needs the 2·cp
        # chunks whatever TorchTitan checks.
        notes.append(f"seq_len {t.seq_len} is not a multiple of tp·2·cp = {p.tp}·2·{p.cp} = {divisor}: TorchTitan "
                     "asserts seq_len % parallel_dims.seq_len_divisor == 0 (seq_len_divisor = tp·(cp·2): "
                     "sequence-parallel sharding and load-balanced context parallelism; 2 even without CP) and "
                     "refuses it; pad the sequences or choose another split.")
    if p.tp > 1 and not p.sequence_parallel:
        # Found by review. apply_tp (models/llama3/infra/parallelize.py at 81c12433 and 018740b7) puts
        # SequenceParallel() on "norm", "attention_norm" and "ffn_norm" unconditionally; job_config.py at
        # TORCHTITAN_COMMIT has no key to turn it off (only disable_loss_parallel).
        notes.append(f"sequence parallelism off with TP {p.tp}: TorchTitan's apply_tp always shards the norms over "
                     "the sequence (SequenceParallel on attention_norm, ffn_norm and norm) and has no setting to "
                     "turn it off, so it runs TP with sequence parallelism (norm activations divided by tp, "
                     "all-gather / reduce-scatter in place of the all-reduce): evaluate "
                     "parallelism.sequence_parallel = true to see that plan.")
    if p.flash_attention and p.attention_kernel == "native" and _attn_family(s) in ("hopper", "blackwell"):
        # review 47f: the kernel the step time assumed was dropped without a word (schema's attention_kernel)
        notes.append("attention kernel 'native' (FlashAttention-3 / cuDNN speed): TorchTitan's models/attention.py "
                     "(at 0012170a) asks F.scaled_dot_product_attention for cuDNN attention first, that speed; a "
                     "stack whose SDPA call sets no priority runs PyTorch's FlashAttention-2 backend on Hopper and "
                     "Blackwell (cuDNN opt-in since PyTorch 2.5.1, pytorch#138522, the default from 2.11): for such "
                     "a stack evaluate parallelism.attention_kernel = 'flash2' (about 0.6 of the native core's speed).")
    if not p.flash_attention:
        # Found by review. models/llama3/model/model.py at TORCHTITAN_COMMIT: self.sdpa =
        # build_attention(use_flex_attn, attn_mask_type), F.scaled_dot_product_attention or FlexAttention;
        # models/attention.py (at 0012170a) runs SDPA under sdpa_kernel([CUDNN_ATTENTION,
        # FLASH_ATTENTION, EFFICIENT_ATTENTION, MATH], set_priority=True): fused kernels first.
        notes.append("flash_attention off (the planner's materialised s×s scores): TorchTitan's attention is "
                     "F.scaled_dot_product_attention (or FlexAttention), which runs fused kernels (cuDNN, flash "
                     "or memory-efficient before the math fallback) that do not keep the scores: it runs fused "
                     "attention, whose memory and time the planner's materialised-score figures do not describe; "
                     "evaluate parallelism.flash_attention = true to see that plan.")
    if p.recompute == "op_sac":
        mode, opt = "selective", "op"
    elif p.recompute == "full":
        mode, opt = "full", None
        if p.recompute_layers:
            notes.append(f"full recompute of {p.recompute_layers} layers per chunk has no TorchTitan equivalent "
                         "(its selective_ac_option = N checkpoints every N-th layer): written as full.")
    elif p.recompute == "none":
        mode, opt = "none", None
    else:
        mode, opt = "selective", "op"
        notes.append("Megatron-style selective recompute (the attention core) has no TorchTitan mode: written "
                     "as per-op selective checkpointing (the planner's op_sac: other memory and time; evaluate "
                     "that mode to see them).")
    fp8_gather = t.precision == "fp8" and t.fp8_scaling == "tensorwise" and p.zero_stage == 3
    notes.extend(_fp8_attention_note(s, "TorchTitan's float8 converter swaps nn.Linear modules only and the "
                                        "attention core (SDPA / flex attention) stays 16-bit"))
    if t.precision == "fp8":
        # Found by review. Float8Converter.__init__ (torchtitan/components/quantization/float8.py, the
        # version of TORCHTITAN_COMMIT's era, with [float8] moe_fqns_prototype): "if
        # float8_config.recipe_name is not None: assert not float8_config.enable_fsdp_float8_all_gather,
        # 'using `float8_config.enable_fsdp_float8_all_gather` together with `float8_config.recipe_name`
        # is not supported'" (and precompute_scale = False); with recipe_name left out (None) it builds
        # Float8LinearConfig(enable_fsdp_float8_all_gather=...), dynamic tensor-wise scaling.
        notes.append("FP8: [model] converters = [\"float8\"] and "
                     + ("torchao's float8 weight all-gather with FSDP (enable_fsdp_float8_all_gather, "
                        "precompute_float8_dynamic_scale_for_fsdp) are written, without recipe_name: TorchTitan's "
                        "Float8Converter asserts that recipe_name is not combined with the all-gather, and its "
                        "default (no recipe) is dynamic tensor-wise scaling (training.fp8_scaling 'tensorwise'), "
                        "the setup whose throughput the planner's tensorwise figure was checked against; the "
                        "planner still counts those all-gathers in bf16 (2 B per parameter), an upper bound on "
                        "their time." if fp8_gather else
                        f"[float8] recipe_name = \"{t.fp8_scaling}\" (training.fp8_scaling) are written.")
                     + (" Row-wise scaling gathers weights in bf16." if t.fp8_scaling == "rowwise" else ""))
        if m.moe is not None:
            # Float8Converter.convert: convert_to_float8_training swaps nn.Linear modules only; the
            # experts (GroupedExperts, nn.Parameter weights run by grouped GEMMs) are converted only for
            # the FQNs of [float8] moe_fqns_prototype ("a prototype feature that requires the torchao
            # nightly build", float8 row-wise, asserting pipeline_parallel_degree == 1 and
            # context_parallel_degree == 1).
            notes.append("FP8 with MoE: TorchTitan's float8 converter swaps nn.Linear modules only, so the routed "
                         "experts' grouped GEMMs stay bf16 (the planner runs them in fp8); [float8] "
                         "moe_fqns_prototype = [\"experts\"] converts them (torchao nightly prototype, row-wise, "
                         "PP = 1 and CP = 1 only): not written.")
    elif t.precision == "tf32":
        # review 47f: bfloat16 was written, half the bytes and the bf16 GEMM rate of another plan
        notes.append("precision 'tf32': float32 parameters written (4-byte weights and activations, as planned); "
                     "TF32 matmuls are PyTorch's torch.backends.cuda.matmul.allow_tf32 / "
                     "torch.set_float32_matmul_precision(\"high\") in the training script, not a job-config key.")
    elif t.precision not in ("bf16", "fp32"):
        notes.append(f"precision '{t.precision}': TorchTitan's parameters are bfloat16 or float32 "
                     "(FP8 through float8 converters): bfloat16 written.")
    if t.grad_dtype in ("bf16", "fp16"):
        notes.append(f"{t.grad_dtype} gradient reduction: TorchTitan (at this commit) reduces in float32 only "
                     "(mixed_precision_reduce); float32 written.")
    if p.offload_optimizer != "none" or p.offload_activations:
        notes.append("offload: TorchTitan's training.enable_cpu_offload offloads FSDP parameters, gradients and "
                     "optimizer states together; set it yourself if that is what you plan.")
    if p.tp_comm_overlap:
        notes.append("TP overlap: TorchTitan's parallelism.enable_async_tensor_parallel (needs compile); "
                     "set it yourself.")
    if not p.dp_comm_overlap:
        notes.append("DP overlap off: TorchTitan's FSDP2 always prefetches its all-gathers and overlaps the "
                     "reduce-scatter; the planner's step time assumed them in series with compute.")
    stage_keys: dict[str, int] = {}
    if p.pp > 1:
        stage_keys, stage_notes = _tt_stage_plan(m.n_layers, p)
        notes.extend(stage_notes)
    if p.ep_node_dispatch:
        notes.append("node-aware expert dispatch (ep_node_dispatch, DeepEP): TorchTitan at this commit has no "
                     "setting for it (later versions take a DeepEP expert-parallel backend); not written, and the "
                     "planner's step time assumed it.")
    if p.ep_comm_overlap or p.ep_dispatch_fp8:
        # Found by review (2026-12): job_config.py at TORCHTITAN_COMMIT has no key for either; newer
        # TorchTitan overlaps the expert all-to-all only inside DualPipeV
        # (parallelism.pipeline_parallel_expert_parallel_overlap, distributed/pipeline_parallel.py).
        notes.append("expert all-to-all overlap (ep_comm_overlap) / FP8 dispatch (ep_dispatch_fp8): TorchTitan at "
                     "this commit has no setting for either (later versions overlap the all-to-all only inside "
                     "DualPipeV: parallelism.pipeline_parallel_expert_parallel_overlap); not written, and the "
                     "planner's step time assumed them.")
    if p.schedule == "dualpipe":
        notes.append("DualPipe: written as DualPipeV (PyTorch's V-shaped DualPipe variant, recent PyTorch only; "
                     "one copy of the parameters instead of two).")
    if p.pp > 1 and p.schedule == "interleaved" and p.vpp == 1:
        notes.append("interleaved with 1 virtual stage per rank is 1F1B, as the planner counts it: written as 1F1B "
                     "(TorchTitan's Interleaved1F1B needs 2 or more stages per rank).")
    if p.schedule == "zero_bubble":
        notes.append("zero-bubble: written as InterleavedZeroBubble (needs 2+ stages per rank); "
                     "ZBVZeroBubble is the V-shaped variant.")

    compiled = t.elementwise == "fused" or t.cross_entropy == "fused"
    if t.elementwise != t.cross_entropy:
        notes.append(f"compile = true compiles TorchTitan's blocks and its loss together: the planner's elementwise "
                     f"'{t.elementwise}' with cross-entropy '{t.cross_entropy}' has no single TorchTitan setting.")
    elif compiled:
        notes.append("compile = true: the planner's fused elementwise kernels and fused cross-entropy are "
                     "TorchTitan's compiled blocks and loss.")
    # Batch: without PP, local_batch_size is the micro-batch and gradient accumulation makes up
    # global_batch_size; with PP, local_batch_size is the DP rank's share of the step, cut into
    # pipeline micro-batches.
    local = t.micro_batch_size if p.pp == 1 else t.global_batch_size // p.dp
    ckpt_lines = torchtitan_checkpoint(s, notes, _steps(s))
    L = [f"# TorchTitan job for '{_name(s.name or m.name)}', written by clusterplan",
         f"# (keys of torchtitan/config/job_config.py at {TORCHTITAN_COMMIT[:8]}); "
         f"{s.cluster.n_gpus} ranks."]
    notes.extend(_hardware_notes(s))
    L += [_comment("# note: ", n) for n in notes]
    L += ["", "[job]", f"description = {_toml_str(_name(s.name or m.name))}",
          "", "[model]", f"name = {_toml_str(name)}", f"flavor = {_toml_str(flavor)}"]
    if t.precision == "fp8":
        L += ['converters = ["float8"]', "", "[float8]"]
        if fp8_gather:  # recipe_name left out: TorchTitan refuses it with the float8 all-gather
            L += ["enable_fsdp_float8_all_gather = true", "precompute_float8_dynamic_scale_for_fsdp = true"]
        else:
            L += [f"recipe_name = {_toml_str(t.fp8_scaling)}"]
    L += ["", "[training]", f"local_batch_size = {local}",
          f"global_batch_size = {t.global_batch_size}", f"seq_len = {t.seq_len}", f"steps = {_steps(s)}",
          f"mixed_precision_param = {_toml_str('float32' if t.precision in ('fp32', 'tf32') else 'bfloat16')}",
          'mixed_precision_reduce = "float32"',
          f"compile = {'true' if compiled else 'false'}",
          "", "[parallelism]", f"data_parallel_replicate_degree = {rep}", f"data_parallel_shard_degree = {shard}",
          f"tensor_parallel_degree = {p.tp}", f"pipeline_parallel_degree = {p.pp}",
          f"context_parallel_degree = {p.cp}", f"expert_parallel_degree = {p.ep}"]
    if reshard is not None:
        L.append(f"fsdp_reshard_after_forward = {_toml_str(reshard)}")
    if p.pp > 1:
        L += [f"pipeline_parallel_schedule = {_toml_str(_TT_SCHEDULE[_tt_schedule(p)])}",
              f"pipeline_parallel_microbatch_size = {t.micro_batch_size}"]
        L += [f"{k} = {v}" for k, v in stage_keys.items()]
    L += ["", "[activation_checkpoint]", f"mode = {_toml_str(mode)}"]
    if opt is not None:
        L.append(f"selective_ac_option = {_toml_str(opt)}")
    L += ckpt_lines
    return Export("\n".join(L) + "\n", notes)


def deepspeed_config(scenario: Scenario | dict) -> Export:
    """A DeepSpeed config JSON for a scenario (batch, precision, ZeRO, offload, MiCS).

    Parameters
    ----------
    scenario : a :class:`Scenario` or its JSON dict (validated; :class:`InputError` when bad).

    Returns
    -------
    Export : ``text`` — the JSON (DeepSpeed's config has no comments); ``notes`` — what the
        config cannot carry: TP, PP, CP, EP and recompute are set by the model code
        (Megatron-DeepSpeed flags, ``PipelineModule``, DeepSpeed-Ulysses, ``deepspeed.moe``,
        ``deepspeed.checkpointing``), not by this file.

    Keys (DeepSpeed ``runtime/config.py`` ``_initialize_params`` and ``runtime/zero/config.py`` /
    ``offload_config.py``, recorded in ``tests/data/framework_flags.json``):
    ``train_batch_size`` = global batch, ``train_micro_batch_size_per_gpu`` = micro-batch,
    ``gradient_accumulation_steps`` = micro-batches per DP rank and step (DeepSpeed checks
    train_batch_size = micro × accumulation × DP size); ``bf16`` / ``fp16``; ``zero_optimization``
    with ``stage``, ``overlap_comm``, ``contiguous_gradients``, ``offload_optimizer`` (``cpu`` /
    ``nvme``), ``mics_shard_size`` for ZeRO-3 hybrid sharding; ``communication_data_type``.
    """
    import json

    s = validate_scenario(scenario)
    m, p, t = s.resolved_model(), s.parallelism, s.training
    notes: list[str] = []
    accum = t.global_batch_size // (t.micro_batch_size * p.dp)
    cfg: dict = {"train_batch_size": t.global_batch_size, "train_micro_batch_size_per_gpu": t.micro_batch_size,
                 "gradient_accumulation_steps": accum}
    if t.precision in ("bf16", "fp8", "fp4"):
        cfg["bf16"] = {"enabled": True}
    elif t.precision == "fp16":
        cfg["fp16"] = {"enabled": True}
    fp8_attn_used = _fp8_attention_used(s)
    if t.precision in ("fp8", "fp4"):
        notes.append(f"{t.precision} GEMMs"
                     + (" and the FP8 attention core (training.fp8_attention: Transformer Engine's "
                        "fp8_dot_product_attention)" if fp8_attn_used else "")
                     + " come from Transformer Engine in the model code, not from this file "
                     "(bf16 is enabled here)"
                     + ("; Transformer Engine has no row-wise recipe (the planner's fp8_scaling 'rowwise' is "
                        "torchao's): its tensor-wise or block scaling is what would run."
                        if t.precision == "fp8" and t.fp8_scaling == "rowwise" else "."))
    if not fp8_attn_used:
        notes.extend(_fp8_attention_note(s, "Transformer Engine's fp8_dot_product_attention in the model code"))
    zero: dict = {"stage": p.zero_stage, "overlap_comm": p.dp_comm_overlap, "contiguous_gradients": True}
    if not p.dp_comm_overlap and p.zero_stage == 3:
        notes.append("overlap_comm false: DeepSpeed then reduces gradients after the backward, but ZeRO-3 still "
                     "prefetches its parameter gathers (stage3_prefetch_bucket_size); the planner's step time "
                     "counted the gathers in series as well, an upper bound here.")
    if m.moe is not None and p.zero_stage == 3:
        # deepspeed/runtime/engine.py _configure_zero_optimizer: assert not self.has_moe_layers,
        # "MoE not supported with Stage 3"
        notes.append("ZeRO-3 with an MoE model: DeepSpeed asserts \"MoE not supported with Stage 3\" "
                     "(runtime/engine.py) for deepspeed.moe layers: use ZeRO-1 / 2.")
    if p.pp > 1 and p.zero_stage >= 2:
        notes.append(f"ZeRO-{p.zero_stage} with PP {p.pp}: DeepSpeed's pipeline engine refuses ZeRO-2/3 with "
                     "pipeline parallelism (use ZeRO-1, or Megatron-DeepSpeed's own pipeline).")
    if p.pp > 1 and p.dp_comm_overlap and p.zero_stage <= 1:
        # Found by review. deepspeed/runtime/pipe/engine.py PipelineEngine.__init__: "# We schedule the
        # all-reduces, so disable it in super().backward() / self.enable_backward_allreduce = False"; the
        # TrainSchedule reduces the gradients once, after the last micro-batch (ReduceGrads), and
        # _configure_zero_optimizer (runtime/engine.py) turns overlap_comm off for a PipelineModule:
        # "Pipeline parallelism does not support overlapped communication, will be disabled."
        notes.append(f"overlap_comm with PP {p.pp}: DeepSpeed's PipelineEngine reduces the data-parallel gradients "
                     "after the last micro-batch (its ReduceGrads step; enable_backward_allreduce = False) and turns "
                     "overlap_comm off (\"Pipeline parallelism does not support overlapped communication, will be "
                     "disabled.\", runtime/engine.py): the gradient reduction runs after the backward, which the "
                     "planner's step time overlapped; evaluate parallelism.dp_comm_overlap = false to see that plan.")
    if p.offload_optimizer != "none" and p.zero_stage == 0:
        notes.append("optimizer offload needs ZeRO ≥ 1 in DeepSpeed: not written for ZeRO-0.")
    elif p.offload_optimizer == "nvme" and p.zero_stage < 3:
        # review 47f: DeepSpeed does not refuse it: DeepSpeedZeroOptimizer.__init__ (runtime/zero/
        # stage_1_and_2.py) sets cpu_offload for any device but none, and builds DeepSpeedCPUAdam
        notes.append(f"NVMe optimizer offload is ZeRO-Infinity in DeepSpeed (stage 3); ZeRO-{p.zero_stage} takes any "
                     "offload device as CPU offload (runtime/zero/stage_1_and_2.py: cpu_offload for every device but "
                     "none), keeping the optimizer states in host memory: \"device\": \"cpu\" written, what runs; "
                     "the planner's step time read them from NVMe (evaluate offload_optimizer = 'cpu', or ZeRO-3).")
    if p.offload_optimizer != "none" and p.zero_stage >= 1:
        dev = "cpu" if p.offload_optimizer == "nvme" and p.zero_stage < 3 else p.offload_optimizer
        off: dict = {"device": dev, "pin_memory": True}
        if dev == "nvme":
            off["nvme_path"] = "/local_nvme"
            notes.append("offload_optimizer.nvme_path is a placeholder: set your local NVMe mount.")
        zero["offload_optimizer"] = off
        if not (p.offload_master_weights and p.offload_grads):
            notes.append("DeepSpeed's optimizer offload moves the fp32 master weights and gradients with the "
                         "optimizer states; the planner's scenario also keeps a GPU copy of some of them "
                         "(offload_master_weights / offload_grads off), which DeepSpeed frees.")
    if p.dp_shard is not None and p.dp_shard < p.dp:
        if p.zero_stage == 3:
            zero["mics_shard_size"] = p.dp_shard * p.cp
        else:
            notes.append(f"hybrid sharding (dp_shard = {p.dp_shard}) with ZeRO-{p.zero_stage}: DeepSpeed shards "
                         "ZeRO-1/2 over all DP ranks; not written.")
    cfg["zero_optimization"] = zero
    cfg["communication_data_type"] = t.grad_dtype  # fp32, bf16 or fp16 (DeepSpeed's names)
    # DeepSpeedEngine.get_data_types (deepspeed/runtime/engine.py): "if self._config.grad_accum_dtype is
    # None: grad_accum_dtype = model_dtype", so a bf16 model accumulates bf16 gradients unless
    # "data_types": {"grad_accum_dtype"} (runtime/constants.py DATA_TYPES / GRAD_ACCUM_DTYPE) says
    # otherwise; with ZeRO the optimizer takes it as gradient_accumulation_dtype
    # (_configure_zero_optimizer; stage_1_and_2.py use_separate_grad_accum). Without ZeRO,
    # _do_optimizer_sanity_check returns the BFLOAT16 wrapper for a bf16 model with fp32 accumulation,
    # refuses bf16 with bf16 accumulation ("Bfloat16 wrapper must use a gradient accumulation type of
    # fp32, enable ZeRO ...") except under pipeline parallelism (a warning), and refuses fp16 with fp32
    # ("unsupported mix of model dtype and gradient accumulation type"). Review 44f: review h27a had
    # read the bf16 case the other way round and left the key out at ZeRO-0, so DeepSpeed refused the
    # written config.
    acc = "fp32" if t.grad_dtype == "fp32" else "bf16"
    if t.precision in ("bf16", "fp8", "fp4"):
        cfg["data_types"] = {"grad_accum_dtype": acc}
        if p.zero_stage == 0:
            # review 47f: DeepSpeed PR #7515 ("Enable non-ZeRO mode", 2025-08) swapped the two ZeRO-0 cases
            # of _do_optimizer_sanity_check: before it bf16 + fp32 ran (BF16_Optimizer) and bf16 + bf16
            # raised; after it bf16 + bf16 runs as DDP_BFLOAT16 and bf16 + fp32 raises "unsupported mix of
            # {model_dtype=} and {grad_accum_dtype=}" (both read in deepspeed/runtime/engine.py versions)
            other = "bf16" if acc == "fp32" else "fp32"
            notes.append(f"{acc} gradient accumulation (training.grad_dtype) with bf16 weights at ZeRO-0: DeepSpeed "
                         "releases differ (runtime/engine.py _do_optimizer_sanity_check). Before PR #7515 ('Enable "
                         "non-ZeRO mode', 2025-08) fp32 accumulation runs (its BF16_Optimizer wrapper) and bf16 is "
                         "refused except under pipeline parallelism ('Bfloat16 wrapper must use a gradient accumulation "
                         "type of fp32, enable ZeRO'), and that wrapper shards the fp32 master weights and Adam "
                         "states over DP, ZeRO-1 memory rather than the planner's ZeRO-0; from it, fp32 accumulation "
                         "raises ('unsupported mix of model_dtype and grad_accum_dtype') and bf16 runs as plain DDP "
                         "mixed precision (the BF16_Optimizer wrapper under PP). Written: "
                         f"{acc}, the planner's; for the other release set training.grad_dtype = '{other}'.")
        elif (p.zero_stage == 1 and acc == "fp32" and p.offload_optimizer == "none" and p.dp_comm_overlap
              and p.pp == 1):
            # _do_optimizer_sanity_check (both versions read): "if model_dtype == torch.bfloat16 and
            # grad_accum_dtype == torch.float32 and self.zero_optimization_stage() == 1 and not
            # self.zero_cpu_offload(): return BFLOAT16" (review 47f)
            notes.append("bf16 weights with fp32 gradient accumulation at ZeRO-1 without offload: DeepSpeed runs its "
                         "BF16_Optimizer wrapper, not the ZeRO optimizer (runtime/engine.py _do_optimizer_sanity_check), "
                         "and that wrapper takes no overlap_comm: the gradients are all-reduced after the backward, at "
                         "the accumulation boundary, where the planner's step time overlapped them; evaluate "
                         "parallelism.dp_comm_overlap = false to see that plan, or set training.grad_dtype = 'bf16' for "
                         "the ZeRO optimizer.")
    elif t.precision == "fp16" and t.grad_dtype == "fp32":
        if p.zero_stage >= 1:
            cfg["data_types"] = {"grad_accum_dtype": "fp32"}
        else:
            notes.append("fp16 with fp32 gradient accumulation (training.grad_dtype) without ZeRO: DeepSpeed refuses "
                         "the mix (engine.py _do_optimizer_sanity_check, 'unsupported mix of model dtype and "
                         "gradient accumulation type') and accumulates in fp16 (2 bytes) by default; not written. "
                         "The planner counts 4-byte gradients; with ZeRO >= 1 the key is written.")
    split = []
    if p.tp > 1:
        # Found by review (2026-12): sequence parallelism and TP overlap were dropped without a word.
        split.append(f"TP {p.tp} (Megatron-DeepSpeed --tensor-model-parallel-size, "
                     + ("with --sequence-parallel" if p.sequence_parallel else "without sequence parallelism")
                     + (" and TP communication overlap" if p.tp_comm_overlap else "") + ")")
    if p.pp > 1:
        S = p.pp  # DeepSpeed's PipelineEngine: one stage per rank
        # Found by review (2026-12). deepspeed/runtime/pipe/module.py: PipelineModule(...,
        # partition_method='parameters') balances parameter counts over the stages (the embedding's
        # parameters count), 'type:<regex>' balances the layers whose class name matches, 'uniform'
        # the number of layer specs (embedding and head included).
        split.append(f"PP {p.pp} (PipelineModule(num_stages={p.pp}, partition_method='type:<your transformer layer "
                     f"class>') balances the transformer layers, the planner's "
                     f"{_fmt_split(stage_layers(m.n_layers, S))} per stage; the default "
                     "'parameters' balances parameter counts, the embedding's included; DeepSpeed's 1F1B "
                     "TrainSchedule)")
        if p.schedule != "1f1b":
            # Found by review: PipelineEngine.train_batch builds "sched = schedule.TrainSchedule(
            # micro_batches=..., stages=self.num_stages, stage_id=self.stage_id)" whatever the config
            # (deepspeed/runtime/pipe/engine.py, deepspeedai/DeepSpeed at 03f6f75c): 1F1B, one stage per rank.
            notes.append(f"schedule '{p.schedule}'"
                         + (f" ({p.vpp} virtual stages per rank)" if p.vpp > 1 else "")
                         + ": DeepSpeed's PipelineEngine.train_batch always runs schedule.TrainSchedule, 1F1B with "
                         "one stage per rank (runtime/pipe/engine.py); the planner's step time and memory are for "
                         f"'{p.schedule}': evaluate schedule = '1f1b' (with vpp = 1) to see what DeepSpeed runs.")
    if p.cp > 1:
        # Found by review (2026-12). DeepSpeedConfig.__init__ (deepspeed/runtime/config.py at 3a890ec5): the
        # batch check uses mpu.get_data_parallel_world_size() with an mpu, else dist.get_world_size() /
        # config["sequence_parallel_size"] when that key is there, else the whole world size.
        split.append(f"CP {p.cp} (DeepSpeed-Ulysses sequence parallelism; without an mpu DeepSpeedConfig checks "
                     "train_batch_size against the world size divided by \"sequence_parallel_size\" (the whole "
                     f"world size when it is missing): add \"sequence_parallel_size\": {p.cp} then, not written)")
    if p.ep > 1:
        split.append(f"EP {p.ep} (deepspeed.moe ep_size)")
    if m.moe is not None and p.etp is not None and p.etp != p.tp:
        # deepspeed.moe.layer.MoE(..., enable_expert_tensor_parallelism=False): the experts either split
        # over the model's whole TP group (True) or not at all (False, the default): expert TP 1 or tp
        split.append(f"expert TP {p.etp} (deepspeed.moe.layer.MoE enable_expert_tensor_parallelism="
                     + ("False, the default: experts not split over TP)" if p.etp == 1 else
                        f"True splits them over all {p.tp} TP ranks, False over none: expert TP {p.etp} has no "
                        "setting)"))
    if m.mtp_layers:
        # DeepSpeed's config has no model architecture: the MTP modules are model code (review 16 new-user:
        # the export was the same with and without them, without a word)
        split.append(f"{m.mtp_layers} multi-token-prediction module{'s' if m.mtp_layers != 1 else ''} "
                     "(model.mtp_layers; the planner's step time and memory include them)")
    if split:
        notes.append("set in the model code, not in this file: " + "; ".join(split) + ".")
    # review 47f: the attention and loss choices were dropped without a word (model code in DeepSpeed)
    notes.append("attention and loss: set in the model code, not in this file: "
                 + (f"flash / fused attention (kernel '{p.attention_kernel}': "
                    + ("FlashAttention-2-class" if p.attention_kernel == "flash2" else "FlashAttention-3 / cuDNN on "
                       "Hopper and Blackwell, FlashAttention-2 on Ampere") + ")"
                    if p.flash_attention else "materialised s×s attention scores (no flash attention)")
                 + "; " + ("a fused / vocab-parallel cross-entropy keeping fp32 logits (4 B per logit)"
                           if t.cross_entropy == "fused" else "PyTorch's eager F.cross_entropy (12-16 B per logit)")
                 + ", as the planner's step time and memory assume.")
    if t.elementwise == "fused":
        notes.append("elementwise 'fused': the planner's step time assumes fused norms, RoPE and activations "
                     "(Transformer Engine, Apex or torch.compile in the model code); plain PyTorch modules run them "
                     "eagerly (set training.elementwise = 'eager').")
    if p.recompute != "none":
        notes.append(f"recompute '{p.recompute}': set in the model code (deepspeed.checkpointing or "
                     "Megatron-DeepSpeed --checkpoint-activations), not in this file.")
    if p.offload_activations:
        # Found by review (2026-12): dropped without a word before. deepspeed/runtime/activation_checkpointing/
        # config.py: ACT_CHKPT = 'activation_checkpointing', ACT_CHKPT_CPU_CHECKPOINTING = 'cpu_checkpointing'
        # (the checkpointed layer inputs of deepspeed.checkpointing, moved to the CPU).
        notes.append("activation offload: DeepSpeed moves only the checkpointed layer inputs of deepspeed.checkpointing "
                     "to the CPU (\"activation_checkpointing\": {\"cpu_checkpointing\": true}, with recompute in the "
                     "model code); not written, and not the planner's swap of every stashed activation.")
    if p.ep > 1 and (p.ep_comm_overlap or p.ep_dispatch_fp8 or p.ep_node_dispatch):
        notes.append("expert all-to-all overlap (ep_comm_overlap) / FP8 dispatch (ep_dispatch_fp8) / node-aware "
                     "dispatch (ep_node_dispatch): deepspeed.moe has no setting for any of them in this file; not "
                     "written, and the planner's step time assumed them.")
    notes.extend(deepspeed_checkpoint_notes(s, _steps(s)))
    notes.extend(_hardware_notes(s))
    return Export(json.dumps(cfg, indent=2) + "\n", notes)
