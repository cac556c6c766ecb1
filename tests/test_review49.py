"""Review 49 (2026-12-07): the lax-type rules of a field are read once per (model class, field)
(planner.schema._lax_rules) instead of from the annotation on every validation; the messages
must stay those of reviews 38 / 40 and must follow each class's own annotation."""
import re
from typing import Literal, Optional

import numpy as np
import pytest
from pydantic import ValidationError

from planner import schema


class _A(schema._Strict):
    x: int = 1
    flag: bool = False


class _B(schema._Strict):  # the same field names, other types: the rules are per class
    x: Optional[float] = None
    flag: Literal[0, 1, 3] = 0


def _msg(cls, **kw) -> str:
    with pytest.raises(ValidationError) as e:
        cls(**kw)
    return str(e.value)


def test_rules_follow_each_class_annotation():
    # int field: "a whole number"; float field of the other class with the same name: "a number"
    assert "a whole number, not true" in _msg(_A, x=True)
    assert "a number, not true" in _msg(_B, x=True) and "whole" not in _msg(_B, x=True)
    # bool field vs an int Literal of the same name (zero_stage's rule)
    assert "must be true or false (got 1)" in _msg(_A, flag=1)
    assert "must be 0, 1 or 3 (got 'no')" in _msg(_B, flag="no")
    # asked again (rules now cached), in the other order: the same answers
    assert "a number, not the text '8'" in _msg(_B, x="8")
    assert "a whole number, not the text '8'" in _msg(_A, x="8")
    assert _A(x=np.int64(4), flag=np.bool_(True)).flag is True
    assert _B(x=2.5).x == 2.5


def test_cache_entries_are_per_class_and_field():
    _A(x=2)
    _B(x=2.0)
    assert schema._LAX_RULES[(_A, "x")][:3] == (True, True, False)  # numeric, int only, not bool
    assert schema._LAX_RULES[(_B, "x")][:3] == (True, False, False)
    assert schema._LAX_RULES[(_B, "flag")][3] == ["0", "1", "3"]


def test_scenario_messages_unchanged():
    import planner

    s = planner.load_preset("default").to_json_dict()
    s["parallelism"]["tp"] = True
    with pytest.raises(planner.InputError) as e:
        planner.evaluate(s)
    # the message the engine gave before the cache (review 40's wording, checked on c09f390)
    assert str(e.value) == "parallelism.tp: must be a whole number, allowed 1 to 10,000,000 (got true)"


# --------------------------------------------------------------------------------------
# 49b: validate shows the run's own measured memory beside the prediction; a tight fit says so
# --------------------------------------------------------------------------------------
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pandas as pd  # noqa: E402

import planner  # noqa: E402
from planner import validation  # noqa: E402

OOS = Path(__file__).resolve().parents[1] / "validation" / "out_of_sample.csv"
WITH_MEM = "torchtitan_h100_llama31_405b_512gpu_fsdp4_tp8_pp16_1f1b"  # notes: 78 GiB peak reserved


def _two_rows(tmp_path) -> Path:
    df = pd.read_csv(OOS, dtype=str)
    pick = df[df["run_id"].isin([WITH_MEM])]
    without = df[df["mem_per_gpu_gb"].isna()].head(1)
    out = tmp_path / "two.csv"
    pd.concat([pick, without]).to_csv(out, index=False)
    return out


def test_validate_rows_carry_published_memory_and_ratio(tmp_path):
    path = _two_rows(tmp_path)
    rows, _ = validation.validate(path)
    r = rows.set_index("run_id")
    assert r.loc[WITH_MEM, "mem_published"] == 78.0  # the CSV cell as written
    # the ratio docs/memory.md tabulates: prediction (GiB) over the published figure read as GiB
    assert r.loc[WITH_MEM, "mem_pred_over_pub"] == pytest.approx(r.loc[WITH_MEM, "mem_gib"] / 78.0, rel=1e-12)
    assert 0.5 < r.loc[WITH_MEM, "mem_pred_over_pub"] < 0.8  # docs/memory.md: 0.64 for this run (not explained)
    other = [i for i in r.index if i != WITH_MEM][0]
    assert np.isnan(r.loc[other, "mem_published"]) and np.isnan(r.loc[other, "mem_pred_over_pub"])


def test_validate_run_prints_published_memory(tmp_path):
    path = _two_rows(tmp_path)
    p = subprocess.run([sys.executable, "-m", "planner", "validate", "--csv", str(path), "--run", WITH_MEM],
                       capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])
    assert p.returncode == 0, p.stderr
    line = next(ln for ln in p.stdout.splitlines() if "memory per GPU: published" in ln)
    pred = float(re.search(r"predicted ([\d.]+) GiB", line).group(1))
    ratio = float(re.search(r"predicted / published ([\d.]+)", line).group(1))
    assert "published 78 " in line and ratio == pytest.approx(pred / 78.0, abs=6e-4)


def test_tight_fit_note_by_hand():
    # the 405B preset: states + activations + logits above 80 % of the usable HBM (Fujii et al. 2024)
    rep = planner.evaluate(planner.load_preset("llama3-405b-h100-16k"))
    res = rep.results
    core = sum(res[c] for c in ("mem_weights_bytes", "mem_grads_bytes", "mem_optimizer_bytes",
                                "mem_activations_bytes", "mem_logits_bytes"))
    frac = core / res["hbm_usable_bytes"]
    assert res["fits"] and not res["fits_conservative"] and 0.8 < frac < 1.0
    note = next(n for n in rep.notes if n.startswith("Tight fit"))
    assert f"{core / 2**30:,.2f} GiB are {frac:.0%} of the usable HBM {res['hbm_usable_bytes'] / 2**30:,.2f} GiB" in note
    # just above the rule the share is written with a decimal, never as the threshold itself (review 49b)
    d = planner.load_preset("default").to_json_dict()
    r0 = planner.evaluate(d).results
    core0 = sum(r0[c] for c in ("mem_weights_bytes", "mem_grads_bytes", "mem_optimizer_bytes",
                                "mem_activations_bytes", "mem_logits_bytes"))
    d["cluster"].setdefault("overrides", {})["hbm_usable_bytes"] = core0 / 0.8009
    edge = next(n for n in planner.evaluate(d).notes if n.startswith("Tight fit"))
    assert "are 80.1% of the usable HBM" in edge
    # a plan well inside the 80 % rule has no such note; one that does not fit has the "Does not fit" one
    assert not any(n.startswith("Tight fit") for n in planner.evaluate(planner.load_preset("default")).notes)
    d = planner.load_preset("llama3-405b-h100-16k").to_json_dict()
    d["parallelism"]["zero_stage"] = 1  # unsharded gradients: 88 GiB
    rep2 = planner.evaluate(d)
    assert not rep2.results["fits"] and not any(n.startswith("Tight fit") for n in rep2.notes)


def test_plan_page_warns_on_a_tight_fit():
    """The Plan page shows the engine's 'Tight fit' note beside the headline (AppTest)."""
    from streamlit.testing.v1 import AppTest

    plan = str(Path(__file__).resolve().parents[1] / "app_pages" / "plan.py")
    at = AppTest.from_file(plan, default_timeout=120)
    at.query_params.update({"p": "llama3-405b-h100-16k"})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert {m.label: m.value for m in at.metric}["Fits in HBM"] == "yes"
    tight = [w.value for w in at.info if "Tight fit" in w.value]  # a caution beside "yes", not a warning
    assert len(tight) == 1 and "above the 80%" in tight[0] and "fits_conservative = no" in tight[0]
    at2 = AppTest.from_file(plan, default_timeout=120)
    at2.run()  # the default preset: well inside the rule, no such warning
    assert not any("Tight fit" in w.value for w in at2.info)


# --------------------------------------------------------------------------------------
# 49c: the Monte Carlo states the standard error of its means; its refusal words for a run most of
# whose attempts meet no restarting failure
# --------------------------------------------------------------------------------------
def test_summarize_standard_error_by_hand():
    from planner.simulate import summarize

    t = np.array([10.0, 12.0, 11.0, 15.0])
    g = np.array([0.9, 0.8, 0.95, 0.6])
    s = summarize(pd.DataFrame({"time_to_train_days": t, "goodput": g})).set_index("metric")
    # std(ddof=1) of 10, 12, 11, 15: mean 12, squares 4 + 0 + 1 + 9 = 14, /3, sqrt → 2.1602; / √4
    assert s.loc["time_to_train_days", "mean_se"] == pytest.approx(np.sqrt(14.0 / 3.0) / 2.0, rel=1e-12)
    # pooled goodput G = 1/mean(1/g); delta method: G² · std(1/g) / √n
    inv = 1.0 / g
    G = 1.0 / inv.mean()
    assert s.loc["goodput", "mean"] == pytest.approx(G, rel=1e-12)
    assert s.loc["goodput", "mean_se"] == pytest.approx(G**2 * inv.std(ddof=1) / 2.0, rel=1e-12)
    one = summarize(pd.DataFrame({"time_to_train_days": [3.0], "goodput": [0.9]})).set_index("metric")
    assert one["mean_se"].isna().all()  # one trial: no standard error
    never = summarize(pd.DataFrame({"time_to_train_days": [3.0, np.inf], "goodput": [0.9, 0.0]})).set_index("metric")
    assert never["mean_se"].isna().all()


def test_simulate_cli_prints_standard_error():
    p = subprocess.run([sys.executable, "-m", "planner", "simulate", "--preset", "default", "--trials", "50",
                        "--format", "json"], capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])
    assert p.returncode == 0, p.stderr
    import json

    rows = {r["metric"]: r for r in json.loads(p.stdout)}
    assert 0 < rows["time_to_train_days"]["mean_se"] < rows["time_to_train_days"]["p90"] - rows["time_to_train_days"]["p10"]


def _slow_restart_scenario(tokens: float) -> dict:
    """The default preset with every failure class of its profile taking 3.2e7 s (370 days, the
    schema's largest) to restart, training ``tokens`` tokens."""
    from planner import catalog

    prof = catalog.resolve_failure_profile("llama3-h100").model_dump(mode="json")
    for c in prof["classes"]:
        c["restart_s"] = 3.2e7
    d = planner.load_preset("default").to_json_dict()
    d["reliability"]["profile"] = prof
    d["training"]["tokens_total"] = tokens
    return d


def test_restart_tail_words_by_hand():
    """A 1e6-token run on the default preset whose every failure class takes 3.2e7 s to restart: the
    Monte Carlo refuses (4e74 failures expected), but almost every run meets no failure at all:
    e^{−λ·T}, λ the profile's 0.02067 /h, T = 1e6 tokens / the throughput."""
    from planner.simulate import simulate as run_mc

    d = _slow_restart_scenario(1e6)
    rep = planner.evaluate(d)
    res = rep.results
    lam_t = res["failure_rate_per_h"] / 3600.0 * 1e6 / res["tokens_per_s"]  # T = the run's compute: no save within it
    with pytest.raises(ValueError) as e:
        run_mc(d, n_trials=10)
    msg = str(e.value)
    assert "does not finish in practice" not in msg
    pct = float(re.search(r"about ([\d.]+) % meet no failure", msg).group(1))
    assert pct == pytest.approx(100.0 * np.exp(-lam_t), abs=1e-4)
    # a run that mostly does meet one keeps the old words (the tail text is None)
    from planner import reliability as rel
    from planner import batch as _b, engine

    d2 = dict(d, training=dict(d["training"], tokens_total=1e13))
    out = engine.run_batch(_b.from_scenarios([planner.schema.validate_scenario(d2)]))
    assert rel.restart_tail_text(_b.row(out, 0)) is None


def test_plan_page_monte_carlo_states_standard_error():
    from streamlit.testing.v1 import AppTest

    plan = str(Path(__file__).resolve().parents[1] / "app_pages" / "plan.py")
    at = AppTest.from_file(plan, default_timeout=120)
    at.run()
    at.button(key="pl_mc_run").click().run()
    assert not at.exception, [e.message for e in at.exception]
    cap = [c.value for c in at.caption if "standard error" in c.value]
    assert len(cap) == 1
    m = re.search(r"over the ([\d,]+) trials .*time to train ([\d,.]+) ± ([\d.]+) days; goodput ([\d.]+) ± ([\d.]+) %",
                  cap[0])
    assert m, cap[0]
    n, se_days = int(m.group(1).replace(",", "")), float(m.group(3))
    # about 209 days (the default preset's analytic figure, test_reliability) with a spread of single runs
    # of about 1 day (P10–P90 208.1–210.2 at 400 trials): the mean's error is that over √n
    assert 200 < float(m.group(2).replace(",", "")) < 220 and 0 < se_days < 2.0 / np.sqrt(n)


# --------------------------------------------------------------------------------------
# 49d: new-user check — a non-object "scenario" in a JSON file; an over-long name in a link
# --------------------------------------------------------------------------------------
def test_dependent_problems_are_not_named_beside_their_cause():
    # pp·vpp above the layers: the chunk the recompute count is checked against does not exist
    d = planner.load_preset("default").to_json_dict()
    d["parallelism"].update(pp=32, dp=None, recompute="full", recompute_layers=2)
    with pytest.raises(planner.InputError) as e:
        planner.evaluate(d)
    assert not any("recompute_layers" in ln for ln in e.value.lines), e.value.lines
    assert any("pp·vpp = 160 exceeds model.n_layers = 80" in ln for ln in e.value.lines)
    # a dense model's ep is refused; hybrid sharding beside it is not a second problem
    d = planner.load_preset("default").to_json_dict()
    d["parallelism"].update(ep=2, dp_shard=8)
    with pytest.raises(planner.InputError) as e:
        planner.evaluate(d)
    assert e.value.lines == ["parallelism.ep = 2 needs an MoE model; allowed: 1"]
    # an unknown catalogue id is reported on its own (the other checks read the entry)
    d = planner.load_preset("default").to_json_dict()
    d["reliability"]["profile"] = "nope"
    d["cluster"].setdefault("overrides", {})["power_limit_w"] = 5
    with pytest.raises(planner.InputError) as e:
        planner.evaluate(d)
    assert len(e.value.lines) == 1 and "reliability.profile" in e.value.lines[0]


def test_non_object_scenario_key_is_one_clear_line():
    p = subprocess.run([sys.executable, "-m", "planner", "evaluate", "-"], input='{"scenario": 5}',
                       capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])
    assert p.returncode == 2
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert lines == ['planner: - (standard input): its "scenario" is a number, not a JSON object (an evaluate '
                     "result's scenario, or write the scenario's own fields at the top level)"]
    q = subprocess.run([sys.executable, "-m", "planner", "evaluate", "-"], input='{"scenario": [1]}',
                       capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])
    assert 'its "scenario" is an array, not a JSON object' in q.stderr  # JSON's words, not Python's


def test_link_name_over_200_characters_is_refused_not_cut():
    from planner import share

    name = "A" * 201
    sj, warnings = share.params_to_scenario({"p": "default", "m": "custom", "mn": name})
    assert any(w.startswith("mn=") and "201 characters; allowed at most 200" in w for w in warnings), warnings
    assert sj["model"].get("name") != name[:200]  # the base value kept, not the first 200 characters
    ok, warnings2 = share.params_to_scenario({"p": "default", "m": "custom", "mn": "A" * 200})
    assert ok["model"]["name"] == "A" * 200 and not any(w.startswith("mn=") for w in warnings2)


# --------------------------------------------------------------------------------------
# 49e: every independent problem of a scenario named at once; an infinite value reads inf in the CLI
# --------------------------------------------------------------------------------------
def test_independent_cross_field_problems_are_all_named():
    d = planner.load_preset("default").to_json_dict()
    d["parallelism"].update(tp=3, cp=3, dp=None)  # 3 ∤ 64 heads, 8 KV heads; 3 ∤ seq 8192; 3·4·3 ∤ 1,024 GPUs
    with pytest.raises(planner.InputError) as e:
        planner.evaluate(d)
    assert e.value.lines == [
        "parallelism: tp·pp·cp = 3·4·3 = 36 does not divide cluster.n_gpus = 1024; choose n_gpus as a multiple of 36",
        "parallelism.tp = 3 must divide model.n_heads = 64",
        "parallelism.tp = 3: model.n_kv_heads = 8 must be divisible by tp (sharded) or divide tp (replicated)",
        "parallelism.cp = 3 must divide training.seq_len = 8192",
    ]
    # a problem that follows from another is not repeated: with no data-parallel degree there is no
    # micro-batch count to check (global batch 512 / (micro-batch 7 · dp) is not asked)
    d["training"]["micro_batch_size"] = 7
    with pytest.raises(planner.InputError) as e2:
        planner.evaluate(d)
    assert not any("global_batch_size" in ln for ln in e2.value.lines) and len(e2.value.lines) == 4
    # with the split valid, the batch problem is named alone
    d2 = planner.load_preset("default").to_json_dict()
    d2["training"]["micro_batch_size"] = 7
    with pytest.raises(planner.InputError) as e3:
        planner.evaluate(d2)
    assert e3.value.lines == ["training.global_batch_size = 512 is not divisible by micro_batch_size·dp = 7·32 = 224"]


def test_cli_table_writes_inf_for_an_infinite_value():
    p = subprocess.run([sys.executable, "-m", "planner", "evaluate", "--preset", "default", "--set",
                        "reliability.rate_scale=0"], capture_output=True, text=True,
                       cwd=Path(__file__).resolve().parents[1])
    assert p.returncode == 0, p.stderr
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("mtbf_h "))
    assert line.split()[1] == "inf" and "= inf h" in line  # the value and its formula agree
    # NaN (does not apply: a tier not in use) stays "—"; −inf is written as such
    from planner.cli import _fmt_value

    assert _fmt_value("ckpt_pfs_save_s", float("nan")) == ("—", "")
    assert _fmt_value("mtbf_h", float("inf")) == ("inf", "") and _fmt_value("x_s", float("-inf")) == ("-inf", "")


# --------------------------------------------------------------------------------------
# 49f: validation rows read as stated — hybrid shard groups, the OLMo-core README's date, the
# flash-class kernels a row names
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("cell, want", [
    ("1 (InternEvo zero1=8: optimizer states sharded within each 8-GPU node)", (8, "ranks")),  # the config value
    ("3 (ZeRO stage 3 via SageMaker SMP: sharded across 128 GPUs, 4 model copies; MiCS)", (128, "gpus")),
    ("3 (MaxText FSDP: table header 'FSDP=128'; configure.sh ici_fsdp_parallelism=8 x dcn_fsdp_parallelism=16, "
     "dcn_data_parallelism=4)", (128, "ranks")),  # the FSDP mesh axes: 8 in the node × 16 across nodes
    ("3 (FSDP+DP per the table header: FSDP over the 8 GPUs of a node (GPT5B ICI_MESH_SHAPE [1,8,1]), DP across "
     "nodes)", (8, "gpus")),
    # negated, taken back, fractional or conflicting statements name no group (review 49b)
    ("ZeRO-3 not sharded across 128 GPUs", None), ("FSDP, was not sharded across 64 GPUs", None),
    ("FULL_SHARD; previously sharded across 64 GPUs, now all", None), ("zero1=8.5", None),
    ("zero1 = 8 in the config, overridden to zero1=-1", None), ("zero1=-1", None),
    ("3 (Megatron FSDP, FSDP=1)", None),  # Megatron-Bridge's FSDP column is a flag, not a degree
    ("3 (FSDP+DP; DCN_MESH_SHAPE=[4,16,1]: FSDP over 16 nodes, DP over the rest; in-node ICI mesh not read)", None),
    ("3 (FSDP FULL_SHARD)", None), ("1", None), (None, None),
])
def test_parse_shard_group(cell, want):
    assert validation.parse_shard_group(cell) == want


def _oos_row(run_id):
    df = pd.read_csv(OOS, dtype=str, keep_default_na=False)
    return {k: (v if v != "" else None) for k, v in df[df["run_id"] == run_id].iloc[0].to_dict().items()}


def test_hybrid_shard_group_becomes_dp_shard():
    s, why = validation.row_to_scenario(_oos_row("internevo_7b_1024xa100_noac_mbs2_mn1"))
    assert s is not None, why
    assert s.parallelism.dp == 1024 and s.parallelism.dp_shard == 8 and s.parallelism.zero_stage == 1
    s8, _ = validation.row_to_scenario(_oos_row("internevo_7b_8xa100_noac_mbs2_mn4"))
    assert s8.parallelism.dp == 8 and s8.parallelism.dp_shard is None  # the group is all of dp: plain ZeRO-1
    # the engine's HSDP: ZeRO-1 collectives inside the 8-GPU node, the gradient shard all-reduced over
    # the 128 replicas (docs/timing.md); its explanation says so
    rep = planner.evaluate(s)
    assert "HSDP: shard over dp_shard·cp = 8" in rep.explain["t_dp_comm_exposed_s"]
    assert "over 128 replicas" in rep.explain["t_dp_comm_exposed_s"]


def test_olmocore_rows_run_pytorch_sdpa_as_flashattention2():
    """The README table the rows quote predates OLMo-core v2.0.0 (2025-03-12: float8_config moved off
    the model config its override names), so PyTorch's SDPA there is its FlashAttention-2 port on H100
    (the default rule, docs/timing.md 'attention kernel')."""
    for rid in ("olmocore_olmo7b_h100_bf16", "olmocore_llama8b_h100_fp8", "olmocore_olmo13b_h100_bf16"):
        s, why = validation.row_to_scenario(_oos_row(rid))
        assert s is not None, why
        assert s.parallelism.attention_kernel == "flash2", rid


def test_flash_class_kernels_named_are_statements():
    st = validation.flash_statement
    assert st({"notes": "fused AdamW, SDPA attention; sequence parallel on"}) is True
    assert st({"notes": "TP=1, CK fused attention v3, USE_TE_SWIGLU=1"}) is True
    assert st({"notes": "--use-fused-sdpa-with-recompute true"}) is True
    # a default filled in for what the source does not state is no statement of what ran
    assert st({"notes": "Defaults taken for what the source does not state: attention = PyTorch SDPA; fp32 grads."}) is None
    assert st({"notes": "FlashAttention-3 instead of SDPA"}) is True  # FA3 named: the flash-attention statement
    assert st({"notes": "plain data parallel"}) is None
    for notes in ("attention via SDPA (math backend)", "Eager attention; the SDPA comparison is in the appendix",
                  "attention = SDPA (assumed)"):
        assert st({"source": "x 2024", "notes": notes}) is None, notes  # review 49b
    assert st({"source": "a paper of 2022", "notes": "SDPA attention"}) is None  # before the year rule's flash


def test_activation_offload_in_the_recompute_cell():
    f = validation.parse_activation_offload
    assert f("full (activation checkpointing, checkpointed activations offloaded to CPU: Composer "
             "activation_cpu_offload)") is True
    assert f("full") is False and f(None) is False and f("full, no activation offloading") is False
    for text in ("full recompute instead of offloading activations", "activation offloading was considered but not used",
                 "full (offloading the activations was slower)", "offloading activations to NVMe"):
        assert f(text) is False, text  # compared, not used, or not to host memory (review 49b)
    s, why = validation.row_to_scenario(_oos_row("mpt_mbsweep_a100_80gb_3b_seq2048_8gpu_mbs1_actckpt_cpuoffload_run1"))
    assert s is not None, why
    assert s.parallelism.offload_activations and s.parallelism.recompute == "full"


def test_se_caption_in_the_table_unit_and_precision():
    """A 2e9-token run (about 40 min): the caption gives the time in the table's unit (min), the mean
    to its standard error's precision (review 49b: "0.02772 ± 0.00019 days" beside "min 39.9")."""
    from streamlit.testing.v1 import AppTest

    plan = str(Path(__file__).resolve().parents[1] / "app_pages" / "plan.py")
    at = AppTest.from_file(plan, default_timeout=120)
    at.query_params.update({"p": "default", "tok": "2e9"})
    at.run()
    at.button(key="pl_mc_run").click().run()
    assert not at.exception, [e.message for e in at.exception]
    cap = next(c.value for c in at.caption if "standard error" in c.value)
    m = re.search(r"time to train ([\d,.]+) ± ([\d.]+) min; goodput", cap)
    assert m, cap
    mean, se = m.group(1), m.group(2)
    # two significant digits of the error, the mean to the same decimal place
    assert len(se.replace("0.", "").lstrip("0")) == 2 and len(mean.split(".")[1]) == len(se.split(".")[1])
    assert 30 < float(mean.replace(",", "")) < 50


def test_failure_free_words_in_the_other_refusal_branch():
    """1e8 tokens (about 116 s of compute) with 370-day recoveries: failures do not restart this run
    (a tier saves within it), so the refusal is the expected-failures one; e^{−λ·W} of runs meet none."""
    from planner.simulate import simulate as run_mc

    d = _slow_restart_scenario(1e8)
    res = planner.evaluate(d).results
    work = 1e8 / res["tokens_per_s"]
    with pytest.raises(ValueError) as e:
        run_mc(d, n_trials=10)
    pct = float(re.search(r"about ([\d.]+) % meet no failure and take", str(e.value)).group(1))
    assert pct == pytest.approx(100.0 * np.exp(-res["failure_rate_per_h"] / 3600.0 * work), abs=1e-4)
