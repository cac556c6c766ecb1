"""Memory model (planner/memory.py) against published numbers and hand calculations.

Sources: Rajbhandari et al. 2020 (ZeRO) Fig. 1 and §5; Korthikanti et al. 2022 Table 2 and
Figure 1; the runs in ../shared/validation/calibration.csv (all ran, so all must fit).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner import batch, memory, model_stats, validation
from planner.schema import ModelSpec, Scenario

GiB = 2.0**30
CAL = Path(__file__).resolve().parents[2] / "shared" / "validation" / "calibration.csv"
if not CAL.exists():
    CAL = Path("/work/shared/validation/calibration.csv")


def run(b):
    out = {**b, **model_stats.stats(b)}
    out.update(memory.stage(out))
    return out


def one(**kw):
    """A batch of one from a Scenario with an inline model (overrides: model=..., training=...)."""
    model = kw.pop("model")
    s = Scenario.model_validate({"model": model, **kw})
    return batch.from_scenarios([s])


GPT_7_5B = dict(name="gpt-7.5b", n_layers=36, hidden_size=4096, n_heads=32, ffn_hidden_size=16384,
                vocab_size=51200, gated_mlp=False, tied_embeddings=True, norm="layernorm", linear_bias=True)


# ---------------------------------------------------------------------------------------
# ZeRO (Rajbhandari et al. 2020), Fig. 1: Ψ = 7.5B, N_d = 64, K = 12, 2 + 2 + 12 B/param.
# ---------------------------------------------------------------------------------------
# Hand calculation (paper §5.1): baseline (2+2+K)Ψ = 16 × 7.5e9 = 120 GB;
# P_os: 2Ψ + 2Ψ + KΨ/N_d = 30e9 + 90e9/64 = 31.41 GB; P_os+g: 2Ψ + (2+K)Ψ/N_d = 15e9 + 105e9/64
# = 16.64 GB; P_os+g+p: 16Ψ/N_d = 1.875 GB (the figure prints 1.9 GB, rounded to 0.1 GB).
ZERO_FIG1_GB = {0: 120.0, 1: 31.4, 2: 16.6, 3: 1.9}


@pytest.mark.parametrize("zero", [0, 1, 2, 3])
def test_zero_fig1_pure(zero):
    w, g, o = memory.model_state_bytes(7.5e9, 64, zero, grad_bytes=2.0)
    got = float(w + g + o) / 1e9
    if zero == 3:  # printed to one decimal
        assert abs(got - ZERO_FIG1_GB[zero]) <= 0.05
    else:
        assert got == pytest.approx(ZERO_FIG1_GB[zero], rel=0.01)


@pytest.mark.parametrize("zero", [0, 1, 2, 3])
def test_zero_fig1_batch_path(zero):
    # GPT 7.5B of Narayanan et al. 2021 (36 × 4096): 7.46e9 parameters, within 0.6 % of Ψ.
    b = one(model=GPT_7_5B, training={"seq_len": 2048, "global_batch_size": 64, "micro_batch_size": 1,
                                       "grad_dtype": "bf16"},
            parallelism={"tp": 1, "pp": 1, "dp": 64, "zero_stage": zero},
            cluster={"system": "dgx-a100-80gb", "n_gpus": 64})
    out = run(b)
    psi = out["params_total"][0]
    assert psi == pytest.approx(7.5e9, rel=0.01)
    got = (out["mem_weights_bytes"] + out["mem_grads_bytes"] + out["mem_optimizer_bytes"])[0] / 1e9
    if zero == 3:
        assert abs(got - ZERO_FIG1_GB[zero]) <= 0.05
    else:
        assert got == pytest.approx(ZERO_FIG1_GB[zero], rel=0.01)


# ---------------------------------------------------------------------------------------
# Korthikanti et al. 2022, Table 2 (activation bytes per layer), hand-computed example.
# s = 2048, b = 4, h = 6144, a = 64, t = 8 (GPT 22B of the paper).
#   s·b·h = 2048 × 4 × 6144 = 50,331,648;  5·a·s/h = 5 × 64 × 2048 / 6144 = 106.667
#   no parallelism:      50,331,648 × (34 + 106.667)            = 7,079,985,152
#   TP (t = 8):          50,331,648 × (10 + 24/8 + 106.667/8)   = 1,325,400,064
#   TP + SP:             50,331,648 × (34 + 106.667) / 8        =   884,998,144
#   TP + SP + selective: 50,331,648 × 34 / 8                    =   213,909,504
#   full recompute:      2 × 50,331,648 / 8 (with SP)           =    12,582,912
#                        2 × 50,331,648 (without SP)            =   100,663,296
# ---------------------------------------------------------------------------------------
K22 = dict(s=2048, b=4, h=6144, a=64)


@pytest.mark.parametrize("kw, expected", [
    (dict(t=1), 7_079_985_152),
    (dict(t=8), 1_325_400_064),
    (dict(t=8, sequence_parallel=True), 884_998_144),
    (dict(t=8, sequence_parallel=True, recompute="selective"), 213_909_504),
    (dict(t=8, sequence_parallel=False, flash_attention=True), 50_331_648 * 13),  # 10 + 24/8
    (dict(t=8, sequence_parallel=True, recompute="full"), 12_582_912),
    (dict(t=8, sequence_parallel=False, recompute="full"), 100_663_296),
])
def test_korthikanti_table2(kw, expected):
    got = memory.activation_bytes_per_layer(K22["s"], K22["b"], K22["h"], K22["a"], **kw)
    assert float(got) == pytest.approx(expected, rel=1e-9)


def test_context_parallel_divides_sequence():
    # s -> s/c: with c = 2 and flash attention, exactly half of the c = 1 value.
    one_c = memory.activation_bytes_per_layer(4096, 1, 4096, 32, 4, sequence_parallel=True, flash_attention=True)
    two_c = memory.activation_bytes_per_layer(4096, 1, 4096, 32, 4, sequence_parallel=True, flash_attention=True, cp=2)
    assert float(two_c) == pytest.approx(float(one_c) / 2)


def test_gqa_gated_generalisation():
    # Llama 3 70B layer, t = 8 with SP, selective: per token (10h + 4q + 4kv + 6f)/t bytes
    # = (81,920 + 32,768 + 4,096 + 172,032)/8 = 36,352 B; × 8192 tokens = 297,795,584 B.
    got = memory.activation_bytes_per_layer(8192, 1, 8192, 64, 8, sequence_parallel=True, recompute="selective",
                                            n_kv_heads=8, head_dim=128, ffn=28672, gated_mlp=True)
    assert float(got) == pytest.approx(297_795_584)


# ---------------------------------------------------------------------------------------
# Calibration rows -> scenarios (one documented default rule for silent fields)
# ---------------------------------------------------------------------------------------
def calibration_scenarios():
    """The calibration runs as scenarios, built ONLY by the project's single default rule for
    unpublished settings (``planner.validation.row_to_scenario``; the rule and its sources are
    in the ``planner.validation`` docstring and docs/timing.md). Returns (scenarios, skipped)."""
    df = pd.read_csv(CAL)
    scen, _idx, skipped = validation.rows_to_scenarios(df)
    return scen, [df["run_id"].iloc[i] for i in skipped]


@pytest.fixture(scope="module")
def calibration():
    b, meta, skipped = validation.calibration_batch(CAL)
    out = run({k: v for k, v in b.items()})
    return list(meta["run_id"]), list(skipped["run_id"]), out


def test_every_calibration_run_fits(calibration):
    names, skipped, out = calibration
    assert len(names) >= 100, skipped
    frac = out["mem_total_bytes"] / out["hbm_usable_bytes"]
    order = np.argsort(-frac)
    # the most loaded runs, shown only when the test fails
    lines = [f"calibration: {len(names)} runs built, skipped (no architecture / layout): {skipped}",
             f"{'run_id':52s} {'total GiB':>9s} {'usable':>7s} {'frac':>6s} {'states':>7s} {'act':>6s} {'buf':>6s}"]
    for i in order[:12]:
        st = (out["mem_weights_bytes"][i] + out["mem_grads_bytes"][i] + out["mem_optimizer_bytes"][i]) / GiB
        lines.append(f"{names[i][:52]:52s} {out['mem_total_bytes'][i] / GiB:9.2f} "
                     f"{out['hbm_usable_bytes'][i] / GiB:7.2f} {frac[i]:6.3f} {st:7.2f} "
                     f"{out['mem_activations_bytes'][i] / GiB:6.2f} {out['mem_buffers_bytes'][i] / GiB:6.2f}")
    bad = [names[i] for i in np.flatnonzero(~out["fits"])]
    assert not bad, f"predicted not to fit, but ran: {bad}\n" + "\n".join(lines)


def test_no_dropout_drops_the_masks():
    """Korthikanti 2022 §4.1 by hand, 22B layer (s=2048, b=4, h=6144, a=64, t=8, TP+SP, no
    recompute): with dropout, s·b·h·(34 + 5·a·s/h)/t; without, the two 1-byte masks (2h) and
    the softmax dropout mask + output (3·a·s) go: s·b·h·(32 + 2·a·s/h)/t.
    = 2048·4·6144·(32 + 2·64·2048/6144)/8 = 6,291,456·(32 + 42.667) = 469,762,048 B."""
    kw = dict(sequence_parallel=True, recompute="none", flash_attention=False)
    with_do = memory.activation_bytes_per_layer(2048, 4, 6144, 64, 8, **kw)
    without = memory.activation_bytes_per_layer(2048, 4, 6144, 64, 8, dropout=False, **kw)
    assert float(with_do) == pytest.approx(2048 * 4 * 6144 * (34 + 5 * 64 * 2048 / 6144) / 8)
    assert float(without) == pytest.approx(469_762_048)


# ---------------------------------------------------------------------------------------
# Korthikanti et al. 2022, Figure 1 (per-GPU GiB, read from the chart): configurations of
# the KORTHIKANTI22 figure-1 rows of calibration.csv (t = 8; p = 1, 8, 35, 64; vpp 1, 3, 3, 1;
# micro-batch 4, 1, 1, 1; s = 2048).
# ---------------------------------------------------------------------------------------
FIG1 = {  # model: (params+optimizer, activations without recompute, SP + selective) [GiB]
    "22B": (45.56, 59.25, 9.56),
    "175B": (45.56, 66.84, 12.35),
    "530B": (31.64, 114.02, 23.08),
    "1T": (32.96, 131.25, 26.56),
}


def _fig1_batch(tag, *, sp, rc):
    s = next(x for x in calibration_scenarios()[0] if x.name == f"korthikanti22_{tag}_fullrecompute")
    par = s.parallelism.model_copy(update={"sequence_parallel": sp, "recompute": rc, "zero_stage": 0,
                                           "flash_attention": False})
    return batch.from_scenarios([s.model_copy(update={"parallelism": par})])


@pytest.mark.parametrize("tag", list(FIG1))
def test_korthikanti_fig1(tag):
    """Within 10 %. Differences stated: the figure gives 18 B/param (2 + 4 + 12, fp32 grads,
    no DP sharding) of the transformer layers' parameters over t·p; our first stage adds the
    TP-sharded word embedding and the learned position table, which Megatron does not shard
    over TP (+9 % for 530B, +11 % for 1T): without those two tables the first stage agrees with
    the chart within 1 %, and the mean over stages is also checked (within 2 %).
    Activations are those of the first stage, p (×(1 + (p−1)/(p·v)) interleaved) micro-batches
    in flight; 'without recompute' is TP without SP (10 + 24/t), as the figure's baseline."""
    pstates, act_none, act_sel = FIG1[tag]
    out = run(_fig1_batch(tag, sp=False, rc="none"))
    states = memory.first_last(out)[0]
    first = (states["mem_weights_bytes"] + states["mem_grads_bytes"] + states["mem_optimizer_bytes"])[0] / GiB
    h, V, t = (float(out[k][0]) for k in ("hidden_size", "vocab_size", "tp"))
    tables = 18.0 * (V * h / t + float(out["learned_pos_embeddings"][0]) * h) / GiB  # word / t + position
    assert first - tables == pytest.approx(pstates, rel=0.01)
    assert pstates <= first <= 1.12 * pstates
    stages = memory.per_stage(out, 0)
    mean = np.mean([x["mem_weights_bytes"] + x["mem_grads_bytes"] + x["mem_optimizer_bytes"] for x in stages]) / GiB
    assert mean == pytest.approx(pstates, rel=0.02)
    assert stages[0]["mem_activations_bytes"] / GiB == pytest.approx(act_none, rel=0.10)
    out2 = run(_fig1_batch(tag, sp=True, rc="selective"))
    assert memory.per_stage(out2, 0)[0]["mem_activations_bytes"] / GiB == pytest.approx(act_sel, rel=0.10)


# ---------------------------------------------------------------------------------------
# Pipeline stages, per_stage, explain
# ---------------------------------------------------------------------------------------
LLAMA70 = dict(name="l70", n_layers=80, hidden_size=8192, n_heads=64, n_kv_heads=8, ffn_hidden_size=28672,
               vocab_size=128256, gated_mlp=True)


def _llama(**par):
    p = {"tp": 8, "pp": 4, "dp": 4, "zero_stage": 1, "recompute": "selective", **par}
    n = p["tp"] * p["pp"] * p["dp"] * p.get("cp", 1)
    return one(model=LLAMA70, training={"seq_len": 4096, "global_batch_size": 64, "micro_batch_size": 1},
               parallelism=p, cluster={"system": "dgx-h100", "n_gpus": n})


def test_per_stage_in_flight_and_ends():
    out = run(_llama())
    stages = memory.per_stage(out, 0)
    assert len(stages) == 4
    acts = [x["mem_activations_bytes"] for x in stages]
    # 1F1B: stage j keeps min(m, p − j) = 4, 3, 2, 1 micro-batches of 20 layers.
    assert np.allclose(np.array(acts) / acts[-1], [4, 3, 2, 1])
    assert stages[-1]["mem_logits_bytes"] > 0 and stages[0]["mem_logits_bytes"] == 0
    # logits: 4 B × s·b·V / t = 4 × 4096 × 128256 / 8
    assert stages[-1]["mem_logits_bytes"] == pytest.approx(4 * 4096 * 128256 / 8)
    worst = max(x["mem_total_bytes"] for x in stages)
    assert out["mem_total_bytes"][0] == pytest.approx(worst)
    parts = ("mem_weights_bytes", "mem_grads_bytes", "mem_optimizer_bytes", "mem_activations_bytes",
             "mem_logits_bytes", "mem_buffers_bytes")
    assert out["mem_total_bytes"][0] == pytest.approx(sum(out[k][0] for k in parts))
    assert out["mem_buffers_bytes"][0] == pytest.approx(
        out["mem_comm_buffers_bytes"][0] + out["mem_zero3_prefetch_bytes"][0] + out["mem_fragmentation_bytes"][0])


def test_interleaved_and_gpipe_factors():
    base = run(_llama())
    inter = run(_llama(vpp=2, schedule="interleaved"))
    gp = run(_llama(schedule="gpipe"))
    a1 = memory.per_stage(base, 0)[0]["mem_activations_bytes"]
    # interleaved first stage: × (1 + (p−1)/(p·v)) = 1 + 3/8
    assert memory.per_stage(inter, 0)[0]["mem_activations_bytes"] == pytest.approx(a1 * (1 + 3 / 8))
    # GPipe: all m = 64/(1·4) = 16 micro-batches instead of p = 4
    assert memory.per_stage(gp, 0)[0]["mem_activations_bytes"] == pytest.approx(a1 * 4)


def test_uneven_layers_first_stages_take_extra():
    m = dict(LLAMA70, n_layers=82)  # 82 = 4·20 + 2: ranks 0, 1 get 21 layers, ranks 2, 3 get 20
    b = one(model=m, training={"seq_len": 4096, "global_batch_size": 64, "micro_batch_size": 1},
            parallelism={"tp": 8, "pp": 4, "dp": 4, "layer_split": "uneven"},
            cluster={"system": "dgx-h100", "n_gpus": 128})
    out = run(b)
    st_ = memory.per_stage(out, 0)
    per_layer = st_[3]["mem_activations_bytes"] / 20  # 1 micro-batch on the last stage
    assert st_[0]["mem_activations_bytes"] == pytest.approx(4 * 21 * per_layer)
    assert st_[1]["mem_activations_bytes"] == pytest.approx(3 * 21 * per_layer)
    assert st_[2]["mem_activations_bytes"] == pytest.approx(2 * 20 * per_layer)


def test_explain_has_numbers():
    out = run(_llama())
    row = {k: v[0].item() for k, v in out.items()}
    ex = memory.explain(row)
    for k in ("mem_weights_bytes", "mem_grads_bytes", "mem_optimizer_bytes", "mem_activations_bytes",
              "mem_buffers_bytes", "mem_total_bytes"):
        assert k in ex and "GiB" in ex[k] and any(c.isdigit() for c in ex[k])


def test_offload_moves_to_host():
    # ZeRO-2: each reduce-scattered gradient partition goes to the host (ZeRO-Offload §4), so no
    # gradient stays in HBM; ZeRO-0/1 keep theirs (test_offload_grads_zero01_stay_on_gpu)
    on = run(_llama(zero_stage=2, offload_optimizer="cpu", offload_master_weights=True, offload_grads=True,
                    offload_activations=True))
    off = run(_llama(zero_stage=2))
    assert on["mem_optimizer_bytes"][0] == 0 and on["mem_grads_bytes"][0] == 0
    assert on["host_mem_per_node_bytes"][0] > 0 and off["host_mem_per_node_bytes"][0] == 0
    assert on["mem_total_bytes"][0] < off["mem_total_bytes"][0]
    assert on["host_fits"][0]


def test_kv_heads_replicated_when_tp_exceeds_kv():
    # k = 8, t = 16: each rank keeps K and V for one KV head: 2·h·d per layer, as with t = 8.
    m = dict(LLAMA70, n_heads=64)
    b8 = one(model=m, parallelism={"tp": 8, "pp": 1, "dp": 1}, training={"global_batch_size": 1},
             cluster={"system": "dgx-h100", "n_gpus": 8})
    b16 = one(model=m, parallelism={"tp": 16, "pp": 1, "dp": 1}, training={"global_batch_size": 1},
              cluster={"system": "dgx-h100", "n_gpus": 16})
    h, a, d, f = 8192, 64, 128, 28672
    # hand: per GPU (Q + O + MLP + 2 norms)/t + K, V of one head (2·h·d) in both cases
    for bb, t in ((b8, 8), (b16, 16)):
        got = np.ravel(memory._common(run(bb))["p_dense"])[0]
        assert got == pytest.approx((2 * h * a * d + 3 * h * f + 2 * h) / t + 2 * h * d)


# ---------------------------------------------------------------------------------------
# Property tests (hypothesis), on a small vectorised base batch
# ---------------------------------------------------------------------------------------
_BASE = None


def base_batch():
    global _BASE
    if _BASE is None:
        b = _llama()
        _BASE = {**b, **model_stats.stats(b)}
    return dict(_BASE)


cfg = st.fixed_dictionaries({
    "tp": st.sampled_from([1, 2, 4, 8]), "pp": st.sampled_from([1, 2, 4, 5]),
    "dp": st.sampled_from([1, 2, 8]), "cp": st.sampled_from([1, 2]),
    "micro_batch_size": st.sampled_from([1, 2, 4]), "m": st.sampled_from([1, 4, 16]),
    "zero_stage": st.integers(0, 3), "recompute": st.integers(0, 3), "schedule": st.integers(0, 3),
    "vpp": st.sampled_from([1, 2]), "sequence_parallel": st.booleans(), "flash_attention": st.booleans(),
    "n_layers": st.sampled_from([7, 32, 80]),
})


def make(c):
    b = base_batch()
    for k in ("tp", "pp", "dp", "cp", "micro_batch_size", "zero_stage", "recompute", "schedule", "vpp",
              "n_layers"):
        b[k] = np.array([c[k]])
    b["sequence_parallel"] = np.array([c["sequence_parallel"]])
    b["flash_attention"] = np.array([c["flash_attention"]])
    b["global_batch_size"] = np.array([c["m"] * c["micro_batch_size"] * c["dp"]])
    b.update(model_stats.stats(b))
    return b


STATES = ("mem_weights_bytes", "mem_grads_bytes", "mem_optimizer_bytes")
PROP = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _both(b):
    return memory.first_last(b)


@PROP
@given(cfg, st.sampled_from(["tp", "pp", "dp"]))
def test_more_sharding_never_raises_states(c, axis):
    lo = make(c)
    c2 = dict(c, **{axis: c[axis] * 2})
    hi = make(c2)
    for a, b in zip(_both(lo), _both(hi)):
        for k in STATES:
            assert b[k][0] <= a[k][0] * (1 + 1e-12)


@PROP
@given(cfg)
def test_more_recompute_never_raises_activations(c):
    # none ≥ selective ≥ op_sac (TorchTitan per-op SAC) ≥ full
    vals = []
    for rc in (0, 1, 3, 2):
        f, l_ = _both(make(dict(c, recompute=rc)))
        vals.append((f["mem_activations_bytes"][0], l_["mem_activations_bytes"][0]))
    for x, y in zip(vals, vals[1:]):
        assert y[0] <= x[0] * (1 + 1e-12) and y[1] <= x[1] * (1 + 1e-12)


@PROP
@given(cfg)
def test_larger_micro_batch_never_lowers_activations(c):
    # global batch fixed: m halves when the micro-batch doubles
    c = dict(c, m=c["m"] * 2)
    lo = make(c)
    hi = make(dict(c, micro_batch_size=c["micro_batch_size"] * 2, m=c["m"] // 2))
    assert hi["global_batch_size"][0] == lo["global_batch_size"][0]
    for a, b in zip(_both(lo), _both(hi)):
        assert b["mem_activations_bytes"][0] >= a["mem_activations_bytes"][0] * (1 - 1e-12)


@PROP
@given(cfg, st.sampled_from([1, 2]), st.booleans(), st.booleans(), st.booleans())
def test_offload_never_raises_hbm(c, target, master, grads, acts):
    plain = make(c)
    off = make(c)
    off["offload_optimizer"] = np.array([target])
    off["offload_master_weights"] = np.array([master])
    off["offload_grads"] = np.array([grads])
    off["offload_activations"] = np.array([acts])
    a, b = memory.stage(plain), memory.stage(off)
    assert b["mem_total_bytes"][0] <= a["mem_total_bytes"][0] * (1 + 1e-12)


def test_vectorised_equals_single_rows():
    # mixed recompute modes (none, selective, full, op_sac) in one batch take the array path
    rows = [make(dict(tp=t, pp=p, dp=2, cp=1, micro_batch_size=1, m=4, zero_stage=z, recompute=rc, schedule=0,
                      vpp=1, sequence_parallel=True, flash_attention=True, n_layers=32))
            for t, p, z, rc in [(1, 1, 0, 1), (8, 4, 1, 3), (2, 2, 3, 2), (4, 2, 1, 0), (2, 4, 1, 3)]]
    big = {k: np.concatenate([r[k] for r in rows]) for k in rows[0]}
    many = memory.stage(big)
    for i, r in enumerate(rows):
        single = memory.stage(r)
        for k in ("mem_total_bytes", "mem_activations_bytes", "mem_worst_stage"):
            assert many[k][i] == single[k][0]


def test_presets_worst_stage_is_max_of_every_stage():
    """For every scenario preset (dense, MoE, fp8, interleaved, uneven), the vectorised worst
    stage equals the maximum over all stages from per_stage."""
    from planner import list_presets, load_preset

    names = list(list_presets())
    out = run(batch.from_scenarios([load_preset(n) for n in names]))
    for i, n in enumerate(names):
        stages = memory.per_stage(out, i)
        assert out["mem_total_bytes"][i] == pytest.approx(max(s["mem_total_bytes"] for s in stages)), n
        assert 0 <= out["mem_worst_stage"][i] < len(stages)


def test_op_sac_layer_by_hand():
    """TorchTitan per-op SAC keeps the outputs of the saved ops: the layer input (2h), Q (2·a·d),
    V (2·k·d), the attention output (2·a·d) and its fp32 log-sum-exp (4 B per head), W1 (2f).
    Llama 3 8B layer (h 4096, a 32, k 8, d 128, f 14,336), per token:
    8,192 + 2·(4,096 + 1,024 + 4,096 + 14,336) + 128 = 55,424 B; s = 8192, b = 2: × 16,384
    = 908,066,816 B. TP 8 with SP: the reduce-scatter output after O is saved too (2h/t):
    (8,192 + 8,192)/8 + (47,104 + 128)/8 = 7,952 B per token, × 8,192 = 65,142,784 B."""
    kw = dict(recompute="op_sac", n_kv_heads=8, head_dim=128, ffn=14336, gated_mlp=True, dropout=False)
    got = memory.activation_bytes_per_layer(8192, 2, 4096, 32, 1, **kw)
    assert float(got) == pytest.approx(908_066_816)
    got = memory.activation_bytes_per_layer(8192, 1, 4096, 32, 8, sequence_parallel=True, **kw)
    assert float(got) == pytest.approx(65_142_784)


def test_torchtitan_memory_against_published_peaks():
    """TorchTitan publishes the peak reserved memory per GPU. With the default rule's readings
    (per-op SAC, the eager cross-entropy of its 2024 versions: 12 B per logit, 16 B under TP's
    loss_parallel(); the compiled loss of 2025) every run without pipeline parallelism is
    predicted at 0.75–1.05 of it (reserved ≥ allocated); measured 0.89–1.01, the 8B runs
    0.95–1.01 (until review 45 the uncompiled ones 0.906–0.943: eager PyTorch's checkpoint cache
    keeps op-SAC's W2 output, now counted, tests/test_review45.py). With 4 B per
    logit (a fused loss) the 2024 8B runs would be 0.61–0.79. The pipeline-parallel 405B runs
    are left out: 0.88–1.00 at PP 8 (with PyTorch pipelining's cached logits,
    tests/test_review13b_memory.py) but 0.61–0.64 at PP 16, a miss the model does not explain;
    so are review 19a's DeepEP MoE runs (Qwen3-30B-A3B on 8–128 B200): 0.32–0.60, DeepEP's buffers
    and the allocator's reserve for the routed tokens not modelled (docs/memory.md) — checked below
    to stay under the band, so that a model that starts to hold them shows here."""
    import planner
    path = Path(__file__).resolve().parent.parent / "validation" / "out_of_sample.csv"
    df = pd.read_csv(path)
    rows = df[df["run_id"].str.contains("torchtitan") & df["mem_per_gpu_gb"].notna()]
    n = 0
    for _, r in rows.iterrows():
        s, why = validation.row_to_scenario(r.to_dict())
        assert s is not None, why
        if s.parallelism.pp > 1:
            continue
        got = planner.evaluate(s).results["mem_total_bytes"] / GiB
        if s.model.moe is not None:  # the documented miss (docstring)
            assert 0.30 * r["mem_per_gpu_gb"] <= got < 0.75 * r["mem_per_gpu_gb"], (r["run_id"], got)
            continue
        assert 0.75 * r["mem_per_gpu_gb"] <= got <= 1.05 * r["mem_per_gpu_gb"], (r["run_id"], got)
        if "8b" in r["run_id"] and s.training.cross_entropy == "eager":
            assert got >= 0.95 * r["mem_per_gpu_gb"], (r["run_id"], got)
            fused = s.model_copy(deep=True)
            fused.training.cross_entropy = "fused"
            assert planner.evaluate(fused).results["mem_total_bytes"] / GiB < 0.80 * r["mem_per_gpu_gb"]
        n += 1
    assert n >= 20


def test_op_sac_memory_against_torchtitan_published_peaks():
    """TorchTitan's Llama 3.1 8B runs use op-level SAC (validation/out_of_sample.csv; paper
    arXiv:2410.06511 Table 1, docs/performance.md, the June 2025 H200 benchmark) and publish
    the peak reserved memory per GPU. Reserved memory is at least what is allocated, so the
    prediction must not exceed it (5 % slack) and should explain most of it (≥ 65 %: the
    allocator's cache and, in eager runs, unfused intermediates come on top; measured 0.95–1.01
    with each run's cross-entropy, 0.67–0.99 with a fused one everywhere). Read as
    Megatron-style 'selective' (attention core only) every row exceeds its published peak
    (the 8-GPU BF16 runs by 34 %: 103 GiB predicted on 95 GiB GPUs)."""
    import planner
    path = Path(__file__).resolve().parent.parent / "validation" / "out_of_sample.csv"
    df = pd.read_csv(path)
    rows = df[df["recompute"].str.contains("op-level", na=False) & df["mem_per_gpu_gb"].notna()]
    assert len(rows) >= 8
    for _, r in rows.iterrows():
        s, why = validation.row_to_scenario(r.to_dict())
        assert s is not None and s.parallelism.recompute == "op_sac", why
        got = planner.evaluate(s).results["mem_total_bytes"] / GiB
        assert 0.65 * r["mem_per_gpu_gb"] <= got <= 1.05 * r["mem_per_gpu_gb"], (r["run_id"], got)
        sel = s.model_copy(deep=True)
        sel.parallelism.recompute = "selective"
        assert planner.evaluate(sel).results["mem_total_bytes"] / GiB > 1.05 * r["mem_per_gpu_gb"]


def test_mixed_moe_dense_batch_with_every_recompute_mode_equals_single_rows():
    """A batch mixing MoE (Mixtral, DeepSeek-V3) and dense presets under none / selective /
    full / op_sac gives each row exactly what it gets alone (memory and step time)."""
    import planner
    from planner import timing
    scs = []
    for name in ("mixtral-8x7b-h100-64", "deepseek-v3-h800-2048", "default"):
        for rc in batch.RECOMPUTE:
            s = planner.load_preset(name)
            s.parallelism.recompute = rc
            scs.append(s)
    b = batch.from_scenarios(scs)
    b.update(model_stats.stats(b))
    m = memory.stage(b)
    b.update(m)
    t = timing.stage(b)
    for i, s in enumerate(scs):
        r = planner.evaluate(s).results
        assert r["mem_total_bytes"] == m["mem_total_bytes"][i], (s.name, s.parallelism.recompute)
        assert r["step_time_s"] == pytest.approx(t["step_time_s"][i], rel=1e-12), (s.name, s.parallelism.recompute)


def test_op_sac_moe_keeps_all_to_all_outputs_only_with_ep_and_never_exceeds_no_recompute():
    """The saved all-to-all outputs (4h per routed copy) exist only with expert parallelism;
    and a policy that saves outputs never keeps more than no recompute (review finding: a
    fine-grained FP8 MoE, 64 experts of width 256, top-8, kept more under op_sac than with
    none, whose FP8 GEMM inputs are 1 byte)."""
    import planner

    def acts(rc, ep, fine=False):
        d = planner.load_preset("mixtral-8x7b-h100-64").to_json_dict()
        if fine:
            d["model"] = planner.catalog.models()["mixtral-8x7b"].model_dump(mode="json")
            d["model"]["moe"].update(n_experts=64, top_k=8, expert_ffn_hidden_size=256)
            d["training"]["precision"] = "fp8"
        d["parallelism"].update(recompute=rc, ep=ep)
        return planner.evaluate(d).results["mem_activations_bytes"]

    assert acts("op_sac", 1) < acts("op_sac", 8)
    for ep in (1, 8):
        assert acts("op_sac", ep, fine=True) <= acts("none", ep, fine=True)


def test_torchtitan_preset_reproduces_its_published_peak_memory():
    """The llama31-8b-torchtitan-h100-8 preset is TorchTitan's Table 1 '+ torch.compile' run
    (arXiv:2410.06511): published peak memory 77.0 GiB per GPU. With per-op SAC and the eager
    cross-entropy of that version the preset is within 5 % of it."""
    import planner
    got = planner.evaluate(planner.load_preset("llama31-8b-torchtitan-h100-8")).results["mem_total_bytes"] / GiB
    assert 0.95 * 77.0 <= got <= 1.05 * 77.0


def test_recomputed_layer_holds_its_scores_without_flash():
    """Without flash attention the layer being recomputed materialises its s × s scores
    (5 B per score element per head with dropout, Korthikanti Table 2's 5·a·s per token; here
    no dropout: 2 B): full, op_sac and selective recompute each hold one layer's scores on top
    of the stash; with flash attention none. Llama 3 8B (no dropout), s = 4,096, mbs 1, cp 2
    (a CP rank holds its s/c queries' scores against all s keys for the backward pass: review 24,
    was s/c keys of one ring block): 2 B × 32 heads × 4,096 keys × 2,048 local queries =
    536,870,912 B more without flash."""
    import planner
    for rc in ("full", "op_sac", "selective"):
        vals = []
        for fa in (True, False):
            d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
            d["training"].update(seq_len=4096, micro_batch_size=1)
            d["parallelism"].update(recompute=rc, flash_attention=fa)
            vals.append(planner.evaluate(d).results["mem_activations_bytes"])
        assert vals[1] - vals[0] == pytest.approx(2 * 32 * 4096 * 2048), rc


def test_selective_with_flash_says_it_saves_no_memory():
    """Review finding: selective recompute with flash attention costs time and saves no memory
    in this model (flash keeps no score matrix) and the output did not say so: a note does."""
    import planner
    d = planner.load_preset("default").to_json_dict()
    sel = planner.evaluate(d)
    assert any("saves no activation memory" in n for n in sel.notes)
    d["parallelism"]["recompute"] = "none"
    none = planner.evaluate(d)
    assert none.results["mem_activations_bytes"] == sel.results["mem_activations_bytes"]
    assert none.results["step_time_s"] < sel.results["step_time_s"]
    assert not any("saves no activation memory" in n for n in none.notes)


def test_moe_model_with_every_layer_dense_evaluates_like_a_model_without_moe_layers():
    # moe.first_dense_layers = n_layers leaves no MoE layer (a fresh-clone review found
    # explain() failing on it): the evaluation and every explanation must still work, and the
    # expert terms must be absent (no routed experts in any layer: no all-to-all, no expert memory)
    import planner
    d = planner.load_preset("mixtral-8x7b-h100-64").to_json_dict()
    m = planner.catalog.resolve_model(d["model"]).model_dump(mode="json")
    m["moe"]["first_dense_layers"] = m["n_layers"]
    d["model"] = m
    r = planner.evaluate(d)
    assert r.results["t_ep_comm_s"] == 0.0
    assert r.results["n_moe_layers"] == 0.0
    assert "mem_activations_bytes" in r.explain and r.results["mem_total_bytes"] > 0
    partly = planner.load_preset("mixtral-8x7b-h100-64").to_json_dict()
    partly["model"] = dict(m, moe=dict(m["moe"], first_dense_layers=m["n_layers"] - 1))
    assert planner.evaluate(partly).results["t_ep_comm_s"] > 0.0  # one MoE layer left: an all-to-all


def _dualpipe_cases():
    import planner

    d1 = planner.load_preset("deepseek-v3-h800-2048").to_json_dict()
    d1["parallelism"].update(recompute="op_sac", dp=None)
    from planner import catalog

    m = catalog.models()["mixtral-8x7b"].model_dump(mode="json")
    m["n_layers"] = 30  # 30 layers over pp 8: stages of 4, 4, 4, 4, 4, 4, 3, 3
    d2 = planner.load_preset("mixtral-8x7b-h100-64").to_json_dict()
    d2["model"] = m
    d2["parallelism"].update(pp=8, dp=None, vpp=1, schedule="dualpipe", layer_split="uneven")
    d2["training"]["global_batch_size"] = 256
    return [d1, d2]


@pytest.mark.parametrize("case", range(2))
def test_dualpipe_headline_memory_is_the_most_loaded_stage(case):
    """Found by a fresh-user review: under DualPipe a rank holds stages j and p−1−j, so with an
    uneven split (DeepSeek-V3's 61 layers over pp 16, a 30-layer Mixtral over pp 8) a middle
    rank can outweigh both ends (134.5 against 137.9 GiB; 64.9 against 65.9 GiB); the headline peak (and fits, and the sweep) must be the largest stage's."""
    import planner

    d = _dualpipe_cases()[case]
    r = planner.evaluate(d)
    worst = max(s["mem_total_bytes"] for s in r.stages)
    assert r.results["mem_total_bytes"] == pytest.approx(worst, rel=1e-12)


def test_dualpipe_sweep_recommends_only_splits_that_fit():
    # the review's sweep: 4 of the top 40 DualPipe splits ran out of memory on stages the
    # candidate rule did not look at
    import planner

    s = planner.load_preset("deepseek-v3-h800-2048")
    top = planner.sweep(s, top=40, schedules=["dualpipe"], recompute=["op_sac", "none"])
    assert len(top) > 0
    for row in top.head(12).to_dict("records"):
        d = s.to_json_dict()
        d["parallelism"].update({k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()
                                 if k in ("tp", "pp", "dp", "cp", "ep", "vpp", "zero_stage", "recompute",
                                          "schedule", "sequence_parallel", "offload_optimizer")})
        d["training"]["micro_batch_size"] = int(row["micro_batch_size"])
        r = planner.evaluate(d)
        worst = max(st_["mem_total_bytes"] for st_ in r.stages)
        assert worst == pytest.approx(row["mem_total_bytes"], rel=1e-9)
        assert bool(row["fits"]) and bool(r.results["fits"])


def test_headline_memory_is_the_largest_stage_on_random_scenarios():
    # Property: the candidate-stage rule (first, last, first MoE-only rank, DualPipe's pieces)
    # must find the most loaded of every stage the per-stage breakdown lists.
    import planner
    from test_engine import scenarios  # noqa: PLC0415

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(s=scenarios())
    def check(s):
        r = planner.evaluate(s)
        worst = max(st_["mem_total_bytes"] for st_ in r.stages)
        assert r.results["mem_total_bytes"] == pytest.approx(worst, rel=1e-12)

    check()


def test_headline_memory_is_the_largest_stage_for_moe_with_dense_layers_on_uneven_splits():
    # 600 seeded random MoE models with leading dense layers on uneven pipeline splits, every
    # schedule (found by review: dense layers were placed at j·L/p, fractional on uneven splits,
    # and the candidate ranks missed the most loaded one, e.g. GPipe 95.9 against 158.0 GiB; the
    # old rule fails 8 of these 600). Seeded draws, not hypothesis: the misses are rare enough
    # that a small random sample passes the old code.
    import random

    import planner
    from planner import catalog

    rng = random.Random(0)
    checked = 0
    for _ in range(600):
        m = catalog.models()[rng.choice(["deepseek-v3", "mixtral-8x7b", "qwen3-30b-a3b"])].model_dump(mode="json")
        L = rng.randint(4, 40)
        m["n_layers"] = L
        m["moe"]["first_dense_layers"] = rng.randint(0, min(L - 1, 9))
        if m["moe"]["first_dense_layers"] and not m.get("ffn_hidden_size"):
            m["ffn_hidden_size"] = 4 * m["hidden_size"]
        sched = rng.choice(["1f1b", "interleaved", "gpipe", "zero_bubble", "dualpipe"])
        pp = rng.choice([2, 3, 4, 6, 8, 16])
        vpp = rng.choice([2, 3]) if sched == "interleaved" else 1
        dp, ep = 4, rng.choice([1, 2, 4])
        d = planner.load_preset("mixtral-8x7b-h100-64").to_json_dict()
        d["model"] = m
        d["cluster"]["n_gpus"] = pp * dp
        d["training"].update(global_batch_size=dp * 4 * pp, micro_batch_size=1, seq_len=2048)
        d["parallelism"] = {"tp": 1, "pp": pp, "dp": dp, "ep": ep, "vpp": vpp, "schedule": sched,
                            "layer_split": "uneven", "zero_stage": rng.choice([0, 1, 3]),
                            "recompute": rng.choice(["none", "full", "selective"])}
        try:
            r = planner.evaluate(d)
        except planner.InputError:
            continue  # an invalid draw (pp·vpp > layers, dualpipe's micro-batch rule ...)
        checked += 1
        worst = max(s_["mem_total_bytes"] for s_ in r.stages)
        assert r.results["mem_total_bytes"] == pytest.approx(worst, rel=1e-12), d
    assert checked > 400


@pytest.mark.parametrize("case", [
    ("default", {}, {}),
    ("deepseek-v3-h800-2048", {}, {}),
    ("mixtral-8x7b-h100-64", {"recompute": "full", "recompute_layers": 1}, {}),
    # MoE ranks that also hold dense layers (DeepSeek-V3's 3 on the first interleaved chunks)
    ("deepseek-v3-h800-2048", {"schedule": "interleaved", "vpp": 2, "pp": 16, "dp": None, "recompute": "none"},
     {"global_batch_size": 16384}),
    ("deepseek-v3-h800-2048", {"tp": 4, "pp": 3, "dp": 16, "cp": 2, "ep": 1, "vpp": 4, "sequence_parallel": True,
                               "zero_stage": 3, "recompute": "none", "schedule": "interleaved",
                               "layer_split": "uneven", "offload_optimizer": "cpu", "offload_master_weights": True,
                               "offload_grads": True}, {"seq_len": 4096, "global_batch_size": 96, "precision": "fp8"}),
])
def test_activation_explain_adds_up(case):
    # found by review: MoE ranks holding dense layers were shown at the MoE size, and "+ one
    # working layer" had no number: per micro-batch × in flight + working layer = the value shown
    import re

    import planner

    preset, par, training = case
    d = planner.load_preset(preset).to_json_dict()
    d["parallelism"].update(par)
    d["training"].update(training)
    if preset == "deepseek-v3-h800-2048" and par.get("tp") == 4:
        d["cluster"].update(system="dgx-h100", n_gpus=384)
    r = planner.evaluate(d)
    text = r.explain["mem_activations_bytes"]
    per_mb = float(re.match(r"([\d,.]+) MiB per micro-batch", text).group(1).replace(",", ""))
    inflight = float(re.search(r"× ([\d.]+) micro-batches in flight", text).group(1))
    work = re.search(r"working set ([\d,.]+) MiB", text)
    total = per_mb * inflight + (float(work.group(1).replace(",", "")) if work else 0.0)
    assert total * 2**20 == pytest.approx(r.results["mem_activations_bytes"], rel=2e-3)
    mix = re.search(r"\(([\d.]+) dense × ([\d.]+) MiB \+ ([\d.]+) MoE × ([\d.]+) MiB", text)
    # the DualPipe preset's rank 0 (3 dense + 1 MoE) and the last case's rank 0 hold both kinds
    assert bool(mix) == (preset == "deepseek-v3-h800-2048" and (not par or par.get("tp") == 4))
    if mix:
        nd, kd, nm, km = (float(x) for x in mix.groups())
        # DualPipe: the mix is stage j's, whose figure is shown beside its mirror's; weighted by the
        # micro-batches on each (p − h on the earlier stage h = min(j, p−1−j), h + 1 on the other)
        # they give per_mb
        own = re.search(r"\(([\d.]+) × stage \d+'s ([\d,.]+) MiB \(.*\+ ([\d.]+) × its mirror stage \d+'s "
                        r"([\d,.]+) MiB\) / ([\d.]+)", text)
        if own:
            na, a, nb, b, n = (float(x.replace(",", "")) for x in own.groups())
            assert na + nb == n == inflight
            assert (na * a + nb * b) / n == pytest.approx(per_mb, rel=2e-3)
        assert nd * kd + nm * km == pytest.approx(float(own.group(2).replace(",", "")) if own else per_mb, rel=2e-3)


def test_a_row_in_a_batch_gets_what_it_gets_alone_moe_beside_all_dense():
    # found by review: the ZeRO-3 prefetch took the MoE layer size for every row once any row of
    # the batch was MoE; an MoE model whose 30 layers are all dense came out 20.6 GiB alone and
    # 103.4 GiB beside the DeepSeek-V3 preset
    import planner
    from planner import catalog

    m = catalog.models()["deepseek-v3"].model_dump(mode="json", exclude_none=True)
    m.update(name="ds-all-dense", n_layers=30)
    m["moe"]["first_dense_layers"] = 30
    for k in ("published_params_total", "published_params_active"):
        m.pop(k, None)
    d = planner.load_preset("deepseek-v3-h800-2048").to_json_dict()
    d["model"] = m
    d["parallelism"].update(zero_stage=3, pp=2, dp=None, ep=1, schedule="1f1b", vpp=1, layer_split="even")
    alone = planner.evaluate(d).results
    both = planner.evaluate_many([d, planner.load_preset("deepseek-v3-h800-2048").to_json_dict()])
    for col in ("mem_total_bytes", "mem_zero3_prefetch_bytes"):
        assert both[col].iloc[0] == pytest.approx(alone[col], rel=1e-12)


def test_dualpipe_activation_offload_traffic_is_half_of_each_stage():
    # found by a fourth review: a DualPipe rank runs half its micro-batches on each of its two
    # stages, so its traffic is m × ½ (stage 0 + stage 1 per micro-batch), not m × its own
    # stage's. GPipe on the same split keeps all m micro-batches of a stage in flight, so its
    # per-stage stash is m × that stage's per-micro-batch activations.
    import planner
    from planner import catalog

    m = catalog.models()["deepseek-v3"].model_dump(mode="json", exclude_none=True)
    m.update(name="dsv3-16L", n_layers=16)
    m["moe"]["first_dense_layers"] = 8  # stage 0 all dense, stage 1 all MoE: unequal activations
    for k in ("published_params_total", "published_params_active"):
        m.pop(k, None)
    d = planner.load_preset("deepseek-v3-h800-2048").to_json_dict()
    d["model"] = m
    d["cluster"]["n_gpus"] = 256
    d["parallelism"].update(pp=2, dp=None, ep=64, recompute="none", layer_split="even", offload_activations=True)
    dual = planner.evaluate(d).results["act_offload_traffic_bytes"]
    d["parallelism"]["schedule"] = "gpipe"
    stash = [s_["mem_act_offload_bytes"] for s_ in planner.evaluate(d).stages]
    assert stash[0] != pytest.approx(stash[1], rel=0.05)
    assert dual == pytest.approx(0.5 * (stash[0] + stash[1]), rel=1e-12)


def test_gradient_buckets_add_no_memory_so_more_gpus_never_add_memory():
    """Megatron-Core's DDP buckets are views of the contiguous gradient buffer
    (``_ParamAndGradBuffer``), so the margin's comm part is the 1 GiB CUDA / NCCL reserve alone.
    Review 2026-11-30: 2 × max(40e6, 1e6·dp) params were added, 69.8 -> 76.2 GiB from 128 to
    1,024 GPUs for Llama 3 8B (ZeRO-1, global batch 1,024)."""
    import planner

    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["parallelism"].update(dp=None)
    d["training"]["global_batch_size"] = 1024
    prev = None
    for n in (128, 256, 512, 1024):
        d["cluster"]["n_gpus"] = n
        r = planner.evaluate(d).results
        assert r["mem_comm_buffers_bytes"] == GiB
        if prev is not None:
            assert r["mem_total_bytes"] <= prev
        prev = r["mem_total_bytes"]


def test_zero3_on_one_shard_rank_has_no_prefetch_buffers():
    """ZeRO-3 gathers what it shards; with dp·cp = 1 nothing is sharded, the weights stay
    resident and there is nothing to prefetch: ZeRO-3 then needs what ZeRO-2 does (found by
    review: 1 GPU, Llama 3 8B, +3.9 GiB of prefetch buffers)."""
    import planner

    def total(z):
        d = {"model": "llama3-8b", "cluster": {"system": "dgx-h100", "n_gpus": 1},
             "training": {"global_batch_size": 1}, "parallelism": {"zero_stage": z}}
        return planner.evaluate(d).results
    z2, z3 = total(2), total(3)
    assert z3["mem_zero3_prefetch_bytes"] == 0.0
    assert z3["mem_total_bytes"] == pytest.approx(z2["mem_total_bytes"], rel=1e-12)


def test_learned_position_table_is_not_tp_sharded():
    """Megatron keeps a learned position table as a plain ``torch.nn.Embedding`` ("Position
    embedding (serial)") on every TP rank of the first stage; only the word embedding is a
    VocabParallelEmbedding. GPT-3 175B preset (tp 8, pp 8, ZeRO-0), stage 0 by hand:
    12 layers × (12h² + 13h) / 8 + V·h / 8 + 2048·h, h = 12288, V = 50257 (found by review:
    the table was divided by t, 22.0e6 parameters = 0.37 GiB of states missing)."""
    import planner

    h, V, L_stage, t = 12288, 50257, 12, 8
    layer = 12 * h * h + 13 * h  # attention 4h² + 4h, MLP 8h² + 5h, two LayerNorms 4h
    params = L_stage * layer / t + V * h / t + 2048 * h
    assert params == 2_820_509_184
    st0 = planner.evaluate(planner.load_preset("gpt3-175b-a100-1024")).stages[0]
    assert st0["mem_weights_bytes"] == pytest.approx(2.0 * params, rel=1e-12)  # bf16/fp16 weights
    assert st0["mem_grads_bytes"] == pytest.approx(4.0 * params, rel=1e-12)  # fp32 gradients
    assert st0["mem_optimizer_bytes"] == pytest.approx(12.0 * params, rel=1e-12)  # ZeRO-0: unsharded


def test_zero3_prefetch_gathers_experts_only_where_it_shards_them():
    """ZeRO-3 prefetches 2 layers of 16-bit weights and holds 1 layer of gradients (4 B) of the
    largest layer it gathers. Experts are sharded over the expert group dp·cp/ep: with dp = ep
    that group is one rank, the experts stay resident (and their gradients are in
    mem_grads_bytes), so the gathered layer is the MoE layer's non-expert part; an all-MoE model
    has no dense layer to gather either (found by a property test: ZeRO-3 above ZeRO-2 on the
    same stage, DeepSeek-V3 TP 8 × PP 3 × DP 8 × EP 8 on 192 V100, 81.54 against 80.89 GB).

    By hand, h = 1024, 8 heads (MHA), vocab 1,024, 8 experts of FFN 4,096 (SwiGLU), TP 1:
      non-expert MoE layer: attention 4h² = 4,194,304 + 2 RMSNorms 2h = 2,048 + router 8h =
        8,192 → 4,204,544; one expert 3·h·4096 = 12,582,912, one local expert per rank (ep 8);
      embedding V·h = 1,048,576 (smaller than either).
    dp 8 (expert group 1): 4,204,544 × (2·2 + 4) = 33,636,352 B;
    dp 16 (expert group 2): (4,204,544 + 12,582,912) × 8 = 134,299,648 B."""
    import planner

    m = {"name": "moe-hand", "n_layers": 2, "hidden_size": 1024, "n_heads": 8, "ffn_hidden_size": 4096,
         "vocab_size": 1024, "moe": {"n_experts": 8, "top_k": 2, "expert_ffn_hidden_size": 4096}}

    def prefetch(dp):
        d = {"model": m, "cluster": {"system": "dgx-h100", "n_gpus": dp},
             "training": {"seq_len": 1024, "global_batch_size": dp, "micro_batch_size": 1},
             "parallelism": {"tp": 1, "pp": 1, "dp": dp, "ep": 8, "zero_stage": 3}}
        return planner.evaluate(d).stages[0]

    non_expert = 4 * 1024 ** 2 + 2 * 1024 + 8 * 1024
    expert = 3 * 1024 * 4096
    assert (non_expert, expert) == (4_204_544, 12_582_912)
    assert prefetch(8)["mem_zero3_prefetch_bytes"] == pytest.approx(non_expert * (2 * 2 + 4), rel=1e-12)
    assert prefetch(16)["mem_zero3_prefetch_bytes"] == pytest.approx((non_expert + expert) * (2 * 2 + 4), rel=1e-12)


# ---------------------------------------------------------------------------------------
# The recomputed layer's working set and the ZeRO-3 gathered units belong to the stage
# (review 2026-11-30: three invariant violations found by fuzzing)
# ---------------------------------------------------------------------------------------
# A small MoE model whose MoE layer is larger than its dense layer. Bytes per token, from the
# documented formula (docs/memory.md, no dropout, flash on, TP 1): R = 8h = 8,192;
# attention 4q + 4kv = 8,192 (q = kv = 8 heads × 128 = 1,024); plain MLP 4f.
#   dense layer, f = 2,048:      W_d = 8,192 + 8,192 + 4·2,048 = 24,576
#   MoE layer, top 2 of 8, cf 1, expert FFN 4,096, no shared expert:
#     W_m = 8,192 + 8,192 + 2·(4h + 4·4,096) + 8·8 (router) = 16,384 + 40,960 + 64 = 57,408
#   full recompute keeps the layer input K = 2h = 2,048
# seq 1,024 × micro-batch 1 = 1,024 tokens per micro-batch.
_WS_MOE = {"name": "ws-moe", "n_layers": 2, "hidden_size": 1024, "n_heads": 8, "ffn_hidden_size": 2048,
           "vocab_size": 1024, "gated_mlp": False, "dropout": 0.0,
           "moe": {"n_experts": 8, "top_k": 2, "expert_ffn_hidden_size": 4096, "first_dense_layers": 1}}
_WD, _WM, _K, _SB = 24_576, 57_408, 2_048, 1_024


def _ws_run(n_layers, pp, recompute, recompute_layers=None):
    import planner

    d = {"model": {**_WS_MOE, "n_layers": n_layers}, "cluster": {"system": "dgx-h100", "n_gpus": pp},
         "training": {"seq_len": 1024, "global_batch_size": 4, "micro_batch_size": 1},
         "parallelism": {"tp": 1, "pp": pp, "dp": 1, "zero_stage": 1, "recompute": recompute,
                         "recompute_layers": recompute_layers, "flash_attention": True,
                         "sequence_parallel": False, "schedule": "1f1b"}}
    return planner.evaluate(d)


def test_full_recompute_charges_the_working_set_of_the_stage_s_own_layers():
    """The layer being recomputed holds its working set on top of the stash: that of a layer the
    stage holds, not of the model's largest kind. PP 2, 1 dense + 1 MoE layer, m = 4, 1F1B:
      stage 0 (the dense layer, min(m, 2) = 2 micro-batches in flight):
        none 2·W_d = 49,152; full 2·K + (W_d − K) = 4,096 + 22,528 = 26,624 (per token)
        (before the fix: 2·K + (W_m − K) = 4,096 + 55,360 = 59,456, above none)
      stage 1 (the MoE layer, 1 in flight): none W_m = 57,408; full K + (W_m − K) = 57,408."""
    none = _ws_run(2, 2, "none").stages
    full = _ws_run(2, 2, "full").stages
    assert none[0]["mem_activations_bytes"] == pytest.approx(49_152 * _SB, rel=1e-12)
    assert full[0]["mem_activations_bytes"] == pytest.approx(26_624 * _SB, rel=1e-12)
    assert none[1]["mem_activations_bytes"] == pytest.approx(57_408 * _SB, rel=1e-12)
    assert full[1]["mem_activations_bytes"] == pytest.approx(57_408 * _SB, rel=1e-12)
    op = _ws_run(2, 2, "op_sac").stages  # op_sac's working set: also the stage's own kind
    for i in (0, 1):
        assert op[i]["mem_activations_bytes"] <= none[i]["mem_activations_bytes"] * (1 + 1e-12)
        assert full[i]["mem_total_bytes"] <= none[i]["mem_total_bytes"] * (1 + 1e-12)


def test_partial_recompute_adds_no_working_set_once_later_layers_are_freed():
    """Megatron ``--recompute-method block`` checkpoints the first N layers of a chunk one by one
    and runs the others plainly; the backward recomputes layer N − 1 only after the later layers'
    backward freed their stored activations of that micro-batch. PP 1 (one micro-batch in
    flight), 1 dense + 2 MoE layers, N = 1 (the dense layer):
      none: W_d + 2·W_m = 24,576 + 114,816 = 139,392 per token
      N = 1: K + 2·W_m + max(0, (W_d − K) − 2·W_m) = 2,048 + 114,816 + 0 = 116,864
      (before the fix: K + 2·W_m + (W_m − K) = 172,224, the MoE working set, above none)
      N = 3 (every layer, = full): 3·K + (W_m − K) = 6,144 + 55,360 = 61,504."""
    def act(rc, n=None):
        return _ws_run(3, 1, rc, n).results["mem_activations_bytes"]

    assert act("none") == pytest.approx(139_392 * _SB, rel=1e-12)
    assert act("full", 1) == pytest.approx(116_864 * _SB, rel=1e-12)
    assert act("full", 3) == pytest.approx(61_504 * _SB, rel=1e-12)
    assert act("full") == pytest.approx(61_504 * _SB, rel=1e-12)


def test_zero3_prefetch_never_gathers_more_than_the_stage_holds():
    """ZeRO-3 gathers 2 units of 16-bit weights and holds 1 unit of unsharded gradients (4 B),
    of the largest unit the stage holds, capped at the stage's own gathered parameters. The
    MoE model of test_zero3_prefetch_gathers_experts_only_where_it_shards_them with 4 layers on
    PP 4 (one MoE layer per stage), DP 16, EP 8 (expert group 2: the experts are gathered):
      unit = MoE layer = 4,204,544 non-expert + 12,582,912 (one local expert) = 16,787,456
      middle stage (the layer alone): 2 B × min(2u, u) + 4 B × min(u, u) = 6u = 100,724,736 B
        (before the fix: 2 B × 2u + 4 B × u = 8u = 134,299,648 B, two layers on a stage of one)
      stage 0 (+ embedding V·h = 1,048,576): 2 B × min(2u, u + 1,048,576) + 4 B × u
        = 2 × 17,836,032 + 67,149,824 = 102,821,888 B"""
    import planner

    m = {"name": "moe-hand", "n_layers": 4, "hidden_size": 1024, "n_heads": 8, "ffn_hidden_size": 4096,
         "vocab_size": 1024, "moe": {"n_experts": 8, "top_k": 2, "expert_ffn_hidden_size": 4096}}
    d = {"model": m, "cluster": {"system": "dgx-h100", "n_gpus": 64},
         "training": {"seq_len": 1024, "global_batch_size": 64, "micro_batch_size": 1},
         "parallelism": {"tp": 1, "pp": 4, "dp": 16, "ep": 8, "zero_stage": 3, "schedule": "1f1b"}}
    st_ = planner.evaluate(d).stages
    u = 4_204_544 + 12_582_912
    assert st_[1]["mem_zero3_prefetch_bytes"] == pytest.approx(6 * u, rel=1e-12)
    assert st_[2]["mem_zero3_prefetch_bytes"] == pytest.approx(100_724_736, rel=1e-12)
    assert st_[0]["mem_zero3_prefetch_bytes"] == pytest.approx(102_821_888, rel=1e-12)


@st.composite
def _small_models(draw):
    """Valid scenarios on small dense and MoE models (leading dense layers, either kind the
    larger), every recompute-relevant switch; evaluated per stage."""
    L = draw(st.integers(2, 8))
    moe = draw(st.booleans())
    model = {"name": "prop", "n_layers": L, "hidden_size": draw(st.sampled_from([512, 1024])), "n_heads": 8,
             "ffn_hidden_size": draw(st.sampled_from([1024, 4096, 8192])),
             "vocab_size": draw(st.sampled_from([1024, 32000])),
             "gated_mlp": draw(st.booleans()), "dropout": draw(st.sampled_from([0.0, 0.1])),
             "tied_embeddings": draw(st.booleans())}
    dp = draw(st.sampled_from([1, 2, 4, 8]))
    ep = 1
    if moe:
        model["moe"] = {"n_experts": 8, "top_k": draw(st.sampled_from([1, 2])),
                        "expert_ffn_hidden_size": draw(st.sampled_from([512, 2048, 4096])),
                        "n_shared_experts": draw(st.sampled_from([0, 1])),
                        "first_dense_layers": draw(st.integers(0, L - 1))}
        ep = draw(st.sampled_from([e for e in (1, 2, 4, 8) if dp % e == 0]))
    pp = draw(st.sampled_from([p for p in (1, 2, 3, 4) if p <= L]))
    m = draw(st.sampled_from([1, 2, 4, 8]))
    scheds = ["1f1b", "gpipe"] + (["interleaved"] if L >= 2 * pp and pp > 1 else [])
    scheds += ["dualpipe"] if pp % 2 == 0 and m % 2 == 0 and m >= 2 * pp else []  # even pp, m >= 2·pp
    sched = draw(st.sampled_from(scheds))
    vpp = 2 if sched == "interleaved" else 1
    tp = draw(st.sampled_from([1, 2]))
    par = {"tp": tp, "pp": pp, "dp": dp, "ep": ep, "vpp": vpp, "schedule": sched,
           "sequence_parallel": draw(st.booleans()), "flash_attention": draw(st.booleans()),
           "layer_split": "uneven", "zero_stage": draw(st.integers(0, 3))}
    return {"model": model, "cluster": {"system": "dgx-h100", "n_gpus": tp * pp * dp},
            "training": {"seq_len": draw(st.sampled_from([512, 2048])), "micro_batch_size": 1,
                         "global_batch_size": m * dp * (pp if sched == "interleaved" else 1)},
            "parallelism": par}, draw(st.integers(1, 4))


def test_more_recompute_and_sharding_never_raise_a_stage_s_memory():
    """Property (random small dense and MoE models, leading dense layers, uneven splits): on every
    stage none → selective → full, none → op_sac and none → partial N (N layers per chunk)
    never raise activations or total memory; ZeRO 0 → 1 → 2 never raises a stage's total; the
    ZeRO-3 prefetch never exceeds one unsharded copy of the stage's own weights (2 B) and
    gradients. (ZeRO-2 → ZeRO-3 is not monotone on stages of few layers with a small shard group:
    the shard, two gathered layers and one layer of unsharded gradients outweigh what sharding
    saves there, as in FSDP itself.)"""
    import copy

    import planner
    from hypothesis import assume

    def stages(d, **par):
        d = copy.deepcopy(d)
        d["parallelism"].update(par)
        try:
            return planner.evaluate(d).stages
        except planner.InputError:
            return None

    # (a random run on 2026-11-30 found the case of
    # test_dualpipe_rank_with_a_wide_mirror_stage_more_recompute_never_raises_memory below)
    @settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(case=_small_models())
    def check(case):
        d, n = case
        none = stages(d, recompute="none")
        assume(none is not None)
        chunk = d["model"]["n_layers"] // (d["parallelism"]["pp"] * d["parallelism"]["vpp"])
        runs = {rc: stages(d, recompute=rc) for rc in ("selective", "full", "op_sac")}
        runs["partial"] = stages(d, recompute="full", recompute_layers=min(n, chunk))
        for k in ("mem_activations_bytes", "mem_total_bytes"):
            for i, s0 in enumerate(none):
                for lo, hi in (("none", "selective"), ("selective", "full"), ("none", "op_sac"),
                               ("none", "partial")):
                    a = s0 if lo == "none" else runs[lo][i]
                    assert runs[hi][i][k] <= a[k] * (1 + 1e-12), (k, i, lo, hi, d, n)
        z = [stages(d, zero_stage=s) for s in range(4)]
        assume(all(x is not None for x in z))
        for i in range(len(z[0])):
            for s in (1, 2):
                assert z[s][i]["mem_total_bytes"] <= z[s - 1][i]["mem_total_bytes"] * (1 + 1e-12), (s, i, d)
            unsharded = z[0][i]["mem_weights_bytes"] + z[0][i]["mem_grads_bytes"]
            assert z[3][i]["mem_zero3_prefetch_bytes"] <= unsharded * (1 + 1e-12), (i, d)

    check()


def test_dualpipe_rank_recomputes_its_mirror_stage_layer_kind_too():
    # Found by review: DualPipe rank 0 holds stage 0 (the one dense layer) and its mirror, stage 3
    # (an MoE layer), and recomputes both; the recomputed layer's working set is the larger kind's
    # (MoE). 4 layers (1 dense + 3 MoE), PP 4, full recompute, micro-batch 1 of 1,024 tokens,
    # h = 1024, bf16, TP 1: each layer keeps its input K = 2·h B per token, for min(m, p + 1) = 5
    # micro-batches (DeepSeek-V3 Table 2), plus W_m − K for the MoE layer being recomputed, where
    # W_m (an MoE layer's whole activations) is what the 1F1B last stage (one MoE layer, one
    # micro-batch in flight) holds without recompute.
    m = {"name": "dense-then-moe", "n_layers": 4, "hidden_size": 1024, "n_heads": 8, "ffn_hidden_size": 2048,
         "vocab_size": 1024, "gated_mlp": False, "dropout": 0.0,
         "moe": {"n_experts": 8, "top_k": 2, "expert_ffn_hidden_size": 4096, "first_dense_layers": 1}}

    import planner

    def acts(sched, rc):
        d = {"model": m, "cluster": {"system": "dgx-h100", "n_gpus": 4},
             "training": {"seq_len": 1024, "global_batch_size": 8, "micro_batch_size": 1},
             "parallelism": {"tp": 1, "pp": 4, "dp": 1, "zero_stage": 1, "recompute": rc,
                             "flash_attention": True, "sequence_parallel": False, "schedule": sched}}
        return [s["mem_activations_bytes"] for s in planner.evaluate(d).stages]

    w_m = acts("1f1b", "none")[3]
    k = 2 * 1024 * 1024  # 2·h B per token × 1,024 tokens
    assert acts("dualpipe", "full")[0] == pytest.approx(5 * k + (w_m - k), rel=1e-12)


def test_dualpipe_rank_with_a_wide_mirror_stage_more_recompute_never_raises_memory():
    """Found by the random property test above (2026-11-30): a DualPipe rank holding a small dense
    stage (j) and a wide MoE stage (its mirror, shared expert wider than the dense MLP) counted its
    stash on stage j alone but the recomputed working set of the MoE layer, so op_sac (18.94 MB)
    came out above no recompute (18.87 MB). The stash is now half on each stage."""
    import copy

    import planner

    d = {"model": {"name": "prop", "n_layers": 2, "hidden_size": 512, "n_heads": 8, "ffn_hidden_size": 1024,
                   "vocab_size": 1024, "gated_mlp": False, "dropout": 0.0, "tied_embeddings": False,
                   "moe": {"n_experts": 8, "top_k": 1, "expert_ffn_hidden_size": 2048, "n_shared_experts": 1,
                           "first_dense_layers": 1}},
         "cluster": {"system": "dgx-h100", "n_gpus": 2},
         "training": {"seq_len": 512, "micro_batch_size": 1, "global_batch_size": 4},
         "parallelism": {"tp": 1, "pp": 2, "dp": 1, "ep": 1, "vpp": 1, "schedule": "dualpipe",
                         "sequence_parallel": False, "flash_attention": True, "layer_split": "uneven",
                         "zero_stage": 0}}
    act = {}
    for rc in ("none", "op_sac"):
        e = copy.deepcopy(d)
        e["parallelism"]["recompute"] = rc
        act[rc] = planner.evaluate(e).stages[0]["mem_activations_bytes"]
    assert act["op_sac"] <= act["none"]
    # the derandomized run of the property test met the selective → full case of the same kind
    for lo, hi in (("none", "selective"), ("selective", "full"), ("none", "full")):
        vals = {}
        for rc in (lo, hi):
            e = copy.deepcopy(d)
            e["parallelism"]["recompute"] = rc
            vals[rc] = [st["mem_activations_bytes"] for st in planner.evaluate(e).stages]
        assert all(h <= l_ * (1 + 1e-12) for l_, h in zip(vals[lo], vals[hi])), (lo, hi, vals)


def test_a_plan_that_does_not_fit_says_so_in_its_notes():
    """Found by review: a plan over the HBM (or, with offload, over the node's host memory) was
    reported with days and cost and no word outside the `fits` column. GPT-3 175B on one DGX
    A100 80GB, ZeRO-3 with the optimizer, master weights and gradients on the CPU: the node's 8
    shards are the whole model, 175e9 parameters × (8 B Adam m, v + 4 B fp32 master + 4 B fp32
    gradients) = 2.8e12 B of host memory against the DGX A100's 2 TiB."""
    import planner
    sj = planner.load_preset("gpt3-175b-a100-1024").to_json_dict()
    sj["cluster"]["n_gpus"] = 8
    sj["training"]["global_batch_size"] = 64
    p = sj["parallelism"]
    p.pop("dp", None)
    p.update(tp=8, pp=1, vpp=1, schedule="1f1b", zero_stage=3, offload_optimizer="cpu",
             offload_master_weights=True, offload_grads=True)
    r = planner.evaluate(sj)
    assert r.results["host_fits"] is False
    note = next(n for n in r.notes if n.startswith("Does not fit in host memory"))
    assert "> the node's 2,048.00 GiB" in note
    assert r.results["host_mem_per_node_bytes"] == pytest.approx(175e9 * 16, rel=0.01)
    ok = planner.evaluate(planner.load_preset("default"))
    assert ok.results["fits"] and not any(n.startswith("Does not fit") for n in ok.notes)


# ---------------------------------------------------------------------------------------
# Review 2026-11-30: offload_grads under ZeRO-0/1, fp32 activations, uneven interleaved chunks
# ---------------------------------------------------------------------------------------
def _preset(name, **kw):
    """A preset's scenario with ``section__field=value`` overrides, evaluated (results dict)."""
    import planner
    d = planner.load_preset(name).to_json_dict()
    for k, v in kw.items():
        sec, field = k.split("__")
        d[sec][field] = v
    return planner.evaluate(d).results


# Llama 3 70B (default preset: tp 8, pp 4, vpp 5, even 80/20 = 4 layers per chunk, dp 32) by hand:
# layer = Q h² + K, V 2·h·k·d_h + O h² + MLP 3·h·f + 2 norms 2h
#       = 67,108,864 + 16,777,216 + 67,108,864 + 704,643,072 + 16,384 = 855,654,400;
# stage 0 per GPU = 20 layers/8 + embedding V·h/8 = 2,139,136,000 + 131,334,144 = 2,270,470,144;
# the last stage adds the final norm h = 8,192 (head V·h/8 for the embedding): 2,270,478,336.
_P70_FIRST = 20 * 855_654_400 // 8 + 128_256 * 8192 // 8
_P70_LAST = _P70_FIRST + 8192


@pytest.mark.parametrize("zero", [0, 1])
def test_offload_grads_zero01_stay_on_gpu(zero):
    """ZeRO-0/1 accumulate the full gradient over the micro-batches and reduce it on the GPU after
    the last backward (all-reduce / reduce-scatter of the resident buffer), so with
    ``offload_grads`` it stays in HBM and is then copied to the host for the CPU Adam step
    (DeepSpeed's ZeRO-Offload moves *reduce-scattered partitions*, i.e. ZeRO-2/3: Ren et al. 2021
    §4). Default preset (fp32 gradients, 4 B): 4 × 2,270,470,144 = 9,081,880,576 B = 8.46 GiB on
    stage 0. Before the fix: 0 B. Host memory per node (8 GPUs, worst stage = the last, which holds
    8,192 more parameters): the gradient copy 4·P plus the CPU step's fp32 master, Adam m, v 12·P,
    all / shard_o (ZeRO-0: 1; ZeRO-1: dp = 32); with offload_master_weights off the GPU keeps its
    own master as well (review 39: until then the host held m, v alone, 8·P, on which the CPU step
    the time model costs cannot run)."""
    r = _preset("default", parallelism__zero_stage=zero, parallelism__offload_optimizer="cpu",
                parallelism__offload_grads=True)
    assert r["mem_worst_stage"] == 0
    assert r["mem_grads_bytes"] == 4 * _P70_FIRST == 9_081_880_576
    shard_o = 1 if zero == 0 else 32
    # the gradient copy the CPU step reads is the optimizer's partition (1/dp under ZeRO-1: found by a
    # later review, the whole gradient was counted): (4 + 12) B × P / shard_o per GPU
    assert r["host_mem_per_node_bytes"] == pytest.approx(8 * 16.0 / shard_o * _P70_LAST, rel=1e-12)
    # ZeRO-2 for contrast: the partitions go to the host, none in HBM; host 8 × 16 B × P/32
    r2 = _preset("default", parallelism__zero_stage=2, parallelism__offload_optimizer="cpu",
                 parallelism__offload_grads=True)
    assert r2["mem_grads_bytes"] == 0.0
    assert r2["host_mem_per_node_bytes"] == pytest.approx(8 * 16.0 * _P70_LAST / 32, rel=1e-12)


def test_fp32_activations_default_preset():
    """fp32 / tf32 training keeps its activations in 4 B (Korthikanti 2022 §4.1's 2 B per element
    assumes 16-bit training). Default preset by hand (Llama 3 70B: h 8192, q 8192, kv 8·128 =
    1024, f 28672, gated; no dropout, so no masks; flash + selective, so no score term; t 8 + SP;
    s·b = 8192 tokens): bf16 per token (8h + 4q + 4kv + 6f)/t = (65,536 + 32,768 + 4,096 +
    172,032)/8 = 34,304 B; × 8192 = 281,018,368 B a layer and micro-batch. Stage 0 holds 20
    layers and, interleaved (p 4, v 5, m 16), (W + 1)/v = (2·3 + 4·4 + 1)/5 = 4.6 micro-batches:
    92 layer-stashes = 25,853,689,856 B = 24.08 GiB. tf32 doubles every term (all 16-bit):
    51,707,379,712 B = 48.16 GiB. Before the fix: 24.08 GiB both."""
    bf = _preset("default")
    assert bf["mem_activations_bytes"] == pytest.approx(92 * 281_018_368, rel=1e-12)
    for prec in ("tf32", "fp32"):
        r = _preset("default", training__precision=prec)
        assert 92 * 2 * 281_018_368 == 51_707_379_712
        assert r["mem_activations_bytes"] == pytest.approx(51_707_379_712, rel=1e-12), prec


def test_fp32_activations_masks_stay_one_byte():
    """With dropout the 1-byte masks do not double. Table 2, no parallelism, no recompute, no
    flash (s 2048, b 1, h 1024, a 16, f 4h, plain MLP): bf16 s·b·h·(34 + 5·a·s/h); fp32 the 16-bit
    parts double, the masks (2h, a·s) stay: s·b·h·(2·32 + 2 + (2·4 + 1)·a·s/h) = s·b·h·(66 +
    9·a·s/h). a·s/h = 32: bf16 2048·1024·194 = 406,847,488 B, fp32 2048·1024·354 =
    742,391,808 B. Checked on the pure function and on a one-GPU, 2-layer model through the stage
    (1F1B with p = 1: one micro-batch of 2 layers)."""
    kw = dict(flash_attention=False, recompute="none")
    assert float(memory.activation_bytes_per_layer(2048, 1, 1024, 16, 1, **kw)) == 406_847_488
    assert float(memory.activation_bytes_per_layer(2048, 1, 1024, 16, 1, fp32=True, **kw)) == 742_391_808
    # full recompute keeps the layer input: 2h per token, 4h in fp32
    assert float(memory.activation_bytes_per_layer(2048, 1, 1024, 16, 1, recompute="full", fp32=True)) \
        == 2048 * 4 * 1024
    small = dict(name="s", n_layers=2, hidden_size=1024, n_heads=16, ffn_hidden_size=4096, vocab_size=32000,
                 gated_mlp=False, dropout=0.1)
    for prec, per_layer in (("bf16", 406_847_488), ("fp32", 742_391_808)):
        b = one(model=small, training={"seq_len": 2048, "global_batch_size": 1, "micro_batch_size": 1,
                                       "precision": prec},
                parallelism={"tp": 1, "pp": 1, "dp": 1, "recompute": "none", "flash_attention": False},
                cluster={"system": "dgx-h100", "n_gpus": 1})
        assert run(b)["mem_activations_bytes"][0] == 2 * per_layer, prec


def _megatron_interleaved_peak(p, v, m, j, L):
    """Peak layer-weighted stash on rank j, replaying Megatron-Core's interleaved schedule step by
    step (``pipeline_parallel/schedules.py``: ``get_pp_rank_microbatches`` warm-up
    ``2(p − j − 1) + (v − 1)·N``, all ``m·v`` if no fewer; ``get_schedule_table`` with group size
    N = p; steady state forward ``W + i`` then backward ``i``, the backward's chunk ``v − 1 −``
    the table's). Chunk c of rank j is virtual stage ``j + c·p``: ``L // (p·v)`` layers, one more
    for the first ``L mod (p·v)`` virtual stages (``model_stats.layers_on_rank``)."""
    base, rem = divmod(L, p * v)
    lay = [base + (j + c * p < rem) for c in range(v)]
    table = []
    for lo in range(0, m, p):
        hi = m if lo + p >= m else lo + p
        table += [c for c in range(v) for _ in range(lo, hi)]
    total = m * v
    warm = min(2 * (p - j - 1) + (v - 1) * p, total)
    cnt, peak = [0] * v, 0
    for k in range(warm):
        cnt[table[k]] += 1
        peak = max(peak, sum(c * n for c, n in zip(cnt, lay)))
    for i in range(total - warm):
        cnt[table[warm + i]] += 1
        peak = max(peak, sum(c * n for c, n in zip(cnt, lay)))
        cnt[v - 1 - table[i]] -= 1
    return peak


def test_interleaved_uneven_llama405b_first_stage():
    """Llama 3 405B preset (126 layers, p 16, v 7 -> 112 virtual stages, the first 14 with 2
    layers, so rank 0's chunk 0 holds 2 and its chunks 1–6 one each: 8 layers), global batch
    4096 -> m = 4096/(1·128) = 32. Warm-up on rank 0: 2·15 + 6·16 = 126 forwards; forward k runs
    chunk (k mod 112) // 16. After 127 forwards chunk 0 holds 16 + 15 = 31 micro-batches and
    chunks 1–6 16 each (31·2 + 96 = 158 layer-stashes); the first backward frees one of chunk 6
    and forward 127 adds a 32nd to chunk 0: 32·2 + 5·16 + 15 = 159, which holds until chunk 0's
    backwards start (backward 96). Per layer and micro-batch (h 16384, q 16384, kv 1024, f 53248,
    gated, no dropout, flash, no recompute, t 8 + SP, 8192 tokens): (8h + 4q + 4kv + 6f)/8 =
    (131,072 + 65,536 + 4,096 + 319,488)/8 = 65,024 B × 8192 = 532,676,608 B (508 MiB).
    Stage 0: 159 × 532,676,608 = 84,695,580,672 B (78.88 GiB); before the fix 127/7 × 8 = 145.1
    layer-stashes, 72.00 GiB. At the preset's m = 16 every forward is warm-up (112 < 126): 16
    micro-batches of all 8 layers, 128 layer-stashes, as before."""
    per = 532_676_608
    assert _megatron_interleaved_peak(16, 7, 32, 0, 126) == 159
    assert _megatron_interleaved_peak(16, 7, 16, 0, 126) == 128
    r = _preset("llama3-405b-h100-16k", training__global_batch_size=4096)
    assert r["mem_worst_stage"] == 0
    assert r["mem_activations_bytes"] == pytest.approx(159 * per, rel=1e-12)
    r16 = _preset("llama3-405b-h100-16k")
    assert r16["mem_activations_bytes"] == pytest.approx(128 * per, rel=1e-12)


@pytest.mark.parametrize("p, v, L", [(2, 2, 5), (2, 3, 7), (3, 2, 8), (4, 2, 9), (4, 3, 13), (4, 2, 14)])
def test_interleaved_inflight_matches_schedule_replay(p, v, L):
    """Every stage of an uneven interleaved split holds, at its peak, the layer-stashes of a
    step-by-step replay of Megatron's schedule (_megatron_interleaved_peak), for m = p … 4p; and
    rank 0 holds the most (the worst-stage search looks at the first and last stage only).
    Small dense model (h 256, a 4, f 1024; flash, no recompute, no TP), so a layer's activations
    per micro-batch are activation_bytes_per_layer's (Table 2, no dropout)."""
    model = dict(name="tiny", n_layers=L, hidden_size=256, n_heads=4, ffn_hidden_size=1024, vocab_size=1024,
                 gated_mlp=False)
    per = float(memory.activation_bytes_per_layer(512, 1, 256, 4, 1, flash_attention=True, dropout=False))
    for m in (p, 2 * p, 3 * p, 4 * p):
        b = one(model=model, training={"seq_len": 512, "global_batch_size": m, "micro_batch_size": 1},
                parallelism={"tp": 1, "pp": p, "dp": 1, "vpp": v, "schedule": "interleaved",
                             "layer_split": "uneven", "recompute": "none", "flash_attention": True},
                cluster={"system": "dgx-h100", "n_gpus": p})
        stages = memory.per_stage(run(b), 0)
        want = [_megatron_interleaved_peak(p, v, m, j, L) for j in range(p)]
        got = [s["mem_activations_bytes"] / per for s in stages]
        assert got == pytest.approx(want, rel=1e-12), (m, got, want)
        assert want[0] == max(want)


def test_zero1_offload_grads_counts_the_optimizer_partition_on_the_host():
    """The CPU step of ZeRO-1 reads its optimizer partition of the gradient, 1/dp of it (as the
    step time moves it); found by review: each GPU's whole gradient was counted on the host.
    Default preset (Llama 3 70B, TP 8 × PP 4 × DP 32, fp32 gradients): host memory is counted on
    the last stage, which holds 2,270,478,336 parameters (the first's 2,270,470,144 + 8,192):
    8 GPUs × 4 B × 2,270,478,336 / 32 B per node of gradients, with or without offload_grads (the
    CPU step reads them either way; the flag only frees the GPU's copy under ZeRO-2/3, review 39),
    beside the 12 B of fp32 master and Adam m, v."""
    import planner
    d = planner.load_preset("default").to_json_dict()
    d["parallelism"]["offload_optimizer"] = "cpu"
    base = planner.evaluate(d).results["host_mem_per_node_bytes"]
    d["parallelism"]["offload_grads"] = True
    r = planner.evaluate(d).results
    assert r["host_mem_per_node_bytes"] == base == pytest.approx(8 * (4 + 12) * 2_270_478_336 / 32, rel=1e-12)
