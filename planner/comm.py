"""Collective-communication times, α-β model, vectorised.

Every function takes broadcasting array-likes (one element per configuration) and returns
float64 arrays of seconds (or bytes/s for bandwidths). There is no loop over configurations.

Model (DESIGN §4.3; Thakur, Rabenseifner & Gropp, "Optimization of Collective Communication
Operations in MPICH", IJHPCA 2005, ring algorithms; NCCL's ``busBW`` convention,
nccl-tests ``doc/PERFORMANCE.md``):

* ring all-reduce of ``S`` bytes over ``n`` ranks: ``2·(n−1)/n · S / BW + 2·(n−1)·α``
* ring reduce-scatter / all-gather (``S`` = the full, unsharded buffer):
  ``(n−1)/n · S / BW + (n−1)·α``
* all-to-all (``S`` = bytes each rank holds before the exchange): ``(n−1)/n · S / BW + (n−1)·α``
* point-to-point: ``S / BW + α``

``BW`` is the *achieved* bandwidth of the link the group spans: the nominal one-direction
bandwidth times a link efficiency (NVLink ≈ 0.8, InfiniBand ≈ 0.9; hardware.md §6b,
constants in ``hardware/calibration.json``).

Placement (Megatron-LM ``parallel_state``: TP innermost, then CP, EP, DP, PP outermost): a
group of ``n`` ranks spaced ``stride`` apart in the global rank order has
``g = clip(domain // stride, 1, n)`` members inside one NVLink domain and spans
``N = ceil(n/g)`` domains. ``domain`` is the part of an NVLink domain a job fills before the
next (:func:`placement_domain`: 64 of an NVL72 rack's 72 GPUs for a job larger than a rack).
Expert groups follow Megatron-Core's expert rank order (tp-cp-ep-dp-pp with tp = the expert TP
``etp`` and cp = 1, ``initialize_model_parallel``): the EP group is ``ep`` ranks ``etp`` apart
(``tp`` apart with the default etp = tp), the expert data-parallel group ``tp·cp·dp/(etp·ep)``
ranks ``etp·ep`` apart (planner.timing passes those strides).

* ``N = 1``: the whole ring runs over NVLink (``scaleup_bw_bytes_per_s``).
* ``N > 1``: the ring crosses domains. NCCL runs one ring per NIC, so each of the ``g``
  members of a domain drives its own NIC share and the ring's bottleneck bandwidth is
  ``min(NVLink, g · nic_bw_per_gpu)`` (this reproduces the measured 2-node DGX A100 all-reduce
  busBW of 192 GB/s = 8 × 24 GB/s, hardware.md §6b, nccl-1576). For ``g = 1`` (e.g. DP with
  TP = 8 on an 8-GPU node) it is the per-GPU network share, as the planning rule in DESIGN
  §4.3 states. This is a simplification: it ignores the rail topology, tree algorithms and
  congestion at scale.
* Latency of one ring pass: ``(n−1)·α_nvl`` inside one domain; across domains the hierarchical
  count ``(g−1)·α_nvl + (N−1)·α_net``, but never less than the same ring inside one domain,
  ``(n−1)·α_nvl``: without the floor a group split over two 8-GPU domains (TP 16: 19 µs) paid
  less than inside one 16-GPU domain (30 µs), so a larger NVLink domain made the step slower
  (found by a property-test review, 2026-11-30: up to 14 % on short steps; with the floor the
  calibration and out-of-sample medians are unchanged at 4 digits). The same rule for all-to-all.

Full-mesh scale-up fabrics (no switch: AMD Instinct MI300X / MI325X / MI350X / MI355X Infinity
Fabric, Intel Gaudi 2 / 3 RoCE, the 4-GH200 node): each GPU has one direct link to each of the
``D − 1`` other GPUs of its domain, ``scaleup_bw / (D − 1)`` apiece. A group of ``g`` of them
inside the domain can drive only its ``g − 1`` links (RCCL / HCCL run one ring per link
permutation), so its scale-up bandwidth is ``min(g − 1, D − 1)/(D − 1) · scaleup_bw`` and a
point-to-point send gets one link. Behind an NVSwitch any group gets the whole ``scaleup_bw``.
``mesh_links`` = ``D − 1`` on a mesh row, 0 on a switched one. Source: the catalogue's per-peer
figures (MI300X 64 GB/s per direction per peer, Gaudi 2 3 × 100 GbE = 37.5 GB/s, GH200 quad 150
GB/s; hardware/accelerators.json notes) and hardware.md §6b: a 2-GPU MI300X all-reduce reaches
47.7 GB/s busBW, 0.75 of one 64 GB/s link, against 312.9 GB/s over all 7 (found by review 48c:
TP 2 on MI300X was costed at the whole 448 GB/s, 7× the one link it uses).

In-network reduction (NVLink SHARP, NVLS, inside one NVSwitch domain) raises the achieved
all-reduce bandwidth by ``IN_NETWORK_ALLREDUCE_SPEEDUP`` (H100: 480 GB/s NVLS busBW vs
370 GB/s ring, hardware.md §6b, sources nccl-tests-212 and stas-net). A ring that crosses the
network gets no speed-up: that figure is NVLink's, and IB SHARP's effect on a ring bound by the
per-GPU NIC share is not modelled (the engine's rule, :mod:`planner.timing`; found by review: a
DP all-reduce over InfiniBand ran above the NIC's line rate).
"""

from __future__ import annotations

import numpy as np

#: Achieved all-reduce bandwidth with NVLS (inside one NVLink domain) over the ring value: 480/370 (H100 8-GPU
#: busBW with NVLS, nccl-tests issue #212, vs ring, stas00 ml-engineering; hardware.md §6b).
IN_NETWORK_ALLREDUCE_SPEEDUP = 480.0 / 370.0


def _f(x):
    return np.asarray(x, dtype=np.float64)


def _divides(span, total):
    """``total mod span == 0`` for GPU counts held as floats (arrays (N,) or scalars; bool).

    ``q = total / span`` is an integer exactly when ``span`` divides ``total``; otherwise its
    distance to the nearest integer is at least ``1/span``, far above the rounding of ``q`` for
    counts below 2^52, so ``floor(q) == q`` is exact. Three array passes where ``np.fmod`` on
    float64 costs about seven times as long (the engine's hot loop calls this per collective).
    ``span`` below 1 (a group of 0 ranks) is taken as 1; callers treat such groups apart.
    """
    q = total / np.maximum(span, 1.0)
    return np.floor(q) == q


def placement_domain(domain_size, gpus_per_node, n_gpus):
    """GPUs of one NVLink domain that a job's rank order fills before moving to the next.

    A job no larger than one domain sits inside it (``n_gpus``). A larger job is placed in
    blocks of ``gpus_per_node · 2^⌊log2(domain / gpus_per_node)⌋`` GPUs per domain: the
    largest power-of-two number of nodes that fits, so (with a power-of-two node size)
    power-of-two TP / CP / EP groups never straddle two domains. On GB200 / GB300 NVL72 (4-GPU
    trays, 72-GPU racks) that is 16 trays = 64 GPUs per rack, the Slurm ``--segment 16`` NVIDIA
    recommends for jobs of 128+ GPUs such as MoE training (NVIDIA Technical Blog, "Unlock
    Exascale Performance on NVIDIA GB200 NVL72 with Slurm Topology-Aware Job Scheduling",
    2025; taken here for every job larger than a rack); NVIDIA's own GB200 / GB300 benchmark
    tables use 8, 64 and 256 GPUs (Megatron-Bridge ``docs/performance-summary.md``). On
    8-GPU baseboards the block is the domain itself.

    Parameters: arrays (N,) — domain size, GPUs per node, GPUs of the job. Returns (N,) GPUs.
    """
    dom, gpn, n = _f(domain_size), np.maximum(_f(gpus_per_node), 1.0), _f(n_gpus)
    block = gpn * np.exp2(np.floor(np.log2(np.maximum(dom / gpn, 1.0))))
    return np.where(n <= dom, n, np.minimum(block, dom))


def group_layout(n, stride, domain_size, n_total=None):
    """Members of a group per NVLink domain and the number of domains it spans.

    Parameters
    ----------
    n : array (N,) — group size (ranks).
    stride : array (N,) — distance between consecutive group members in the global rank
        order (TP: 1; CP: tp; DP: tp·cp; PP: tp·cp·dp).
    domain_size : array (N,) — GPUs per NVLink domain (8 on DGX, 72 on NVL72).
    n_total : array (N,), optional — GPUs of the job (the ranks the blocks fill: ``n_total /
        span`` blocks). Without it every offset of a block inside a domain is taken to occur.

    Returns
    -------
    g : array (N,) — members inside one domain (of the worst-placed group).
    n_domains : array (N,) — domains the worst-placed group spans.

    Notes
    -----
    Groups are aligned blocks of ``span = n·stride`` consecutive ranks (Megatron's order). A
    block lies inside one domain exactly when ``domain mod span == 0``; then ``g = n`` and one
    domain. A block smaller than the domain that does not divide it (TP 16 on a 72-GPU NVL72
    domain: ranks 64–79 straddle two domains) has groups that cross a domain boundary; the
    slowest group sets the pace, so such groups count as spanning 2 domains, with
    ``gcd(span, domain)/stride`` members on the smaller side of the worst cut (with ``n_total``
    and fewer blocks than offsets, the worst cut of the blocks present, as below). A block larger
    than the domain holds ``clip(domain // stride, 1, n)`` members per domain and spans
    ``ceil(n / g)`` domains — when ``stride`` divides the domain and ``span`` is not a multiple of
    it, the blocks start at every multiple of ``gcd(span, domain)`` inside a domain, so the worst
    group has only ``gcd(span, domain)/stride`` members in one of its domains, and that domain's
    NICs carry its ring: ``g`` is that count, as for a straddling block (until review 17c the
    fuller side's ``domain // stride``: DP 12 at TP 1 on 8-GPU nodes, ranks 0–11 on 8 + 4 GPUs,
    had its network bandwidth counted over 8 NICs where the 4-GPU side has 4; TP 4 × DP 3 over
    8 + 4 GPUs over 2 NICs where one side has 1). Those offsets all occur only when the job holds
    at least ``domain / gcd(span, domain)`` blocks (always when the job fills whole domains);
    with ``n_total`` given and fewer blocks, ``g`` is the fewest members a group of the blocks
    present has in one domain, ``min((domain − r)/stride, ((r + span) mod domain)/stride)`` over
    their offsets ``r = b·span mod domain`` (found by review 17f: 216 GB200 GPUs in blocks of 64
    per rack, 64 + 64 + 64 + 24, TP 4 × DP 54: the one DP block has 24/4 = 6 members in the last
    rack, where ``gcd(216, 64)/4`` counted 2 NICs).
    """
    n, stride, dom = _f(n), _f(stride), _f(domain_size)
    stride = np.maximum(stride, 1.0)
    span = n * stride
    big = span > dom
    n1 = np.maximum(n, 1.0)
    g_full = np.minimum(np.maximum(np.floor(dom / stride), 1.0), n1)  # clip(·, 1, n1), cheaper
    nd_big = np.ceil(n / g_full)  # domains a block larger than one spans
    g_big = g_full
    # a block larger than the domain, its stride dividing the domain but its span not a multiple
    # of it: the worst-placed group has gcd(span, domain)/stride members in one domain (docstring)
    ragged = big & ~_divides(dom, span) & _divides(stride, dom)
    if ragged.any():
        gcd = np.gcd(span.astype(np.int64), dom.astype(np.int64))
        worst = gcd / stride
        if n_total is not None:  # fewer blocks than offsets: the offsets of the blocks present
            blocks = np.maximum(np.floor(_f(n_total) / np.maximum(span, 1.0)), 1.0)
            few = ragged & (blocks < dom / gcd) & (blocks <= FEW_BLOCKS_MAX)
            if few.any():
                worst = np.where(few, _present_blocks_worst(*np.broadcast_arrays(span, stride, dom, blocks, few)),
                                 worst)
        g_big = np.where(ragged, np.maximum(np.minimum(worst, g_full), 1.0), g_full)
    # a stride that does not divide the domain (TP 3 on 8-GPU nodes: DP members 3 apart): a group's
    # first and last domains can hold fewer than domain // stride members (review 48a: TP 3 × DP 4 on
    # 24 GPUs, the group {0, 3, 6 | 9} has 1 member on its second node, where 2 NICs were counted)
    odd = big & ~_divides(stride, dom) & (stride < dom)
    if odd.any():
        blocks = (np.maximum(np.floor(_f(n_total) / np.maximum(span, 1.0)), 1.0) if n_total is not None
                  else np.full(span.shape, np.inf))
        g_big = np.where(odd, np.maximum(np.minimum(
            _odd_stride_worst(*np.broadcast_arrays(n1, stride, dom, span, blocks, odd)), g_big), 1.0), g_big)
    aligned = _divides(span, dom) | (n <= 1.0)  # a group of one is in one domain
    straddle = ~big & ~aligned
    if straddle.any():
        gcd_s = np.gcd(span.astype(np.int64), dom.astype(np.int64))
        cut = gcd_s / stride
        if n_total is not None:  # as for a ragged block: the offsets of the blocks the job holds
            blocks = np.maximum(np.floor(_f(n_total) / np.maximum(span, 1.0)), 1.0)
            few = straddle & (blocks < dom / gcd_s) & _divides(stride, dom) & (blocks <= FEW_BLOCKS_MAX)
            if few.any():
                worst = _present_blocks_worst(*np.broadcast_arrays(span, stride, dom, blocks, few))
                cut = np.where(few, np.minimum(worst, n1), cut)
        # a stride that does not divide the domain, the group within one domain's size: the gcd count
        # is wrong both ways (review 48: n 15, stride 3, domain 64 counted 1 where the worst group has
        # 6 members on one side; n 4, stride 3, domain 16 a fractional 1.33); the per-group count of
        # the odd-stride rule above, which a brute-force placement check confirms
        odd_s = straddle & ~_divides(stride, dom) & (stride < dom)
        if odd_s.any():
            blocks_o = (np.maximum(np.floor(_f(n_total) / np.maximum(span, 1.0)), 1.0) if n_total is not None
                        else np.full(span.shape, np.inf))
            w = _odd_stride_worst(*np.broadcast_arrays(n1, stride, dom, span, blocks_o, odd_s))
            cut = np.where(odd_s, np.minimum(w, n1), cut)
        g = np.where(big, g_big, np.where(aligned, n1, np.maximum(cut, 1.0)))
        nd = np.where(big, nd_big, np.where(aligned, 1.0, 2.0))
        return g, nd
    # no group straddles a domain boundary (the usual case): the same values, without the
    # integer gcd; x·cond sums of finite values (exact) instead of selects
    nb = ~big
    return g_big * big + n1 * nb, nd_big * big + nb


#: Most blocks :func:`group_layout` places one by one (a job with fewer blocks than a block has
#: offsets in a domain); beyond it, only with a domain of over 4,096 GPUs (the blocks are fewer than
#: ``domain / gcd(span, domain)``), the gcd rule's count stands, the worst offset's.
FEW_BLOCKS_MAX = 4096
_FEW_BLOCKS_CELLS = 1 << 20


def _present_blocks_worst(span, stride, dom, blocks, sel):
    """(N,) array, at ``sel`` rows: the fewest members a group has in one domain over the blocks
    ``b = 0 … blocks − 1`` of a job that cross a domain boundary, for a stride dividing the domain
    (:func:`group_layout`): the block at offset ``r = b·span mod domain`` crosses one when ``r +
    span > domain`` and then holds ``(domain − r)/stride`` members of each group in its first
    domain, full domains after it, and ``((r + span) mod domain)/stride`` in its last (a full one
    when it ends on a boundary). Only rows with fewer blocks than ``domain / gcd(span, domain)``
    (the distinct offsets) and at most :data:`FEW_BLOCKS_MAX` blocks come here; ``inf`` elsewhere
    and where no block crosses."""
    S = span[sel].astype(np.int64)[:, None]
    D = dom[sel].astype(np.int64)[:, None]
    s = stride[sel][:, None]
    B = blocks[sel][:, None]
    full = D / s
    worst = np.full(len(S), np.inf)
    k = int(B.max())  # <= FEW_BLOCKS_MAX (group_layout)
    step = max(1, _FEW_BLOCKS_CELLS // len(S))  # blocks per pass: at most ~1M cells at a time
    for b0 in range(0, k, step):  # over block offsets, each pass vectorised over the rows
        b = np.arange(b0, min(k, b0 + step), dtype=np.int64)[None, :]
        r = np.mod(b * S, D)
        end = np.mod(r + S, D)
        first = (D - r) / s
        last = np.where(end > 0, end / s, full)
        crosses = (b < B) & (r + S > D)
        per_block = np.where(crosses, np.minimum(np.minimum(first, last), full), np.inf)
        worst = np.minimum(worst, per_block.min(axis=1))
    out = np.full(span.shape, np.inf)
    out[sel] = worst
    return out


def mesh_share(g, mesh_links):
    """Share of a GPU's scale-up bandwidth a group of ``g`` members of one domain can use (arrays (N,)).

    ``min(g − 1, D − 1)/(D − 1)`` on a full-mesh fabric (``mesh_links`` = ``D − 1`` > 0: one direct
    link per peer); 1 behind a switch (``mesh_links`` = 0), with ``mesh_links=None`` (see the module
    docstring), and for ``g ≤ 1`` (one member per domain: nothing crosses the scale-up links, the
    network term alone bounds the ring).
    """
    if mesh_links is None:
        return 1.0
    links = _f(mesh_links)
    g = _f(g)
    return np.where((links > 0.0) & (g > 1.0), np.minimum(g - 1.0, links) / np.maximum(links, 1.0), 1.0)


def _odd_stride_worst(n, stride, dom, span, blocks, sel):
    """(N,) array, at ``sel`` rows: the fewest members a group has in one of the domains it spans,
    for a stride that does not divide the domain (:func:`group_layout`); ``inf`` elsewhere.

    A group of ``n`` members ``stride`` apart starting at ``x0 = r + o`` (``r = b·span mod domain`` the
    block's offset in its domain, ``o < stride`` the group's in the block) holds ``⌊(D⌈(x0+1)/D⌉ − 1 −
    x0)/stride⌋ + 1`` members in its first domain, ``⌊(x_last mod D)/stride⌋ + 1`` in its last, and
    at least ``⌊D/stride⌋`` in each one between. The loops run over ``o`` (fewer than the domain
    size) and the distinct block offsets (at most ``domain / gcd(span, domain)``, fewer when the job
    holds fewer blocks), each vectorised over the rows."""
    N_ = n[sel]
    S = stride[sel]
    D = dom[sel]
    SP = span[sel]
    B = np.minimum(blocks[sel], D / np.gcd(SP.astype(np.int64), D.astype(np.int64)))
    worst = np.full(N_.shape, np.inf)
    interior = np.floor(D / S)
    n_o = int(np.max(S))
    # the offsets o as a second axis, rows in chunks of at most ~1M cells (review 48: a Python loop
    # over o took 3.7 s for one row of stride 511 in a 512-GPU domain)
    rows = max(1, _FEW_BLOCKS_CELLS // n_o)
    o = np.arange(n_o, dtype=np.float64)[None, :]
    for lo in range(0, len(N_), rows):
        c = slice(lo, lo + rows)
        Nc, Sc, Dc, SPc, Bc, Ic = (x[c][:, None] for x in (N_, S, D, SP, B, interior))
        wc = np.full(Nc.shape[0], np.inf)
        for b in range(int(np.max(np.minimum(Bc, FEW_BLOCKS_MAX)))):
            x0 = np.mod(b * SPc, Dc) + o
            last = x0 + (Nc - 1.0) * Sc
            d0, d1 = np.floor(x0 / Dc), np.floor(last / Dc)
            first = np.floor((Dc * (d0 + 1.0) - 1.0 - x0) / Sc) + 1.0
            tail = np.floor((last - Dc * d1) / Sc) + 1.0
            w = np.minimum(first, tail)
            w = np.where(d1 - d0 >= 2.0, np.minimum(w, Ic), w)
            on = (b < Bc) & (o < Sc) & (d1 > d0)
            wc = np.minimum(wc, np.where(on, w, np.inf).min(axis=1))
        worst[c] = wc
    out = np.full(n.shape, np.inf)
    out[sel] = worst
    return out


def group_bandwidth(n, stride, domain_size, scaleup_bw, nic_bw, eff_scaleup, eff_network, n_total=None,
                    mesh_links=None):
    """Achieved ring bandwidth [bytes/s] of a group and whether it stays in one domain.

    ``intra``: ``scaleup_bw · eff_scaleup``; else ``min(scaleup_bw · eff_scaleup,
    g · nic_bw · eff_network)`` (see the module docstring), the scale-up term × :func:`mesh_share` on
    a full-mesh fabric (``mesh_links``: ``D − 1`` links per GPU, 0 or None behind a switch).
    Returns ``(bw, intra, g, n_domains)``; ``n_total``: the job's GPUs (:func:`group_layout`).
    """
    g, nd = group_layout(n, stride, domain_size, n_total)
    nvl = _f(scaleup_bw) * _f(eff_scaleup) * mesh_share(g, mesh_links)
    net = g * _f(nic_bw) * _f(eff_network)
    intra = nd <= 1.0
    bw = np.where(intra, nvl, np.minimum(nvl, net))
    return bw, intra, g, nd


def ring_allreduce_s(size_bytes, n, bw_bytes_per_s, alpha_s=0.0):
    """Ring all-reduce: ``2·(n−1)/n · S / BW + 2·(n−1)·α`` [s]; 0 when ``n = 1``.

    Thakur et al. 2005 (ring / Rabenseifner); NCCL busBW = algBW · 2(n−1)/n.
    """
    n = _f(n)
    k = np.maximum(n - 1.0, 0.0)
    return 2.0 * k / np.maximum(n, 1.0) * _f(size_bytes) / _f(bw_bytes_per_s) + 2.0 * k * _f(alpha_s)


def reduce_scatter_s(size_bytes, n, bw_bytes_per_s, alpha_s=0.0):
    """Ring reduce-scatter of a full buffer of ``S`` bytes: ``(n−1)/n · S / BW + (n−1)·α`` [s]."""
    n = _f(n)
    k = np.maximum(n - 1.0, 0.0)
    return k / np.maximum(n, 1.0) * _f(size_bytes) / _f(bw_bytes_per_s) + k * _f(alpha_s)


def all_gather_s(size_bytes, n, bw_bytes_per_s, alpha_s=0.0):
    """Ring all-gather producing ``S`` bytes per rank: ``(n−1)/n · S / BW + (n−1)·α`` [s]."""
    return reduce_scatter_s(size_bytes, n, bw_bytes_per_s, alpha_s)


def all_to_all_s(size_bytes, n, bw_bytes_per_s, alpha_s=0.0):
    """All-to-all, ``S`` bytes held per rank: ``(n−1)/n · S / BW + (n−1)·α`` [s]."""
    return reduce_scatter_s(size_bytes, n, bw_bytes_per_s, alpha_s)


def p2p_s(size_bytes, bw_bytes_per_s, alpha_s=0.0):
    """Point-to-point send of ``S`` bytes: ``S / BW + α`` [s]."""
    return _f(size_bytes) / _f(bw_bytes_per_s) + _f(alpha_s)


def group_collective_s(kind, size_bytes, n, stride, domain_size, scaleup_bw, nic_bw, *,
                       eff_scaleup, eff_network, alpha_scaleup_s, alpha_network_s,
                       in_network_reduction=False, network_frac=1.0, n_total=None, mesh_links=None):
    """Time [s] of one collective of a placed group.

    Parameters
    ----------
    kind : {"all_reduce", "reduce_scatter", "all_gather", "all_to_all"} (one kind per call).
    size_bytes : array (N,) — the full buffer (all-reduce, reduce-scatter input, all-gather
        output) or the bytes held per rank (all-to-all).
    n, stride, domain_size : arrays (N,) — the group (see :func:`group_layout`).
    scaleup_bw, nic_bw : arrays (N,) — nominal one-direction bandwidths per GPU [bytes/s].
    eff_scaleup, eff_network : achieved / nominal bandwidth per link kind.
    alpha_scaleup_s, alpha_network_s : latency per ring step [s].
    in_network_reduction : array (N,) bool — NVLS: all-reduce bandwidth ×
        ``IN_NETWORK_ALLREDUCE_SPEEDUP`` where the group sits inside one NVLink domain (a
        group that crosses the network gets no speed-up, as in the engine).
    network_frac : array (N,) — all-to-all only: the share of the bytes bound for other
        domains that actually crosses the network (node-limited MoE routing sends a token once
        per destination node, not once per expert: ``min(top_k, M)/top_k``); 1 by default.
    mesh_links : array (N,) or None — ``D − 1`` on a full-mesh scale-up fabric, 0 behind a switch
        (:func:`mesh_share`; the module docstring).

    Notes
    -----
    All-to-all across domains: the ``(n−g)/n`` share of the buffer that leaves the domain goes
    through the rank's own NIC share, the ``(g−1)/n`` share over NVLink, concurrently:
    ``max((g−1)/n·S/NVL, (n−g)/n·S/NIC)``; with one network copy per destination domain
    (``network_frac`` < 1) NVLink also forwards what arrived for the domain's other ranks,
    ``(g−1)/g·S`` in all (:func:`_a2a_nvl_share`). Latency: ``(g−1)`` NVLink steps plus ``(N−1)``
    network steps per ring pass, at least ``(n−1)`` NVLink steps (one α per collective, not per
    bucket).
    """
    size = _f(size_bytes)
    n = _f(n)
    bw, intra, g, nd = group_bandwidth(n, stride, domain_size, scaleup_bw, nic_bw, eff_scaleup, eff_network,
                                       n_total, mesh_links)
    steps_nvl = np.where(intra, n - 1.0, g - 1.0)
    steps_net = np.where(intra, 0.0, nd - 1.0)
    # never below the same ring inside one domain, (n−1)·α_nvl (see the module docstring)
    alpha_pass = np.maximum(steps_nvl * _f(alpha_scaleup_s) + steps_net * _f(alpha_network_s),
                            np.maximum(n - 1.0, 0.0) * _f(alpha_scaleup_s))
    nm1 = np.maximum(n - 1.0, 0.0)
    frac = nm1 / np.maximum(n, 1.0)
    if kind == "all_reduce":
        bw_ar = bw * np.where(np.asarray(in_network_reduction, dtype=bool) & intra, IN_NETWORK_ALLREDUCE_SPEEDUP, 1.0)
        return 2.0 * frac * size / bw_ar + 2.0 * alpha_pass
    if kind in ("reduce_scatter", "all_gather"):
        return frac * size / bw + alpha_pass
    if kind == "all_to_all":
        nvl = _f(scaleup_bw) * _f(eff_scaleup) * mesh_share(g, mesh_links)
        nic = _f(nic_bw) * _f(eff_network)
        t_intra = frac * size / nvl
        t_inter = np.maximum(_a2a_nvl_share(n, g, network_frac) * size / nvl,
                             (n - g) / n * size * _f(network_frac) / nic)
        return np.where(intra, t_intra, t_inter) + alpha_pass
    raise ValueError(f"kind = {kind!r}; allowed: all_reduce, reduce_scatter, all_gather, all_to_all")


def group_p2p_s(size_bytes, n, stride, domain_size, scaleup_bw, nic_bw, *, eff_scaleup, eff_network,
                alpha_scaleup_s, alpha_network_s, mesh_links=None):
    """Point-to-point transfer between neighbours of a placed group (pipeline stages) [s].

    The slowest boundary sets the pace: NVLink when the whole group fits in one domain
    (``stride·n ≤ domain``), else the per-GPU network share. On a full-mesh fabric (``mesh_links``
    = ``D − 1``) a send inside the domain has one direct link, ``scaleup_bw / (D − 1)``.
    """
    _, nd = group_layout(n, stride, domain_size)
    intra = nd <= 1.0
    bw = np.where(intra, _f(scaleup_bw) * _f(eff_scaleup) * mesh_share(2.0, mesh_links),
                  _f(nic_bw) * _f(eff_network))
    alpha = np.where(intra, _f(alpha_scaleup_s), _f(alpha_network_s))
    return np.where(_f(n) > 1.0, p2p_s(size_bytes, bw, alpha), 0.0)


def group_link(n, stride, domain_size, scaleup_bw, nic_bw, *, eff_scaleup, eff_network,
               alpha_scaleup_s, alpha_network_s, n_total=None, mesh_links=None):
    """Achieved ring bandwidth [bytes/s] and latency of one ring pass [s] of a placed group.

    The pieces of :func:`group_collective_s`, computed once per group so that several
    collectives of the same group reuse them: a ring all-reduce of ``S`` bytes then costs
    ``2·(n−1)/n·S/bw + 2·alpha``, a reduce-scatter or all-gather ``(n−1)/n·S/bw + alpha``.
    Returns ``(bw, alpha_pass, intra, g)`` (arrays (N,)).
    """
    bw, intra, g, nd = group_bandwidth(n, stride, domain_size, scaleup_bw, nic_bw, eff_scaleup, eff_network,
                                       n_total, mesh_links)
    n = _f(n)
    alpha = np.where(intra, (n - 1.0) * _f(alpha_scaleup_s),
                     np.maximum((g - 1.0) * _f(alpha_scaleup_s) + (nd - 1.0) * _f(alpha_network_s),
                                (n - 1.0) * _f(alpha_scaleup_s)))
    return bw, alpha, intra, g


# ----------------------------------------------------------------------------- fast paths
# The same model as the functions above, written with fewer array passes for the engine's
# hot loop (planner.timing): achieved bandwidths and latencies taken pre-multiplied, no
# ``np.where`` on row values (a data-dependent select costs ~10 array operations when the
# rows vary at random). Results equal the general functions' to floating-point rounding.

def ring_link(n, stride, domain_size, nvl_eff_bw, nic_eff_bw, alpha_scaleup_s, alpha_network_s, n_total=None,
              mesh_links=None):
    """Achieved ring bandwidth [bytes/s], one ring pass' latency [s] and ``intra`` of a group.

    As :func:`group_link`, with ``nvl_eff_bw = scaleup_bw · eff_scaleup`` and ``nic_eff_bw =
    nic_bw · eff_network`` given (arrays (N,)); ``stride=None`` means 1 (the TP group); ``n_total``
    the job's GPUs (:func:`group_layout`: the blocks it holds); ``mesh_links`` as
    :func:`group_bandwidth` (None: every row switched, no work).

    ``intra`` (one domain) holds exactly when ``g = n``, so ``bw = min(NVL, max(g·NIC,
    intra·NVL))`` and ``alpha = max((min(n, g) − 1)·α_nvl + (N − 1)·α_net, (n − 1)·α_nvl)`` equal
    the ``np.where`` forms of :func:`group_link` (``N = 1`` inside one domain).
    """
    n = _f(n)
    dom = _f(domain_size)
    span = n if stride is None else n * np.maximum(_f(stride), 1.0)
    intra = _divides(span, dom) | (n <= 1.0)  # aligned blocks inside one domain (group_layout)
    if intra.all():  # every group inside one domain: g = n (or 1 for n < 1), N = 1
        return nvl_eff_bw * mesh_share(n, mesh_links), (n - 1.0) * alpha_scaleup_s, intra
    g, nd = group_layout(n, 1.0 if stride is None else stride, dom, n_total)
    if mesh_links is not None:
        nvl_eff_bw = nvl_eff_bw * mesh_share(g, mesh_links)
    bw = np.minimum(nvl_eff_bw, np.maximum(g * nic_eff_bw, nvl_eff_bw * intra))
    alpha = np.maximum((np.minimum(n, g) - 1.0) * alpha_scaleup_s + (nd - 1.0) * alpha_network_s,
                       (n - 1.0) * alpha_scaleup_s)
    return bw, alpha, intra


def _a2a_nvl_share(n, g, network_frac):
    """Share of an all-to-all's per-GPU bytes S that crosses NVLink when the group spans domains of
    ``g`` of its ``n`` ranks: ``(g − 1)/n`` sent to the ranks of its own domain and, where the
    network copies are one per destination domain (``network_frac`` < 1: node-aware dispatch or
    node-limited routing, DeepEP's internode kernels), the forwarding inside the destination domain
    of what arrived for its other ranks, ``(n − g)/n · (g − 1)/g`` (a copy lands on the rank of the
    sender's local index and goes on over NVLink unless that rank holds the expert, 1 in g):
    together ``(g − 1)/g``. Review 45e: without the forwarding, an EP 16 group over two 8-GPU H800
    nodes was costed at half its time inside one 16-GPU domain (0.30 against 0.63 s a step)."""
    n, g = _f(n), _f(g)
    own = (g - 1.0) / np.maximum(n, 1.0)
    fwd = (n - g) / np.maximum(n, 1.0) * (g - 1.0) / np.maximum(g, 1.0)
    return own + np.where(_f(network_frac) < 1.0, fwd, 0.0)


def a2a_link_s(size_bytes, n, stride, domain_size, nvl_eff_bw, nic_eff_bw, alpha_scaleup_s, alpha_network_s,
               network_frac=1.0, n_total=None, mesh_links=None):
    """:func:`group_collective_s` ``("all_to_all", ...)`` with pre-multiplied achieved
    bandwidths (see :func:`ring_link`) [s], arrays (N,).

    ``max(s_nvl · S/NVL, (n−g)/n · S · network_frac/NIC) + (min(n, g) − 1)·α_nvl + (N − 1)·α_net``,
    ``s_nvl`` = (g−1)/n, or (g−1)/g with one network copy per destination domain
    (:func:`_a2a_nvl_share`):
    inside one domain ``g = n`` and ``N = 1``, so this is the reference's intra-domain form
    ``(n−1)/n · S/NVL + (n−1)·α_nvl`` without a select.
    """
    n = _f(n)
    size = _f(size_bytes)
    dom = _f(domain_size)
    intra = _divides(n * np.maximum(_f(stride), 1.0), dom) | (n <= 1.0)  # group_layout
    nn = np.maximum(n, 1.0)
    if intra.all():
        return (np.maximum(n - 1.0, 0.0) / nn * size / (nvl_eff_bw * mesh_share(n, mesh_links))
                + np.maximum(n - 1.0, 0.0) * alpha_scaleup_s)
    g, nd = group_layout(n, stride, dom, n_total)
    if mesh_links is not None:
        nvl_eff_bw = nvl_eff_bw * mesh_share(g, mesh_links)
    t = np.maximum(_a2a_nvl_share(nn, g, network_frac) * size / nvl_eff_bw,
                   (n - g) / nn * size * _f(network_frac) / nic_eff_bw)
    return t + np.maximum((np.minimum(n, g) - 1.0) * alpha_scaleup_s + (nd - 1.0) * alpha_network_s,
                          (n - 1.0) * alpha_scaleup_s)


def p2p_link_s(size_bytes, n, stride, domain_size, nvl_eff_bw, nic_eff_bw, alpha_scaleup_s, alpha_network_s,
               mesh_links=None):
    """:func:`group_p2p_s` with pre-multiplied achieved bandwidths (see :func:`ring_link`).

    The group stays in one domain exactly when ``domain mod (n·stride) == 0`` (group_layout);
    returns ``(n > 1) · (S / BW + α)`` [s] (arrays (N,)); one direct link on a full mesh.
    """
    n = _f(n)
    if mesh_links is not None:
        nvl_eff_bw = nvl_eff_bw * mesh_share(2.0, mesh_links)
    intra = _divides(n * np.maximum(_f(stride), 1.0), _f(domain_size)) | (n <= 1.0)  # group_layout
    if intra.all():
        bw, alpha = nvl_eff_bw, alpha_scaleup_s
    elif not intra.any():
        bw, alpha = nic_eff_bw, alpha_network_s
    else:
        bw = nic_eff_bw + (nvl_eff_bw - nic_eff_bw) * intra
        alpha = alpha_network_s + (alpha_scaleup_s - alpha_network_s) * intra
    return (_f(size_bytes) / bw + alpha) * (n > 1.0)
