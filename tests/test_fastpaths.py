"""The engine's fast paths equal the readable reference functions they replace.

planner.comm.ring_link / p2p_link_s / a2a_link_s are the hot-loop forms of group_link /
group_p2p_s / group_collective_s("all_to_all")
(same α-β model, fewer array passes); planner.batch.col / expand / where collapse uniform
columns to scalars without changing a value.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from planner import batch as B
from planner import comm

sizes = st.sampled_from([1, 2, 3, 4, 8, 16, 32, 64, 72, 128, 1024])
domains = st.sampled_from([1, 2, 4, 8, 72])


@settings(max_examples=200, deadline=None)
@given(n=st.lists(sizes, min_size=1, max_size=6), stride=st.lists(sizes, min_size=1, max_size=6),
       dom=domains, uniform=st.booleans())
def test_ring_link_and_p2p_equal_the_reference(n, stride, dom, uniform):
    k = min(len(n), len(stride))
    n = np.array(n[:k], dtype=float)
    stride = np.array(stride[:k], dtype=float)
    if uniform:
        n[:] = n[0]
        stride[:] = stride[0]
    kw = dict(eff_scaleup=0.8, eff_network=0.9, alpha_scaleup_s=5e-6, alpha_network_s=2e-5)
    bw_ref, alpha_ref, intra_ref, _ = comm.group_link(n, stride, dom, 450e9, 50e9, **kw)
    bw, alpha, intra = comm.ring_link(n, stride, dom, 450e9 * 0.8, 50e9 * 0.9, 5e-6, 2e-5)
    np.testing.assert_allclose(np.broadcast_to(bw, n.shape), bw_ref, rtol=1e-12)
    np.testing.assert_allclose(np.broadcast_to(alpha, n.shape), alpha_ref, rtol=1e-12, atol=1e-18)
    np.testing.assert_array_equal(intra, intra_ref)
    for frac in (1.0, 0.5):
        a_ref = comm.group_collective_s("all_to_all", 4.7e8, n, stride, dom, 450e9, 50e9, network_frac=frac, **kw)
        a = comm.a2a_link_s(4.7e8, n, stride, dom, 450e9 * 0.8, 50e9 * 0.9, 5e-6, 2e-5, network_frac=frac)
        np.testing.assert_allclose(np.broadcast_to(a, n.shape), a_ref, rtol=1e-12, atol=1e-18)
    p_ref = comm.group_p2p_s(3.3e7, n, stride, dom, 450e9, 50e9, **kw)
    p = comm.p2p_link_s(3.3e7, n, stride, dom, 450e9 * 0.8, 50e9 * 0.9, 5e-6, 2e-5)
    np.testing.assert_allclose(np.broadcast_to(p, n.shape), p_ref, rtol=1e-12)


def test_pipeline_p2p_by_hand():
    """33.55 MB between pipeline stages: inside one DGX (pp=2 over 8 GPUs with tp·cp·dp = 4)
    NVLink at 450e9·0.8 → 33.55e6/360e9 + 5 µs = 98.2 µs; across nodes (stride 8) the NIC
    share 50e9·0.9 → 33.55e6/45e9 + 20 µs = 765.6 µs."""
    inside = comm.p2p_link_s(33.55e6, np.array([2.0]), np.array([4.0]), 8, 360e9, 45e9, 5e-6, 2e-5)
    across = comm.p2p_link_s(33.55e6, np.array([2.0]), np.array([8.0]), 8, 360e9, 45e9, 5e-6, 2e-5)
    assert float(inside[0]) == 33.55e6 / 360e9 + 5e-6
    assert float(across[0]) == 33.55e6 / 45e9 + 2e-5


def test_col_collapses_uniform_columns_only():
    b = {"a": np.array([3.0, 3.0, 3.0]), "b": np.array([1, 2, 3]), "one": np.array([7])}
    assert np.ndim(B.col(b, "a")) == 0 and B.col(b, "a") == 3.0
    np.testing.assert_array_equal(B.col(b, "b", float), [1.0, 2.0, 3.0])
    assert B.col(b, "one") == 7
    np.testing.assert_array_equal(B.expand(B.col(b, "a"), 3), [3.0, 3.0, 3.0])
    assert B.expand(np.float64(2.0), 1).shape == (1,)


def test_where_with_scalar_condition_returns_the_operand():
    x, y = np.arange(3.0), np.zeros(3)
    assert B.where(np.True_, x, y) is x
    assert B.where(False, x, y) is y
    np.testing.assert_array_equal(B.where(np.array([True, False, True]), x, y), [0.0, 0.0, 2.0])



def test_one_row_view_gives_the_arrays_the_explain_functions_built(monkeypatch):
    """batch.OneRow: each column as np.asarray([value]) (shape (1,), the dtype numpy gives the
    scalar), made on first use; membership, length and iteration are the row's; read-only.
    memory.explain and reliability.explain read a row through it (0.1 ms less each) and give
    the same strings as with every column converted up front (the code before it)."""
    import pytest

    import planner
    from planner import engine, memory, reliability

    eager = lambda row: {k: np.asarray([v]) for k, v in row.items()}  # noqa: E731
    for preset in ("default", "mixtral-8x7b-h100-64", "llama3-405b-h100-16k"):
        out = engine.run_batch(B.from_scenarios([planner.load_preset(preset)]))
        row = B.row(out, 0)
        view = B.OneRow(row)
        assert len(view) == len(row) and list(view) == list(row) and "tp" in view and "nope" not in view
        for k in ("tp", "flash_attention", "params_total", "goodput"):
            a = view[k]
            assert a.shape == (1,) and a[0] == row[k] and a.dtype == np.asarray([row[k]]).dtype
            assert view[k] is a  # made once
        with pytest.raises(TypeError):
            view["tp"] = 3  # type: ignore[index]
        lazy_m, lazy_r = memory.explain(row), reliability.explain(row)
        monkeypatch.setattr(memory, "OneRow", eager)
        monkeypatch.setattr(reliability, "OneRow", eager)
        assert memory.explain(row) == lazy_m and reliability.explain(row) == lazy_r, preset
        monkeypatch.undo()
