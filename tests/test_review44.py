"""Session 44: the Transformers class defaults of deepseek_v2 and llama4_text MoE files, and the
review findings of session 44 (each test names the rule or source of its expected value)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import planner
from planner import import_hf_config
from test_hf_config import _params

DATA = Path(__file__).parent / "data" / "hf_configs14"


def _cfg(name: str) -> dict:
    d = json.loads((DATA / f"{name}.json").read_text())
    d.pop("_source", None)
    return d


def test_llama4_text_without_moe_or_ffn_keys_takes_llama4textconfig_defaults():
    """Llama4TextConfig (transformers/models/llama4/configuration_llama4.py): num_local_experts 16,
    num_experts_per_tok 1, intermediate_size 8192, intermediate_size_mlp 16384 -- Scout's own values,
    so a Scout text_config without those four keys is Scout: 17B active parameters (Meta's Llama 4
    announcement, "17B active parameters, 16 experts")."""
    full = _cfg("llama4_scout")
    stripped = dict(full)
    stripped["text_config"] = {k: v for k, v in full["text_config"].items()
                               if k not in ("num_local_experts", "num_experts_per_tok", "intermediate_size",
                                            "intermediate_size_mlp")}
    imp = import_hf_config(stripped)
    m = imp.model
    assert (m.moe.n_experts, m.moe.top_k, m.moe.expert_ffn_hidden_size, m.ffn_hidden_size) == (16, 1, 8192, 16384)
    assert _params(m) == _params(import_hf_config(full).model)
    assert _params(m)[1] == pytest.approx(17e9, rel=0.03)
    assert any("llama4_text class defaults" in n and "num_local_experts = 16" in n for n in imp.notes)


def test_llama4_text_dense_layers_default_to_intermediate_size_mlp():
    """Maverick-style interleaving (interleave_moe_layer_step 2) without intermediate_size_mlp: the
    dense layers are Llama4TextConfig's 16,384 wide, not the experts' intermediate_size."""
    cfg = _cfg("llama4_maverick")
    cfg["text_config"] = {k: v for k, v in cfg["text_config"].items() if k != "intermediate_size_mlp"}
    assert import_hf_config(cfg).model.ffn_hidden_size == 16384


def test_deepseek_v2_without_expert_width_takes_1407_not_the_dense_width():
    """DeepseekV2Config: moe_intermediate_size 1407 (both Transformers' class and DeepSeek's own
    configuration_deepseek.py); before, the dense intermediate_size (10,944) was taken for each expert."""
    cfg = {k: v for k, v in _cfg("deepseek_v2_lite").items() if k != "moe_intermediate_size"}
    imp = import_hf_config(cfg)
    assert imp.model.moe.expert_ffn_hidden_size == 1407
    assert imp.model.ffn_hidden_size == 10944


@pytest.mark.parametrize("key, value, field", [("n_routed_experts", 64, "n_experts"),
                                               ("n_shared_experts", 2, "n_shared_experts"),
                                               ("first_k_dense_replace", 0, "first_dense_layers")])
def test_deepseek_v2_routing_keys_take_deepseekv2config_defaults(key, value, field):
    """DeepseekV2Config: n_routed_experts 64, n_shared_experts 2, first_k_dense_replace 0."""
    base = _cfg("deepseek_v2_lite")
    cfg = {k: v for k, v in base.items() if k != key}
    if key != "first_k_dense_replace":  # Lite states 1; keep it to see the key under test move alone
        assert getattr(import_hf_config(base).model.moe, field) == value
    imp = import_hf_config(cfg)
    assert getattr(imp.model.moe, field) == value
    assert any(f"{key} = {value}" in n for n in imp.notes)


def test_deepseek_v2_without_top_k_is_refused_naming_the_missing_default():
    """DeepseekV2Config's num_experts_per_tok defaults to None: no top-k to assume."""
    cfg = {k: v for k, v in _cfg("deepseek_v2_lite").items() if k != "num_experts_per_tok"}
    with pytest.raises(planner.InputError, match="without num_experts_per_tok .deepseek_v2's Transformers class "
                                                 "has no default"):
        import_hf_config(cfg)


def test_class_defaults_note_warns_when_the_file_runs_its_own_code():
    cfg = {k: v for k, v in _cfg("deepseek_v2_lite").items() if k != "n_shared_experts"}
    cfg["auto_map"] = {"AutoConfig": "configuration_deepseek.DeepseekV2Config"}
    notes = import_hf_config(cfg).notes
    assert any("auto_map names its own configuration code" in n for n in notes)


def test_a_memory_size_range_names_bytes_and_gib():
    """schema.HBM_BYTES_RANGE is 0.1 GiB (0.1 × 2^30 = 107,374,182.4 B) to 1e14 B = 93,132.3 GiB
    (1e14 / 2^30 = 93,132.257...): the message gives the unit and the GiB the Plan page uses."""
    from test_cli import run
    rc, out, err = run("evaluate", "--preset", "default", "--set", "cluster.overrides.hbm_usable_bytes=5")
    assert rc == 2
    assert "hbm_usable_bytes: allowed 107,374,182.4 to 1e+14 bytes (0.1 to 93,132.3 GiB) (got 5)" in err


@pytest.mark.parametrize("replicas", [0, 1, 3])
def test_replicated_nvme_save_counts_the_peer_copies_the_node_stores(replicas):
    """Gemini-style replication (Wang et al. SOSP'23): each node writes its own share and stores
    ``replicas`` peers' shares on the same disk, so the disk term is node share × (1 + r) / write
    bandwidth. DGX H100 local NVMe writes 27.5e9 B/s per node (hardware/systems.json, hardware.md
    §5a); the 405B preset's node share is 8 GPUs × its shard (ZeRO-1: ckpt / n_gpus each). The
    network term (r × share / (8 × 50 GB/s × 0.92)) and the host copy are far below it."""
    d = planner.load_preset("llama3-405b-h100-16k").to_json_dict()
    d["checkpoint"]["tiers"] = [{"tier": "local_nvme", "replicas": replicas}, {"tier": "pfs"}]
    r = planner.evaluate(d)
    node_share = 8 * r.results["ckpt_shard_bytes"]
    assert r.results["ckpt_local_nvme_save_s"] == pytest.approx(node_share * (1 + replicas) / 27.5e9, rel=1e-9)
    assert ("received" in r.explain["ckpt_local_nvme_save_s"]) == (replicas > 0)


def test_replicated_tier_save_is_the_same_in_the_grid_and_the_row_paths():
    """checkpoint.tier_times (the per-tier grid, used by the interval floors) and reliability.stage
    (the row path the results come from) give one save time per replicated tier."""
    from planner import batch as B, checkpoint as ck, model_stats, reliability as rel, schema
    from planner.checkpoint import TIER_KINDS
    d = planner.load_preset("llama3-405b-h100-16k").to_json_dict()
    d["checkpoint"]["tiers"] = [{"tier": "host_memory", "replicas": 2}, {"tier": "local_nvme", "replicas": 1},
                                {"tier": "pfs"}]
    b = B.from_scenarios([schema.Scenario.model_validate(d)])
    b.update(model_stats.stage(b))
    tt = ck.tier_times(b)
    out = rel.stage(b)
    for kind in ("host_memory", "local_nvme"):
        k = TIER_KINDS.index(kind)
        assert float(out[f"ckpt_{kind}_save_s"][0]) == pytest.approx(float(tt["save_s"][0, k]), rel=1e-12)
    k = TIER_KINDS.index("local_nvme")
    assert float(tt["save_s"][0, k]) == pytest.approx(2 * 8 * float(out["ckpt_shard_bytes"][0]) / 27.5e9, rel=1e-9)


def test_activation_copies_hide_in_their_own_pass_not_the_whole_step():
    """Transformer Engine's CPU offload: each micro-batch's stash leaves during its forward and comes
    back during its backward, over a full-duplex host link. On the default preset (Llama 3 70B, TP 8
    PP 4, m = 16) with activation offload the copies each way (1.78 s) are shorter than the whole
    compute (3.67 s: the old window, 0 s exposed) but longer than the forward passes (1.15 s): the
    excess out, less the exposed DP collectives it overlaps, is on the step."""
    from planner import batch as B, memory, model_stats, schema, timing
    d = planner.load_preset("default").to_json_dict()
    d["parallelism"]["offload_activations"] = True
    b = B.from_scenarios([schema.Scenario.model_validate(d)])
    b.update(model_stats.stats(b))
    b.update(memory.stage(b))
    T = {k: float(np.ravel(v)[0]) for k, v in timing._terms(b).items() if np.size(v) >= 1}
    way = T["_t_act"] / 2
    fwd = T["_m"] * (T["_t_fwd_mb"] + T["_x_fwd"])
    bwd = T["_m"] * (T["_t_bwd_mb"] + T["_x_mb"] - T["_x_fwd"])
    assert T["_t_act"] < T["t_compute_s"] and way > fwd and way < bwd   # the reviewed case
    want = max(0.0, max(0.0, way - fwd) + max(0.0, way - bwd) - T["t_dp_comm_exposed_s"])
    assert T["t_offload_s"] == pytest.approx(want, rel=1e-12) and want > 0.4
    # forward + backward passes are the stage's compute (the windows split it, nothing more)
    assert fwd + bwd == pytest.approx(T["t_compute_s"], rel=1e-9)


def test_a_fast_host_link_hides_the_activation_copies():
    """The same run with the copies far shorter than the forward passes: nothing exposed."""
    d = planner.load_preset("default").to_json_dict()
    d["parallelism"]["offload_activations"] = True
    d["model"] = "llama3-8b"
    d["training"]["seq_len"] = 1024
    d["parallelism"]["layer_split"] = "uneven"
    r = planner.evaluate(d)
    assert r.results["t_offload_s"] == 0.0


def _one_tier(rate_per_h, restart_s, bw, tokens, asyn=False):
    """The default preset with one failure class (gpu, per job-hour) and one shared tier whose
    aggregate write and read bandwidth are ``bw`` (per-node bandwidth unlimited)."""
    d = planner.load_preset("default").to_json_dict()
    d["reliability"] = {"profile": {"name": "one", "classes": [{"class": "gpu", "rate": rate_per_h, "per": "job_hour",
                                                                "restart_s": restart_s, "repair_s": 0.0,
                                                                "source": "test"}],
                                    "reference": "test", "source": "test"},
                        "hot_spare_nodes": 0, "rate_scale": 1.0}
    d["checkpoint"] = {"tiers": [{"tier": {"name": "p", "kind": "pfs", "scope": "shared",
                                           "aggregate_write_bw_bytes_per_s": bw, "aggregate_read_bw_bytes_per_s": bw,
                                           "write_bw_per_node_bytes_per_s": 1e15, "read_bw_per_node_bytes_per_s": 1e15,
                                           "survives": ["software", "gpu", "node", "network", "cluster"]}}],
                       "async": asyn}
    d["training"]["tokens_total"] = tokens
    return d


def test_finite_run_charges_no_reload_before_the_first_checkpoint():
    """Daly (2006) for a finite run, one tier, one failure class of rate λ, restart R, reload D, save
    δ (sync), interval τ, compute W = N·τ: segments of x = λ(τ + δ); a failure in the first one finds
    no checkpoint and restarts from the initial state with R alone (nothing to reload, as the Monte
    Carlo does), every later one pays R + D. Expected wall time
        [e^{λR}(e^x − 1) + (m − 1)·e^{λ(R+D)}(e^x − 1) + e^{λ(R+D)}(e^{λ(W − m·τ)} − 1)] / λ,
    m = ⌈N⌉ − 1 saves, the last, partial segment with no save at its end and so no stall (review
    47e; until then e^{x(N−m)}, its stall too). Review 44's case:
    δ = D = 2 h, MTBF 1 h, R = 600 s, 3e10 tokens (about 10 intervals): 67.1 d before (every segment
    paying the reload), 60.1 d by this formula and 60.0 ± 0.3 d in the Monte Carlo."""
    import math
    from planner import batch as B, reliability as rel
    from planner.engine import run_batch
    from planner.schema import validate_scenario
    ck_bytes = planner.evaluate(planner.load_preset("default")).results["ckpt_bytes"]
    d = _one_tier(1.0, 600.0, ck_bytes / 7200.0, 3e10)
    row = B.row(run_batch(B.from_scenarios([validate_scenario(d)])), 0)
    lam = 1.0 / 3600.0
    tau, delta = row["ckpt_pfs_interval_opt_s"], row["ckpt_pfs_stall_s"]
    D = ck_bytes / (ck_bytes / 7200.0)                       # the reload: whole checkpoint / read bandwidth
    W = 3e10 / row["tokens_per_s"]
    N = W / tau
    m = math.ceil(N) - 1
    x = lam * (tau + delta)
    wall = (math.exp(lam * 600.0) * math.expm1(x) + (m - 1) * math.exp(lam * (600.0 + D)) * math.expm1(x)
            + math.exp(lam * (600.0 + D)) * math.expm1(lam * (W - m * tau))) / lam
    assert rel.finite_run_days(row) == pytest.approx(wall / 86400, rel=1e-6)
    assert wall / 86400 == pytest.approx(60.1, abs=0.3)


# --- review 44b: the Plan page's scenario import ------------------------------------------------

def test_the_plan_page_refuses_a_checkpoint_tier_kind_listed_twice():
    """The page has one row (one widget key) per tier kind: a kind listed twice made two widgets
    with one key, a StreamlitDuplicateElementKey stack trace on every later run. Refused whole, as the
    schema (checkpoint.tiers: 'tier kind [...] listed twice') and the CLI refuse it."""
    import copy as _copy
    from planner.presets import preset_json
    from test_app import _run
    from test_app_review_fixes import PLAN, _upload
    at = _run(PLAN, {"p": "default"})
    before = _copy.deepcopy(at.session_state["scenario"])
    sj = preset_json("default")
    sj["checkpoint"]["tiers"] = [{"tier": "pfs", "interval_s": 600}, {"tier": "pfs", "interval_s": 1200}]
    _upload(at, "Import scenario JSON", "dup.json", json.dumps(sj).encode())
    assert not at.exception
    err = [e.value for e in at.sidebar.error if e.value.startswith("Import refused")]
    assert len(err) == 1 and "listed twice" in err[0]
    assert at.session_state["scenario"] == before


def test_the_plan_page_refuses_a_dp_it_would_not_keep():
    """The page derives DP = n_gpus / (tp·pp·cp) = 1,024 / 32 = 32 on the default preset: a file's
    dp of 16 (tp·pp·cp·dp = 512 ≠ 1,024, refused by the schema and the CLI) showed results for 32."""
    import copy as _copy
    from planner.presets import preset_json
    from test_app import _run
    from test_app_review_fixes import PLAN, _upload
    at = _run(PLAN, {"p": "default"})
    before = _copy.deepcopy(at.session_state["scenario"])
    sj = preset_json("default")
    sj["parallelism"]["dp"] = 16
    _upload(at, "Import scenario JSON", "dp16.json", json.dumps(sj).encode())
    assert not at.exception
    err = [e.value for e in at.sidebar.error if e.value.startswith("Import refused")]
    assert len(err) == 1 and "8·4·1·16 = 512 ≠ cluster.n_gpus = 1024" in err[0] and "derives DP" in err[0]
    assert at.session_state["scenario"] == before


def test_a_dp_equal_to_the_derived_one_or_null_still_imports():
    from planner import share
    from planner.presets import preset_json
    sj = preset_json("default")
    assert sj["parallelism"].get("dp") in (None, 32)
    sj["parallelism"]["dp"] = 32
    assert share.import_refusals(sj) == []
    sj["parallelism"]["dp"] = None
    assert share.import_refusals(sj) == []


# --- review 44a: the API and CLI as a new user drives them ----------------------------------------

@pytest.mark.parametrize("path, sign, exp, shown", [
    (("cluster", "n_gpus"), 1, 5000, "got a whole number of 5,001 digits"),
    (("parallelism", "tp"), -1, 5000, "got a negative whole number of 5,001 digits"),
    (("cluster", "n_gpus"), 1, 30, "got 1000000000000000000000000000000"),
])
def test_an_integer_too_long_to_print_is_an_input_error_not_a_traceback(path, sign, exp, shown):
    """Python refuses str() of an int past 4,300 digits (sys.get_int_max_str_digits); 10**5000 has
    5,001 digits. The message names the field, its range and the size of what was given."""
    d = planner.load_preset("default").to_json_dict()
    d[path[0]][path[1]] = sign * 10**exp
    with pytest.raises(planner.InputError) as e:
        planner.evaluate(d)
    assert f"{'.'.join(path)}: allowed 1 to 10,000,000 ({shown})" in str(e.value)


def test_simulate_names_a_huge_trial_count_without_a_traceback():
    with pytest.raises(planner.InputError, match=r"n_trials: an integer from 1 to 1,000,000 \(got a whole number of "
                                                 r"5,001 digits\)"):
        planner.simulate(planner.load_preset("default"), n_trials=10**5000)


def test_the_sweep_table_memory_parts_add_up_to_the_total():
    """mem_total_bytes = weights + grads + optimizer + activations + logits + buffers (the memory
    stage's parts, as evaluate lists them); the sweep left the logits out."""
    df = planner.sweep(planner.load_preset("default"), top=None)
    parts = ["mem_weights_bytes", "mem_grads_bytes", "mem_optimizer_bytes", "mem_activations_bytes",
             "mem_logits_bytes", "mem_buffers_bytes"]
    ratio = df[parts].sum(axis=1) / df["mem_total_bytes"]
    assert len(df) > 1000 and np.allclose(ratio, 1.0, rtol=1e-9, atol=0)
    assert list(df.columns).index("mem_logits_bytes") == list(df.columns).index("mem_activations_bytes") + 1


def test_the_api_sweep_replaces_a_split_that_does_not_suit_the_model_as_the_cli_does():
    """The default preset's PP 4 × VPP 5 = 20 does not divide Llama 3 405B's 126 layers; a sweep
    replaces the split, so it starts from a plain one (a warning and attrs['note'] say so)."""
    from test_cli import run
    s = planner.load_preset("default").to_json_dict()
    s["model"] = "llama3-405b"
    with pytest.warns(UserWarning, match="the sweep replaces the split"):
        df = planner.sweep(s, top=3)
    assert "126 is not divisible by pp·vpp = 20" in df.attrs["note"]
    rc, out, err = run("sweep", "--preset", "default", "--set", 'model="llama3-405b"', "--top", "3", "--format", "csv")
    assert rc == 0
    cli = [line.split(",")[:9] for line in out.strip().splitlines()[1:]]
    api = [[str(x) for x in row] for row in df[["system", "n_gpus", "tp", "pp", "dp", "cp", "ep", "vpp",
                                                 "micro_batch_size"]].itertuples(index=False)]
    assert cli == api


def test_an_api_sweep_still_refuses_a_fault_outside_the_split():
    s = planner.load_preset("default").to_json_dict()
    s["training"]["seq_len"] = 0
    with pytest.raises(planner.InputError, match="training.seq_len: allowed 1 to 4,194,304"):
        planner.sweep(s, top=3)


def test_more_hot_spares_than_the_jobs_nodes_are_named():
    """The default preset runs 1,024 GPUs on 8-GPU nodes: 128 nodes."""
    d = planner.load_preset("default").to_json_dict()
    d["reliability"]["hot_spare_nodes"] = 1000
    assert any("1,000 hot spare nodes are more than the job's own 128" in n for n in planner.evaluate(d).notes)
    d["reliability"]["hot_spare_nodes"] = 8
    assert not any("more than the job's own" in n for n in planner.evaluate(d).notes)


def test_the_cli_runs_in_a_c_locale():
    """The catalogue files are UTF-8 (they hold "×", "≈", "µ"): read with the locale's encoding, every
    command stopped under LC_ALL=C ("'ascii' codec can't decode byte 0xc2"; review 44e), before the
    README's ASCII spelling of the output could apply."""
    import os
    import subprocess
    import sys
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""}
    for args in (["evaluate", "--preset", "default"], ["sweep", "--preset", "default", "--top", "1"]):
        p = subprocess.run([sys.executable, "-m", "planner", *args], capture_output=True, env=env, timeout=600)
        assert p.returncode == 0, p.stderr.decode("ascii", "replace")
        p.stdout.decode("ascii")  # the output is ASCII in a C locale


# --- review 44f: framework export ------------------------------------------------------------------

def _tt(preset, **sets):
    import tomllib
    from planner.export import torchtitan_toml
    d = planner.load_preset(preset).to_json_dict()
    for path, v in sets.items():
        sec, key = path.split("__")
        d[sec][key] = v
    ex = torchtitan_toml(d)
    return tomllib.loads(ex.text), ex.notes


def test_torchtitan_zero3_with_pp_reshards_after_forward_and_says_the_gradients_stay_whole():
    """TorchTitan apply_fsdp: reshard_after_forward = not pp_enabled under "default"; PyTorch's
    pipelining keeps reshard-after-backward and gradient sync off until the last micro-batch."""
    doc, notes = _tt("default", parallelism__zero_stage=3, parallelism__dp_shard=8)
    assert doc["parallelism"]["fsdp_reshard_after_forward"] == "always"
    assert any("PP 4 with FSDP2" in n and "unsharded gradients" in n for n in notes)


def test_torchtitan_zero1_with_pp_is_zero1_memory_not_zero3():
    doc, notes = _tt("default")  # ZeRO-1, PP 4
    assert "fsdp_reshard_after_forward" not in doc["parallelism"]
    assert not any("ZeRO-3 memory" in n for n in notes)
    assert any("the planner's ZeRO-1 memory" in n for n in notes)


def test_torchtitan_zero1_without_pp_keeps_the_weights_gathered_through_the_micro_batch():
    doc, notes = _tt("llama31-8b-torchtitan-h100-8", parallelism__zero_stage=1)
    assert doc["parallelism"]["fsdp_reshard_after_forward"] == "never"
    doc3, _ = _tt("llama31-8b-torchtitan-h100-8")  # ZeRO-3, PP 1: TorchTitan's default is ZeRO-3's
    assert "fsdp_reshard_after_forward" not in doc3["parallelism"]


def test_an_interval_held_at_the_async_save_is_never_rounded_below_it():
    """Mixtral 8x7B preset: a 1 s PFS interval is raised to the async save's 3.27 s; at 2.84 s a step
    the nearest whole step (1) would start a save before the last one ends: ceil(3.27 / 2.84) = 2."""
    from planner._export_checkpoint import checkpoint_plan
    d = planner.load_preset("mixtral-8x7b-h100-64").to_json_dict()
    d["checkpoint"]["tiers"][1]["interval_s"] = 1
    plan = checkpoint_plan(d)
    t = next(x for x in plan.tiers if x.kind == "pfs")
    r = planner.evaluate(d).results
    assert r["ckpt_pfs_save_s"] > r["step_time_s"]
    assert t.steps * plan.step_time_s >= r["ckpt_pfs_save_s"]
    assert t.steps == math.ceil(r["ckpt_pfs_save_s"] / r["step_time_s"])


# --- review 44b: headline values at the far end --------------------------------------------------

def test_far_end_headlines_stay_short():
    """A metric box at 1,280 px holds about eleven characters (docs/ui.md): beyond 10⁸ years or
    TWh the order of magnitude, beyond 10¹² GPU-h m.m×10ⁿ (the ⓘ gives the exact value)."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from app_pages import _common as C
    assert C.fmt_days(1.2e141 * 365.25) == "≈10¹⁴¹ years"
    assert C.fmt_days(5e7 * 365.25) == "50 M years"
    assert C.fmt_mwh(1.3e143 * 1e6) == "≈10¹⁴³ TWh"
    assert C.fmt({"g": 1.0584e26}, "g", "gpuh") == "1.1×10²⁶ GPU-h"
    assert C.fmt({"g": 30_842_112.0}, "g", "gpuh") == "30,842,112 GPU-h"
    for text in ("≈10¹⁴¹ years", "≈10¹⁴³ TWh", "1.1×10²⁶ GPU-h"):
        assert len(text) <= 14


def test_goodput_axis_uses_exponents_near_zero():
    import pandas as pd
    from planner import charts
    curve = pd.DataFrame({"tier": ["pfs", "pfs"], "interval_s": [60.0, 600.0], "goodput": [1e-9, 2e-9]})
    spec = charts.goodput_interval_chart(curve).to_dict()
    fmt = [layer["encoding"]["y"].get("axis", {}).get("format") for layer in spec["layer"]]
    assert "~e" in fmt
    normal = charts.goodput_interval_chart(curve.assign(goodput=[0.5, 0.9])).to_dict()
    assert all(layer["encoding"]["y"].get("axis", {}).get("format") is None for layer in normal["layer"])


# --- review 44h: the short-run note with the first interval's reload ----------------------------------

def _slow_read(tokens, interval_s, rate_per_h=0.1, asyn=True, read_s=30 * 3600.0):
    ck_bytes = planner.evaluate(planner.load_preset("default")).results["ckpt_bytes"]
    d = _one_tier(rate_per_h, 600.0, ck_bytes / 1800.0, tokens, asyn=asyn)
    d["checkpoint"]["tiers"][0]["tier"]["aggregate_read_bw_bytes_per_s"] = ck_bytes / read_s  # reload read_s
    d["checkpoint"]["tiers"][0]["interval_s"] = interval_s
    return d


def test_a_run_of_100_intervals_gets_the_note_when_the_first_reload_makes_it_shorter():
    """λ = 0.1/h, reload D = 30 h: y = λD = 3, so the first interval's missing reload alone takes
    (1 − e^{−3})/100 = 0.95 % and the last partial interval more; the finite figure is 1.9 % below the
    headline (the Monte Carlo agreed, 45.84 ± 0.08 against 45.89 d), so the note is due. The cheap
    bound Σ τ/W = 1 % skipped it."""
    import re
    tps = planner.evaluate(_slow_read(1e12, 1800.0)).results["tokens_per_s"]
    d = _slow_read(100.5 * 1800.0 * tps, 1800.0)
    r = planner.evaluate(d)
    (n,) = [x for x in r.notes if x.startswith("The run is short")]
    fin = float(re.search(r"gives about ([\d.]+) d", n).group(1))
    assert fin < r.results["time_to_train_days"] * 0.99
    assert "reload to the failures before a tier's first save" in n


def test_a_whole_number_of_intervals_does_not_blame_a_partial_one():
    """λ = 1/h, D = 1 h, exactly 10 intervals of 1,800 s: no partial interval; the gap (1.10 → 1.03 d
    in review 44h, Monte Carlo 1.039 ± 0.003) is the first interval's reload."""
    tps = planner.evaluate(_slow_read(1e12, 1800.0, rate_per_h=1.0, asyn=False, read_s=3600.0)).results["tokens_per_s"]
    d = _slow_read(10 * 1800.0 * tps, 1800.0, rate_per_h=1.0, asyn=False, read_s=3600.0)
    (n,) = [x for x in planner.evaluate(d).notes if x.startswith("The run is short")]
    assert "partial interval" not in n and "reload to the failures before a tier's first save" in n


# --- review 44g: a fresh user on the day's changes ---------------------------------------------------

@pytest.mark.parametrize("other", [("cluster", "overrides", "power_limit_w", 800), None])
def test_import_refuses_a_duplicate_tier_or_a_stale_dp_behind_another_cross_field_error(other):
    """The schema stops at its first cross-field error (a power limit above the H100's 700 W TDP
    here), so the page's own two rules are checked on their own."""
    from planner import share
    from planner.presets import preset_json

    def with_other(sj):
        if other:
            *path, key, value = other
            node = sj
            for p in path:
                node = node.setdefault(p, {})
            node[key] = value
        return sj

    sj = with_other(preset_json("default"))
    sj["checkpoint"]["tiers"] = [{"tier": "pfs"}, {"tier": "pfs"}]
    assert any("tier kind ['pfs'] listed twice" in x for x in share.import_refusals(sj))
    sj = with_other(preset_json("default"))
    sj["parallelism"]["dp"] = 16
    assert any("tp·pp·cp·dp = 8·4·1·16 = 512 ≠ cluster.n_gpus = 1024" in x for x in share.import_refusals(sj))


@pytest.mark.parametrize("kw, needle", [
    ({"gpus": "BIG"}, "sweep: gpus = a whole number of 5,001 digits: allowed 1 to 10,000,000 GPUs"),
    ({"top": "-BIG"}, "sweep: top = a negative whole number of 5,001 digits"),
    ({"tp": [10**30]}, "sweep: tp = [1000000000000000000000000000000]: give a positive integer up to 10,000,000"),
])
def test_sweep_options_too_large_are_input_errors(kw, needle):
    kw = {k: (10**5000 if v == "BIG" else -10**5000 if v == "-BIG" else v) for k, v in kw.items()}
    with pytest.raises(planner.InputError) as e:
        planner.sweep(planner.load_preset("default"), **kw)
    assert needle in str(e.value)


def test_sweep_ceilings_beyond_int64_are_ceilings_not_overflows():
    """cp_max / vpp_max / micro_batch_max are ceilings (vpp_max = 10**9 is capped at the schema's
    VPP_MAX, tests/test_review13b_sweep.py): 10**5000 is as good as no ceiling, not an OverflowError."""
    s = planner.load_preset("mpt-7b-a100-8")
    base = planner.sweep(s, vpp_max=10**9, cp_max=10**9, top=5)
    big = planner.sweep(s, vpp_max=10**5000, cp_max=10**5000, micro_batch_max=10**5000, top=5)
    assert len(big) == len(base) == 5


def test_a_hf_value_too_long_to_print_is_named_by_its_size():
    cfg = {**_cfg("llama31_8b"), "hidden_size": 10**5000}
    with pytest.raises(planner.InputError, match=r"hidden_size: expected a positive integer up to 10,000,000 "
                                                 r"\(got a whole number of 5,001 digits\)"):
        import_hf_config(cfg)


@pytest.mark.parametrize("name, key", [("deepseek_v2_lite", "moe_intermediate_size"),
                                       ("deepseek_v2_lite", "first_k_dense_replace"),
                                       ("llama4_scout", "intermediate_size"),
                                       ("llama4_scout", "intermediate_size_mlp")])
def test_an_explicit_null_moe_width_is_refused_not_read_as_the_dense_width(name, key):
    """Transformers' config classes hold ints there (DeepseekV2Config moe_intermediate_size 1407,
    first_k_dense_replace 0; Llama4TextConfig 8192 / 16384): null is no value; before, a null expert
    width took the dense intermediate_size (10,944: 7.8 × DeepSeek-V2-Lite's 1,408)."""
    cfg = _cfg(name)
    (cfg["text_config"] if "text_config" in cfg else cfg)[key] = None
    with pytest.raises(planner.InputError, match=f"{key}: null; a .* model needs a whole number"):
        import_hf_config(cfg)


def test_a_cli_number_of_thousands_of_digits_is_named_by_its_size():
    from test_cli import run
    rc, out, err = run("sweep", "--preset", "default", "--gpus", "1" * 5001)
    assert rc == 2 and "a number of 5,001 characters is out of range; allowed 1 to 10,000,000" in err
    assert len(err) < 400


def test_monte_carlo_units_follow_the_size_upward_too():
    """Review 44b: at 1e16 tokens the headline read "$7.4 B" beside "cost, M USD 7,382.42", and
    "recovery, h 117,789.6" beside "time to train, years". 117,789.6 h = 4,907.9 days, past the
    1,000 days from which a time reads in years: 13.4 years."""
    from planner import charts
    assert charts.cost_column([7.38242e9]) == ("B USD", 1e-9, 2)
    assert charts.cost_column([9.3e6]) == ("M USD", 1e-6, 2)
    name, size = charts.duration_unit(117_789.6 * 3600.0, "h")
    assert name == "years" and round(117_789.6 * 3600.0 / size, 1) == 13.4
    assert charts.duration_unit(9_000 * 3600.0, "h")[0] == "h"
