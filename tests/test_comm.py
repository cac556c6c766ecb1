"""Collective times against hand calculations of the α-β ring formulas (Thakur et al. 2005)."""

import numpy as np
import pytest

from planner import comm


def test_ring_allreduce_hand():
    # 1 GB over 8 ranks at 100 GB/s: 2·7/8·1e9/1e11 = 0.0175 s; plus 2·7 steps × 1 µs.
    t = comm.ring_allreduce_s(1e9, 8, 100e9, alpha_s=1e-6)
    assert t == pytest.approx(0.0175 + 14e-6, rel=1e-12)


def test_all_gather_and_reduce_scatter_hand():
    # (n−1)/n · S / BW: 4 ranks, 400 MB, 50 GB/s -> 3/4 · 0.008 = 0.006 s
    assert comm.all_gather_s(400e6, 4, 50e9) == pytest.approx(0.006)
    assert comm.reduce_scatter_s(400e6, 4, 50e9) == pytest.approx(0.006)
    assert comm.all_to_all_s(400e6, 4, 50e9) == pytest.approx(0.006)


def test_single_rank_is_free():
    assert comm.ring_allreduce_s(1e9, 1, 1e9, alpha_s=1e-3) == 0.0
    assert comm.all_gather_s(1e9, 1, 1e9) == 0.0


def test_vectorised_shapes():
    t = comm.ring_allreduce_s(np.array([1e9, 2e9]), np.array([2, 4]), np.array([1e10, 1e10]))
    assert t.shape == (2,)
    assert t == pytest.approx([0.1, 0.3])  # 2·1/2·0.1 ; 2·3/4·0.2


KW = dict(eff_scaleup=1.0, eff_network=1.0, alpha_scaleup_s=0.0, alpha_network_s=0.0)


def test_dp_allreduce_inside_node_uses_nvlink():
    # TP2 · DP4 on one 8-GPU node: DP stride 2, span 8 -> NVLink 450 GB/s.
    t = comm.group_collective_s("all_reduce", 1e9, 4, 2, 8, 450e9, 50e9, **KW)
    assert float(t) == pytest.approx(2 * 3 / 4 * 1e9 / 450e9)


def test_dp_allreduce_across_nodes_uses_network():
    # TP8 on DGX: the DP group (stride 8) has one member per node -> per-GPU NIC 50 GB/s.
    t = comm.group_collective_s("all_reduce", 1e9, 4, 8, 8, 450e9, 50e9, **KW)
    assert float(t) == pytest.approx(2 * 3 / 4 * 1e9 / 50e9)


def test_tp8_on_dgx_is_nvlink_and_nvl72_domain():
    bw, intra, g, nd = comm.group_bandwidth(8, 1, 8, 450e9, 50e9, 0.8, 0.9)
    assert bool(intra) and float(bw) == pytest.approx(360e9)
    # DP 16 with stride 4 (span 64) of a 64-GPU job on one NVL72 rack: the effective domain
    # is min(72, 64) = 64 (timing passes min(domain, n_gpus)) -> NVLink.
    bw, intra, g, nd = comm.group_bandwidth(16, 4, 64, 900e9, 50e9, 1.0, 1.0)
    assert bool(intra) and float(bw) == pytest.approx(900e9)


def test_groups_straddling_an_nvl72_domain_use_the_network():
    """TP 16 on 72-GPU domains: ranks 64-79 straddle racks 0 and 1, so the slowest TP group
    crosses the network: 2 domains, gcd(16, 72) = 8 members on each side of the cut, ring
    bandwidth min(NVLink, 8 NICs) = min(900e9, 8·50e9) = 400e9 (efficiencies 1)."""
    bw, intra, g, nd = comm.group_bandwidth(16, 1, 72, 900e9, 50e9, 1.0, 1.0)
    assert not bool(intra) and float(g) == 8 and float(nd) == 2 and float(bw) == pytest.approx(400e9)
    # TP 8 divides 72: every group inside a rack.
    bw, intra, g, nd = comm.group_bandwidth(8, 1, 72, 900e9, 50e9, 1.0, 1.0)
    assert bool(intra) and float(nd) == 1


def test_placement_domain_blocks_of_nodes():
    """comm.placement_domain by hand: a job inside one domain keeps its own size; a larger job
    fills each NVL72 rack with 4 · 2^floor(log2(72/4)) = 4 · 16 = 64 GPUs (Slurm --segment 16);
    8-GPU baseboards keep 8; an NVL36 rack (9 trays of 4) gives 4 · 8 = 32."""
    got = comm.placement_domain([72, 72, 72, 8, 8, 36], [4, 4, 4, 8, 8, 4], [64, 72, 256, 8, 1024, 512])
    assert got.tolist() == [64.0, 72.0, 64.0, 8.0, 8.0, 32.0]


def test_ep64_on_256_gb200_gpus_stays_on_nvlink():
    """EP 64 over 256 GB200 GPUs: with 64-GPU blocks per rack every EP group lies in one rack
    (span 64 divides the 64-GPU block), so the all-to-all is NVLink-only. Filling racks with all
    72 GPUs would make ranks 64-127 straddle racks 0 and 1 (the network would carry it)."""
    dom = comm.placement_domain(72, 4, 256)
    _, intra, _, nd = comm.group_bandwidth(64, 1, dom, 900e9, 50e9, 1.0, 1.0)
    assert bool(intra) and float(nd) == 1
    _, intra72, _, _ = comm.group_bandwidth(64, 1, 72, 900e9, 50e9, 1.0, 1.0)
    assert not bool(intra72)


def test_in_network_reduction_raises_allreduce_bandwidth():
    base = comm.group_collective_s("all_reduce", 1e9, 8, 1, 8, 450e9, 50e9, **KW)
    inr = comm.group_collective_s("all_reduce", 1e9, 8, 1, 8, 450e9, 50e9, in_network_reduction=True, **KW)
    assert float(base / inr) == pytest.approx(comm.IN_NETWORK_ALLREDUCE_SPEEDUP)


def test_in_network_reduction_applies_inside_one_nvlink_domain_only():
    """NVLS is NVLink's: a DP ring over 16 GPUs at stride 1 on 8-GPU domains crosses the network
    and gets no speed-up (as in the engine, docs/timing.md; review 25: the reference function
    applied it to any ring)."""
    base = comm.group_collective_s("all_reduce", 1e9, 16, 1, 8, 450e9, 50e9, **KW)
    inr = comm.group_collective_s("all_reduce", 1e9, 16, 1, 8, 450e9, 50e9, in_network_reduction=True, **KW)
    assert float(inr) == float(base)


def test_bad_kind():
    with pytest.raises(ValueError):
        comm.group_collective_s("broadcast", 1.0, 2, 1, 8, 1.0, 1.0, **KW)


def test_all_to_all_network_frac_scales_only_the_network_share():
    """Node-limited routing (DeepSeek-V3 §2.1.2) sends a token across the network once per node:
    the (n−g)/n share of an all-to-all that leaves the node scales by min(top_k, M)/top_k.
    EP 64 over 8-GPU nodes, S = 1 GB per rank, NVLink 450 GB/s × 0.8, NIC 50 GB/s × 0.92, α = 0:
    network part 56/64 · 1e9 · r / 46e9, NVLink part 7/64 · 1e9 / 360e9 (0.30 ms), in parallel."""
    kw = dict(eff_scaleup=0.8, eff_network=0.92, alpha_scaleup_s=0.0, alpha_network_s=0.0)
    full = comm.group_collective_s("all_to_all", 1e9, 64, 1, 8, 450e9, 50e9, **kw)
    half = comm.group_collective_s("all_to_all", 1e9, 64, 1, 8, 450e9, 50e9, network_frac=0.5, **kw)
    assert float(full) == pytest.approx(56 / 64 * 1e9 / 46e9, rel=1e-12)  # 19.02 ms
    assert float(half) == pytest.approx(56 / 64 * 1e9 * 0.5 / 46e9, rel=1e-12)  # 9.51 ms
    # a group inside one node never touches the network: the fraction does not act
    intra = comm.group_collective_s("all_to_all", 1e9, 8, 1, 8, 450e9, 50e9, network_frac=0.5, **kw)
    assert float(intra) == pytest.approx(7 / 8 * 1e9 / 360e9, rel=1e-12)


def test_divides_matches_integer_modulo():
    """comm._divides (floor(q) == q, the engine's cheap alignment test) agrees with integer
    ``total % span == 0`` for every GPU count pair up to 2^20 tested, including the worst case
    for rounding (a quotient just below an integer: total = k·span − 1)."""
    from hypothesis import given, settings, strategies as st

    @settings(max_examples=2000, deadline=None)
    @given(st.integers(1, 2**20), st.integers(1, 2**20))
    def check(span, total):
        assert bool(comm._divides(np.float64(span), np.float64(total))) == (total % span == 0)
        near = span * (total // span + 1) - 1  # one GPU short of a multiple
        assert bool(comm._divides(np.float64(span), np.float64(near))) == (near % span == 0)

    check()
    spans = np.array([1.0, 2, 3, 7, 8, 16, 64, 72, 72, 144, 1e6 + 1])
    totals = np.array([8.0, 72, 72, 72, 72, 72, 72, 72, 144, 144, (1e6 + 1) * 999])
    np.testing.assert_array_equal(comm._divides(spans, totals), totals.astype(np.int64) % spans.astype(np.int64) == 0)
