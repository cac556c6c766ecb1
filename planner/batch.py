"""Columnar batch: validated Scenarios -> one numpy array per field, one element per configuration.

This is the contract between the inputs and the engine stages. Every stage function reads
columns from a ``Batch`` (a ``dict[str, np.ndarray]``) and returns new columns; the pipeline
(:mod:`planner.engine`) merges them. A single scenario is a batch of one; a sweep builds the
same columns directly (:mod:`planner.sweep`) without going through pydantic per row.

Column reference (all arrays of shape (N,); SI units; codes are small ints):

Model
    n_layers, hidden_size, n_heads, n_kv_heads, head_dim, ffn_hidden_size, vocab_size
    gated_mlp, tied_embeddings, linear_bias, layernorm (bool; False = RMSNorm)
    learned_pos_embeddings (rows of the learned position table, 0 = none), rope (bool: RoPE on
    queries and keys, false with a learned table)
    dropout (probability; 0 = no dropout masks kept)
    n_experts (0 = dense), moe_top_k, expert_ffn_hidden_size, n_shared_experts,
    shared_expert_ffn_hidden_size, first_dense_layers, moe_capacity_factor,
    moe_max_nodes_per_token (0 = no node limit)
    mla (bool), q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim
    mtp_layers (multi-token-prediction depth D; 0 = none; optional: absent = 0)
Training
    seq_len, global_batch_size, micro_batch_size, precision (code, PRECISIONS),
    grad_bytes (4 = fp32 accumulation, 2 = bf16), ce_eager (eager cross-entropy), elem_eager
    (eager elementwise kernels), fp8_rowwise (FP8 row-wise scaling), fp8_attention (FP8 attention
    core asked for; timing applies it only where it can run), tokens_total
Parallelism
    tp, pp, dp, dp_shard (ZeRO sharding group in DP ranks; = dp unless HSDP), cp, ep, etp (expert
    tensor parallelism; optional: absent = tp, and left out when every row has etp = tp), vpp,
    sequence_parallel, zero_stage, recompute (code, RECOMPUTE), recompute_layers (full recompute
    of this many layers per pipeline chunk; 0 = all),
    schedule (code, SCHEDULES), offload_optimizer (code, OFFLOAD), offload_master_weights,
    offload_grads, offload_activations, flash_attention, attention_kernel (code,
    ATTENTION_KERNELS), tp_comm_overlap, dp_comm_overlap, ep_comm_overlap, ep_dispatch_fp8, ep_node_dispatch, uneven_layers
Hardware (system + accelerator, overrides applied)
    n_gpus, gpus_per_node, n_nodes, nvlink_domain_size (an accelerator override: at most the part's own
    scale-up domain, _fabric), scaleup_mesh_links (domain − 1 on a full-mesh fabric, 0 behind a switch;
    optional: absent = 0), fabric_adapted (the override changed the domain or NVLS: notes only),
    rack_domain_size (the system's own NVLink domain, what a provider renting by the rack bills;
    optional: absent = nvlink_domain_size),
    accel_family (code, FAMILIES)
    peak_flop_per_s (dense peak at the GEMM precision), peak_16bit_flop_per_s (bf16 or fp16
    dense peak: the MFU denominator), peak_fp8_flop_per_s (dense FP8 peak; 0 = no FP8 units),
    mamf_frac_16bit / mamf_frac_gemm (the part's own MAMF over its peak, 16-bit and at the GEMM
    precision; 0 = the family's fraction), hbm_bytes, hbm_usable_bytes, hbm_bw_bytes_per_s,
    scaleup_bw_bytes_per_s, nic_bw_per_gpu_bytes_per_s, host_link_bw_bytes_per_s,
    host_link_c2c (bool), host_memory_bytes (per node), host_memory_bw_bytes_per_s (per node),
    local_nvme_bytes, local_nvme_write_bw_bytes_per_s, local_nvme_read_bw_bytes_per_s (per node),
    node_power_w (under a power limit the GPUs' share scales by limit / TDP: _node_power_w), tdp_w,
    power_limit_w (the override, else tdp_w), in_network_reduction (NVLS; _fabric), price_per_gpu_hour_usd, pue, utilisation_power_frac,
    accelerator_index (the part's place in hardware/accelerators.json, −1 for an inline part: the notes name its
    price's date and source)
Checkpoint (for each tier kind k in TIER_KINDS)
    ckpt_{k}_enabled, ckpt_{k}_interval_s (NaN = choose the optimum), ckpt_{k}_replicas,
    ckpt_{k}_write_bw_per_node_bytes_per_s, ckpt_{k}_read_bw_per_node_bytes_per_s,
    ckpt_{k}_agg_write_bw_bytes_per_s, ckpt_{k}_agg_read_bw_bytes_per_s (inf = no shared limit),
    ckpt_{k}_survives_{c} for each failure class c (bool)
    ckpt_async, ckpt_async_interference_frac
Reliability (for each failure class c in FAILURE_CLASSES; rates already times rate_scale)
    fail_{c}_per_gpu_h, fail_{c}_per_node_h, fail_{c}_per_job_h, fail_{c}_restart_s,
    fail_{c}_repair_s; hot_spare_nodes; rate_scale (already in the rates; read by the explain only);
    fail_node_gpus (GPUs per node of the profile's source fleet, 0 = not stated; read by the notes only)
    fail_accel_family (FAMILIES code of the profile's source fleet, -1 = not stated; read by the notes only)
"""

from __future__ import annotations

import functools
import typing

from collections.abc import Mapping
from typing import Iterable, Sequence

import numpy as np

from . import catalog
from .schema import FAILURE_CLASSES, TIER_KINDS, AcceleratorFamily, Scenario

Batch = dict[str, np.ndarray]

PRECISIONS: tuple[str, ...] = ("fp32", "tf32", "fp16", "bf16", "fp8", "fp4")
RECOMPUTE: tuple[str, ...] = ("none", "selective", "full", "op_sac")
SCHEDULES: tuple[str, ...] = ("1f1b", "interleaved", "gpipe", "zero_bubble", "dualpipe")
OFFLOAD: tuple[str, ...] = ("none", "cpu", "nvme")
ATTENTION_KERNELS: tuple[str, ...] = ("native", "flash2")
FAMILIES: tuple[str, ...] = typing.get_args(AcceleratorFamily)  # the schema's (one list)

INT_COLUMNS = {
    "n_layers", "hidden_size", "n_heads", "n_kv_heads", "head_dim", "ffn_hidden_size", "vocab_size",
    "learned_pos_embeddings", "n_experts", "moe_top_k", "expert_ffn_hidden_size", "n_shared_experts",
    "shared_expert_ffn_hidden_size", "first_dense_layers", "q_lora_rank", "kv_lora_rank",
    "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "mtp_layers", "seq_len", "global_batch_size",
    "micro_batch_size", "precision", "tp", "pp", "dp", "dp_shard", "cp", "ep", "etp", "vpp", "zero_stage", "recompute", "recompute_layers",
    "schedule", "offload_optimizer", "attention_kernel", "n_gpus", "gpus_per_node", "n_nodes", "nvlink_domain_size",
    "scaleup_mesh_links", "rack_domain_size", "accel_family", "hot_spare_nodes", "moe_max_nodes_per_token", "sliding_window", "accelerator_index",
}
BOOL_PREFIXES = ("ckpt_async",)
BOOL_COLUMNS = {
    "gated_mlp", "tied_embeddings", "linear_bias", "layernorm", "rope", "mla", "sequence_parallel",
    "offload_master_weights", "offload_grads", "offload_activations", "flash_attention",
    "tp_comm_overlap", "dp_comm_overlap", "ep_comm_overlap", "ep_dispatch_fp8", "ep_node_dispatch", "uneven_layers", "host_link_c2c", "in_network_reduction", "fabric_adapted", "ckpt_async",
    "ce_eager", "elem_eager", "fp8_rowwise", "fp8_attention", "price_override",
} | {f"ckpt_{k}_enabled" for k in TIER_KINDS} | {
    f"ckpt_{k}_survives_{c}" for k in TIER_KINDS for c in FAILURE_CLASSES
}


def _fabric(system, acc) -> tuple[int, bool, int, bool]:
    """The scale-up fabric a row is costed on: ``(domain size, NVLS, mesh links, adapted)``.

    The system's own, unless ``cluster.accelerator`` puts another part in its slots: then the domain
    is at most that part's own scale-up domain (``Accelerator.scaleup_domain_size``: 2 for H100 PCIe
    pairs behind NVLink bridges, 1 for a GH200 144 GB on its own; found by review 48c: an H100 PCIe
    override on a DGX H100 ran a TP 8 all-reduce over a 300 GB/s 8-GPU NVLink domain, about 6×
    too fast), and NVLink SHARP (an NVSwitch feature) stays only for an NVIDIA Hopper or Blackwell
    part that fills the whole domain. ``mesh links`` = domain − 1 on a full-mesh fabric
    (``System.scaleup_topology``; :func:`planner.comm.mesh_share`), 0 behind a switch.
    ``adapted``: the override changed the domain or dropped NVLS (the notes say so)."""
    import math

    dom = system.nvlink_domain_size
    inr = system.in_network_reduction
    topo = system.scaleup_topology
    adapted = False
    own = catalog.resolve_accelerator(system.accelerator)
    # Another part = another name: a written-out copy of the system's own part, or one with edited
    # numbers (more HBM, another price), keeps the system's fabric (review 48: an inlined H100 on a
    # DGX H100 with a 16-GPU domain lost NVLS and ran its DP ring 30 % slower than the catalogue one).
    if acc is not own and acc.name != own.name:
        d = min(dom, acc.scaleup_domain_size)
        if system.gpus_per_node % d and d % system.gpus_per_node:  # keep the schema's divisibility rule
            d = math.gcd(d, system.gpus_per_node)
        # the part's links are its own: the topology (and NVLS) of a catalogue system built around it
        # (review 48, new-user check: an MI300X in a DGX H100 ran TP 2 over a switch at 358 GB/s where its
        # own full mesh gives one link, 51.2 GB/s, about 7× too fast); without one, the host's
        native = _native_system(acc)
        if native is not None:
            topo = native.scaleup_topology
            keep = native.in_network_reduction and d == min(native.nvlink_domain_size, acc.scaleup_domain_size)
        else:
            keep = inr and acc.family in ("hopper", "blackwell") and d == dom
        adapted = d != dom or keep != inr or topo != system.scaleup_topology
        dom, inr = d, keep
    mesh = dom - 1 if topo == "full_mesh" and dom > 1 else 0
    return dom, inr, mesh, adapted


def _native_system(acc):
    """A catalogue system built around part ``acc`` (matched by name; the one with the largest
    scale-up domain), or None: the fabric :func:`_fabric` gives the part when it is put in another
    system's slots."""
    ids = [k for k, a in catalog.accelerators().items() if a.name == acc.name]
    hosts = [s for s in catalog.systems().values() if s.accelerator in ids]
    return max(hosts, key=lambda s: s.nvlink_domain_size) if hosts else None


def _mamf_frac(acc, precision: str) -> float:
    """The part's own MAMF over its peak at ``precision``; 0 where the catalogue gives none
    (the timing stage then uses the family's fraction). FP4 without an FP4 figure takes the
    part's FP8 fraction, as the family tables do (FP4 GEMMs at the FP8 efficiency)."""
    own_all = acc.mamf_flop_per_s or {}
    if precision == "fp4" and "fp4" not in own_all:
        precision = "fp8"
    own = own_all.get(precision)
    peak = acc.peak_flop_per_s.get(precision)
    return float(own / peak) if own and peak else 0.0


def _node_power_w(system, acc, power_limit_w, system_acc=None) -> float:
    """Node power [W] at full load under a GPU power limit: the GPUs' share ``min(gpus_per_node ·
    TDP, node power)`` scales by ``limit / TDP``, the rest of the node (CPUs, NICs, fans) stays. A
    stated simplification (the GPUs are taken to draw their limit at full load). Without a limit,
    or without a node power in the catalogue, the catalogue value.

    ``system_acc``: the system's own accelerator, when ``cluster.accelerator`` puts another part in
    the node: the node's GPU share ``min(gpus_per_node · own TDP, node power)`` is replaced by
    ``gpus_per_node ·`` the new part's TDP, the rest of the node kept. Found by review 16c: an MI355X
    (8 × 1,400 W) in a DGX H100 kept the 10.2 kW sized for 8 × 700 W H100s, below its GPUs' own draw
    (the rule gives 15.8 kW, the catalogue's own ``mi355x-8`` figure), and a B200 in it ~20 % low."""
    node = system.node_power_w
    if not node > 0:
        return node
    if system_acc is not None and system_acc != acc and system_acc.tdp_w and acc.tdp_w:
        node = node - min(system.gpus_per_node * system_acc.tdp_w, node) + system.gpus_per_node * acc.tdp_w
    if not power_limit_w:
        return node
    gpus = min(system.gpus_per_node * acc.tdp_w, node)
    return node - gpus + gpus * power_limit_w / acc.tdp_w


#: Capacities the memory verdicts compare with, written beside the engine's results in every results
#: export (``planner evaluate --format json / csv``, the Plan and Compare pages' CSV): output name ->
#: (the :func:`scenario_row` column it is, what it is and which verdict reads it).
CAPACITY_COLUMNS = {
    "hbm_usable_bytes": ("hbm_usable_bytes", "usable HBM per GPU (physical less what the driver and runtime "
                         "keep) [bytes]: fits = mem_total_bytes ≤ hbm_usable_bytes"),
    "host_mem_capacity_per_node_bytes": ("host_memory_bytes", "host memory per node [bytes]: host_fits = "
                                         "host_mem_per_node_bytes ≤ host_mem_capacity_per_node_bytes; "
                                         "host_fits_ckpt adds ckpt_host_mem_per_node_bytes"),
}


def capacities(scenario: "Scenario | dict") -> dict[str, float | None]:
    """``{name: bytes}`` of :data:`CAPACITY_COLUMNS` for one scenario (catalogue value or the
    scenario's ``cluster.overrides``); None for each where the scenario cannot be read. Never raises
    (review h29a F9 / h29c F-8: only the CLI's table had them, so no export let a script recompute
    ``fits`` or ``host_fits``)."""
    try:
        s = scenario if isinstance(scenario, Scenario) else Scenario.model_validate(scenario)
        row = scenario_row(s)
        return {name: float(row[col]) for name, (col, _) in CAPACITY_COLUMNS.items()}
    except Exception:  # noqa: BLE001 - an export column left empty, never a failed export
        return {name: None for name in CAPACITY_COLUMNS}


def scenario_row(s: Scenario) -> dict[str, float | int | bool]:
    """Flatten one validated scenario into the batch's scalar columns (catalogue resolved)."""
    m = s.resolved_model()
    t, p, c = s.training, s.parallelism, s.cluster
    system = catalog.resolve_system(c.system)
    acc = catalog.resolve_accelerator(c.accelerator if c.accelerator is not None else system.accelerator)
    ov = c.overrides
    moe = m.moe
    mla = m.mla
    peaks = acc.peak_flop_per_s
    peak16 = peaks.get("bf16", peaks.get("fp16"))
    # GEMM precision peak (the schema refuses a precision the accelerator has no units for).
    peak = peaks[t.precision]
    fab_domain, fab_inr, fab_mesh, fab_adapted = _fabric(system, acc)
    row: dict[str, float | int | bool] = {
        "n_layers": m.n_layers,
        "hidden_size": m.hidden_size,
        "n_heads": m.n_heads,
        "n_kv_heads": m.kv_heads,
        "head_dim": m.d_head if mla is None else mla.qk_nope_head_dim + mla.qk_rope_head_dim,
        "ffn_hidden_size": m.ffn_hidden_size,
        "vocab_size": m.vocab_size,
        "gated_mlp": m.gated_mlp,
        "tied_embeddings": m.tied_embeddings,
        "linear_bias": m.linear_bias,
        "layernorm": m.norm == "layernorm",
        "learned_pos_embeddings": m.learned_pos_embeddings,
        "rope": m.rope and m.learned_pos_embeddings == 0,
        "dropout": m.dropout,
        "sliding_window": m.sliding_window or 0,
        "swa_layer_frac": m.sliding_window_layer_frac if m.sliding_window else 0.0,
        "n_experts": moe.n_experts if moe else 0,
        "moe_top_k": moe.top_k if moe else 0,
        "expert_ffn_hidden_size": moe.expert_ffn_hidden_size if moe else 0,
        "n_shared_experts": moe.n_shared_experts if moe else 0,
        "shared_expert_ffn_hidden_size": (
            (moe.shared_expert_ffn_hidden_size or moe.expert_ffn_hidden_size) if moe else 0
        ),
        "first_dense_layers": moe.first_dense_layers if moe else 0,
        "moe_capacity_factor": moe.capacity_factor if moe else 1.0,
        "moe_max_nodes_per_token": (moe.max_nodes_per_token or 0) if moe else 0,
        "mla": mla is not None,
        "q_lora_rank": mla.q_lora_rank if mla else 0,
        "kv_lora_rank": mla.kv_lora_rank if mla else 0,
        "qk_nope_head_dim": mla.qk_nope_head_dim if mla else 0,
        "qk_rope_head_dim": mla.qk_rope_head_dim if mla else 0,
        "v_head_dim": mla.v_head_dim if mla else m.d_head,
        "mtp_layers": m.mtp_layers,
        "seq_len": t.seq_len,
        "global_batch_size": t.global_batch_size,
        "micro_batch_size": t.micro_batch_size,
        "precision": PRECISIONS.index(t.precision),
        "grad_bytes": 4.0 if t.grad_dtype == "fp32" else 2.0,
        "ce_eager": t.cross_entropy == "eager",
        "fp8_rowwise": t.fp8_scaling == "rowwise",
        "fp8_attention": t.fp8_attention,
        "elem_eager": t.elementwise == "eager",
        "tokens_total": t.tokens_total,
        "tp": p.tp,
        "pp": p.pp,
        "dp": p.dp,
        "dp_shard": p.dp_shard or p.dp,
        "cp": p.cp,
        "ep": p.ep,
        "etp": p.etp or p.tp,
        "vpp": p.vpp,
        "sequence_parallel": p.sequence_parallel,
        "zero_stage": p.zero_stage,
        "recompute": RECOMPUTE.index(p.recompute),
        "recompute_layers": p.recompute_layers or 0,
        "schedule": SCHEDULES.index(p.schedule),
        "offload_optimizer": OFFLOAD.index(p.offload_optimizer),
        "offload_master_weights": p.offload_master_weights,
        "offload_grads": p.offload_grads,
        "offload_activations": p.offload_activations,
        "flash_attention": p.flash_attention,
        "attention_kernel": ATTENTION_KERNELS.index(p.attention_kernel),
        "tp_comm_overlap": p.tp_comm_overlap,
        "dp_comm_overlap": p.dp_comm_overlap,
        "ep_comm_overlap": p.ep_comm_overlap,
        "ep_dispatch_fp8": p.ep_dispatch_fp8,
        "ep_node_dispatch": p.ep_node_dispatch,
        "uneven_layers": p.layer_split == "uneven",
        "n_gpus": c.n_gpus,
        "gpus_per_node": system.gpus_per_node,
        "n_nodes": -(-c.n_gpus // system.gpus_per_node),
        "nvlink_domain_size": fab_domain,
        "scaleup_mesh_links": fab_mesh,
        "fabric_adapted": fab_adapted,
        "rack_domain_size": system.nvlink_domain_size,  # the system's own (billing by the rack), not adapted
        "accel_family": FAMILIES.index(acc.family) if acc.family in FAMILIES else FAMILIES.index("other"),
        "peak_flop_per_s": peak,
        "peak_16bit_flop_per_s": peak16,
        "peak_fp8_flop_per_s": peaks.get("fp8", 0.0),
        "hbm_bytes": acc.hbm_bytes,
        "hbm_usable_bytes": ov.hbm_usable_bytes or acc.hbm_usable_bytes,
        "hbm_bw_bytes_per_s": acc.hbm_bw_bytes_per_s,
        "attn_dhead_knee": acc.attention_dhead_knee or 0.0,
        "mamf_frac_16bit": _mamf_frac(acc, "bf16" if "bf16" in peaks else "fp16"),
        "mamf_frac_gemm": _mamf_frac(acc, t.precision),
        "scaleup_bw_bytes_per_s": acc.scaleup_bw_bytes_per_s,
        "nic_bw_per_gpu_bytes_per_s": ov.nic_bw_per_gpu_bytes_per_s or system.nic_bw_per_gpu_bytes_per_s,
        "host_link_bw_bytes_per_s": acc.host_link_bw_bytes_per_s,
        "host_link_c2c": acc.host_link == "nvlink-c2c",
        "host_memory_bytes": ov.host_memory_bytes or system.host_memory_bytes,
        "host_memory_bw_bytes_per_s": system.host_memory_bw_bytes_per_s,
        "local_nvme_bytes": system.local_nvme_bytes,
        "local_nvme_write_bw_bytes_per_s": system.local_nvme_write_bw_bytes_per_s,
        "local_nvme_read_bw_bytes_per_s": system.local_nvme_read_bw_bytes_per_s,
        "node_power_w": _node_power_w(system, acc, ov.power_limit_w,
                                      catalog.resolve_accelerator(system.accelerator)),
        "tdp_w": acc.tdp_w,
        "power_limit_w": ov.power_limit_w or acc.tdp_w,
        "in_network_reduction": fab_inr,
        "price_per_gpu_hour_usd": ov.price_per_gpu_hour_usd or acc.price_per_gpu_hour_usd,
        # the scenario's own price (cost.notes says whose price was charged; review 16c)
        "price_override": ov.price_per_gpu_hour_usd is not None,
        # the catalogue entry (its price's date, source and proxy status: cost.notes; review 26, h26c)
        "accelerator_index": next((i for i, a in enumerate(catalog.accelerators().values()) if a is acc), -1),
        "pue": c.pue,
        "utilisation_power_frac": c.utilisation_power_frac,
        "ckpt_async": s.checkpoint.async_,
        "ckpt_async_interference_frac": s.checkpoint.async_interference_frac,
        "hot_spare_nodes": s.reliability.hot_spare_nodes,
    }
    # Checkpoint tiers: one slot per tier kind.
    used = {}
    for use in s.checkpoint.tiers:
        tier = catalog.resolve_storage(use.tier)
        used[tier.kind] = (use, tier)
    node_bw = {
        "host_memory": (system.host_memory_bw_bytes_per_s, system.host_memory_bw_bytes_per_s),
        "local_nvme": (system.local_nvme_write_bw_bytes_per_s, system.local_nvme_read_bw_bytes_per_s),
    }
    for k in TIER_KINDS:
        use_tier = used.get(k)
        row[f"ckpt_{k}_enabled"] = use_tier is not None
        if use_tier is None:
            tier = catalog.storage_tiers().get(k)
            use = None
        else:
            use, tier = use_tier
        w_default, r_default = node_bw.get(k, (np.inf, np.inf))
        row[f"ckpt_{k}_interval_s"] = (
            np.nan if use is None or use.interval_s is None else float(use.interval_s)
        )
        row[f"ckpt_{k}_replicas"] = use.replicas if use is not None else 0
        wbw = tier.write_bw_per_node_bytes_per_s if tier is not None else None
        rbw = tier.read_bw_per_node_bytes_per_s if tier is not None else None
        row[f"ckpt_{k}_write_bw_per_node_bytes_per_s"] = wbw or w_default
        row[f"ckpt_{k}_read_bw_per_node_bytes_per_s"] = rbw or r_default
        agw = tier.aggregate_write_bw_bytes_per_s if tier is not None else None
        agr = tier.aggregate_read_bw_bytes_per_s if tier is not None else None
        row[f"ckpt_{k}_agg_write_bw_bytes_per_s"] = agw or np.inf
        row[f"ckpt_{k}_agg_read_bw_bytes_per_s"] = agr or np.inf
        survives = set(tier.survives) if tier is not None else set()
        for fc in FAILURE_CLASSES:
            row[f"ckpt_{k}_survives_{fc}"] = fc in survives
    # Failure profile: rates per unit, scaled.
    prof = catalog.resolve_failure_profile(s.reliability.profile)
    scale = s.reliability.rate_scale
    row["rate_scale"] = float(scale)
    row["fail_node_gpus"] = float(prof.node_gpus or 0)  # the source fleet's node size (0: not stated)
    # the source fleet's accelerator family (FAMILIES code; -1: not stated), read by the notes only
    row["fail_accel_family"] = float(FAMILIES.index(prof.accelerator_family)) if prof.accelerator_family else -1.0
    by_class = {fc.failure_class: fc for fc in prof.classes}
    for fc in FAILURE_CLASSES:
        e = by_class.get(fc)
        for unit in ("gpu", "node", "job"):
            row[f"fail_{fc}_per_{unit}_h"] = (
                e.rate * scale if e is not None and e.per == f"{unit}_hour" else 0.0
            )
        row[f"fail_{fc}_restart_s"] = e.restart_s if e is not None else 0.0
        row[f"fail_{fc}_repair_s"] = e.repair_s if e is not None else 0.0
    return row


def _dtype_for(name: str):
    if name in BOOL_COLUMNS:
        return bool
    if name in INT_COLUMNS:
        return np.int64
    return np.float64


@functools.lru_cache(maxsize=64)
def _dtype_groups(keys: tuple[str, ...]) -> dict:
    """dtype -> the names of ``keys`` stored in it, in ``keys`` order (cached: every scenario row
    has the same columns, and a one-row evaluate paid ~170 lookups for them)."""
    groups: dict = {}
    for k in keys:
        groups.setdefault(_dtype_for(k), []).append(k)
    return groups


def from_rows(rows: Sequence[dict]) -> Batch:
    """Stack flattened rows (see :func:`scenario_row`) into typed columns."""
    if not rows:
        raise ValueError("an empty batch: give at least one scenario")
    keys = list(rows[0].keys())
    # One 2-D array per dtype (3 conversions instead of one per column), then contiguous row
    # views as columns: the same values as np.asarray per column.
    groups = _dtype_groups(tuple(keys))
    out: Batch = {}
    for dtype, names in groups.items():
        block = np.array([[r[k] for k in names] for r in rows], dtype=dtype).T.copy()
        out.update(zip(names, block))
    # expert TP equal to TP on every row: no column (absent = tp), so a batch of such scenarios is
    # the batch it was before parallelism.etp existed (and a caller that changes tp afterwards, as
    # the benchmarks' random splits do, keeps expert TP = TP)
    if "etp" in out and np.array_equal(out["etp"], out["tp"]):
        keys.remove("etp")
    return {k: out[k] for k in keys}


def from_scenarios(scenarios: Iterable[Scenario]) -> Batch:
    """Columns for a list of validated scenarios (a single scenario is a batch of one)."""
    return from_rows([scenario_row(s) for s in scenarios])


def size(b: Batch) -> int:
    return int(len(next(iter(b.values()))))


def take(b: Batch, idx) -> Batch:
    """Rows ``idx`` of every column (for chunking and for picking one row of a sweep)."""
    return {k: v[idx] for k, v in b.items()}


def row(b: Batch, i: int = 0) -> dict:
    """Row ``i`` of every column as Python scalars (for the per-scenario explain / notes
    functions, which read one row as a dict)."""
    out = {}
    for k, v in b.items():
        if isinstance(v, np.ndarray):
            out[k] = v.item(i)  # a Python scalar already
            continue
        x = v[i]
        out[k] = x.item() if isinstance(x, np.generic) else x
    return out


class OneRow(Mapping):
    """One scenario's row (a dict of python scalars, as :func:`row` gives) seen as a batch of
    one: column ``k`` is ``np.asarray([row[k]])``, shape (1,), made on first use and kept (the
    explain functions read a few dozen of a row's ~250 columns; converting all of them cost
    them 0.1 ms each). Read-only."""

    __slots__ = ("_row", "_cols")

    def __init__(self, row: dict):
        self._row = row
        self._cols: dict = {}

    def __getitem__(self, k):
        v = self._cols.get(k)
        if v is None:
            v = self._cols[k] = np.asarray([self._row[k]])
        return v

    def __iter__(self):
        return iter(self._row)

    def __len__(self) -> int:
        return len(self._row)

    def __contains__(self, k) -> bool:
        return k in self._row


def col(b: Batch, name: str, dtype=None):
    """Column ``name`` of a batch for arithmetic: the array (N,), cast to ``dtype`` if given,
    or — when every row holds the same value — that one value as a numpy scalar.

    A sweep chunk holds one model and one system, so most columns are uniform; scalar operands
    make a stage's array passes cheaper (and a batch of one all-scalar) without changing a
    result: the same IEEE operations on the same values. Results go back to (N,) with
    :func:`expand`. Shapes: returns (N,) or a scalar.
    """
    x = np.asarray(b[name], dtype=dtype)
    if x.ndim != 1 or x.shape[0] == 0:
        return x
    if x.strides == (0,) or x.shape[0] == 1 or (x[0] == x[-1] and (x == x[0]).all()):
        return x[0]
    return x


def expand(x, n: int, dtype=np.float64) -> np.ndarray:
    """``x`` (array (n,) or scalar) as an array of shape (n,) and ``dtype`` (a scalar repeated,
    as a read-only broadcast view: stages return new columns and never write into one)."""
    if np.ndim(x) == 1:
        return x if x.dtype == dtype else x.astype(dtype)
    if n == 1:
        return np.array((x,), dtype=dtype)
    # a read-only broadcast view (stride 0): the same values as np.full, no n-element write
    return np.broadcast_to(np.asarray(x, dtype=dtype), (n,))


def any_true(x) -> bool:
    """``bool(np.any(x))`` without ``np.any``'s dispatch (~5 µs a call, against ~1 µs for the
    array method and ~0.05 µs for ``bool`` of a scalar; a one-row evaluate makes ~100 such
    tests). Same value for every input: an array's ``.any()``, a scalar's truth (NaN is true in
    both)."""
    if isinstance(x, np.ndarray):
        return bool(x.any())
    if isinstance(x, (np.generic, bool, int, float)):
        return bool(x)
    return bool(np.any(x))


def where(cond, x, y):
    """``np.where(cond, x, y)``; for a scalar ``cond`` (a uniform column, see :func:`col`) the
    chosen operand itself, without the array round trip (same values)."""
    if np.ndim(cond) == 0:
        return x if cond else y
    return np.where(cond, x, y)
