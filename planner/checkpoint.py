"""Checkpoint size, save and reload time per tier, and the classic optimum intervals.

Functions over broadcasting numpy arrays (one element per configuration); no loop over rows.
:mod:`planner.reliability` (pipeline stage 4) calls them and adds failures, intervals and
goodput.

Model (DESIGN §4.4, stated simplifications):

* **Size.** A checkpoint holds the weights and the optimizer states of the whole job, not the
  gradients: mixed-precision Adam keeps 2 B of bf16 weights plus 12 B of fp32 master weights,
  first and second moments per parameter (ZeRO [1] §3.1, K = 12), so about 14 B/param
  (BLOOM-176B's 2.3 TB full checkpoint [4] agrees: 176e9 x 14 B = 2.46e12 B = 2.24 TiB).
* **Shards.** With ZeRO >= 1 (distributed optimizer) the layout under TP/PP/EP/ZeRO is taken
  to split the total evenly across all GPUs: every GPU writes ``ckpt_bytes / n_gpus``.
  With ZeRO-0 the DP replicas hold duplicate copies and only one replica writes: ``n_gpus / dp``
  writers, each ``ckpt_bytes · dp / n_gpus``; the writers are taken to be packed on as few nodes
  as possible (``min(gpus_per_node, n_writers)`` writers on the busiest node: the worst case).
* **Save time** per tier = the slowest of (a) the shard over the GPU's host link (device to
  host copy), (b) the node's share over the tier's per-node write bandwidth (times ``1 +
  replicas`` on a replicated node-local tier: each node also stores its peers' copies), (c) for
  replicated node-local tiers (Gemini [2], REFT [3]) ``replicas`` copies of the node's share over
  the node's network bandwidth, (d) the job total over the tier's aggregate bandwidth, shared by
  all writers. Every stage is taken to pipeline with the others (max, not sum).
* **Stall.** A synchronous save stalls training for the whole save; an asynchronous one only
  for the device-to-host copy, plus ``async_interference_frac`` of the time the rest of the save
  drains in the background (steps run that much slower meanwhile). Each tier's save is taken
  to make its own device-to-host copy (conservative when a slow tier drains from the host copy).
* **Staging buffer** (async only). An asynchronous save first copies each writing GPU's shard
  into a host (CPU, pinned) buffer and writes the tier from there (PyTorch DCP ``async_save``
  [7], Megatron-LM / NeMo ``FileSystemWriterAsync`` [8]): ``node_bytes`` of host DRAM per node
  per save in flight (:func:`async_staging_bytes_per_node`). One save of a tier is in flight at
  a time (the next starts no sooner than the last ends: the interval floor), and each tier's save
  is taken to stage its own copy, as for the device-to-host time above: ``node_bytes`` times the
  tiers other than host memory that are saved. Not reused from the host-memory tier's copy (a
  stated simplification, conservative: that copy is replaced at the next in-memory save, every
  τ_host, while a slower tier's drain still reads its own snapshot). Synchronous saves: none
  counted (the GPU waits while its shard is written, tensor by tensor).
* **Reload** after a failure = the slowest of the shard over the host link (host to device),
  the node's share over the tier's per-node read bandwidth, the job's total over the aggregate
  read bandwidth, and, when a lost node's copy is fetched from a peer replica, the node's share
  over the network. With ZeRO-0 only one DP replica wrote, so where a pipeline stage spans more
  nodes than hold its copy (its writers' nodes and their peer copies), the other nodes fetch their
  share over the network too (:func:`node_local_fetch`).
* **Achieved bandwidths.** The host link and the network run at the step-time model's achieved
  fractions of their nominal rates (:func:`link_eff`: 0.8 and 0.92); storage tiers' bandwidths
  are the catalogue's figures as given (``hardware/storage.json``: sustained rates for the parallel
  file system and the object store, the drives' rated speeds for NVMe, and the nominal host DRAM
  bandwidth for the host-memory tier: a simplification, optimistic there).

References
----------
[1] S. Rajbhandari, J. Rasley, O. Ruwase, Y. He, "ZeRO: Memory Optimizations Toward Training
    Trillion Parameter Models", SC'20, arXiv:1910.02054, §3.1.
[2] Z. Wang et al., "GEMINI: Fast Failure Recovery in Distributed Training with In-Memory
    Checkpoints", SOSP'23.
[3] Z. Wang et al., "Fault-Tolerant Hybrid-Parallel Training at Scale with Reliable and
    Efficient In-memory Checkpointing" (REFT), arXiv:2310.12670.
[4] BigScience, BLOOM-176B training notes (2.3 TB checkpoint with optimizer states);
    validation/reliability_facts.csv ``bloom_ckpt_full``.
[5] J. W. Young, "A first order approximation to the optimum checkpoint interval",
    Commun. ACM 17(9), 1974. doi:10.1145/361147.361115
[6] J. T. Daly, "A higher order estimate of the optimum checkpoint interval for restart
    dumps", Future Generation Computer Systems 22(3), 2006. doi:10.1016/j.future.2004.11.016
[7] PyTorch, "Asynchronous Saving with Distributed Checkpoint (DCP)" (recipe, PyTorch 2.4+,
    https://pytorch.org/tutorials/recipes/distributed_async_checkpoint_recipe.html): async_save
    "works by first copying models into internal CPU-buffers", which "does raise CPU memory by a
    factor of checkpoint_size_per_rank X number_of_ranks"; the default stager
    (``torch.distributed.checkpoint.staging``) copies the whole state dict to CPU RAM before the
    background write.
[8] NVIDIA Megatron-LM, ``megatron/core/dist_checkpointing/strategies/filesystem_async.py``,
    ``FileSystemWriterAsync.preload_tensors``: every tensor of the rank's write buckets is
    copied to host memory (pinned, ``non_blocking``) before the forked writer processes write
    them (NeMo's async distributed checkpointing uses this writer: NVIDIA/NeMo PR #9028).
"""

from __future__ import annotations

import numpy as np

from .schema import FAILURE_CLASSES, TIER_KINDS

#: bf16 weights saved in a checkpoint [B/param] (ZeRO [1] §3.1: 2Ψ for fp16/bf16 parameters).
CKPT_WEIGHT_BYTES_PER_PARAM = 2.0
#: fp32 master weights + Adam m + v [B/param] (ZeRO [1] §3.1: K = 12).
CKPT_OPTIMIZER_BYTES_PER_PARAM = 12.0
#: Weights + optimizer states, no gradients [B/param] (≈ BLOOM-176B's 2.3 TB / 176e9 [4]).
CKPT_BYTES_PER_PARAM = CKPT_WEIGHT_BYTES_PER_PARAM + CKPT_OPTIMIZER_BYTES_PER_PARAM

#: Tier kinds that live on each node (lost with the node unless replicated to peers).
NODE_LOCAL_TIERS: tuple[str, ...] = ("host_memory", "local_nvme")
#: Failure classes that take a node out of the job (its node-local copies are lost).
NODE_LOSS_CLASSES: tuple[str, ...] = ("gpu", "node")


#: fp32 / tf32 training: the fp32 weights are the master copy, so weights + m + v [B/param].
CKPT_BYTES_PER_PARAM_FP32 = CKPT_OPTIMIZER_BYTES_PER_PARAM


def ckpt_bytes_per_param(precision=None) -> np.ndarray | float:
    """Checkpoint bytes per parameter: ``CKPT_BYTES_PER_PARAM`` (14: 16-bit weights + fp32
    master, m, v) for mixed precision, ``CKPT_BYTES_PER_PARAM_FP32`` (12: fp32 weights, m, v)
    for fp32 / tf32 training. ``precision``: codes of ``planner.batch.PRECISIONS`` (N,), or
    None (mixed precision)."""
    if precision is None:
        return CKPT_BYTES_PER_PARAM
    from .batch import PRECISIONS
    p = np.asarray(precision)
    fp32 = (p == PRECISIONS.index("fp32")) | (p == PRECISIONS.index("tf32"))
    if not fp32.any():  # the usual batch: one number, no array pass
        return CKPT_BYTES_PER_PARAM
    return np.where(fp32, CKPT_BYTES_PER_PARAM_FP32, CKPT_BYTES_PER_PARAM)


def ckpt_bytes_mixed_adam(params_total):
    """Checkpoint size of the whole job: weights + optimizer states (no gradients).

    Parameters
    ----------
    params_total : array_like, shape (N,)
        Parameters of the model [count].

    Returns
    -------
    ndarray, shape (N,)
        ``CKPT_BYTES_PER_PARAM · params_total`` [B] (2 B bf16 weights + 12 B fp32 master, m, v;
        ZeRO [1] §3.1).

    Examples
    --------
    >>> float(ckpt_bytes_mixed_adam(176e9))  # BLOOM-176B: 2.3 TB published
    2464000000000.0
    """
    return np.asarray(params_total, dtype=float) * CKPT_BYTES_PER_PARAM


def link_eff() -> dict:
    """Achieved / nominal bandwidth of the links checkpoint copies use, as the step-time model
    uses them (``hardware/calibration.json`` ``link_eff``, sourced, never fitted): ``host``
    (device↔host, PCIe or NVLink-C2C: 0.8; pinned PCIe copies reach ~80–85 % of the nominal
    rate, hardware.md §6b) and ``network`` (0.92; NCCL over InfiniBand, 92–98 %). Read-only."""
    from .timing import _calibration  # (timing does not import this module: no cycle)

    return _calibration()["link_eff"]


def host_copy_bw(host_link_bw_bytes_per_s, host_memory_bw_bytes_per_s, gpus_copying_per_node):
    """Per-GPU bandwidth of a device↔host checkpoint copy [B/s], shape: the arguments' broadcast.

    Each GPU copies over its own host link at the achieved rate ``host_link · link_eff()["host"]``
    (0.8: pinned PCIe copies reach ~80–85 % of the nominal rate, hardware.md §6b; the step-time
    model's offload transfers use the same factor; until review h30a C2 the copies ran at the
    nominal rate while the offload did not), but all GPUs of a node that copy at once land in (or
    read from) the same host DRAM: ``min(host_link · 0.8, host_memory_bw / gpus_copying_per_node)``.
    The DRAM side binds where GPUs × achieved link exceeds the DRAM bandwidth, e.g. Frontier (8 ×
    0.8 × 36e9 = 230e9 against 204.8e9 B/s of DDR4); not a GB200 tray (4 × 0.8 × 225e9 = 720e9 of
    NVLink-C2C against 777.8e9 B/s of LPDDR5X, hardware.md §3a; at the nominal rate it did) nor a
    DGX B300 (8 × 50.4e9 against 819e9). Found by review 15a: the async stall counted the link only.
    """
    link = np.asarray(host_link_bw_bytes_per_s, dtype=float) * link_eff()["host"]
    dram = np.asarray(host_memory_bw_bytes_per_s, dtype=float) / np.maximum(
        np.asarray(gpus_copying_per_node, dtype=float), 1.0)
    return np.minimum(link, dram)


def ckpt_layout(ckpt_bytes, n_gpus, gpus_per_node, dp, zero_stage, ep=1):
    """How the checkpoint is split over writers.

    Parameters
    ----------
    ckpt_bytes : array_like, shape (N,)  — whole-job checkpoint [B].
    n_gpus, gpus_per_node, dp, zero_stage : array_like, shape (N,)
    ep : array_like, shape (N,) — expert-parallel size (EP groups lie over the DP·CP ranks, so
        with ZeRO-0 the ``ep`` ranks of each replica's experts hold different experts and all
        write; found by review: Mixtral 8x7B at EP 8 was written by 4 GPUs, 163 GB each, 6 × a
        GPU's whole model state).

    Returns
    -------
    dict of ndarray, shape (N,)
        ``n_writers`` (GPUs that write: all with ZeRO >= 1, one DP replica's ``n_gpus / dp``
        times ``ep`` with ZeRO-0, at most ``n_gpus``),
        ``shard_bytes`` (bytes per writing GPU [B]), ``node_bytes`` (bytes on the busiest node [B]).

    Notes
    -----
    Even split over all GPUs when ZeRO >= 1 (a simplification: the real layout under TP/PP/EP
    differs by the embedding and the uneven layers); ZeRO-0 packs the writers on nodes. Hybrid
    sharding (HSDP) keeps the even split over all GPUs: its replicas hold duplicate shards,
    which PyTorch Distributed Checkpoint deduplicates and balances over the ranks holding them
    (``DefaultSavePlanner`` dedup), so no replica writes more than its share.
    """
    ckpt_bytes = np.asarray(ckpt_bytes, dtype=float)
    n_gpus = np.asarray(n_gpus, dtype=float)
    dp = np.maximum(np.asarray(dp, dtype=float), 1.0)
    ep = np.maximum(np.asarray(ep, dtype=float), 1.0)
    n_writers = np.where(np.asarray(zero_stage) >= 1, n_gpus, np.minimum(np.maximum(n_gpus / dp, 1.0) * ep, n_gpus))
    shard = ckpt_bytes / n_writers
    node_bytes = np.minimum(np.asarray(gpus_per_node, dtype=float), n_writers) * shard
    return {"n_writers": n_writers, "shard_bytes": shard, "node_bytes": node_bytes}


def _over(nbytes, bw):
    """Seconds to move ``nbytes`` at ``bw`` (inf bandwidth = no limit = 0 s)."""
    bw = np.asarray(bw, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.asarray(nbytes, dtype=float) / bw
    return np.where(np.isinf(bw), 0.0, t)


def ckpt_save_time(shard_bytes, node_bytes, ckpt_bytes, host_link_bw_bytes_per_s,
                   write_bw_per_node_bytes_per_s, agg_write_bw_bytes_per_s, *,
                   replicas=0, nic_bw_per_gpu_bytes_per_s=np.inf, gpus_per_node=1,
                   ckpt_async=False, async_interference_frac=0.0):
    """Save time of one tier and the training stall it causes.

    Every argument broadcasts against the others (:func:`tier_times` passes (N, 1) per-row
    values against (N, K) per-tier columns).

    Parameters
    ----------
    shard_bytes : array_like, shape (N,) — per writing GPU [B].
    node_bytes : array_like, shape (N,) — on the busiest node [B].
    ckpt_bytes : array_like, shape (N,) — whole job [B].
    host_link_bw_bytes_per_s : array_like — per-GPU device-host link [B/s].
    write_bw_per_node_bytes_per_s : array_like — tier's write bandwidth per node [B/s].
    agg_write_bw_bytes_per_s : array_like — tier's job-wide write bandwidth [B/s] (inf = none).
    replicas : array_like, optional — peer-node copies (node-local tiers; Gemini [2], REFT [3]):
        each node writes ``(1 + replicas)`` node shares to the tier and sends ``replicas`` over
        the network.
    nic_bw_per_gpu_bytes_per_s : array_like, optional — network bandwidth per GPU [B/s].
    gpus_per_node : array_like, optional
    ckpt_async : array_like of bool, optional
    async_interference_frac : array_like, optional — step slow-down while a save drains [1].

    Returns
    -------
    dict of ndarray, shape (N,) (the broadcast shape of the arguments)
        ``d2h_s`` device-to-host copy, ``save_s`` whole save (slowest stage) and ``stall_s``
        the equivalent training stall per save [s]:
        ``save_s`` (sync) or ``d2h_s + async_interference_frac · (save_s − d2h_s)`` (async).
    """
    d2h = _over(shard_bytes, host_link_bw_bytes_per_s)
    # a replicated node-local tier writes its own share and receives ``replicas`` peers' shares
    # onto the same memory / disk (review 44: the received copies were counted for capacity, not
    # for the write time)
    node = _over(np.asarray(node_bytes, dtype=float) * (1.0 + np.asarray(replicas, dtype=float)),
                 write_bw_per_node_bytes_per_s)
    net_bw_node = np.asarray(nic_bw_per_gpu_bytes_per_s, dtype=float) * np.asarray(gpus_per_node, dtype=float)
    repl = _over(np.asarray(node_bytes, dtype=float) * np.asarray(replicas, dtype=float), net_bw_node)
    agg = _over(ckpt_bytes, agg_write_bw_bytes_per_s)
    save = np.maximum(np.maximum(np.maximum(d2h, node), repl), agg)  # broadcasts: (n, 1) against (n, K)
    frac = np.asarray(async_interference_frac, dtype=float)
    with np.errstate(invalid="ignore"):  # 0 · inf for a tier that cannot be written: no slow-down
        drain = np.where(frac > 0.0, frac * (save - d2h), 0.0)
    stall = np.where(np.asarray(ckpt_async, dtype=bool), d2h + drain, save)
    return {"d2h_s": d2h, "save_s": save, "stall_s": stall}


def ckpt_reload_time(shard_bytes, node_bytes, ckpt_bytes, host_link_bw_bytes_per_s,
                     read_bw_per_node_bytes_per_s, agg_read_bw_bytes_per_s, *,
                     from_peer=False, nic_bw_per_gpu_bytes_per_s=np.inf, gpus_per_node=1,
                     n_gpus=None):
    """Reload time of one tier after a failure [s], shape (N,) (the arguments' broadcast shape).

    Every GPU reads its shard back (with ZeRO-0 every DP replica reads the writers' shard): the
    slowest of host-to-device over the host link, the node's share over the tier's per-node read
    bandwidth, the job total ``n_gpus · shard_bytes`` over the aggregate read bandwidth, and,
    when ``from_peer`` (a lost node's copy held by a peer replica), the node's share over the
    network. Same pipelining simplification as :func:`ckpt_save_time`.

    A node reads the shards of the job's GPUs on it: ``min(gpus_per_node, n_gpus)`` of them (found
    by review: a 4-GPU job on an 8-GPU node was charged 8 shards, twice its whole checkpoint).
    """
    shard = np.asarray(shard_bytes, dtype=float)
    gpn = np.asarray(gpus_per_node, dtype=float)
    h2d = _over(shard, host_link_bw_bytes_per_s)
    readers = gpn if n_gpus is None else np.minimum(gpn, np.asarray(n_gpus, dtype=float))
    node_read = readers * shard
    node = _over(node_read, read_bw_per_node_bytes_per_s)
    total = ckpt_bytes if n_gpus is None else np.asarray(n_gpus, dtype=float) * shard
    agg = _over(total, agg_read_bw_bytes_per_s)
    net = _over(node_read, np.asarray(nic_bw_per_gpu_bytes_per_s, dtype=float) * gpn)
    net = np.where(np.asarray(from_peer, dtype=bool), net, 0.0)
    return np.maximum(np.maximum(np.maximum(h2d, node), agg), net)  # broadcasts, as in ckpt_save_time


def ckpt_interval_young(delta_s, mtbf_s):
    """Young's first-order optimum checkpoint interval.

    Parameters
    ----------
    delta_s : array_like — time to write one checkpoint δ [s].
    mtbf_s : array_like — mean time between failures M [s].

    Returns
    -------
    ndarray — ``τ = sqrt(2·δ·M)`` [s] (Young 1974 [5], eq. for T_opt).

    Examples
    --------
    >>> float(ckpt_interval_young(50.0, 10_000.0))
    1000.0
    """
    return np.sqrt(2.0 * np.asarray(delta_s, dtype=float) * np.asarray(mtbf_s, dtype=float))


def ckpt_interval_daly(delta_s, mtbf_s):
    """Daly's higher-order optimum checkpoint interval.

    Parameters
    ----------
    delta_s : array_like — checkpoint time δ [s].
    mtbf_s : array_like — mean time between failures M [s].

    Returns
    -------
    ndarray — compute time between checkpoints [s]:
    ``τ = sqrt(2δM)·[1 + (1/3)·sqrt(δ/(2M)) + δ/(18M)] − δ`` for δ < 2M, else ``τ = M``
    (Daly 2006 [6], eq. 37). NaN where ``delta_s`` or ``mtbf_s`` is NaN.

    Notes
    -----
    An expansion of the optimum of the exponential-failure renewal model
    ``T_wall ∝ M·e^{R/M}·(e^{(τ+δ)/M} − 1)/τ`` (Daly [6] eq. 20); within 1% of that optimum
    for δ/M <= 0.5. Reduces to Young's ``sqrt(2δM)`` when δ ≪ M.

    Examples
    --------
    >>> round(float(ckpt_interval_daly(50.0, 10_000.0)), 1)
    966.9
    """
    d = np.asarray(delta_s, dtype=float)
    m = np.asarray(mtbf_s, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = d / (2.0 * m)
        t = np.sqrt(2.0 * d * m) * (1.0 + np.sqrt(x) / 3.0 + x / 9.0) - d
    # an unknown δ stays unknown (found by review: δ = NaN fell to the δ >= 2M branch and gave M)
    return np.where(np.isnan(d), np.nan, np.where(d < 2.0 * m, t, m))



def async_staging_bytes_per_node(node_bytes, ckpt_async, n_saved_tiers) -> np.ndarray:
    """Host memory held per node by asynchronous saves' staging buffers [B], shape: the
    arguments' broadcast.

    ``node_bytes · n_saved_tiers`` where ``ckpt_async``, else 0: each async save copies the node's
    writing GPUs' shards (``node_bytes``, :func:`ckpt_layout`) into host memory before writing the
    tier from there (PyTorch DCP async_save [7]: CPU memory grows by "checkpoint_size_per_rank X
    number_of_ranks"; Megatron-LM / NeMo ``FileSystemWriterAsync.preload_tensors`` [8]), one save
    of each tier in flight, each tier staging its own copy (module docstring).
    ``n_saved_tiers``: tiers other than host memory that are enabled and saved (not at the "never"
    interval). The host-memory tier itself is a host copy: counted apart, as its copies.

    Examples
    --------
    >>> float(async_staging_bytes_per_node(14e9, True, 1))  # DGX H100, 8 GPUs x 1.75 GB, PFS
    14000000000.0
    >>> float(async_staging_bytes_per_node(14e9, False, 2))  # synchronous: no staging buffer
    0.0
    """
    nb = np.asarray(node_bytes, dtype=float) * np.asarray(n_saved_tiers, dtype=float)
    return np.where(np.asarray(ckpt_async, dtype=bool), nb, 0.0)


def peer_replicas(replicas, n_nodes) -> np.ndarray:
    """Peer-node copies a node-local tier can actually keep: ``min(replicas, n_nodes − 1)``
    (a copy on a peer needs another node; one node keeps none). Arrays (N,), float."""
    return np.minimum(np.asarray(replicas, dtype=float), np.maximum(np.asarray(n_nodes, dtype=float) - 1.0, 0.0))

def node_local_fetch(n_writers, n_gpus, pp, gpus_per_node, n_nodes, replicas=0.0) -> np.ndarray:
    """Where a node-local tier's reload comes over the network, bool (the arguments' broadcast
    shape).

    With ZeRO-0 one DP replica writes (:func:`ckpt_layout`: ``n_writers < n_gpus``). Under
    Megatron's rank order (TP innermost, then CP, EP / DP, PP outermost; :mod:`planner.comm`) a
    pipeline stage holds ``n_gpus / pp`` consecutive ranks, its ``n_writers / pp`` writers first,
    so the copy sits on the stage's first ``ceil(writers per stage / gpus_per_node)`` nodes, and
    each of the tier's ``replicas`` peer copies puts it on as many more (taken to go to the
    stage's nodes without one: the best placement). A stage that spans more nodes than those has
    nodes without a copy, whose GPUs fetch their shards over the network (review h30a C6, and its
    review: the first version took the writers packed on the job's first nodes, so a stage within
    one node, or a peer copy on every other node, was still charged the fetch). ZeRO >= 1 (every
    GPU writes its own shard) and a job on one node never fetch.
    """
    pp = np.maximum(np.asarray(pp, dtype=float), 1.0)
    gpn = np.maximum(np.asarray(gpus_per_node, dtype=float), 1.0)
    stage_nodes = np.ceil(np.asarray(n_gpus, dtype=float) / pp / gpn - 1e-9)
    writer_nodes = np.ceil(np.asarray(n_writers, dtype=float) / pp / gpn - 1e-9)
    return (np.asarray(n_nodes, dtype=float) > 1.0) & (
        stage_nodes > writer_nodes * (1.0 + np.asarray(replicas, dtype=float)))


def tier_times(b) -> dict[str, np.ndarray]:
    """Checkpoint size, layout and per-tier save / stall / reload times for a batch.

    Parameters
    ----------
    b : Batch — needs ``params_total`` (stage 1), the hardware, checkpoint and parallelism
        columns of :mod:`planner.batch`.

    Returns
    -------
    dict
        ``ckpt_bytes``, ``ckpt_shard_bytes``, ``ckpt_node_bytes`` (N,); ``d2h_s``, ``save_s``,
        ``stall_s`` (N, K) for the K = len(TIER_KINDS) tiers; ``reload_s`` (N, K, C) for the
        C = len(FAILURE_CLASSES) failure classes; ``enabled`` (N, K) bool; ``survives``
        (N, K, C) bool (a replicated node-local tier survives the node-loss classes).
    """
    ckpt = np.asarray(b["params_total"], dtype=float) * ckpt_bytes_per_param(b["precision"] if "precision" in b else None)
    lay = ckpt_layout(ckpt, b["n_gpus"], b["gpus_per_node"], b["dp"], b["zero_stage"], b["ep"] if "ep" in b else 1)
    n = ckpt.shape[0]

    def col(name):  # (n,) float
        v = np.asarray(b[name], dtype=float)
        return v if v.shape == (n,) else np.full(n, v)

    def per_tier(q, kinds=TIER_KINDS, dtype=float):  # the tiers' columns ckpt_{kind}_{q}, as (n, K)
        a = np.zeros((n, len(TIER_KINDS)), dtype=dtype)
        for k, kind in enumerate(TIER_KINDS):
            if kind in kinds:
                a[:, k] = b[f"ckpt_{kind}_{q}"]  # (assignment broadcasts and casts)
        return a

    # Every tier at once: the per-row inputs as (n, 1) against the tiers' (n, K) columns.
    node_local = np.array([kind in NODE_LOCAL_TIERS for kind in TIER_KINDS])
    replicas = np.where(node_local, peer_replicas(per_tier("replicas", NODE_LOCAL_TIERS), col("n_nodes")[:, None]), 0.0)
    shard, node_b, ck1 = lay["shard_bytes"][:, None], lay["node_bytes"][:, None], ckpt[:, None]
    # peer copies and fetches over the network at its achieved rate (link_eff, as the collectives)
    nic = col("nic_bw_per_gpu_bytes_per_s")[:, None] * link_eff()["network"]
    gpn, ngpu = col("gpus_per_node")[:, None], col("n_gpus")[:, None]
    # device↔host copies share the node's DRAM: the writers of the busiest node on save, every
    # GPU of a node on reload (host_copy_bw)
    link, dram = col("host_link_bw_bytes_per_s")[:, None], col("host_memory_bw_bytes_per_s")[:, None]
    host_bw = host_copy_bw(link, dram, node_b / shard)
    host_bw_read = host_copy_bw(link, dram, np.minimum(gpn, ngpu))
    t = ckpt_save_time(
        shard, node_b, ck1, host_bw, per_tier("write_bw_per_node_bytes_per_s"),
        per_tier("agg_write_bw_bytes_per_s"), replicas=replicas, nic_bw_per_gpu_bytes_per_s=nic,
        gpus_per_node=gpn, ckpt_async=np.asarray(b["ckpt_async"], dtype=bool).reshape(-1, 1),
        async_interference_frac=col("ckpt_async_interference_frac")[:, None],
    )
    shape = (n, len(TIER_KINDS))
    d2h, save, stall = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    d2h[:], save[:], stall[:] = t["d2h_s"], t["save_s"], t["stall_s"]
    enabled = per_tier("enabled", dtype=bool)
    # The reload time depends on the class only through from_peer: two evaluations per tier.
    reload_args = (shard, node_b, ck1, host_bw_read, per_tier("read_bw_per_node_bytes_per_s"),
                   per_tier("agg_read_bw_bytes_per_s"))
    reload_kw = dict(nic_bw_per_gpu_bytes_per_s=nic, gpus_per_node=gpn, n_gpus=ngpu)
    # ZeRO-0: one DP replica wrote, so a stage's nodes without its copy fetch their GPUs' shards
    # over the network, as from a peer replica (node_local_fetch; review h30a C6)
    fetch = node_local & node_local_fetch(lay["n_writers"][:, None], ngpu, col("pp")[:, None], gpn,
                                          col("n_nodes")[:, None], replicas)
    own = ckpt_reload_time(*reload_args, from_peer=False, **reload_kw)
    peer = (ckpt_reload_time(*reload_args, from_peer=True, **reload_kw) if (replicas > 0).any() or fetch.any()
            else own)
    own = np.where(fetch, peer, own)
    native = np.zeros((n, len(TIER_KINDS), len(FAILURE_CLASSES)), dtype=bool)
    for k, kind in enumerate(TIER_KINDS):
        for c, fc in enumerate(FAILURE_CLASSES):
            native[:, k, c] = b[f"ckpt_{kind}_survives_{fc}"]
    node_loss = np.array([fc in NODE_LOSS_CLASSES for fc in FAILURE_CLASSES])
    from_peer = ~native & (replicas > 0)[:, :, None] & node_loss
    survives = native | from_peer
    reload = np.zeros(from_peer.shape)
    reload[:] = np.where(from_peer, peer[:, :, None], own[:, :, None])
    return {
        "ckpt_bytes": ckpt, "ckpt_shard_bytes": lay["shard_bytes"], "ckpt_node_bytes": lay["node_bytes"],
        "d2h_s": d2h, "save_s": save, "stall_s": stall, "reload_s": reload,
        "enabled": enabled, "survives": survives,
    }
