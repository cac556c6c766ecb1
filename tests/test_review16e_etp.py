"""Review 16e: expert tensor parallelism different from TP (``parallelism.etp``).

Megatron-Core ``--expert-tensor-parallel-size`` (default = TP): the routed experts' GEMMs split over
ETP ranks while attention and dense layers use TP; ``parallel_state.initialize_model_parallel``
orders the expert ranks tp-cp-ep-dp-pp with tp = etp and cp = 1, so the EP group is ep ranks etp
apart and the expert data-parallel group tp·cp·dp/(etp·ep) ranks etp·ep apart; it raises unless
world_size % (etp·ep·pp) == 0. The alltoall token dispatcher runs A2A(EP) then AG(expert TP) and
RS(expert TP) then A2A(EP). Recipes run ETP = 1 with TP > 1 (Megatron-Bridge
``scripts/performance/configs/qwen/qwen3_workload_base_configs.py``: ``expert_tensor_parallel_size=1``).

Every expected value below is a hand calculation from Qwen3-235B-A22B's published architecture
(94 layers, h 4096, 128 experts of width 1536, top-8: Qwen3 technical report Table 2 and its
config.json), the DGX H100 catalogue figures (NVLink 450 GB/s per GPU, 50 GB/s NIC per GPU, 8 GPUs
per node) and the link efficiencies / latencies of hardware/calibration.json (0.8 / 0.92, 2 / 5 µs),
never read back from the engine's own output.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import planner
from planner import batch as _batch
from planner import engine, export, presets, share, timing
from planner.schema import Scenario

ROOT = Path(__file__).resolve().parents[1]
CAL = json.loads((ROOT / "hardware" / "calibration.json").read_text())
_EFF = CAL["link_eff"]["value"]  # achieved / nominal: NVLink 0.8, InfiniBand 0.92
NVL = 450e9 * _EFF["scaleup"]  # H100 SXM NVLink 4, 450 GB/s per direction per GPU
NIC = 50e9 * _EFF["network"]  # DGX H100: one 400 Gb/s NIC per GPU
_ALPHA = CAL["alpha_s"]["value"]  # per ring step: 2 µs NVLink, 5 µs network
A_NVL, A_NET = _ALPHA["scaleup"], _ALPHA["network"]
REL = 1e-9

# Qwen3-235B-A22B (presets/models.json, from the Qwen3 report and config.json)
L, H, E, TOPK, FE = 94, 4096, 128, 8, 1536
P_EXPERT = 3 * H * FE  # SwiGLU expert: W1, W3, W2
# the split: TP 4 × PP 2 × DP 16 = 128 H100, EP 8, seq 4096, micro-batch 1, 512 sequences per step
TP, PP, DP, EP, SEQ, GBS = 4, 2, 16, 8, 4096, 512
M_MB = GBS // DP  # 32 micro-batches per step
LAYERS_STAGE = L // PP  # 47, every layer MoE
TOK = SEQ  # tokens of one micro-batch on one CP rank (mb 1, cp 1)


def _scen(etp=None, **par_over):
    par = {"tp": TP, "pp": PP, "dp": DP, "ep": EP, "sequence_parallel": True, "zero_stage": 1,
           "recompute": "selective", "schedule": "1f1b"}
    par.update(par_over)
    if etp is not None:
        par["etp"] = etp
    n = par["tp"] * par["pp"] * par["dp"] * par.get("cp", 1)
    return {"model": "qwen3-235b-a22b", "cluster": {"system": "dgx-h100", "n_gpus": n},
            "training": {"seq_len": SEQ, "global_batch_size": GBS, "micro_batch_size": 1, "precision": "bf16"},
            "parallelism": par}


def _terms(scen):
    b = _batch.from_scenarios([Scenario.model_validate(scen)])
    out = engine.run_batch(b)
    T = timing._terms(out)
    return {k: float(np.ravel(v)[0]) if np.ndim(v) else float(v) for k, v in T.items()}


@pytest.fixture(scope="module")
def reports():
    return {etp: planner.evaluate(_scen(etp)) for etp in (None, 4, 2, 1)}


# ---- schema -----------------------------------------------------------------------------------

def _err(scen) -> str:
    with pytest.raises(ValueError) as ei:
        planner.evaluate(scen)
    return str(ei.value)


def test_etp_not_a_divisor_of_tp_is_refused_naming_the_field_and_the_allowed_values():
    msg = _err(_scen(etp=3))
    assert "parallelism.etp = 3 must divide tp = 4" in msg and "1, 2, 4" in msg


def test_etp_below_one_is_refused():
    msg = _err(_scen(etp=0))
    assert "parallelism.etp" in msg


def test_etp_times_ep_must_divide_tp_cp_dp_as_megatron_requires():
    # TP 4 × DP 2 (8 GPUs of a stage), EP 16: 1·16 does not divide 4·1·2 = 8 (Megatron-Core:
    # world_size % (etp·ep·pp) != 0 raises in initialize_model_parallel)
    msg = _err(_scen(etp=1, dp=2, ep=16))
    assert "etp·ep = 1·16 = 16 must divide tp·cp·dp = 4·1·2 = 8" in msg


def test_etp_one_states_the_qwen3_h100_recipe_that_ep_dividing_dp_cp_could_not():
    # Megatron-Bridge QWEN3_235B_A22B_PRETRAIN_CONFIG_H100_BF16_V1: 256 GPUs, TP 2, PP 8, VPP 4, EP 32,
    # expert_tensor_parallel_size=1 → DP = 256 / (2·8) = 16, EP 32 over TP 2 × DP 16
    par = dict(tp=2, pp=8, dp=16, ep=32, vpp=4, schedule="interleaved", layer_split="uneven")
    scen = _scen(**par)
    scen["training"]["global_batch_size"] = 2048
    assert "parallelism.ep = 32 must divide dp·cp = 16" in _err(scen)
    scen["parallelism"]["etp"] = 1
    Scenario.model_validate(scen)  # 1·32 divides 2·1·16 = 32


def test_etp_on_a_dense_model_is_refused_unless_it_equals_tp():
    dense = {"model": "llama3-8b", "cluster": {"system": "dgx-h100", "n_gpus": 8},
             "training": {"seq_len": 4096, "global_batch_size": 64},
             "parallelism": {"tp": 4, "dp": 2, "etp": 2, "sequence_parallel": True}}
    msg = _err(dense)
    assert "parallelism.etp = 2 needs an MoE model" in msg and "unset or = tp (4)" in msg
    dense["parallelism"]["etp"] = 4
    Scenario.model_validate(dense)


def test_etp_below_tp_needs_sequence_parallelism():
    msg = _err(_scen(etp=1, sequence_parallel=False))
    assert "parallelism.etp = 1 ≠ tp = 4 needs sequence_parallel = true" in msg


def test_etp_below_tp_with_hybrid_sharding_is_refused():
    scen = _scen(etp=1, ep=1, dp_shard=8)
    assert "parallelism.dp_shard = 8 < dp = 16 with etp = 1 ≠ tp = 4" in _err(scen)


def test_cli_set_etp_and_its_error():
    cmd = [sys.executable, "-m", "planner", "evaluate", "--preset", "qwen3-235b-gb200-256",
           "--set", "parallelism.tp=4", "--set", "parallelism.dp=8", "--set", "parallelism.ep=8",
           "--set", "parallelism.sequence_parallel=true", "--format", "json"]
    base = json.loads(subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=True).stdout)
    one = json.loads(subprocess.run(cmd + ["--set", "parallelism.etp=1"], capture_output=True, text=True,
                                    cwd=ROOT, check=True).stdout)
    assert one["scenario"]["parallelism"]["etp"] == 1 and base["scenario"]["parallelism"]["etp"] is None
    # ETP 1: no expert-TP collectives: less TP time than ETP = TP; the EP group (8 ranks 1 or 4 apart)
    # stays inside the GB200 NVL72 rack's 64-GPU block either way: the same all-to-all time
    assert one["results"]["t_tp_comm_s"] < base["results"]["t_tp_comm_s"]
    assert one["results"]["t_ep_comm_s"] == base["results"]["t_ep_comm_s"]
    bad = subprocess.run(cmd + ["--set", "parallelism.etp=3"], capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert "parallelism.etp = 3 must divide tp = 4" in bad.stderr


# ---- memory -----------------------------------------------------------------------------------

def test_expert_params_per_gpu_divide_by_ep_times_etp(reports):
    # stage of 47 MoE layers: 47·128·18,874,368 = 113,548,197,888 expert params
    stage_ex = LAYERS_STAGE * E * P_EXPERT
    assert stage_ex == 113_548_197_888
    ex4, ex1 = stage_ex / (EP * 4), stage_ex / (EP * 1)  # 3,548,381,184 and 14,193,524,736
    r4, r1 = reports[4].results, reports[1].results
    # ZeRO-1: bf16 weights and fp32 gradients whole, the experts the only difference
    assert r1["mem_weights_bytes"] - r4["mem_weights_bytes"] == pytest.approx(2 * (ex1 - ex4), rel=REL)
    assert r1["mem_grads_bytes"] - r4["mem_grads_bytes"] == pytest.approx(4 * (ex1 - ex4), rel=REL)
    assert 2 * (ex1 - ex4) == 21_290_287_104
    # optimizer states over the expert DP group: dp·cp/ep = 2 at ETP 4, tp·cp·dp/(etp·ep) = 8 at ETP 1:
    # 12 B × 3,548,381,184 / 2 = 12 B × 14,193,524,736 / 8 — the same bytes
    assert 12 * ex4 / 2 == 12 * ex1 / 8
    assert r1["mem_optimizer_bytes"] == pytest.approx(r4["mem_optimizer_bytes"], rel=REL)
    # ETP 2: 113,548,197,888 / 16 expert params, expert DP group 4
    r2 = reports[2].results
    assert r2["mem_weights_bytes"] - r4["mem_weights_bytes"] == pytest.approx(2 * (stage_ex / 16 - ex4), rel=REL)


def test_zero3_shards_the_experts_over_the_expert_data_parallel_group():
    r2 = planner.evaluate(_scen(2, zero_stage=3)).results
    r1 = planner.evaluate(_scen(1, zero_stage=3)).results
    r4 = planner.evaluate(_scen(4, zero_stage=3)).results
    stage_ex = LAYERS_STAGE * E * P_EXPERT
    # weights 2 B × experts / (ep·etp) / expert DP group: /(32·2), /(16·4), /(8·8) — the same bytes
    assert stage_ex / (EP * 4) / 2 == stage_ex / (EP * 2) / 4 == stage_ex / EP / 8
    assert r1["mem_weights_bytes"] == pytest.approx(r4["mem_weights_bytes"], rel=REL)
    assert r2["mem_weights_bytes"] == pytest.approx(r4["mem_weights_bytes"], rel=REL)
    # the prefetch units (ZERO3_PREFETCH_LAYERS = 2 gathered in 2 B, ZERO3_GRAD_LAYERS = 1 in 4 B) are the
    # largest layer: an MoE layer whose experts are over ep·etp — at ETP 2 and 1 above the embedding's
    # V·h/t = 151,936·4096/4 = 155.6e6 (the attention part, ~18e6, cancels in the difference)
    layer_ex = E * P_EXPERT
    assert layer_ex / (EP * 2) + 2 * H * 64 * 128 / TP > 151_936 * H / TP  # + at least Q and O over tp
    d_buf = (2 * 2 + 1 * 4) * (layer_ex / EP - layer_ex / (EP * 2))
    assert r1["mem_zero3_prefetch_bytes"] - r2["mem_zero3_prefetch_bytes"] == pytest.approx(d_buf, rel=1e-9)


# ---- timing -----------------------------------------------------------------------------------

def test_tp_collectives_of_the_moe_layers_follow_the_expert_tp_group(reports):
    W = 2 * TOK * H  # b·s·h in bf16
    tp_ar = 2 * 3 / 4 * W / NVL + 2 * 3 * A_NVL  # ring over the 4 TP ranks of one node
    etp2_ar = 2 * 1 / 2 * (2 / 4) * W / NVL + 2 * 1 * A_NVL  # AG + RS over 2 ranks of (2/4)·top_k·W
    per = M_MB * LAYERS_STAGE * 4  # micro-batches × layers × 4 collectives (selective recompute)
    x = TOPK  # capacity factor 1
    # ETP 4 (= TP): attention half + MLP half × top_k;  ETP 1: the attention half alone
    assert reports[4].results["t_tp_comm_s"] == pytest.approx(per * tp_ar * (0.5 + 0.5 * x), rel=REL)
    assert reports[1].results["t_tp_comm_s"] == pytest.approx(per * tp_ar * 0.5, rel=REL)
    assert reports[2].results["t_tp_comm_s"] == pytest.approx(per * (0.5 * tp_ar + 0.5 * x * etp2_ar), rel=REL)
    assert "expert TP 1 ≠ TP 4" in reports[1].explain["t_tp_comm_s"]
    assert "all-gathers / reduce-scatters nothing" in reports[1].explain["t_tp_comm_s"]


def test_ep_all_to_all_spans_one_node_at_etp_one_and_four_nodes_at_etp_four(reports):
    S = 2 * TOK * H * TOPK / TP  # bytes each rank dispatches: its s/tp tokens × top_k, bf16
    assert S == 67_108_864
    per = M_MB * LAYERS_STAGE * 4  # dispatch + combine, forward and backward
    # ETP 1: EP 8 ranks 1 apart = one 8-GPU node, NVLink
    a1 = 7 / 8 * S / NVL + 7 * A_NVL
    # ETP 4: 8 ranks 4 apart span 32 GPUs = 4 nodes, 2 members per node: max(NVLink share, NIC share)
    a4 = max(1 / 8 * S / NVL, 6 / 8 * S / NIC) + max(1 * A_NVL + 3 * A_NET, 7 * A_NVL)
    assert reports[1].results["t_ep_comm_s"] == pytest.approx(per * a1, rel=REL)
    assert reports[4].results["t_ep_comm_s"] == pytest.approx(per * a4, rel=REL)
    assert "ranks 1 apart" in reports[1].explain["t_ep_comm_s"]
    assert "expert TP" not in reports[4].explain["t_ep_comm_s"]  # etp = tp: the text as before


def test_expert_gemm_shape_is_sharded_by_etp():
    T4, T1 = _terms(_scen(4)), _terms(_scen(1))
    # tokens per local expert tok·top_k·ep·(etp/tp)/E: 2,048 at ETP 4, 512 at ETP 1; N = 1536/etp
    m4, m1 = TOK * TOPK * EP * (4 / TP) / E, TOK * TOPK * EP * (1 / TP) / E
    assert (m4, m1) == (2048, 512)
    q, pe = T4["_q"], 989.4e12 * T4["_eff_gemm_max"]  # H100 SXM bf16 dense peak 989.4 TFLOP/s
    assert T1["_q"] == q

    def t_exp(M, etp):  # 16 local experts × (up (W1, W3) + down) GEMMs M × h × fe/etp
        F = 2 * M * H * 3 * FE / etp
        return E / EP * (F * (1 + q * (1 / M + 1 / H)) + 4 * q * M * H) / pe

    assert 2 * m4 * H * 3 * FE / 4 == 2 * m1 * H * 3 * FE / 1  # the same FLOPs per GPU
    assert T1["_t_mlp_moe"] - T4["_t_mlp_moe"] == pytest.approx(t_exp(m1, 1) - t_exp(m4, 4), rel=1e-9)
    ex = planner.evaluate(_scen(1)).explain["t_compute_s"]
    assert "expert TP 1 ≠ TP 4: GEMMs of 512 tokens per local expert" in ex


def test_expert_gradient_reduce_scatter_over_the_expert_dp_group():
    T4, T1 = _terms(_scen(4)), _terms(_scen(1))
    P_exp = L * E * P_EXPERT  # the model's average stage, as the DP terms size it
    # ETP 4: expert DP 2 ranks 32 apart (2 nodes, 1 per node): (1/2)·4 B·P/(4·2·8) over the NIC
    rs4 = 4 * (1 / 2) * P_exp / (4 * PP * EP) / NIC + max(1 * A_NET, 1 * A_NVL)
    # ETP 1: expert DP tp·cp·dp/(etp·ep) = 8 ranks 8 apart (8 nodes, 1 per node)
    rs1 = 4 * (7 / 8) * P_exp / (1 * PP * EP) / NIC + max(7 * A_NET, 7 * A_NVL)
    assert T1["_t_grad_rs"] - T4["_t_grad_rs"] == pytest.approx(rs1 - rs4, rel=1e-9)
    ex = planner.evaluate(_scen(1)).explain["t_dp_comm_exposed_s"]
    assert "tp·cp·dp/(etp·ep) = 8 ranks, 8 apart" in ex


def test_memory_explain_names_the_expert_tp(reports):
    ex = reports[1].explain["mem_weights_bytes"]
    assert "expert TP 1 ≠ TP 4" in ex and "tp·cp·dp/(etp·ep) = 8" in ex
    assert "expert TP" not in reports[4].explain["mem_weights_bytes"]
    # the stated simplifications of the expert-TP model are listed for that scenario only
    assert any(n.startswith("Expert TP 1 ≠ TP 4") and "shared experts" in n for n in reports[1].notes)
    assert not any("Expert TP" in n for n in reports[4].notes)


# ---- etp absent == etp = tp, bit for bit ------------------------------------------------------

_PRESETS = ("default", "mixtral-8x7b-h100-64", "deepseek-v3-h800-2048", "qwen3-235b-gb200-256",
            "llama3-8b-h100-64")


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind in "fc" or b.dtype.kind in "fc":
        return np.array_equal(a.astype(np.float64), b.astype(np.float64), equal_nan=True)
    return np.array_equal(a, b)


def test_etp_absent_and_etp_equal_tp_give_identical_columns():
    scens = [presets.load_preset(p) for p in _PRESETS] + [Scenario.model_validate(_scen(None))]
    without = _batch.from_scenarios(scens)
    assert "etp" not in without  # every row at etp = tp: no column, the batch as before etp existed
    b = {**without, "etp": without["tp"].copy()}  # the column present, equal to tp
    o1, o2 = engine.run_batch(b), engine.run_batch(without)
    names = [k for k in o2 if k not in without and k != "etp"]
    assert "step_time_s" in names and "mem_total_bytes" in names
    for k in names:
        assert _same(o1[k], o2[k]), k
    # and through the API, explicit etp = tp against none, every result and explanation
    for p in _PRESETS:
        s = presets.load_preset(p).to_json_dict()
        s["parallelism"]["etp"] = s["parallelism"]["tp"]
        r1, r2 = planner.evaluate(s), planner.evaluate(presets.load_preset(p))
        assert r1.results.keys() == r2.results.keys()
        for k in r1.results:
            assert _same(r1.results[k], r2.results[k]), (p, k)
        assert r1.explain == r2.explain and r1.stages == r2.stages and r1.notes == r2.notes


def test_a_row_with_etp_below_tp_does_not_move_the_other_rows_of_its_batch():
    scens = [Scenario.model_validate(_scen(None)), Scenario.model_validate(_scen(1)),
             presets.load_preset("mixtral-8x7b-h100-64")]
    out = engine.run_batch(_batch.from_scenarios(scens))
    for i, s in enumerate(scens):
        alone = engine.run_batch(_batch.from_scenarios([s]))
        for k in ("step_time_s", "t_tp_comm_s", "t_ep_comm_s", "t_compute_s", "t_dp_comm_exposed_s",
                  "mem_total_bytes", "mem_weights_bytes", "mem_optimizer_bytes"):
            assert _same(out[k][i], alone[k][0]), (i, k)


# ---- link, export, sweep ----------------------------------------------------------------------

def test_share_link_carries_etp_and_refuses_a_value_out_of_range():
    s = Scenario.model_validate(_scen(1))
    params = share.scenario_to_params(s.to_json_dict())
    assert params["etp"] == "1"
    back, warnings = share.params_to_scenario(params)
    assert not warnings and Scenario.model_validate(back).parallelism.etp == 1
    assert "etp" not in share.scenario_to_params(Scenario.model_validate(_scen(None)).to_json_dict())
    _, warnings = share.params_to_scenario({**params, "etp": "0"})
    assert warnings and "etp" in warnings[0]


def test_megatron_export_writes_expert_tensor_parallel_size():
    text = export.megatron_args(_scen(1)).text
    assert "--expert-tensor-parallel-size 1" in text and "--expert-model-parallel-size 8" in text
    assert "--expert-tensor-parallel-size" not in export.megatron_args(_scen(None)).text
    tt = export.torchtitan_toml(_scen(1))
    assert any("expert TP 1 ≠ TP 4" in n for n in tt.notes)
    ds = export.deepspeed_config(_scen(1))
    assert "enable_expert_tensor_parallelism=False" in " ".join(ds.notes)


def test_sweep_keeps_the_scenarios_expert_tp_where_it_divides_the_rows_tp():
    """Review h27c (2026-12): rows took etp = tp whatever the scenario said; now gcd(etp, tp) where
    the scenario sets it (etp 1, parallel folding, on every row), expert TP = TP where it does not."""
    import importlib

    sweep = importlib.import_module("planner.sweep")
    row = {"tp": 8, "pp": 2, "dp": 8, "cp": 1, "ep": 8, "vpp": 1, "zero_stage": 1, "n_gpus": 128,
           "sequence_parallel": True, "recompute": "selective", "schedule": "1f1b", "offload_optimizer": "none",
           "micro_batch_size": 1}
    s = sweep.scenario_for_row(Scenario.model_validate(_scen(1)), row)
    assert s.parallelism.etp == 1 and s.parallelism.tp == 8
    assert sweep.scenario_for_row(Scenario.model_validate(_scen(None)), row).parallelism.etp is None
    two = _scen(1)
    two["parallelism"]["etp"] = 2  # TP 4 in _scen: etp 2 divides it
    s2 = Scenario.model_validate(two)
    assert sweep.scenario_for_row(s2, row).parallelism.etp == 2  # gcd(2, 8)
    assert sweep.scenario_for_row(s2, {**row, "tp": 1, "dp": 64}).parallelism.etp == 1  # gcd(2, 1)


def test_sweep_rows_with_the_scenarios_expert_tp_equal_their_evaluation():
    """The sweep's rows (gcd(etp, tp)) against planner.evaluate of each rebuilt scenario."""
    import importlib

    sweep = importlib.import_module("planner.sweep")
    base = Scenario.model_validate(_scen(1))
    df = sweep.sweep(base, top=40)
    assert len(df) > 0
    seen_tp = set()
    for _, r in df.iterrows():
        sc = sweep.scenario_for_row(base, r.to_dict())
        got = planner.evaluate(sc).results
        seen_tp.add(int(r["tp"]))
        for k in ("step_time_s", "mem_total_bytes", "time_to_train_days"):
            assert math.isclose(got[k], float(r[k]), rel_tol=1e-9), (k, r.to_dict())
    # and an etp-1 row differs from the same split with expert TP = TP wherever tp > 1
    tp_rows = df[df["tp"] > 1]
    if len(tp_rows):
        r = tp_rows.iloc[0].to_dict()
        plain = base.to_json_dict()
        plain["parallelism"]["etp"] = None
        same_tp = planner.evaluate(sweep.scenario_for_row(Scenario.model_validate(plain), r)).results
        assert same_tp["step_time_s"] != float(r["step_time_s"])
