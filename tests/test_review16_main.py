"""Session-16 fixes made outside the reviewers' own files (each reproduced before the fix)."""
from planner import export, load_preset


def _dsv3(mtp: int) -> dict:
    d = load_preset("deepseek-v3-h800-2048").to_json_dict()
    m = load_preset("deepseek-v3-h800-2048").resolved_model().model_dump(mode="json", exclude_none=True)
    m["mtp_layers"] = mtp
    d["model"] = m
    return d


def test_megatron_export_writes_mtp_num_layers():
    """Review 16b: the MTP depth reached the step time and memory but not the Megatron command
    (Megatron-LM's flag is --mtp-num-layers, docs/user-guide/features/multi_token_prediction.md)."""
    assert "--mtp-num-layers 1" in export.megatron_args(_dsv3(1)).text
    assert "--mtp-num-layers" not in export.megatron_args(_dsv3(0)).text


def test_torchtitan_export_says_mtp_is_not_written():
    """TorchTitan's DeepSeek-V3 has no MTP (its README's supported features): a note, not silence."""
    with_mtp = export.torchtitan_toml(_dsv3(1)).notes
    assert any("multi-token-prediction" in n and "not written" in n for n in with_mtp)
    assert not any("multi-token-prediction" in n for n in export.torchtitan_toml(_dsv3(0)).notes)


def test_price_note_names_the_scenarios_own_price_end_to_end():
    """Review 16c: the batch now carries price_override, so the note says whose price was charged:
    the DeepSeek-V3 preset's own 2 USD (the catalogue's H800 figure is 2.155) vs the default's catalogue H100."""
    import planner
    ds = next(n for n in planner.evaluate(load_preset("deepseek-v3-h800-2048")).notes if n.startswith("Price per GPU-hour"))
    assert ds.startswith("Price per GPU-hour 2 USD: the scenario's own")
    de = next(n for n in planner.evaluate(load_preset("default")).notes if n.startswith("Price per GPU-hour"))
    assert "the catalogue's figure for the accelerator" in de and "scenario's own" not in de
    cols = planner.evaluate_many([load_preset("default")]).columns
    assert {"price_per_gpu_hour_usd", "node_power_w", "pue", "utilisation_power_frac", "hot_spare_nodes"} <= set(cols)


def test_a_missing_number_names_its_range():
    """Review 16c: an inline accelerator without a price said only "Field required"; the range of
    PriceUsd (schema.PRICE_USD_RANGE, 0.01 to 1e6 USD per GPU-hour) is named too."""
    import pytest
    import planner
    from planner import catalog
    from planner.schema import InputError
    d = load_preset("default").to_json_dict()
    a = catalog.resolve_accelerator("h100-sxm-80gb").model_dump(mode="json", exclude_none=True)
    a.pop("price_per_gpu_hour_usd")
    d["cluster"]["accelerator"] = a
    with pytest.raises(InputError) as ei:
        planner.evaluate(d)
    assert ("cluster.accelerator.price_per_gpu_hour_usd: Field required (allowed 0.01 to 1,000,000)"
            in str(ei.value))


def test_host_no_fit_text_names_the_async_staging_buffers():
    """Review 16a: async saves now stage their shards in host memory (ckpt_async_staging_per_node_bytes,
    inside ckpt_host_mem_per_node_bytes); the Plan page's message named only the host_memory tier.
    20 GiB in all = 8 GiB tier copies + 12 GiB staging, against a 16 GiB node."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from app_pages import _common as C
    gib = 2**30
    res = {"host_fits": True, "host_fits_ckpt": False, "host_mem_per_node_bytes": 0.0,
           "ckpt_host_mem_per_node_bytes": 20 * gib, "ckpt_async_staging_per_node_bytes": 12 * gib}
    txt = C.host_no_fit_text(res, 16 * gib)
    assert "the checkpoints need 20.0 GiB per node" in txt
    assert "(host_memory tier, peer copies included) 8.0 GiB and the async saves' staging buffers 12.0 GiB" in txt
    assert "save synchronously" in txt and "16.0 GiB" in txt
    res["ckpt_async_staging_per_node_bytes"] = 0.0  # a synchronous save: no staging, no such advice
    txt = C.host_no_fit_text(res, 16 * gib)
    assert "staging" not in txt and "save synchronously" not in txt


def test_goodput_chart_marks_no_optimum_on_a_line_at_zero():
    """Review 16a: with goodput 0 at every interval the ◆ sat at the grid's longest interval."""
    import pandas as pd
    from planner import charts
    curve = pd.DataFrame({"tier": ["host_memory"] * 3 + ["pfs"] * 3, "interval_s": [60, 600, 6000] * 2,
                          "goodput": [0.0, 0.0, 0.0, 0.5, 0.7, 0.6]})
    spec = charts.goodput_interval_chart(curve).to_dict()
    best = spec["datasets"][spec["layer"][1]["data"]["name"]]
    assert [(d["tier"], d["interval_s"]) for d in best] == [("parallel file system", 600)]
    assert spec["title"]["subtitle"] == "◆ optimum  ○ in use"
    spec0 = charts.goodput_interval_chart(curve.assign(goodput=0.0)).to_dict()
    assert spec0["datasets"][spec0["layer"][1]["data"]["name"]] == []  # no ◆ at all
    assert spec0["title"]["subtitle"].startswith("goodput 0 at every interval")


def _qwen_etp1() -> dict:
    """Qwen3-235B-A22B, TP 4 × PP 2 × DP 16 on 128 H100, EP 8, experts at ETP 1 (review 16e's case)."""
    par = {"tp": 4, "pp": 2, "dp": 16, "ep": 8, "etp": 1, "sequence_parallel": True, "zero_stage": 1,
           "recompute": "selective", "schedule": "1f1b"}
    return {"model": "qwen3-235b-a22b", "cluster": {"system": "dgx-h100", "n_gpus": 128},
            "training": {"seq_len": 4096, "global_batch_size": 512, "micro_batch_size": 1, "precision": "bf16"},
            "parallelism": par}


def test_evaluate_many_shows_etp_where_a_row_sets_it():
    """Review 16e: etp is a key input of the tables (KEY_INPUT_COLUMNS); review 38: the column is
    there whatever the other rows are (a batch with every row at etp = tp had none, so
    ``df["etp"]`` worked on one batch and raised KeyError on the next)."""
    import planner
    df = planner.evaluate_many([_qwen_etp1(), load_preset("default")])
    assert list(df["etp"]) == [1, df["tp"].iloc[1]]  # absent = TP
    alone = planner.evaluate_many([load_preset("default")])  # all at TP: each row's TP
    assert list(alone["etp"]) == list(alone["tp"]) == [8]  # the default preset: Llama 3 70B at TP 8
    assert list(alone.columns) == list(df.columns)  # the same table whatever the batch holds


def test_cli_sweep_says_expert_tp_is_not_swept(tmp_path):
    """Review 16e: a scenario's etp is said, as dp_shard is; since review h27c each row runs gcd(etp, tp)."""
    import json
    from tests.test_cli import run
    f = tmp_path / "q.json"
    f.write_text(json.dumps(_qwen_etp1()))
    rc, _out, err = run("sweep", str(f), "--top", "1")
    assert rc == 0, err
    assert "note: expert TP is not swept: each split runs gcd(etp, TP) = the scenario's etp = 1 where it divides " \
           "the split's TP" in err


def test_a_number_of_the_wrong_kind_names_its_range():
    """Review 16f: --set model.n_layers=2.5 / parallelism.tp=null / cluster.pue=abc named no range."""
    from tests.test_cli import run
    for kv, want in (("model.n_layers=2.5", "model.n_layers: "), ("parallelism.tp=null", "parallelism.tp: "),
                     ("cluster.pue=abc", "cluster.pue: ")):
        rc, _out, err = run("evaluate", "--preset", "default", "--set", kv)
        assert rc == 2 and want in err and "Traceback" not in err, (kv, err)
        rng = ", allowed 1 to 3 (got " if kv.startswith("cluster.pue") else ", allowed 1 to 10,000,000 (got "
        assert rng in err, (kv, err)


def test_compare_chart_draws_a_host_memory_miss_itself():
    """Review 16d: the page patched charts.compare_chart for host-memory misses; the chart now does it
    (the app stays thin): memory value per scenario, three-entry domain only when used, plain tooltips."""
    from planner import charts
    res = {"a": {"fits": True, "step_time_s": 1.0}, "b": {"fits": False, "step_time_s": 2.0},
           "c": {"fits": True, "host_fits": True, "host_fits_ckpt": False, "step_time_s": 3.0}}
    df = charts.compare_frame(res)
    assert dict(zip(df["scenario"], df["memory"])) == {"a": "fits", "b": charts.NO_FIT, "c": charts.HOST_NO_FIT}
    enc = charts.compare_chart(res).to_dict()["spec"]["encoding"]
    assert enc["opacity"]["scale"] == {"domain": ["fits", charts.NO_FIT, charts.HOST_NO_FIT], "range": [1.0, 0.3, 0.3]}
    assert [t.get("format") for t in enc["tooltip"] if t.get("field") == "value"] == [",.4~r"]
    two = charts.compare_chart({k: res[k] for k in "ab"}).to_dict()["spec"]["encoding"]
    assert two["opacity"]["scale"]["domain"] == ["fits", charts.NO_FIT]


def test_a_run_shorter_than_one_step_is_said():
    """Review 16d: 1e6 tokens read 1.80 s beside a 7.51 s step. The default preset's step holds
    1,024 sequences × 4,096 tokens = 4,194,304 tokens, so 1e6 tokens are 0.2384 of one step."""
    import planner
    d = load_preset("default").to_json_dict()
    d["training"]["tokens_total"] = 1e6
    rep = planner.evaluate(d)
    note = next(n for n in rep.notes if "less than one optimizer step" in n)
    assert "4.194e+06" in note and "(0.2384)" in note
    d["training"]["tokens_total"] = 4194304.0  # exactly one step: no note
    assert not any("less than one optimizer step" in n for n in planner.evaluate(d).notes)


def test_evaluate_table_header_and_host_verdicts():
    """Review 16 new-user: the table's header left out an accelerator override, expert TP and the
    HSDP shard group, and the host-memory verdicts were only in the JSON."""
    from tests.test_cli import run
    rc, out, err = run("evaluate", "--preset", "llama3-8b-h100-64", "--set", "cluster.accelerator=b200")
    assert rc == 0, err
    assert out.splitlines()[0].startswith("llama3-8b on 64 GPUs (dgx-h100 with b200): ")
    rc, out, err = run("evaluate", "--preset", "default", "--set", "parallelism.zero_stage=3",
                       "--set", "parallelism.dp_shard=8")
    assert rc == 0, err
    assert "· ZeRO shard group 8 (HSDP) ·" in out.splitlines()[0]
    rows = {ln.split()[0]: ln for ln in out.splitlines()[1:] if ln.strip()}
    # DGX H100: 2 TiB of host memory (hardware/systems.json), nothing offloaded
    assert "host_fits" in rows and "yes" in rows["host_fits"] and "2,048.00 GiB" in rows["host_fits"]
    assert "host_fits_ckpt" in rows and "host_mem_per_node_bytes" in rows
    assert "ckpt_async_staging_per_node_bytes" in rows and "GiB" in rows["ckpt_async_staging_per_node_bytes"]


def test_qwen_etp_header(tmp_path):
    """The table's header names expert TP when it differs from TP (review 16 new-user)."""
    import json
    from tests.test_cli import run
    f = tmp_path / "q.json"
    f.write_text(json.dumps(_qwen_etp1()))
    rc, out, err = run("evaluate", str(f))
    assert rc == 0, err
    assert "TP 4 · PP 2 · CP 1 · DP 16 · EP 8 · ETP 1;" in out.splitlines()[0]


def test_deepspeed_export_names_the_mtp_modules():
    """Review 16 new-user: the DeepSpeed config was the same with and without MTP, without a word."""
    notes = export.deepspeed_config(_dsv3(1)).notes
    assert any("1 multi-token-prediction module (model.mtp_layers" in n for n in notes)
    assert not any("multi-token-prediction" in n for n in export.deepspeed_config(_dsv3(0)).notes)


def test_host_no_fit_advice_only_for_parts_that_are_there():
    """Review 16 new-user: "drop the host_memory tier" was advised for a tier that held nothing."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from app_pages import _common as C
    gib = 2**30
    res = {"host_fits": True, "host_fits_ckpt": False, "host_mem_per_node_bytes": 0.0,
           "ckpt_host_mem_per_node_bytes": 12 * gib, "ckpt_async_staging_per_node_bytes": 12 * gib}
    txt = C.host_no_fit_text(res, 8 * gib)
    assert "drop the host_memory tier" not in txt and "save synchronously" in txt.lower()
    # each size once and the advice a sentence of verbs (review h29d: "need 12.0 GiB per node (the async
    # saves' staging buffers 12.0 GiB): 12.0 GiB", "Use save synchronously")
    assert txt.count("12.0 GiB") == 1 and "Save synchronously (" in txt and "Use save" not in txt


def test_energy_note_names_the_jobs_share_of_nodes():
    """Review 16 new-user: the note said "whole-node power" where the energy counts the job's share."""
    import planner
    note = next(n for n in planner.evaluate(load_preset("default")).notes if n.startswith("Energy:"))
    assert "the job's share of nodes (n_gpus / gpus_per_node)" in note
