"""Session-15 fixes made outside the reviewers' own files (each reproduced before the fix)."""
import numpy as np
import pytest

import planner
from planner import batch as B, engine, reliability as rel
from planner.schema import validate_scenario


def _small_job(tier="object_store"):
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["cluster"]["n_gpus"] = 4
    d["parallelism"].update(tp=1, pp=1, dp=None, cp=1, zero_stage=3, vpp=1, schedule="1f1b")
    d["training"]["global_batch_size"] = 16
    d["checkpoint"]["tiers"] = [{"tier": tier}]
    d["checkpoint"]["async"] = False
    d["reliability"]["rate_scale"] = 100
    return validate_scenario(d)


def test_headline_and_grid_agree_for_a_job_smaller_than_one_node():
    """Review 15a: a 4-GPU job on an 8-GPU node reloads 4 shards per node, not 8. The headline
    (`reliability.stage`) used gpus_per_node · shard while the grid / Monte Carlo path capped it
    at the job's GPUs, so the two goodputs differed (0.80579 vs 0.80590 before the fix)."""
    out = engine.run_batch(B.from_scenarios([_small_job()]))
    f, g = rel.stage(out), rel.stage_grid(out)
    assert f["goodput"][0] == pytest.approx(g["goodput"][0], rel=1e-12)
    assert f["restart_frac"][0] == pytest.approx(g["restart_frac"][0], rel=1e-12)


@pytest.mark.parametrize("kind,scope", [("pfs", "node"), ("object_store", "node"),
                                        ("host_memory", "shared"), ("local_nvme", "shared")])
def test_a_custom_tier_whose_scope_contradicts_its_kind_is_refused(kind, scope):
    """Review 15a: the engine places a tier by its kind, so a 'pfs' tier with scope 'node' was
    accepted and its replicas and network cost silently ignored. Now refused, naming both fields."""
    d = planner.load_preset("default").to_json_dict()
    t = {"name": "x", "kind": kind, "scope": scope, "write_bw_per_node_bytes_per_s": 25e9,
         "read_bw_per_node_bytes_per_s": 40e9, "survives": ["software"]}
    d["checkpoint"]["tiers"] = [{"tier": t}]
    with pytest.raises(ValueError) as e:
        planner.evaluate(d)
    msg = str(e.value)
    assert "checkpoint.tiers[0].tier" in msg and f"scope = '{scope}'" in msg and f"kind = '{kind}'" in msg


def test_a_custom_tier_whose_scope_fits_its_kind_is_accepted():
    d = planner.load_preset("default").to_json_dict()
    d["checkpoint"]["tiers"] = [{"tier": {"name": "x", "kind": "pfs", "scope": "shared",
                                          "write_bw_per_node_bytes_per_s": 25e9,
                                          "read_bw_per_node_bytes_per_s": 40e9,
                                          "survives": ["software", "gpu", "node", "network", "cluster"]}}]
    assert 0 < planner.evaluate(d).results["goodput"] < 1


def test_defaults_column_does_not_list_fills_a_catalogue_architecture_replaced():
    """Review 15e: a row whose model is taken from the catalogue (DeepSeek-V3: MLA, vocab
    129,280 per its config.json) listed "kv_heads 128" and "vocab 51,200 (default)" as filled,
    though neither was used."""
    from pathlib import Path
    from planner import validation as V
    df = V._read(Path(__file__).resolve().parent.parent / "validation" / "out_of_sample.csv")
    r = df[df["run_id"] == "deepseekv3_671b_2048gpu_gbs15360"].iloc[0].to_dict()
    used: list = []
    s, why = V.row_to_scenario(r, used)
    assert s is not None, why
    assert s.model.vocab_size == 129280 and s.model.mla is not None
    assert not any(u.startswith(("vocab", "kv_heads")) for u in used), used


@pytest.mark.parametrize("sources", [{"*": "datasheet"}, {"write_bw_per_node_bytes_per_s": " ",
                                                          "read_bw_per_node_bytes_per_s": "x"}])
def test_a_catalogue_file_refuses_a_wildcard_or_blank_source(tmp_path, sources):
    """Review 15b: the per-number source check accepts '*' (meant for inline user objects) and an
    empty string, so a catalogue entry could carry numbers with no real source."""
    import json
    from planner import catalog
    from planner.schema import StorageTier
    entry = {"name": "t", "kind": "pfs", "scope": "shared", "write_bw_per_node_bytes_per_s": 1e9,
             "read_bw_per_node_bytes_per_s": 1e9, "survives": ["software"], "sources": sources}
    f = tmp_path / "storage.json"
    f.write_text(json.dumps({"t": entry}))
    with pytest.raises(catalog.CatalogError, match="entry 't': sources: .*no '\\*' wildcard"):
        catalog._load_file(f, StorageTier)
    entry["sources"] = {"write_bw_per_node_bytes_per_s": "vendor sheet", "read_bw_per_node_bytes_per_s": "vendor sheet"}
    f.write_text(json.dumps({"t": entry}))
    assert catalog._load_file(f, StorageTier)["t"].kind == "pfs"


def test_docs_name_every_part_that_carries_its_own_measured_mamf():
    """Review 15b gave GH200 its measured MAMF (hardware.md §6a); docs/timing.md and
    docs/inputs.md list the measured parts and must name each one the catalogue measures."""
    from pathlib import Path
    from planner import catalog
    root = Path(__file__).resolve().parent.parent
    timing_md = (root / "docs" / "timing.md").read_text()
    inputs_md = (root / "docs" / "inputs.md").read_text()
    label = {"h200-sxm-141gb": "H200", "b300": "B300", "gh200-96gb": "GH200", "gb200": "GB200", "mi300x": "MI300X"}
    measured = {k for k, a in catalog.accelerators().items()
                if a.mamf_flop_per_s and a.sources["mamf_flop_per_s"].startswith("stas-accel")}
    assert measured == set(label), measured
    para = timing_md[timing_md.index("**A part's own MAMF"):][:900]
    line = inputs_md[inputs_md.index("An accelerator may carry `mamf_flop_per_s`"):][:300]
    for k, name in label.items():
        assert name in para and name in line, (k, name)


def test_device_host_copy_shares_the_nodes_dram():
    """Review 15a: all GPUs of a node copy into one host DRAM, each over its link at the achieved
    0.8 of the nominal rate (link_eff.host, review h30a C2). Frontier: 8 MI250X GCDs × 0.8 × 36e9
    = 230.4e9 against 204.8e9 B/s of DDR4 (systems.json), so each copy runs at 204.8e9 / 8. A GB200
    tray has 4 GPUs of 225e9 B/s NVLink-C2C (900 GB/s both ways per Grace, shared by its two GPUs;
    hardware.md §3a): 4 × 180e9 = 720e9 < 777.8e9 B/s of LPDDR5X, the link binds (at the nominal
    225e9 the DRAM did); a DGX H100 (8 × 50.4e9 = 403.2e9 < 614.4e9) keeps its link rate."""
    from planner import checkpoint as ck, catalog
    frontier = planner.load_preset("llama3-70b-h100-1024").to_json_dict()
    frontier["cluster"]["system"] = "frontier-mi250x"
    for s, system, binds in ((planner.load_preset("qwen3-235b-gb200-256"), "gb200-nvl72", False),
                             (planner.load_preset("llama3-70b-h100-1024"), "dgx-h100", False),
                             (validate_scenario(frontier), "frontier-mi250x", True)):
        assert s.cluster.system == system
        out = engine.run_batch(B.from_scenarios([s]))
        t = ck.tier_times(out)
        sysm = catalog.systems()[system]
        link = 0.8 * catalog.accelerators()[sysm.accelerator].host_link_bw_bytes_per_s
        writers = t["ckpt_node_bytes"][0] / t["ckpt_shard_bytes"][0]
        assert writers == sysm.gpus_per_node
        bw = min(link, sysm.host_memory_bw_bytes_per_s / writers)
        assert (bw < link) == binds
        assert t["d2h_s"][0, 0] == pytest.approx(t["ckpt_shard_bytes"][0] / bw, rel=1e-12)
        # the headline path (reliability.stage) charges the same stall per tier
        res = planner.evaluate(s).results
        for k, kind in enumerate(ck.TIER_KINDS):
            if t["enabled"][0, k]:
                assert res[f"ckpt_{kind}_stall_s"] == pytest.approx(t["stall_s"][0, k], rel=1e-12), kind
            else:  # a tier not in use: no stall (NaN, "does not apply", session 33)
                assert np.isnan(res[f"ckpt_{kind}_stall_s"]), kind


@pytest.mark.parametrize("sp,ratio", [(False, 5 / 4), (True, 5 / 4)])
def test_op_sac_tp_collectives_per_layer_as_docs_timing_states(sp, ratio):
    """docs/timing.md (t_tp_comm_s): 4 + 2·[full] + [op_sac] all-reduce equivalents per layer —
    op_sac re-runs O's all-reduce without SP (TorchTitan saves the reduce-scatters, not the
    all-reduce), the two all-gathers feeding K and W3 with SP: a ring all-gather of the b·s·h
    activations over t ranks is (t−1)/t·msg/bw + α, half of the all-reduce's 2(t−1)/t·msg/bw + 2α,
    so the two are one unit (session 25: they were counted as two, 6/4)."""
    t = {}
    for rc in ("none", "op_sac"):
        s = planner.load_preset("llama31-8b-torchtitan-h100-8")
        s.parallelism.tp, s.parallelism.dp = 2, None
        s.parallelism.sequence_parallel, s.parallelism.recompute = sp, rc
        t[rc] = planner.evaluate(s).results["t_tp_comm_s"]
    assert t["op_sac"] / t["none"] == pytest.approx(ratio, rel=1e-12)


def test_compare_shows_peak_and_usable_hbm_with_decimals_that_tell_them_apart():
    """Review 15c: with the usable HBM 0.01 GiB below the peak, Compare read "no ✗ (41.3 of 41.3
    GiB)" while the Plan page reads "41.32 GiB of 41.31 GiB usable"."""
    from test_app import COMPARE, _run
    s = planner.load_preset("default")
    s.cluster.n_gpus, s.parallelism.dp = 512, None  # dp follows the GPUs, as the link's n=512 does
    peak = planner.evaluate(s).results["mem_total_bytes"]
    usable = peak - 0.01 * 2**30
    at = _run(COMPARE, {"c_n": "2", "c_src1": "default", "c_src2": "link", "2.p": "default", "2.n": "512",
                        "2.hbmu": f"{usable:.2f}"})
    table = at.dataframe[0].value
    col = table.columns[1]
    fits, mem = table.loc["fits in HBM", col], table.loc["peak memory per GPU", col]
    d = 2
    want_peak, want_usable = f"{peak / 2**30:,.{d}f}", f"{usable / 2**30:,.{d}f}"
    assert want_peak != want_usable
    assert f"({want_peak} of {want_usable} GiB)" in fits, fits
    assert mem.startswith(f"{want_peak} GiB"), mem


def test_memory_note_and_explanation_read_the_peak_apart_from_the_usable_hbm():
    """Review 15c: the note said "41.32 GiB … > usable HBM 41.32 GiB" for a peak 0.0009 GiB above
    the usable HBM; the note and the explanation now add decimals until the two differ."""
    import re
    s = planner.load_preset("default")
    s.cluster.n_gpus, s.parallelism.dp = 512, None
    peak = planner.evaluate(s).results["mem_total_bytes"]
    s.cluster.overrides.hbm_usable_bytes = peak - 0.0009 * 2**30
    rep = planner.evaluate(s)
    assert not rep.results["fits"]
    note = next(n for n in rep.notes if n.startswith("Does not fit in GPU memory"))
    a, b = (float(x.replace(",", "")) for x in re.findall(r"([\d,]+\.\d+) GiB", note)[:2])
    assert a > b, note
    ex = rep.explain["mem_total_bytes"]
    tail = ex[ex.index("= ", ex.index("buffers")):]
    a, b = (float(x) for x in re.findall(r"(\d+\.\d+) GiB", tail)[:2])
    assert a > b, ex


def test_moe_host_time_is_not_explained_where_no_layer_is_moe():
    """Review 15e: with every layer dense (first_dense_layers = n_layers) the t_compute_s text
    still said "MoE layers add the routed experts' host time …", which is not charged."""
    s = planner.load_preset("mixtral-8x7b-h100-64")
    base = planner.evaluate(s)
    assert "routed experts' host time" in base.explain["t_compute_s"]
    from planner.cli import apply_sets
    d = apply_sets(s.to_json_dict(), ["model.moe.first_dense_layers=32", "parallelism.ep=1"])
    assert d["model"]["n_layers"] == 32
    rep = planner.evaluate(d)
    assert "routed experts' host time" not in rep.explain["t_compute_s"]


@pytest.mark.parametrize("preset", ["llama3-405b-h100-16k", "qwen3-235b-gb200-256", "default"])
@pytest.mark.parametrize("asyn", [True, False])
def test_each_enabled_tiers_save_and_stall_are_explained_with_numbers_that_reproduce_them(preset, asyn):
    """Review 15a: ckpt_{tier}_save_s and _stall_s had no formula. The save is the max of its terms
    (each "= X s"); the stall is the save (sync) or copy + frac × (save − copy) (async)."""
    import re
    s = planner.load_preset(preset)
    s.checkpoint.async_ = asyn
    rep = planner.evaluate(s)
    tiers = [t for t in ("host_memory", "local_nvme", "pfs", "object_store") if f"ckpt_{t}_save_s" in rep.explain]
    assert tiers
    for t in tiers:
        save, stall = rep.results[f"ckpt_{t}_save_s"], rep.results[f"ckpt_{t}_stall_s"]
        terms = [float(x) for x in re.findall(r"= ([\d.e+-]+) s", rep.explain[f"ckpt_{t}_save_s"])]
        assert max(terms[:-1]) == pytest.approx(save, rel=1e-3) and terms[-1] == pytest.approx(save, rel=1e-3)
        text = rep.explain[f"ckpt_{t}_stall_s"]
        if asyn:
            d2h, frac = terms[0], s.checkpoint.async_interference_frac
            assert text.startswith("async") and stall == pytest.approx(d2h + frac * (save - d2h), rel=1e-3)
        else:
            assert text.startswith("synchronous") and stall == save
        assert float(re.findall(r"= ([\d.e+-]+) s per save", text)[0]) == pytest.approx(stall, rel=1e-3)


def test_plan_page_says_how_long_each_used_tiers_save_takes_and_what_training_pays():
    """Review 15a: a tier's save and stall time were shown nowhere on the Plan page; "Intervals in
    use" now gives both, from the engine's ckpt_<tier>_save_s / _stall_s."""
    from test_app import PLAN, _run
    from app_pages import _common as C
    at = _run(PLAN, {"p": "llama3-405b-h100-16k"})
    res = planner.evaluate(planner.load_preset("llama3-405b-h100-16k")).results
    text = next(m.value for m in at.markdown if m.value.startswith("Intervals in use"))
    pfs = text[text.index("**parallel file system**"):]  # the chart legend's name (review 15n)
    assert f"a save takes {C.fmt_duration(res['ckpt_pfs_save_s'])}" in pfs
    assert f"training stalls {C.fmt_duration(res['ckpt_pfs_stall_s'])}" in pfs
    assert res["ckpt_pfs_stall_s"] < res["ckpt_pfs_save_s"]  # async: the drain mostly overlaps


@pytest.mark.parametrize("text,want", [
    ("4 * 100 Gb/s per node", 4 * 100e9 / 8 / 8),      # was read as one 100 Gb/s NIC: 1.5625e9
    ("4 * 100Gb RoCE per node", 4 * 100e9 / 8 / 8),    # InternEvo's wording: was not read at all
    ("4 x 100Gb RoCE per node", 4 * 100e9 / 8 / 8),
    ("4×100Gb RoCE per node", 4 * 100e9 / 8 / 8),
    ("100 Gbit per node", 100e9 / 8 / 8),
    ("80Gb HBM", None),                                # no count, no per node / GPU: not a network
    ("900 GB/s NVLink", None),                         # bytes: how NVLink is quoted
])
def test_interconnect_text_with_star_or_bare_gb_is_read(text, want):
    """Review 15h: the count separator '*' and a rate written '100Gb' (no '/s') were not read; the
    catalogue's rate was then used with nothing in the defaults column."""
    from planner.validation import network_bw_per_gpu
    got = network_bw_per_gpu(text, 8)
    assert got == (None if want is None else pytest.approx(want, rel=1e-12))


@pytest.mark.parametrize("key,raw,want", [
    ("tp", "abc", "must be a whole number; allowed 1 to 100,000"),
    ("n", "NaN", "must be a whole number; allowed 1 to 10,000,000"),
    ("n", "9" * 400, "out of range; allowed 1 to 10,000,000"),       # a number, not "not a number"
    ("tok", "1e400", "out of range; allowed 1,000,000 to 1e16 tokens"),
    ("pue", "inf", "must be finite; allowed 1 to 3"),
])
def test_a_link_number_refused_for_its_form_also_names_the_range(key, raw, want):
    """Review 15f: "tp='abc': must be a whole number" said nothing of what is allowed, and a
    400-digit n or tok=1e400 were called not whole / not finite rather than out of range."""
    from planner import share
    _, warnings = share.params_to_scenario({"p": "default", key: raw})
    assert len(warnings) == 1 and want in warnings[0], warnings


def test_a_key_repeated_thousands_of_times_gives_a_short_warning():
    """Review 15f: "n: given 4999 times (…)" listed every value on one 43 kB line."""
    from planner import share
    _, warnings = share.params_to_scenario({"p": "default", "n": [str(i) for i in range(1, 5000)]})
    w = next(x for x in warnings if x.startswith("n: given 4,999 times") or x.startswith("n: given 4999 times"))
    assert len(w) < 300 and "4,994 more" in w


def test_a_page_key_given_twice_with_different_values_is_warned_about():
    """Review 15f: the Explore page used the last of ex_top=5&ex_top=7 without a word (the scenario
    keys are warned about; `planner sweep --link` refuses it)."""
    from test_app import EXPLORE, _run
    at = _run(EXPLORE, {"p": "default", "ex_top": ["5", "7"]})
    warns = " ".join(w.value for w in at.warning)
    assert "ex_top: given 2 times ('5', '7'); used the last, '7'" in warns, warns
    assert at.session_state["ex_top"] == 7


def test_a_link_that_changes_the_cluster_drops_the_presets_name_as_set_does():
    """Review 15f: `export --link '?p=llama3-405b-h100-16k&n=1024'` headed its file "Llama 3.1
    405B on 16,384 H100" for 1,024 ranks; `--set cluster.n_gpus=1024` drops the stale name."""
    from planner import share
    from planner.export import megatron_args
    sj, warnings = share.params_to_scenario({"p": "llama3-405b-h100-16k", "n": "1024"})
    assert not warnings and sj["name"] == ""
    assert "16,384" not in megatron_args(planner.evaluate(sj).scenario).text.splitlines()[0]
    same, _ = share.params_to_scenario({"p": "llama3-405b-h100-16k", "n": "16384"})
    assert same["name"] == planner.load_preset("llama3-405b-h100-16k").name  # nothing changed: kept


def test_evaluate_table_starts_with_the_split_it_used():
    """Review 15g: after --set cluster.n_gpus=256 the re-derived DP (256 / (TP 8 · PP 4 · CP 1) = 8)
    appeared only inside an explanation string."""
    import io
    from contextlib import redirect_stdout, redirect_stderr
    from planner.cli import main
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        assert main(["evaluate", "--preset", "default", "--set", "cluster.n_gpus=256"]) == 0
    first = out.getvalue().splitlines()[0]
    assert first.startswith("llama3-70b on 256 GPUs (dgx-h100): TP 8 · PP 4 · CP 1 · DP 8"), first
    assert "micro-batch 1" in first and "ZeRO 1" in first


def test_a_disabled_unwritable_tiers_stall_reads_the_same_on_the_headline_and_the_grid_path():
    """Review 15i: on a system with no local NVMe (gh200-quad) and interference 0, the headline's
    ckpt_local_nvme_stall_s was 0 · inf = NaN while the grid gave the copy time. Since session 33 a
    tier not in use has no save or stall on either path (NaN, "does not apply", as its interval;
    evaluate's contract keeps inf for a run that never finishes), while the tier's own time stays
    in checkpoint.tier_times (the copy + 0 × the drain, finite) for what-if use."""
    from planner import checkpoint as ck
    from planner import reliability as rel
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["cluster"]["system"] = "gh200-quad"
    d["parallelism"]["dp"] = None
    d["checkpoint"].update({"async": True, "async_interference_frac": 0.0})
    s = validate_scenario(d)
    out = engine.run_batch(B.from_scenarios([s]))
    res = planner.evaluate(s).results
    k = ck.TIER_KINDS.index("local_nvme")
    tt = ck.tier_times(out)
    assert not tt["enabled"][0, k]
    assert np.isfinite(tt["stall_s"][0, k]) and tt["stall_s"][0, k] == pytest.approx(tt["d2h_s"][0, k], rel=1e-12)
    assert np.isnan(res["ckpt_local_nvme_stall_s"]) and np.isnan(res["ckpt_local_nvme_save_s"])
    g = rel.stage_grid(out)
    assert np.isnan(g["ckpt_local_nvme_stall_s"][0]) and np.isnan(g["ckpt_local_nvme_save_s"][0])


def test_gpipe_logits_explanation_adds_the_other_micro_batches_saved_loss():
    """Review 15k: GPipe's last stage holds every micro-batch's saved loss (4 B per logit × (m − 1)
    beyond one micro-batch's 4 B); the explanation said "4 B per logit … = 4.60 GiB". GPT-3 175B,
    TP 8, PP 8, m = 96: (4 + 4·95) B × 2048 × 50,257 / 8 = 4,940,464,128 B = 4.60 GiB."""
    from planner.cli import apply_sets
    d = apply_sets(planner.load_preset("gpt3-175b-a100-1024").to_json_dict(),
                   ["parallelism.schedule=gpipe", "parallelism.vpp=1"])
    rep = planner.evaluate(d)
    assert rep.stages[-1]["mem_logits_bytes"] == pytest.approx(384 * 2048 * 50257 / 8, rel=1e-12)
    text = rep.explain["mem_logits_bytes"]
    assert text.startswith("384 B per logit") and "4 B × 95" in text and text.endswith("= 4.60 GiB")


def test_gpipe_at_one_stage_says_it_holds_every_micro_batch():
    """Review 15k: schedule = gpipe at pp = 1 charges m micro-batches of activations (PyTorch's
    ScheduleGPipe runs all forwards first) — 272 GiB on llama3-8b-h100-64 — without a word."""
    from planner.cli import apply_sets
    base = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    gp = planner.evaluate(apply_sets(base, ["parallelism.schedule=gpipe"]))
    assert any(n.startswith("GPipe with pp = 1 runs all 16 forwards") for n in gp.notes)
    one = planner.evaluate(planner.load_preset("llama3-8b-h100-64"))
    assert not any("GPipe" in n for n in one.notes)
    assert gp.results["mem_activations_bytes"] == pytest.approx(16 * one.results["mem_activations_bytes"], rel=1e-9)


def test_explore_row_of_an_inline_system_keeps_the_inline_system():
    """Review 15l: Explore's row_scenario set cluster.system to the row's system *name* for an
    inline sidebar system — an unknown catalogue id when opened in Plan."""
    from planner import catalog
    from test_app import EXPLORE
    sysd = catalog.systems()["dgx-h100"].model_dump(mode="json", exclude_none=True)
    sysd["name"] = "my H100 pod"
    sj = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    sj["cluster"]["system"] = sysd
    src = open(EXPLORE, encoding="utf-8").read()
    fn_src = src[src.index("def row_scenario("):src.index("\n\n\n", src.index("def row_scenario("))]
    ns = {"copy": __import__("copy"), "SPLIT_FIELDS": ("tp", "pp", "cp", "ep", "vpp", "zero_stage", "recompute",
                                                      "schedule", "sequence_parallel", "offload_optimizer")}
    exec(fn_src, ns)
    row = {"tp": 2, "pp": 1, "cp": 1, "ep": 1, "vpp": 1, "zero_stage": 1, "recompute": "selective",
           "schedule": "1f1b", "sequence_parallel": True, "offload_optimizer": "none",
           "micro_batch_size": 1, "system": "my H100 pod", "n_gpus": 64}
    out = ns["row_scenario"](sj, row)
    assert out["cluster"]["system"] == sysd
    assert planner.evaluate(out).results["step_time_s"] > 0
    other = ns["row_scenario"](sj, {**row, "system": "dgx-b200"})
    assert other["cluster"]["system"] == "dgx-b200"


def test_plan_intervals_use_the_legends_tier_names_and_say_when_a_given_interval_was_raised():
    """Review 15n: "Intervals in use" said **pfs** under a legend reading "parallel file system",
    and a PFS interval set to 1 s read "every 6.47 s" with the raise explained only in the
    collapsed Formulas expander."""
    from test_app import PLAN, _run
    at = _run(PLAN, {"p": "llama3-405b-h100-16k", "ck": "pfs:1:0"})
    text = next(m.value for m in at.markdown if m.value.startswith("Intervals in use"))
    assert "**parallel file system**: every" in text and "**pfs**" not in text
    assert "(you set 1.00 s; raised to the shortest it can save at" in text, text


def test_goodput_chart_marks_the_longest_of_equal_best_intervals():
    """Review 15n: below one step the engine counts every interval as one step, so the curve is flat
    there; the ◆ sat at its first point (10 s beside a 658 s step). Of equal best goodputs the
    chart now marks the longest interval."""
    import pandas as pd
    from planner import charts
    curve = pd.DataFrame({"tier": ["pfs"] * 4, "interval_s": [10.0, 100.0, 658.0, 5000.0],
                          "goodput": [0.9, 0.9, 0.9, 0.8]})
    spec = charts.goodput_interval_chart(curve).to_dict()
    layer = spec["layer"][1]
    data = spec["datasets"][layer["data"]["name"]]
    assert [round(r["interval_s"]) for r in data] == [658]


@pytest.mark.parametrize("sets,want", [
    (["cluster.n_gpus=1024"], ""),                                   # the cluster changed: name dropped
    (["model.n_layers=40"], ""),                                     # the model changed: name dropped
    (["parallelism.pp=8"], "Llama 3.1 405B on 16,384 H100"),         # the split alone: the name still holds
    (["cluster.n_gpus=1024", "name=mine"], "mine"),                  # a name set with it wins
])
def test_set_drops_a_stale_preset_name_by_the_shared_rule(sets, want):
    """`--set` follows planner.presets.drop_stale_name, as links and the Plan page's sidebar do."""
    from planner.cli import apply_sets
    d = apply_sets(planner.load_preset("llama3-405b-h100-16k").to_json_dict(), sets)
    assert d["name"] == want


def test_memory_chart_tooltips_tell_a_peak_just_over_usable_hbm_apart():
    """Review 15n: the chart's capacity tooltip showed one decimal, so a stage 0.0007 GiB over
    the usable HBM read the same as the line. 79.3007 vs 79.3000 GiB first differ at the 4th
    decimal (0.0007 rounds to 0.001 at 3 decimals: 79.301 vs 79.300), so gib_decimals gives 3."""
    from planner import charts
    gib = 2**30
    usable = 79.3 * gib
    stage = {"stage": 0, "mem_weights_bytes": 40 * gib, "mem_grads_bytes": 0.0, "mem_optimizer_bytes": 0.0,
             "mem_activations_bytes": 39.3007 * gib, "mem_logits_bytes": 0.0, "mem_buffers_bytes": 0.0}
    spec = charts.memory_stages_chart([stage], usable, 80 * gib).to_dict()
    bars, rule = spec["layer"]
    fmts = {t["title"]: t.get("format") for t in bars["encoding"]["tooltip"] if "title" in t}
    assert fmts == {"GiB": ".3f", "stage total, GiB": ".3f"}
    assert [t["format"] for t in rule["encoding"]["tooltip"] if "format" in t] == [".3f"]
    # the stage total is in every segment's row: 40 + 39.3007 GiB
    data = spec["datasets"][bars["data"]["name"]]
    assert {round(d["stage_total_gib"], 4) for d in data} == {79.3007}
    assert f"{79.3007:.3f}" != f"{79.3:.3f}"
    # far apart values keep the two-decimal default
    stage2 = dict(stage, mem_activations_bytes=10 * gib)
    spec2 = charts.memory_stages_chart([stage2], usable, 80 * gib).to_dict()
    assert [t["format"] for t in spec2["layer"][1]["encoding"]["tooltip"] if "format" in t] == [".2f"]


def test_usable_hbm_override_box_shows_four_decimals():
    """Review 15n: the sidebar's usable-HBM override box showed one decimal (format %.1f)."""
    import re
    from pathlib import Path
    src = Path(__file__).resolve().parents[1].joinpath("app_pages", "_common.py").read_text()
    m = re.search(r'key="w_hbmu"[^\n]*format="([^"]+)"', src)
    assert m and m.group(1) == "%.4f"
