"""Command line: output formats, overrides, and bad input -> exit 2 with one line, no traceback."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout

import pytest

from planner.cli import main


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            rc = main(list(argv))
        except SystemExit as e:  # argparse
            rc = e.code
    return rc, out.getvalue(), err.getvalue()


def test_evaluate_json_has_result_columns():
    rc, out, err = run("evaluate", "--preset", "default", "--format", "json")
    assert rc == 0, err
    data = json.loads(out)
    for col in ("params_total", "params_active", "model_flop_per_step"):
        assert col in data["results"]
    assert data["scenario"]["parallelism"]["tp"] == 8


def test_set_override_changes_the_split_and_rederives_dp():
    rc, out, err = run("evaluate", "--preset", "default", "--set", "parallelism.tp=4", "--format", "json")
    assert rc == 0, err
    p = json.loads(out)["scenario"]["parallelism"]
    assert (p["tp"], p["dp"]) == (4, 1024 // (4 * 4))


def test_csv_format_is_one_row():
    rc, out, _ = run("evaluate", "--preset", "default", "--format", "csv")
    assert rc == 0
    lines = out.strip().splitlines()
    assert len(lines) == 2 and "params_total" in lines[0]


def test_evaluate_from_file(tmp_path):
    f = tmp_path / "s.json"
    f.write_text(json.dumps({"model": "llama3-8b", "cluster": {"system": "dgx-h100", "n_gpus": 8},
                             "parallelism": {"tp": 8}, "training": {"global_batch_size": 8}}))
    rc, out, err = run("evaluate", str(f), "--format", "json")
    assert rc == 0, err
    assert json.loads(out)["scenario"]["parallelism"]["dp"] == 1


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["evaluate", "--preset", "default", "--set", "parallelism.tp=3"], "does not divide cluster.n_gpus = 1024"),
        (["evaluate", "--preset", "default", "--set", "parallelism.recompute=maybe"], "parallelism.recompute"),
        (["evaluate", "--preset", "default", "--set", "training.seq_len=-5"], "training.seq_len"),
        (["evaluate", "--preset", "no-such"], "unknown scenario id 'no-such'"),
        (["evaluate", "--preset", "default", "--set", "model=gpt9"], "unknown model id 'gpt9'"),
        (["evaluate", "--preset", "default", "--set", "tp"], "expected path=value"),
        (["evaluate", "/no/such/file.json"], "no such file"),
        (["evaluate"], "give --preset NAME, FILE.json or --hf-config CONFIG.json"),
        (["presets", "gpus"], "invalid choice"),
    ],
)
def test_bad_input_exits_2_with_a_named_field(argv, expected):
    rc, out, err = run(*argv)
    assert rc == 2
    assert expected in err
    assert "Traceback" not in err


def test_bad_json_file(tmp_path):
    f = tmp_path / "bad.json"
    f.write_text("{not json")
    rc, _, err = run("evaluate", str(f))
    assert rc == 2 and "not valid JSON" in err


@pytest.mark.parametrize("what", ["models", "scenarios", "hardware"])
def test_presets_lists(what):
    rc, out, err = run("presets", what)
    assert rc == 0, err
    key = {"models": "llama3-405b", "scenarios": "llama3-405b-h100-16k", "hardware": "gb200-nvl72"}[what]
    assert key in out


def test_module_entry_point_and_console_script():
    r = subprocess.run([sys.executable, "-m", "planner", "evaluate", "--preset", "default",
                        "--set", "parallelism.pp=7"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and "parallelism" in r.stderr
    # one line per problem (review 49: both, where the second appeared only once the first was fixed):
    # 8·7·1 = 56 does not divide 1,024 GPUs, and 80 layers do not divide pp·vpp = 7·5 = 35
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 2 and "= 56 does not divide cluster.n_gpus = 1024" in lines[0]
    assert "model.n_layers = 80 is not divisible by pp·vpp = 35" in lines[1]


def test_sweep_table_and_json():
    rc, out, err = run("sweep", "--preset", "llama3-8b-h100-64", "--top", "3", "--format", "json")
    assert rc == 0, err
    rows = json.loads(out)
    assert len(rows) == 3 and {"tp", "pp", "dp", "step_time_s", "infeasible_reason"} <= set(rows[0])
    rc, out, err = run("sweep", "--preset", "llama3-8b-h100-64", "--top", "3")
    assert rc == 0, err
    assert "n_configurations" in out and "mem_GiB" in out and "days" in out


def test_sweep_bad_objective():
    rc, _, err = run("sweep", "--preset", "default", "--objective", "speed")
    assert rc == 2 and "allowed: time_to_train" in err


def test_simulate_summary():
    rc, out, err = run("simulate", "--preset", "llama3-8b-h100-64", "--trials", "200", "--seed", "1")
    assert rc == 0, err
    assert "time_to_train_days" in out and "p90" in out
    assert "200 simulated runs (trials), seed 1" in out  # what the table summarises (review)
    rc, _, err = run("simulate", "--preset", "default", "--trials", "0")
    assert rc == 2 and "--trials 0" in err


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["sweep", "--preset", "default", "--gpus", "0"], "--gpus 0: allowed 1 to"),
        (["sweep", "--preset", "default", "--top", "-1"], "--top -1: allowed 1 to"),
        (["simulate", "--preset", "default", "--seed", "-1"], "--seed -1: allowed 0 to"),
        (["evaluate", "/"], "is a folder"),
        (["validate", "--csv", "/"], "not a file"),
        (["evaluate", "--preset", "default", "--set", "=4"], "names no field"),
        (["evaluate", "--preset", "default", "--set", "checkpoint.tiers.7.interval_s=1"], "index from 0 to 1"),
        (["evaluate", "--preset", "default", "--set", "cluster.system.x=1"], "cluster.system.x: unknown field; allowed: accelerator,"),
        (["evaluate", "--preset", "default", "--set", "hardware.system=x"], "hardware: unknown field; allowed: checkpoint, cluster,"),
        (["evaluate", "--preset", "default", "--set", "cluster.pue=nan"], "cluster.pue: must be a finite number"),
    ],
)
def test_more_bad_input_exits_2(argv, expected):
    rc, _, err = run(*argv)
    assert rc == 2 and expected in err and "Traceback" not in err


def test_non_utf8_file(tmp_path):
    f = tmp_path / "bin.json"
    f.write_bytes(b"\xff\xfe{")
    rc, _, err = run("evaluate", str(f))
    assert rc == 2 and "not UTF-8" in err


def test_set_inside_a_list_and_inside_a_catalogue_id():
    rc, out, err = run("evaluate", "--preset", "default", "--set", "checkpoint.tiers.1.interval_s=60",
                       "--set", "model.n_layers=40", "--format", "json")
    assert rc == 0, err
    d = json.loads(out)
    assert d["scenario"]["checkpoint"]["tiers"][1]["interval_s"] == 60
    assert d["scenario"]["model"]["n_layers"] == 40 and d["scenario"]["model"]["hidden_size"] == 8192


def test_json_output_is_strict_json():
    """NaN / inf are not JSON: written as null (e.g. intervals of tiers the scenario does not use)."""
    rc, out, _ = run("evaluate", "--preset", "default", "--format", "json")
    assert rc == 0
    json.loads(out, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))


def test_json_tells_never_finishing_from_not_applicable():
    """No checkpoint tier: the run never finishes (time to train inf → "inf"), while the
    interval of a tier it does not use is not applicable (NaN → null)."""
    rc, out, _ = run("evaluate", "--preset", "default", "--set", "checkpoint.tiers=[]", "--format", "json")
    assert rc == 0
    d = json.loads(out)
    res = d.get("results", d)
    assert res["time_to_train_days"] == "inf"
    assert res["ckpt_local_nvme_interval_opt_s"] is None


def test_simulate_json_writes_a_never_finishing_run_as_inf():
    """README: `--format json` writes an infinite value (the time to train of a run that never
    finishes) as "inf" and a value that does not apply as null. `simulate --format json` wrote
    the summary of never-finishing runs as null (pandas' JSON writer), as if not applicable.
    A summary with unfinished trials (time to train inf, goodput 0), as the Monte Carlo returns
    them when its round cap is hit, through the CLI's writer."""
    import numpy as np
    import pandas as pd

    from planner.cli import print_frame
    from planner.simulate import summarize

    df = pd.DataFrame({"time_to_train_days": [np.inf] * 3, "goodput": [0.0] * 3, "n_failures": [10.0, 11.0, 12.0],
                       "lost_work_h": [1.0] * 3, "recovery_h": [1.0] * 3, "finished": [False] * 3})
    buf = io.StringIO()
    print_frame(summarize(df), "json", out=buf)
    rows = {r["metric"]: r for r in json.loads(buf.getvalue(),
                                               parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))}
    assert [rows["time_to_train_days"][k] for k in ("mean", "p10", "p50", "p90")] == ["inf"] * 4
    assert rows["goodput"]["mean"] == 0.0


def test_simulate_refuses_a_run_no_tier_lets_finish():
    """No checkpoint tier on the default preset's 209-day run: every failure restarts it, and the
    finite-run figure (session 41) is e^(Λ·T)-long, about 1e43 failures: refused up front (until
    session 41 the Monte Carlo ran its round cap and reported inf)."""
    rc, out, err = run("simulate", "--preset", "default", "--set", "checkpoint.tiers=[]", "--trials", "3",
                       "--format", "json")
    assert rc == 2 and out == ""
    assert "more failures than the 200,000 the Monte Carlo simulates one by one" in err
    assert "software, gpu, node, network or cluster failure restarting it" in err
    assert "the run does not finish in practice" in err


def test_an_unknown_tier_id_is_named_in_the_schema_path_notation():
    """Every other message names a tier as checkpoint.tiers[i].field (docs/inputs.md rules,
    schema._loc_str); an unknown tier id was named checkpoint.tiers.0.tier."""
    rc, _, err = run("evaluate", "--preset", "default", "--set",
                     'checkpoint.tiers=[{"tier": "pfs"}, {"tier": "tape"}]')
    assert rc == 2
    assert err.strip().splitlines() == [
        "planner: checkpoint.tiers[1].tier: unknown storage tier id 'tape'; allowed: host_memory, local_nvme, "
        "object_store, pfs"]


def test_presets_hardware_counts_stay_whole_numbers_in_csv_and_json():
    """`presets hardware --format csv/json` wrote GPU counts as 8.0 (its three tables joined
    with blanks turned the integer columns into floats). DGX H100: 8 GPUs per node, one 8-GPU
    NVLink domain (NVIDIA DGX H100 datasheet); GB200 NVL72: 4 GPUs per compute tray, 72 per
    NVLink domain (NVIDIA GB200 NVL72 datasheet)."""
    import csv as _csv
    rc, out, _ = run("presets", "hardware", "--format", "csv")
    assert rc == 0
    rows = {r["system"]: r for r in _csv.DictReader(io.StringIO(out)) if r["system"]}
    assert (rows["dgx-h100"]["gpus_per_node"], rows["dgx-h100"]["nvlink_domain"]) == ("8", "8")
    assert (rows["gb200-nvl72"]["gpus_per_node"], rows["gb200-nvl72"]["nvlink_domain"]) == ("4", "72")
    rc, out, _ = run("presets", "hardware", "--format", "json")
    js = {r["system"]: r for r in json.loads(out) if r["system"]}
    assert js["gb200-nvl72"]["gpus_per_node"] == 4 and isinstance(js["gb200-nvl72"]["gpus_per_node"], int)


def test_table_units():
    rc, out, _ = run("evaluate", "--preset", "default")
    lines = {ln.split()[0]: ln for ln in out.splitlines() if ln.strip()}
    assert "/s" in lines["tokens_per_s"] and "/h" in lines["failure_rate_per_h"]
    assert "TFLOP/s" in lines["tflops_per_gpu"] and "GPU-h" in lines["gpu_hours"]


def test_sweep_with_nothing_feasible_says_so():
    # 405B on 8 GPUs: valid splits exist, none fits in memory
    # exit status 1 (nothing found, like grep), the reason on stderr (found by a review: it was 0)
    rc, out, err = run("sweep", "--preset", "llama3-405b-h100-16k", "--gpus", "8", "--top", "5")
    assert rc == 1, err
    assert "no feasible split of 8 GPUs" in err and "runs out of memory" in err
    # the message goes to stderr so that json / csv output stays parseable
    rc, out, err = run("sweep", "--preset", "default", "--gpus", "7", "--format", "json")
    assert rc == 1 and json.loads(out) == []
    # 7 GPUs: no valid split at all, and not "out of memory": the rules that stop the splits are
    # named, with the neighbouring powers of two that have splits (4 and 8 GPUs)
    assert "no split of cluster.n_gpus = 7 GPUs passes the sweep's rules" in err and "8 GPUs give" in err
    assert "out of memory" not in err
    rc, out, err = run("sweep", "--preset", "default", "--gpus", "7", "--format", "csv")
    assert rc == 1 and out.startswith("system,n_gpus,tp,pp")


def test_sweep_recompute_modes_including_op_sac():
    """--recompute narrows the swept modes (op_sac, TorchTitan's per-op SAC, is not in the
    default space); an unknown mode is one line naming the allowed ones, exit 2."""
    rc, out, err = run("sweep", "--preset", "llama3-8b-h100-64", "--recompute", "op_sac", "--top", "5",
                       "--format", "json")
    assert rc == 0, err
    rows = json.loads(out)
    assert rows and {r["recompute"] for r in rows} == {"op_sac"}
    rc, out, err = run("sweep", "--preset", "llama3-8b-h100-64", "--recompute", "op")
    assert rc == 2 and "op_sac" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_evaluate_states_the_accuracy_on_published_runs():
    rc, out, err = run("evaluate", "--preset", "default")
    assert rc == 0, err
    assert "note: Accuracy on published runs like this one (hopper, dense;" in out
    rc, out, err = run("evaluate", "--preset", "default", "--format", "json")
    assert json.loads(out)["accuracy"].startswith("Accuracy on published runs like this one (hopper, dense;")


def test_validate_by_family_prints_the_accuracy_table():
    from planner import validation
    rc, out, err = run("validate", "--by-family", "--format", "json")
    assert rc == 0, err
    got = json.loads(out)
    want = validation.accuracy_table().to_dict("records")
    assert [(r["family"], r["kind"], r["runs"]) for r in got] == [(r["family"], r["kind"], r["runs"]) for r in want]
    rc, out, err = run("validate", "--by-family", "--csv", "x.csv")
    assert rc == 2 and err.count("\n") == 1 and "--by-family" in err


def test_set_takes_the_bracket_index_form_the_messages_use_and_a_new_model_drops_the_preset_name():
    # found by a fresh-user review: errors name checkpoint.tiers[0].interval_s, which --set refused;
    # and an export after --set model=... still carried the preset's "Llama 3 70B on ..." name
    rc, out, err = run("evaluate", "--preset", "default", "--set", "checkpoint.tiers[0].interval_s=-5")
    assert rc == 2 and "checkpoint.tiers[0].interval_s" in err and "unknown field" not in err
    rc, out, err = run("evaluate", "--preset", "default", "--set", "checkpoint.tiers[0].interval_s=600",
                       "--format", "json")
    assert rc == 0, err
    rc, out, err = run("export", "--preset", "default", "--set", "model=llama2-13b", "--to", "torchtitan")
    assert rc == 0 and 'description = "Llama 2 13B"' in out and "Llama 3 70B" not in out
    rc, out, err = run("export", "--preset", "default", "--set", "model=llama2-13b", "--set", "name=mine",
                       "--to", "torchtitan")
    assert 'description = "mine"' in out
    # setting the preset's own value changes nothing, and keeps the name
    rc, out, err = run("export", "--preset", "default", "--set", "model=llama3-70b", "--to", "torchtitan")
    assert 'description = "Llama 3 70B on 1,024 H100"' in out


def test_missing_or_double_input_lists_every_accepted_input(tmp_path):
    """evaluate takes --preset NAME, FILE.json or --hf-config CONFIG.json (alone or with either):
    with none the message lists all three, with a preset and a file it says not both."""
    rc, _, err = run("evaluate")
    assert rc == 2 and err.count("\n") == 1
    assert all(x in err for x in ("--preset NAME", "FILE.json", "--hf-config CONFIG.json"))
    f = tmp_path / "s.json"
    f.write_text("{}")
    rc, _, err = run("evaluate", "--preset", "default", str(f))
    assert rc == 2 and "not both" in err and err.count("\n") == 1


def test_sweep_with_no_even_split_points_to_the_uneven_layer_split():
    """Llama 3 70B (80 layers, 64 heads) at global batch 512 on 96 = 2⁵·3 GPUs: DP must divide
    512 (a power of two), so tp·pp·cp holds the factor 3; 64 heads and seq_len 8192 have none,
    nor does 80 = 2⁴·5 for an even PP: no split, but PP 3 with an uneven layer split is one.
    97 GPUs (prime, above 80 layers and 64 heads): nothing at all."""
    rc, out, err = run("sweep", "--preset", "default", "--gpus", "96", "--top", "1")
    assert rc == 1 and out == ""
    assert "--set parallelism.layer_split=uneven" in err and err.count("\n") == 1
    rc, out, _ = run("sweep", "--preset", "default", "--gpus", "96", "--top", "1", "--set",
                     "parallelism.layer_split=uneven", "--format", "json")
    assert rc == 0 and json.loads(out)[0]["pp"] % 3 == 0
    rc, _, err = run("sweep", "--preset", "default", "--gpus", "97", "--top", "1")
    assert rc == 1 and "no feasible split of 97 GPUs" in err and "uneven" not in err


def test_a_list_where_a_number_is_expected_is_shown():
    # found by review: --set parallelism.tp=[8] said "Input should be a valid integer" without the value
    r = subprocess.run([sys.executable, "-m", "planner", "evaluate", "--preset", "default",
                        "--set", "parallelism.tp=[8]"], capture_output=True, text=True)
    assert r.returncode == 2
    # (review 16f: and its range)
    assert "parallelism.tp: must be a whole number, allowed 1 to 10,000,000 (got [8])" in r.stderr


def test_an_edited_catalogue_model_is_named_custom():
    # found by review: --set model.n_layers=40 kept the name "Llama 3 70B" and its published
    # 70.6B parameters; an edited model is not the published one (share links already say so)
    def model_of(*sets):
        args = [sys.executable, "-m", "planner", "evaluate", "--preset", "default", "--format", "json"]
        for s in sets:
            args += ["--set", s]
        r = subprocess.run(args, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)["scenario"]["model"]

    m = model_of("model.n_layers=40")
    assert m["name"] == "custom (llama3-70b)" and m["n_layers"] == 40
    assert not m.get("published_params_total") and not m.get("source")
    assert model_of("model.n_layers=40", "model.name=mine")["name"] == "mine"


def test_validate_files_a_user_might_give(tmp_path, monkeypatch):
    """--csv with a file that is not a calibration CSV: exit 2, one line naming the problem, no
    traceback; a file with one broken line keeps its other rows (found by a file stress test)."""
    import pandas as pd
    from planner import validation

    (tmp_path / "w.xlsx").write_bytes(b"PK\x03\x04\x14\x00\x00\x00")
    (tmp_path / "r.json").write_text('[{"run_id": "a"}]')
    (tmp_path / "e.csv").write_text("")
    for name, expected in (("w.xlsx", "zip archive"), ("r.json", "JSON, not CSV"), ("e.csv", "the file is empty")):
        for fmt in ("table", "json", "csv"):
            rc, out, err = run("validate", "--csv", str(tmp_path / name), "--format", fmt)
            assert rc == 2 and err.count("\n") == 1 and expected in err and "Traceback" not in err, (name, err)
    rc, _, err = run("validate", "--csv", "")
    assert rc == 2 and err.count("\n") == 1 and "give the path" in err
    df = pd.read_csv(validation.DEFAULT_CSV, dtype=str, keep_default_na=False).head(3)
    lines = df.to_csv(index=False).splitlines(True)
    lines[1] = lines[1].rstrip("\n") + ",stray,cells\n"
    (tmp_path / "g.csv").write_text("".join(lines))
    rc, out, err = run("validate", "--csv", str(tmp_path / "g.csv"), "--format", "json")
    assert rc == 0, err
    rows = json.loads(out)["rows"]
    assert [r["status"] for r in rows].count("ok") == 2 and rows[-1]["status"].startswith("skipped: the line has 44")

    def unreadable(path):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(validation, "_read", unreadable)
    rc, _, err = run("validate", "--csv", str(tmp_path / "g.csv"))
    assert rc == 2 and err.count("\n") == 1 and "cannot read the file: Permission denied" in err and "Traceback" not in err


def test_validate_json_and_csv_output_of_a_file_with_skipped_rows_parse(tmp_path):
    """--format json is valid JSON (NaN as null) and --format csv reads back with pandas, with
    skipped rows (no prediction) in the file."""
    import pandas as pd
    from planner import validation

    df = pd.read_csv(validation.DEFAULT_CSV, dtype=str, keep_default_na=False).head(3)
    df.loc[1, "gpu"] = ""
    df.to_csv(tmp_path / "s.csv", index=False)
    rc, out, err = run("validate", "--csv", str(tmp_path / "s.csv"), "--format", "json")
    assert rc == 0, err
    rows = json.loads(out)["rows"]
    assert [r["status"] for r in rows].count("ok") == 2
    skipped = [r for r in rows if r["status"] != "ok"][0]
    assert skipped["predicted"] is None and skipped["status"].startswith("skipped: the gpu cell is empty")
    rc, out, err = run("validate", "--csv", str(tmp_path / "s.csv"), "--format", "csv")
    back = pd.read_csv(io.StringIO(out))
    assert len(back) == 3 and back["status"].eq("ok").sum() == 2


def test_validate_table_names_the_runs_that_do_not_fit_as_read():
    """The table output counts the compared rows whose memory as read exceeds HBM (fits =
    False) and names the first of them; the JSON rows carry mem_gib and fits."""
    from planner.validation import OUT_OF_SAMPLE_CSV
    rc, out, _ = run("validate", "--csv", str(OUT_OF_SAMPLE_CSV), "--format", "json")
    assert rc == 0
    rows = json.loads(out)["rows"]
    over = [r for r in rows if r["status"] == "ok" and r["fits"] is False]
    assert over and all(r["mem_gib"] > 0 for r in rows if r["status"] == "ok")
    rc, out, _ = run("validate", "--csv", str(OUT_OF_SAMPLE_CSV))
    n_ok = sum(r["status"] == "ok" for r in rows)
    assert rc == 0 and f"{len(over)} of {n_ok} compared runs do not fit in memory as read" in out
    assert over[0]["run_id"] in out
    rc, out, _ = run("validate")  # the calibration runs all fit: no such line
    assert rc == 0 and "do not fit in memory" not in out


def test_sweep_of_a_bare_hf_config_notes_the_gpus_it_sweeps(tmp_path):
    """`sweep --hf-config X --gpus 64` said the scenario was 'on one 8-GPU node' (review): the
    note now names the GPUs the sweep chooses a split for; evaluate keeps the one-node note."""
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048,
        "intermediate_size": 5632, "num_attention_heads": 32, "num_hidden_layers": 22,
        "num_key_value_heads": 4, "vocab_size": 32000, "max_position_embeddings": 2048,
        "tie_word_embeddings": False, "hidden_act": "silu"}))
    rc, _, err = run("sweep", "--hf-config", str(cfg), "--gpus", "64", "--top", "2")
    assert rc == 0, err
    assert "the sweep chooses the split for 64 GPUs (--gpus)" in err and "one 8-GPU node" not in err
    rc, _, err = run("evaluate", "--hf-config", str(cfg))
    assert rc == 0 and "on one 8-GPU node" in err


def test_validate_fits_note_counts_and_wording(tmp_path):
    """One compared run that cannot fit (MPT-7B at micro-batch 256 x 2,048 tokens on an 80 GB
    A100: activations alone are far above 80 GB), one that fits, and one not compared (no
    batch published) that cannot fit either: 'does' for one run, and the memory-only row named
    on its own line (review: '1 of 2 compared runs do not fit'; memory-only rows never named)."""
    import pandas as pd
    from planner import validation

    cal = pd.read_csv(validation.DEFAULT_CSV)
    base = cal[cal["run_id"] == "mpt_a100_80gb_amp_bf16_7b_seq2048_8gpu_mbs6"]
    fit, big, memo = base.copy(), base.copy(), base.copy()
    big["run_id"], big["micro_batch"], big["global_batch_seqs"], big["global_batch_tokens"] = "big", 256, 2048, None
    memo["run_id"], memo["micro_batch"], memo["global_batch_seqs"], memo["global_batch_tokens"] = "memo", 256, None, None
    memo["grad_accum"] = None
    fit["run_id"] = "fit"
    path = tmp_path / "fits.csv"
    pd.concat([fit, big, memo]).to_csv(path, index=False)
    rc, out, err = run("validate", "--csv", str(path))
    assert rc == 0, err
    assert "1 of 2 compared runs does not fit in memory as read (fits = False: big)" in out
    assert "1 row not compared (memory check only) does not fit either (fits = False: memo)" in out


# ---- found by a new-user review (2026-11-30): each reproduced on the code before its fix ----

def test_deeply_nested_json_is_one_line_not_a_traceback(tmp_path):
    """[[[…]]] 100,000 deep: json raised RecursionError (a RuntimeError) through the file reader,
    the Hugging Face reader and --set; each is now a named one-line error, exit 2."""
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    for argv in (("evaluate", str(deep)), ("evaluate", "--hf-config", str(deep)),
                 ("evaluate", "--preset", "default", "--set", "model=" + "[" * 5000 + "]" * 5000)):
        rc, _, err = run(*argv)
        assert rc == 2, argv
        assert "nested too deeply" in err and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1


def test_output_to_a_full_disk_is_one_line_and_ctrl_c_exits_130(monkeypatch):
    """Writing to /dev/full raised OSError (ENOSPC) through print_report: a traceback, rc 1."""
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "planner", "presets"], stdout=full, stderr=subprocess.PIPE,
                           text=True, timeout=120)
    assert r.returncode == 1
    assert r.stderr.strip() == "planner: cannot write the output: No space left on device"

    import planner.cli as cli

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "cmd_presets", interrupted)
    rc, _, err = run("presets")
    assert rc == 130 and err == "planner: interrupted\n"


def test_an_evaluate_result_reads_back_as_its_scenario(tmp_path):
    """`evaluate --format json > o.json; evaluate o.json` said 'model: Field required'."""
    rc, out, _ = run("evaluate", "--preset", "default", "--format", "json")
    assert rc == 0
    f = tmp_path / "o.json"
    f.write_text(out)
    rc2, out2, err2 = run("evaluate", str(f), "--format", "json")
    assert rc2 == 0, err2
    assert "is an evaluate result" in err2
    assert json.loads(out2)["results"]["step_time_s"] == json.loads(out)["results"]["step_time_s"]


def test_a_plan_that_does_not_fit_is_said_on_stderr():
    """GPipe with no recompute holds all 16 micro-batches' activations: 103.66 GiB on the last
    stage of the default Llama 3 70B split against 79.65 GiB usable. The table said `fits no`
    and printed days and cost with rc 0 and nothing on stderr."""
    rc, out, err = run("evaluate", "--preset", "default", "--set", "parallelism.recompute=none",
                       "--set", "parallelism.schedule=gpipe", "--set", "parallelism.vpp=1")
    assert rc == 0
    assert "planner: warning: Does not fit in GPU memory" in err and "> usable HBM 79.65 GiB" in err
    rc, _, err = run("evaluate", "--preset", "default")
    assert rc == 0 and "Does not fit" not in err


def test_presets_hardware_json_writes_null_for_other_tables_fields_and_inf_for_no_limit():
    """README: a value that does not apply is null in JSON (was ""), an infinite one "inf" (the
    host-memory tier's aggregate bandwidth was the string "no shared limit" among numbers)."""
    rc, out, _ = run("presets", "hardware", "--format", "json")
    assert rc == 0
    rows = json.loads(out)
    sys_row = next(r for r in rows if r.get("system") == "dgx-h100")
    assert sys_row["storage_tier"] is None and sys_row["failure_profile"] is None
    tier = next(r for r in rows if r.get("storage_tier") == "host_memory")
    assert tier["agg_write_GBps"] == "inf" and tier["system"] is None
    assert all(isinstance(r["agg_write_GBps"], (int, float)) or r["agg_write_GBps"] in ("inf", None) for r in rows)
    rc, out, _ = run("presets", "hardware")  # the table keeps its words
    assert "no shared limit" in out


def test_in_memory_checkpoints_over_host_memory_warn_on_stderr_and_the_split_hint_reads_well():
    """Found by review: the in-memory checkpoint overrun had a note the CLI did not echo (README
    promises 'planner: warning: Does not fit …'); and the no-split message ended '11,592., or'."""
    rc, _, err = run("evaluate", "--preset", "default", "--set", "checkpoint.tiers.0.interval_s=600",
                     "--set", "checkpoint.tiers.0.replicas=1", "--set", "cluster.overrides.host_memory_bytes=5e9",
                     "--format", "csv")
    assert rc == 0 and "planner: warning: Does not fit in host memory: the in-memory checkpoints need" in err
    rc, _, err = run("sweep", "--preset", "default", "--gpus", "7", "--format", "csv")
    assert rc == 1 and "., or" not in err and ". An uneven layer split (--set parallelism.layer_split=uneven) gives " in err


def test_validate_says_when_a_csv_has_no_source_or_notes_column(tmp_path):
    """The default rules read the framework, year and flags from those columns; a file without
    them moved 97 of the calibration file's 98 errors with no word (found by review)."""
    import pandas as pd
    from planner import validation
    cal = pd.read_csv(validation.DEFAULT_CSV).head(3).drop(columns=["source", "notes"])
    path = tmp_path / "bare.csv"
    cal.to_csv(path, index=False)
    rc, _, err = run("validate", "--csv", str(path), "--format", "csv")
    assert rc == 0 and "has no 'source' / 'notes' column" in err
    rc, _, err = run("validate", "--format", "csv")
    assert rc == 0 and "column" not in err
