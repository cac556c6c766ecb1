"""Review 47 (2026-12-07): fixes found by the session's reviewers, each checked against a hand
calculation from the cited formula or a published figure."""
import json
import subprocess
import sys

import pytest

import planner
from planner import catalog


def _zero_offload_13b(n_gpus=1, **training):
    """ZeRO-Offload's headline case (Ren et al., USENIX ATC'21, "ZeRO-Offload: Democratizing
    Billion-Scale Model Training", abstract: "train models with over 13 billion parameters on a
    single GPU"): a 13B model, fp16, ZeRO-2 with the optimizer, master weights and gradients on
    the host, on a DGX-2 V100 (16 GPUs per node)."""
    t = {"seq_len": 1024, "global_batch_size": 8 * n_gpus, "micro_batch_size": 1, "precision": "fp16",
         "grad_dtype": "fp16", "tokens_total": 1e9}
    t.update(training)
    return {"name": "zero-offload 13B", "model": "llama2-13b", "training": t,
            "parallelism": {"tp": 1, "pp": 1, "dp": n_gpus, "zero_stage": 2, "recompute": "full",
                            "offload_optimizer": "cpu", "offload_master_weights": True,
                            "offload_grads": True, "flash_attention": False},
            "cluster": {"system": "dgx2-v100", "n_gpus": n_gpus}}


# --------------------------------------------------------------------------------------
# 47b-1: host memory and host bandwidth are shared by the job's GPUs on a node, not its slots
# --------------------------------------------------------------------------------------

def test_one_gpu_job_counts_one_gpus_host_memory():
    """ZeRO-Offload keeps 16 B per parameter on the host (fp32 master 4 + Adam m 4 + v 4 + the
    fp32 gradient 4; Ren et al. 2021 §3 / ZeRO-Offload Fig. 2: "16M" bytes on the CPU): 16 ×
    13.016e9 = 208.3 GB = 194 GiB on the one GPU's node, within the DGX-2's 1.5 TiB. Until
    review 47b every one of the node's 16 slots was counted (3,103 GiB: "does not fit")."""
    r = planner.evaluate(_zero_offload_13b(1))
    params = r.results["params_total"]
    host = r.results["host_mem_per_node_bytes"]
    assert host == pytest.approx(16.0 * params, rel=1e-9)
    assert r.results["host_fits"]
    assert r.stages[0]["host_bytes_per_gpu"] == pytest.approx(host, rel=1e-12)
    # a job over two whole nodes still fills the busiest one: 16 GPUs' host bytes (ZeRO-2 shards
    # the host states over dp = 32, so 16 × 16 B × P / 32)
    r32 = planner.evaluate(_zero_offload_13b(32))
    assert r32.results["host_mem_per_node_bytes"] == pytest.approx(16 * 16.0 * params / 32, rel=1e-9)


def test_one_gpu_job_gets_the_nodes_whole_dram_bandwidth_for_cpu_adam():
    """CPU Adam reads and writes 28 B per parameter (timing.CPU_OPT_BYTES_PER_PARAM) at the host
    DRAM bandwidth the job's GPUs on the node share: one GPU on a DGX-2 has all 256 GB/s,
    13.016e9 × 28 / 256e9 = 1.424 s (was 1/16 of it, 22.8 s)."""
    r = planner.evaluate(_zero_offload_13b(1))
    bw = catalog.resolve_system("dgx2-v100").host_memory_bw_bytes_per_s
    want = r.results["params_total"] * 28.0 / bw
    assert want == pytest.approx(1.424, abs=0.002)
    assert f"CPU Adam {want:.4g} s" in r.explain["t_offload_s"]


def test_sweep_finds_the_one_gpu_offload_split():
    """The sweep refused every one-GPU split ("no split fits in host memory", review 47b-5)."""
    t = planner.sweep(_zero_offload_13b(1), gpus=[1], offload=["none", "cpu"], zero_stages=[0, 1, 2, 3])
    assert len(t) > 0
    assert (t["offload_optimizer"] == "cpu").all() and t["fits"].all() and t["host_fits"].all()


# --------------------------------------------------------------------------------------
# 47b-2: fp16 gradients, the ZeRO paper's 2Ψ on its own hardware
# --------------------------------------------------------------------------------------

def _zero_states_gb(system, precision, grad_dtype, stage, n=64):
    s = {"name": "zero", "model": "megatron-7.5b",
         "training": {"seq_len": 1024, "global_batch_size": n, "micro_batch_size": 1, "precision": precision,
                      "grad_dtype": grad_dtype, "tokens_total": 1e9},
         "parallelism": {"tp": 1, "pp": 1, "dp": n, "zero_stage": stage, "recompute": "full",
                         "flash_attention": False},
         "cluster": {"system": system, "n_gpus": n}}
    r = planner.evaluate(s)
    st = sum(r.results[k] for k in ("mem_weights_bytes", "mem_grads_bytes", "mem_optimizer_bytes"))
    return st, r.results["params_total"]


@pytest.mark.parametrize("stage, per_param", [
    (0, lambda n: 2 + 2 + 12),            # ZeRO paper §5.1: (2 + 2 + K)Ψ, K = 12
    (1, lambda n: 2 + 2 + 12 / n),        # P_os: 4Ψ + KΨ/N_d
    (2, lambda n: 2 + (2 + 12) / n),      # P_os+g: 2Ψ + (2 + K)Ψ/N_d
    (3, lambda n: (2 + 2 + 12) / n),      # P_os+g+p: (2 + 2 + K)Ψ/N_d
])
def test_zero_paper_states_on_v100_with_fp16_gradients(stage, per_param):
    """Rajbhandari et al. 2020 (ZeRO, SC'20), Fig. 1: Ψ = 7.5B, N_d = 64 → 120 / 31.4 / 16.6 /
    1.9 GB for stages 0 / 1 / 2 / 3 with fp16 gradients, on the paper's V100s. V100 has no BF16
    units, so until review 47b only fp32 gradients (18 B per parameter) could be set there."""
    got, psi = _zero_states_gb("dgx2-v100", "fp16", "fp16", stage)
    assert got == pytest.approx(per_param(64) * psi, rel=1e-9)
    # the engine's bytes per parameter at the paper's Ψ = 7.5e9 (the preset's 7.47e9 is 0.4 % under
    # it) against the paper's own figures (rounded to 3 digits there)
    paper = {0: 120e9, 1: 31.4e9, 2: 16.6e9, 3: 1.9e9}[stage]
    assert got / psi * 7.5e9 == pytest.approx(paper, rel=0.015)


def test_fp16_gradients_need_fp16_precision_and_bf16_on_v100_suggests_fp16():
    s = _zero_offload_13b(1)
    s["training"]["precision"] = "bf16"
    s["cluster"]["system"] = "dgx-a100-80gb"
    with pytest.raises(planner.InputError, match=r"training.grad_dtype = 'fp16' needs training.precision = 'fp16'"):
        planner.evaluate(s)
    s = _zero_offload_13b(1, grad_dtype="bf16")
    with pytest.raises(planner.InputError, match=r"no BF16 units\); use fp32 or fp16"):
        planner.evaluate(s)
    # on a part without BF16 the fp16 refusal does not send the user to bf16 (review 47e)
    s = _zero_offload_13b(1, precision="fp32")
    with pytest.raises(planner.InputError, match=r"needs training.precision = 'fp16' \(it is 'fp32'\); use fp32$"):
        planner.evaluate(s)


def test_fp16_gradients_in_the_exports_and_the_share_link():
    """Megatron: --fp16 keeps fp16 gradient buffers without --accumulate-allreduce-grads-in-fp32
    (megatron/training/training.py get_model: grad_reduce_in_fp32 = accumulate_allreduce_grads_in_fp32),
    so neither that flag nor --grad-reduce-in-bf16 is written; DeepSpeed reduces in the
    communication_data_type named; a share link carries the value back."""
    from planner import export, share
    s = _zero_offload_13b(8)
    meg = export.megatron_args(s)
    assert "--fp16" in meg.text
    assert "--accumulate-allreduce-grads-in-fp32" not in meg.text and "--grad-reduce-in-bf16" not in meg.text
    ds = json.loads(export.deepspeed_config(s).text)
    assert ds["communication_data_type"] == "fp16" and "data_types" not in ds
    params = share.scenario_to_params(planner.Scenario.model_validate(s).model_dump(mode="json"))
    assert params["gd"] == "fp16"
    back, warnings = share.params_to_scenario(params)
    assert not warnings and back["training"]["grad_dtype"] == "fp16"


# --------------------------------------------------------------------------------------
# 47b-3: the CLI's per-stage table in GiB, every byte column
# --------------------------------------------------------------------------------------

def test_cli_stage_table_shows_host_bytes_in_gib(tmp_path):
    p = tmp_path / "zo.json"
    p.write_text(json.dumps(_zero_offload_13b(1)))
    out = subprocess.run([sys.executable, "-m", "planner", "evaluate", str(p), "--format", "table"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    table = out.stdout.split("memory per pipeline stage (GiB):")[1]
    header, row = table.strip().splitlines()[:2]
    cols, vals = header.split(), row.split()
    host = float(vals[cols.index("host_bytes_per_gpu")])
    assert host == pytest.approx(16.0 * 13.016e9 / 2**30, rel=2e-3)  # 194 GiB, not 208,253,829,120


def test_plan_page_opens_a_link_with_fp16_gradients():
    """The link from the scenario above opens on the Plan page with the new option selected and
    the same host memory as the API (194 GiB on one node, not 16 slots' worth)."""
    from planner import share
    from test_app import PLAN, _run
    s = _zero_offload_13b(1)
    params = share.scenario_to_params(planner.Scenario.model_validate(s).model_dump(mode="json"))
    at = _run(PLAN, params)
    assert not at.exception
    (gd,) = [w for w in at.sidebar.selectbox if w.key == "w_gd"]
    assert gd.value == "fp16" and "fp16" in gd.options
    assert at.session_state["scenario"]["training"]["grad_dtype"] == "fp16"
    assert not [e.value for e in at.error] and not [e.value for e in at.sidebar.error]


# --------------------------------------------------------------------------------------
# 47a: a tier saved less often than once per run stalls nothing in it
# --------------------------------------------------------------------------------------

def _nfs_run(hours=3.0, rate_scale=None):
    """Default preset, one sync PFS tier at 2.5 GB/s (a 395 s save) every 4 h, ``hours`` of compute."""
    d = planner.load_preset("default").to_json_dict()
    d["checkpoint"] = {"async": False, "tiers": [{"interval_s": 14400, "tier": {
        "name": "nfs", "kind": "pfs", "scope": "shared", "write_bw_per_node_bytes_per_s": 1e15,
        "read_bw_per_node_bytes_per_s": 1e15, "aggregate_write_bw_bytes_per_s": 2.5e9,
        "aggregate_read_bw_bytes_per_s": 2.5e9, "survives": ["software", "gpu", "node", "network", "cluster"]}}]}
    tps = planner.evaluate(d).results["tokens_per_s"]
    d["training"]["tokens_total"] = hours * 3600.0 * tps
    if rate_scale is not None:
        d["reliability"]["rate_scale"] = rate_scale
    return d


def test_short_run_note_is_daly_eq5_without_the_unreached_saves_stall():
    """No save starts within a 3 h run saved every 4 h, and every failure restarts it (no durable
    save to reload): Daly 2006 eq. 5, one segment, E[T] = e^{Σλ_c·R_c}·(e^{Λ·W} − 1)/Λ with W = the
    compute time. Until review 47a the note used W·(1 + s/τ) (3.299 h for 3.208)."""
    import math
    import re

    from planner import batch as B
    from planner import reliability as rel
    from planner.engine import run_batch
    from planner.schema import FAILURE_CLASSES, validate_scenario
    d = _nfs_run()
    r = planner.evaluate(d)
    row = B.row(run_batch(B.from_scenarios([validate_scenario(d)])), 0)
    W = row["tokens_total"] / row["tokens_per_s"]
    assert W == pytest.approx(10_800.0, rel=1e-12)
    lam_h = [row[f"failure_rate_{c}_per_h"] for c in FAILURE_CLASSES]
    R = [row[f"fail_{c}_restart_s"] + row[f"fail_{c}_repair_s"] for c in FAILURE_CLASSES]  # hot spares 0
    lam = sum(lam_h) / 3600.0
    want_d = math.exp(sum(lh * rc for lh, rc in zip(lam_h, R)) / 3600.0) * math.expm1(lam * W) / lam / 86_400.0
    assert want_d * 24 == pytest.approx(3.208, abs=0.001)  # the reviewer's figure
    (note,) = [n for n in r.notes if "short against the pfs" in n]
    got_d = float(re.search(r"gives about ([0-9.]+) d", note).group(1))
    assert got_d == pytest.approx(want_d, rel=1e-3)  # the note's 4 digits
    assert "exact" in note and "none of which the run reaches" in note
    fin, exact = rel.finite_run(row)
    assert exact and fin == pytest.approx(want_d, rel=1e-9)
    # the Monte Carlo of the same run: within 3 standard errors of the exact figure
    mc = planner.simulate(d, n_trials=4000, seed=0)["time_to_train_days"]
    assert abs(mc.mean() - want_d) < 3 * mc.std() / len(mc) ** 0.5


def test_zero_failures_run_shorter_than_the_interval_takes_its_compute_time():
    """With no failures and no save within the run, the run takes W: the Monte Carlo exactly, the
    finite-run figure too (the note fires), the headline W·(1 + s/τ) as a steady-state rate."""
    from planner import batch as B
    from planner import reliability as rel
    from planner.engine import run_batch
    from planner.schema import validate_scenario
    d = _nfs_run(rate_scale=0.0)
    r = planner.evaluate(d)
    row = B.row(run_batch(B.from_scenarios([validate_scenario(d)])), 0)
    W_d = row["tokens_total"] / row["tokens_per_s"] / 86400
    s, tau = r.results["ckpt_pfs_stall_s"], 14400.0
    assert r.results["time_to_train_days"] == pytest.approx(W_d * (1 + s / tau), rel=1e-9)
    assert rel.finite_run_days(row) == pytest.approx(W_d, rel=1e-12)
    assert any("short against the pfs" in n for n in r.notes)
    mc = planner.simulate(d, n_trials=50, seed=0)["time_to_train_days"]
    assert mc.to_numpy() == pytest.approx(W_d, rel=1e-12)


# --------------------------------------------------------------------------------------
# 47c: a new user's surfaces
# --------------------------------------------------------------------------------------

def test_python_sweep_reason_names_the_uneven_layer_split_as_the_cli_does():
    """80 layers on 768 = 2⁸·3 GPUs: no even PP divides them with the batch; an uneven split does.
    The count is count_splits(..., allow_uneven=True), the CLI's wording its own."""
    from planner.sweep import count_splits
    s = planner.load_preset("default")
    k = count_splits(s, gpus=768, allow_uneven=True)
    assert k > 0
    df = planner.sweep(s, gpus=[768])
    assert df.empty and (f"An uneven layer split (parallelism.layer_split = 'uneven', or the sweep's "
                         f"allow_uneven=True) gives {k:,} valid splits.") in df.attrs["reason"]
    out = subprocess.run([sys.executable, "-m", "planner", "sweep", "--preset", "default", "--gpus", "768",
                          "--format", "csv"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 1
    assert f"An uneven layer split (--set parallelism.layer_split=uneven) gives {k:,} valid splits." in out.stderr
    # already uneven, on 1,021 GPUs (a prime above the 80 layers and the 64 heads): no split is valid
    # either way, and the reason (no_valid_split_reason's) offers no uneven split
    u = s.model_copy(deep=True)
    u.parallelism.layer_split = "uneven"
    for scen in (u, s):
        r = planner.sweep(scen, gpus=[1021])
        assert r.empty and r.attrs["reason"].startswith("no split satisfies the divisibility rules")
        assert "An uneven layer split" not in r.attrs["reason"]
    # the Explore page words it for its sidebar
    from planner.sweep import SEARCH_SPACES, no_valid_split_reason
    page = no_valid_split_reason(s, 768, uneven_how="sidebar: Parallelism → Layer split over stages: uneven",
                                 **SEARCH_SPACES["focused"])
    assert "An uneven layer split (sidebar: Parallelism → Layer split over stages: uneven) gives " in page


def test_sweep_refuses_ep_candidates_for_a_dense_model():
    s = planner.load_preset("default")
    with pytest.raises(planner.InputError, match=r"sweep: ep candidates \[3\]: the model is dense"):
        planner.sweep(s, ep=[3], top=1)
    assert (planner.sweep(s, ep=[1], top=3)["ep"] == 1).all()


def test_evaluate_many_columns_index_into_a_list_as_set_does():
    """A column checkpoint.tiers.0.interval_s (or tiers[0]) edits the list a 'checkpoint.tiers' column
    gives, as --set checkpoint.tiers.0.interval_s does on a preset; without that column the refusal
    names the column and says what to give (it said "checkpoint.tiers: must be a list")."""
    import pandas as pd
    base = {"model": ["llama3-8b"], "cluster.system": ["dgx-h100"], "cluster.n_gpus": [8]}
    tiers = '[{"tier": "pfs", "interval_s": 3600}]'
    for col in ("checkpoint.tiers.0.interval_s", "checkpoint.tiers[0].interval_s"):
        t = planner.evaluate_many(pd.DataFrame({**base, "checkpoint.tiers": [tiers], col: [100.0]}))
        assert t["ckpt_pfs_interval_opt_s"].iloc[0] == 100.0
    with pytest.raises(planner.InputError, match=r"row 0: checkpoint.tiers.0.interval_s: checkpoint.tiers is a "
                                                 r"list, and a column indexes into it only after"):
        planner.evaluate_many(pd.DataFrame({**base, "checkpoint.tiers.0.interval_s": [100.0]}))
    with pytest.raises(planner.InputError, match=r"needs an index from 0 to 0"):
        planner.evaluate_many(pd.DataFrame({**base, "checkpoint.tiers": [tiers], "checkpoint.tiers.1.interval_s": [1.0]}))


def test_every_share_link_key_is_in_the_ui_docs_key_table():
    """docs/ui.md lists the link keys; 'mn' (a custom model's name) was missing (review 47c)."""
    import re
    from pathlib import Path

    from planner import share
    text = (Path(__file__).resolve().parent.parent / "docs" / "ui.md").read_text()
    cells = set()
    for m in re.finditer(r"`([^`]+)`", text):
        cells.update(m.group(1).split())
    missing = [k for k in share.ALL_KEYS if k not in cells]
    assert not missing, missing


# --------------------------------------------------------------------------------------
# 47e: the session's diff review
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("hours, taken", [(3.99, 0), (4.01, 1), (7.99, 1), (8.01, 2)])
def test_zero_failure_run_pays_the_stalls_of_the_saves_it_starts(hours, taken):
    """No failures, a sync 395 s save every 4 h: the run takes W + (⌈W/τ⌉ − 1)·s, a save at 4 h, 8 h, …
    below W and none at its end, in the finite-run figure and the Monte Carlo alike (the reviewer's
    table: 3.9900, 4.1198, 8.0998, 8.2295 h). Review 47a stopped the stall below one interval only;
    a run of 1.99 intervals paid 1.99 stalls for its one (1.35 % more)."""
    from planner import batch as B
    from planner import reliability as rel
    from planner.engine import run_batch
    from planner.schema import validate_scenario
    d = _nfs_run(hours, rate_scale=0.0)
    row = B.row(run_batch(B.from_scenarios([validate_scenario(d)])), 0)
    W, s = row["tokens_total"] / row["tokens_per_s"], row["ckpt_pfs_stall_s"]
    assert W / 3600 == pytest.approx(hours, rel=1e-12)
    want_h = (W + taken * s) / 3600
    assert rel.finite_run_days(row) * 24 == pytest.approx(want_h, rel=1e-12)
    mc = planner.simulate(d, n_trials=20, seed=0)["time_to_train_days"] * 24
    assert mc.to_numpy() == pytest.approx(want_h, rel=1e-12)
    notes = [n for n in planner.evaluate(d).notes if "short against the pfs" in n]
    if hours == 7.99:  # 1.9975 stalls charged where the run takes 1: 1.35 %, above the note's 1 %
        assert len(notes) == 1 and "charges 1.997 saves' stall (395.1 s each) where the run takes 1, none at its end" in notes[0]


def test_short_run_note_on_a_never_saved_tier_does_not_charge_its_stall():
    """The steady state charges no stall for a tier at the "never" interval (reliability.is_never_saved),
    so the note must not say it does; each clause is its own charge."""
    d = _nfs_run()
    d["checkpoint"]["tiers"][0]["interval_s"] = 1e8
    (note,) = [n for n in planner.evaluate(d).notes if "short against the pfs" in n]
    assert "stall" not in note.split("; the same model")[0]
    assert "charges the run's last, partial interval as a whole one and charges a checkpoint reload" in note


def test_evaluate_many_copies_the_callers_cells_and_refuses_one_field_twice():
    import pandas as pd
    base = {"model": ["llama3-8b"] * 2, "cluster.system": ["dgx-h100"] * 2, "cluster.n_gpus": [8, 8]}
    tiers = [{"tier": "pfs", "interval_s": 3600}]
    df = pd.DataFrame({**base, "checkpoint.tiers": [tiers, tiers], "checkpoint.tiers.0.interval_s": [100.0, 200.0]})
    t = planner.evaluate_many(df)
    assert t["ckpt_pfs_interval_opt_s"].tolist() == [100.0, 200.0]
    assert tiers == [{"tier": "pfs", "interval_s": 3600}]  # the caller's list, untouched
    with pytest.raises(planner.InputError, match=r"columns 'checkpoint.tiers.0.interval_s' and "
                                                 r"'checkpoint.tiers\[0\].interval_s' are the same field"):
        planner.evaluate_many(pd.DataFrame({**base, "checkpoint.tiers": [tiers, tiers],
                                            "checkpoint.tiers.0.interval_s": [1.0, 2.0],
                                            "checkpoint.tiers[0].interval_s": [3.0, 4.0]}))


# --------------------------------------------------------------------------------------
# 47f: the launch-configuration exports
# --------------------------------------------------------------------------------------

def _ex(pid, **kw):
    """A preset's JSON with ``section__field=value`` edits (test_review27_export's helper)."""
    from test_review27_export import _d
    return _d(pid, **kw)


def test_deepspeed_zero0_bf16_note_gives_both_releases_and_zero1_names_the_bf16_wrapper():
    """DeepSpeed's _do_optimizer_sanity_check (runtime/engine.py): before PR #7515 a bf16 model at
    ZeRO-0 runs fp32 accumulation (BFLOAT16) and refuses bf16 without PP; after it bf16 runs as
    DDP_BFLOAT16 and fp32 raises "unsupported mix". Both versions return BFLOAT16 for bf16 + fp32 at
    ZeRO-1 without CPU offload, a wrapper that takes no overlap_comm."""
    from planner.export import deepspeed_config
    for gd, other in (("fp32", "bf16"), ("bf16", "fp32")):
        e = deepspeed_config(_ex("llama3-8b-h100-64", parallelism__zero_stage=0, training__grad_dtype=gd))
        assert json.loads(e.text)["data_types"] == {"grad_accum_dtype": gd}
        (n,) = [n for n in e.notes if "at ZeRO-0" in n]
        assert "PR #7515" in n and "Bfloat16 wrapper must use a gradient accumulation type of fp32" in n
        assert "unsupported mix" in n and f"set training.grad_dtype = '{other}'" in n
    z1 = deepspeed_config(_ex("llama3-8b-h100-64"))  # bf16, ZeRO-1, fp32 gradients, PP 1
    assert any("BF16_Optimizer wrapper" in n and "no overlap_comm" in n for n in z1.notes)
    z1bf = deepspeed_config(_ex("llama3-8b-h100-64", training__grad_dtype="bf16"))
    assert not any("BF16_Optimizer wrapper" in n for n in z1bf.notes)


def test_deepspeed_nvme_offload_below_zero3_is_written_as_what_runs():
    """DeepSpeedZeroOptimizer (stage_1_and_2.py) offloads to the CPU for any device but none."""
    from planner.export import deepspeed_config
    e = deepspeed_config(_ex("llama3-8b-h100-64", parallelism__offload_optimizer="nvme"))
    off = json.loads(e.text)["zero_optimization"]["offload_optimizer"]
    assert off["device"] == "cpu" and "nvme_path" not in off
    assert any("takes any offload device as CPU offload" in n for n in e.notes)
    assert not any("will refuse it" in n for n in e.notes)


def test_torchtitan_tf32_writes_float32_and_the_attention_kernel_is_named():
    from planner.export import megatron_args, torchtitan_toml
    t = torchtitan_toml(_ex("llama31-8b-torchtitan-h100-8", training__precision="tf32"))
    assert 'mixed_precision_param = "float32"' in t.text and any("precision 'tf32'" in n for n in t.notes)
    native = torchtitan_toml(_ex("llama31-8b-torchtitan-h100-8", parallelism__attention_kernel="native"))
    assert any(n.startswith("attention kernel 'native'") for n in native.notes)
    flash2 = torchtitan_toml(_ex("llama31-8b-torchtitan-h100-8", parallelism__attention_kernel="flash2"))
    assert not any(n.startswith("attention kernel") for n in flash2.notes)
    meg = megatron_args(_ex("llama3-8b-h100-64", parallelism__attention_kernel="flash2"))
    assert any(n.startswith("attention kernel 'flash2'") for n in meg.notes)
    assert not any(n.startswith("attention kernel") for n in megatron_args(_ex("llama3-8b-h100-64")).notes)


def test_megatron_eager_loss_and_deepspeed_model_code_notes():
    from planner.export import deepspeed_config, megatron_args
    m = megatron_args(_ex("llama3-8b-h100-64", training__cross_entropy="eager"))
    assert "--cross-entropy-loss-fusion" not in "\n".join(ln for ln in m.text.splitlines() if not ln.startswith("#"))
    assert "--cross-entropy-loss-fusion" in megatron_args(_ex("llama3-8b-h100-64")).text
    assert any(n.startswith("cross-entropy 'eager'") and "4 B per logit" in n for n in m.notes)
    ds = deepspeed_config(_ex("llama3-8b-h100-64", parallelism__flash_attention=False, training__cross_entropy="eager"))
    (n,) = [n for n in ds.notes if n.startswith("attention and loss")]
    assert "materialised s×s attention scores" in n and "eager F.cross_entropy" in n


# --------------------------------------------------------------------------------------
# 47g: the dashboard's texts
# --------------------------------------------------------------------------------------

def test_host_no_fit_advice_does_not_send_the_user_to_more_gpus_on_the_same_node():
    """A node holds min(gpus_per_node, n_gpus) × the per-GPU host bytes (review 47b): more GPUs on the
    same node or a larger TP / PP under ZeRO ≥ 1 leave it as it is (194 GiB for the 13B ZeRO-Offload
    job on 1, 2 or 16 GPUs of a DGX-2), and ZeRO-0 with more DP ranks makes it worse."""
    from app_pages import _common as C
    d = _zero_offload_13b(1)
    d["cluster"]["overrides"] = {"host_memory_bytes": 150 * 2**30}
    r = planner.evaluate(d)
    for n, tp in ((2, 2), (16, 8)):
        e = _zero_offload_13b(n)
        e["parallelism"].update(tp=tp, dp=n // tp)
        e["cluster"]["overrides"] = {"host_memory_bytes": 150 * 2**30}
        # equal but for the vocabulary's TP padding (a few embedding rows)
        assert planner.evaluate(e).results["host_mem_per_node_bytes"] == pytest.approx(
            r.results["host_mem_per_node_bytes"], rel=1e-5)
    txt = C.host_no_fit_text(r.results, 150 * 2**30)
    assert "use more GPUs" not in txt and "more GPUs on the same node do not help" in txt
    assert "spread the job over more nodes" in txt and "in place of DP where ZeRO is 0" in txt


def test_plan_page_says_beside_the_headlines_when_the_run_is_short():
    """The 3 h run with a save every 4 h: headline 3.34 h, the run's own figure 3.2 h (review 47a);
    the page said so only inside the collapsed Formulas expander."""
    from planner import share
    from test_app import PLAN, _run
    d = _nfs_run()
    at = _run(PLAN, share.scenario_to_params(d))
    assert not at.exception
    infos = [i.value for i in at.info if "A run short against its checkpoint interval" in i.value]
    assert len(infos) == 1 and "gives about 3.2 h" in infos[0]
    at2 = _run(PLAN, {"p": "default"})
    assert not [i.value for i in at2.info if "A run short against" in i.value]


def test_share_link_keeps_the_checkpoint_async_flag_under_its_python_name():
    from planner import share
    s = planner.load_preset("default").model_copy(deep=True)
    s.checkpoint.async_ = False
    for given in (s.model_dump(mode="json"), s.to_json_dict(), s):
        params = share.scenario_to_params(given)
        assert params["ca"] == "0"
        back, warns = share.params_to_scenario(params)
        assert not warns and back["checkpoint"]["async"] is False


def test_explore_says_its_counts_are_for_uneven_splits_when_its_sweep_ran_them():
    """Default preset on 1,000 GPUs: the sidebar's split does not hold, the page sweeps from its uneven
    fallback base and finds none; its "512 GPUs give …" counts are uneven ones, which the sidebar's even
    split would not sweep (review 47g), and the page now says so."""
    from test_app import EXPLORE, _run
    at = _run(EXPLORE, {"p": "default"})
    at.number_input(key="w_n").set_value(1000).run(timeout=600)
    assert not at.exception
    (w,) = [w.value for w in at.warning if w.value.startswith("No split")]
    assert "These counts are for uneven layer splits" in w and "Layer split over stages: uneven" in w


# --------------------------------------------------------------------------------------
# 47h: the second diff review
# --------------------------------------------------------------------------------------

def _backend(text):
    toks = " ".join(ln.rstrip("\\") for ln in text.splitlines() if not ln.startswith("#")).split()
    return toks[toks.index("--attention-backend") + 1]


def test_megatron_attention_backend_follows_the_planned_kernel():
    """Megatron's AttnBackend.flash sets NVTE_FUSED_ATTN=0 and Transformer Engine keeps FlashAttention-3 to
    sm90 with the flash-attn-3 package: `flash` runs FlashAttention-2 on Blackwell, the planner's flash2.
    `auto` leaves Transformer Engine its Hopper+ preference for cuDNN fused attention, the native speed."""
    from planner.export import megatron_args
    for pid in ("llama3-8b-h100-64", "qwen3-235b-gb200-256"):
        nat = megatron_args(_ex(pid, parallelism__attention_kernel="native"))
        f2 = megatron_args(_ex(pid, parallelism__attention_kernel="flash2"))
        assert _backend(nat.text) == "auto" and any(n.startswith("--attention-backend auto") for n in nat.notes)
        assert _backend(f2.text) == "flash"
        assert any(n.startswith("attention kernel 'flash2'") and "FlashAttention-2, as planned" in n for n in f2.notes)
    a100 = megatron_args(_ex("llama3-8b-h100-64", cluster__system="dgx-a100-80gb"))
    assert _backend(a100.text) == "flash"  # Ampere's native kernel is FlashAttention-2


def test_torchtitan_tf32_without_fsdp_has_no_contradicting_note():
    from planner.export import torchtitan_toml
    d = _ex("llama31-8b-torchtitan-h100-8", training__precision="tf32")
    d["parallelism"].update(tp=2, zero_stage=0, dp=4, dp_shard=None)
    e = torchtitan_toml(d)
    assert 'mixed_precision_param = "float32"' in e.text
    assert not any("would train in float32" in n for n in e.notes)


def test_host_no_fit_advice_follows_the_zero_stage_and_what_dominates():
    """ZeRO-0 checkpoints: one DP replica writes, so the node holds the whole checkpoint whatever the GPU
    count (more nodes do not help, ZeRO ≥ 1 does); an activation stash: CP / TP or a smaller micro-batch,
    not ZeRO (review 47h)."""
    from app_pages import _common as C
    d = planner.load_preset("default").to_json_dict()
    d["parallelism"]["zero_stage"] = 0
    d["checkpoint"]["tiers"] = [{"tier": "host_memory", "interval_s": 600, "replicas": 1}, {"tier": "pfs"}]
    d["cluster"]["overrides"] = {"host_memory_bytes": 8 * 2**30}
    s = planner.Scenario.model_validate(d)
    r = planner.evaluate(s)
    txt = C.host_no_fit_text(r.results, 8 * 2**30, scenario=s)
    assert "use ZeRO ≥ 1 (every DP rank then writes its shard)" in txt and "more nodes" not in txt
    d = planner.load_preset("default").to_json_dict()
    d["parallelism"]["offload_activations"] = True
    d["cluster"]["overrides"] = {"host_memory_bytes": 64 * 2**30}
    s = planner.Scenario.model_validate(d)
    r = planner.evaluate(s)
    assert not r.results["host_fits"]
    txt = C.host_no_fit_text(r.results, 64 * 2**30, scenario=s)
    assert "offload fewer activations" in txt and "CP / TP with sequence parallelism" in txt


def test_short_run_box_formats_the_bill_and_names_the_monte_carlo_only_where_it_runs():
    from app_pages import _common as C
    r = planner.evaluate(_nfs_run(rate_scale=100.0))
    txt = C.short_run_headline_text(r.notes)
    assert txt and "e+0" not in txt and "USD" not in txt and "$" in txt  # the headlines' units
    d = planner.load_preset("default").to_json_dict()
    d["checkpoint"]["tiers"] = [{"tier": "host_memory", "interval_s": 7200}, {"tier": "pfs", "interval_s": 1e6}]
    d["reliability"]["rate_scale"] = 100.0
    tps = planner.evaluate(planner.load_preset("default")).results["tokens_per_s"]
    d["training"]["tokens_total"] = 48 * 3600 * tps
    notes = planner.evaluate(d).notes
    if any("Monte Carlo cannot check it" in n for n in notes if n.startswith("The run is short against")):
        assert "Monte Carlo below" not in (C.short_run_headline_text(notes) or "")
