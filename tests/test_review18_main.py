"""Session 18 (main): one validation run, part by part.

``planner.validation.run_scenario`` gives the scenario a row of a calibration-format CSV is
evaluated as; ``planner validate --run RUN_ID`` prints the row's comparison, the defaults it took
and each part of its step with the formula; the Validate page opens the run on the Plan page.
The checks: the scenario's own evaluation is the comparison's step time (two paths through the
reader and the engine that must agree), the published / predicted figures printed are the
comparison's, bad run ids are named, and the page opens the run.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest

import planner
from planner import validation
from planner.charts import STEP_PARTS
from test_cli import run  # the CLI test's runner (tests/ is on sys.path)

ROOT = Path(__file__).resolve().parents[1]
OOS = ROOT / "validation" / "out_of_sample.csv"
HAS_CAL = validation.DEFAULT_CSV.is_file()


@pytest.fixture(scope="module")
def oos_rows():
    rows, _ = validation.validate(OOS)
    return rows


def _sample(rows, every):
    ok = rows[rows["status"].eq("ok")]
    return ok.iloc[::every]


def test_run_scenario_is_the_comparisons_reading_out_of_sample(oos_rows):
    """Every 8th compared out-of-sample run (59 of 465, dense and MoE, from most source groups):
    planner.evaluate of run_scenario's scenario gives validate's step time."""
    sample = _sample(oos_rows, 8)
    assert len(sample) >= 40
    scen = [validation.run_scenario(rid, OOS)[0] for rid in sample["run_id"]]
    got = planner.evaluate_many(scen, columns=["step_time_s"])["step_time_s"].to_numpy()
    np.testing.assert_allclose(got, sample["step_time_s"].to_numpy(dtype=float), rtol=1e-12)
    assert [s.name for s in scen] == list(sample["run_id"])


@pytest.mark.skipif(not HAS_CAL, reason="../shared/validation/calibration.csv is not beside the checkout")
def test_run_scenario_is_the_comparisons_reading_in_sample():
    rows, _ = validation.validate()
    sample = _sample(rows, 4)
    scen = [validation.run_scenario(rid)[0] for rid in sample["run_id"]]
    got = planner.evaluate_many(scen, columns=["step_time_s"])["step_time_s"].to_numpy()
    np.testing.assert_allclose(got, sample["step_time_s"].to_numpy(dtype=float), rtol=1e-12)


def test_run_scenario_defaults_are_the_validate_column(oos_rows):
    row = oos_rows[oos_rows["run_id"].eq("mbridge_25.11_h100_llama3_8b_8gpu_fsdp_fp8cs")].iloc[0]
    _, defaults = validation.run_scenario(" mbridge_25.11_h100_llama3_8b_8gpu_fsdp_fp8cs ", OOS)  # spaces ignored
    assert defaults == row["defaults"]
    assert "recompute none" in defaults


def test_run_scenario_names_close_ids_and_skipped_rows(tmp_path):
    with pytest.raises(ValueError, match=r"no run with run_id 'mbridge_25.11_h100_llama3_8b_8gpu_fsdp_fp8c'.*close: "
                       r"mbridge_25.11_h100_llama3_8b_8gpu_fsdp_fp8cs"):
        validation.run_scenario("mbridge_25.11_h100_llama3_8b_8gpu_fsdp_fp8c", OOS)
    # a row the reader skips: its reason, as validate's status says it
    with open(OOS, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields = reader.fieldnames
        first = next(reader)
    first["gpu"] = "TPU v4"
    path = tmp_path / "one.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerow(first)
    with pytest.raises(ValueError, match=rf"run '{re.escape(first['run_id'])}' is skipped: .*TPU v4"):
        validation.run_scenario(first["run_id"], path)


def test_cli_run_table_prints_the_comparison_and_every_step_part(oos_rows):
    rid = "mbridge_25.11_b200_llama38b_8gpu_fp8cs"
    row = oos_rows[oos_rows["run_id"].eq(rid)].iloc[0]
    rc, out, err = run("validate", "--csv", str(OOS), "--run", rid)
    assert rc == 0, err
    pub, pred, e = float(row["published"]), float(row["predicted"]), float(row["rel_err"])
    assert f"published tokens_per_s_per_gpu {pub:,.4g}; predicted {pred:,.4g}: error {e:+.1%}" in out
    assert f"step time {float(row['step_time_s']):.4g} s" in out
    for _, label in STEP_PARTS:
        assert re.search(rf"^  {re.escape(label)} +[\d.e+-]+ s   \S", out, re.M), (label, out)
    assert "m·t_mb = " in out  # the compute formula with its numbers
    assert "defaults the row took: " + row["defaults"] in out


def test_cli_run_json_is_a_scenario_evaluate_reads(tmp_path, oos_rows):
    rid = "dgxc_nemo24.09_h100_llama31_8b_8gpu_fp8"
    rc, out, err = run("validate", "--csv", str(OOS), "--run", rid, "--format", "json")
    assert rc == 0, err
    path = tmp_path / "run.json"
    path.write_text(out)
    rc, out2, err2 = run("evaluate", str(path), "--format", "json")
    assert rc == 0, err2
    want = float(oos_rows.loc[oos_rows["run_id"].eq(rid), "step_time_s"].iloc[0])
    assert json.loads(out2)["results"]["step_time_s"] == pytest.approx(want, rel=1e-12)
    rc, out3, _ = run("validate", "--csv", str(OOS), "--run", rid, "--format", "csv")
    assert rc == 0 and out3.splitlines()[1].startswith(rid + ",") and len(out3.splitlines()) == 2


@pytest.mark.parametrize("argv, expected", [
    # the file it looked in first since review 19d ("(the calibration file): ..." read as the other file's name)
    (("--run", "no_such_run"), "--run no_such_run (--csv "),
    (("--run", "  "), "--run: give a run_id of the CSV"),
    (("--run", "x", "--by-family"), "--by-family summarises every run; drop --run"),
])
def test_cli_run_bad_input_exits_2_with_a_message(argv, expected):
    rc, out, err = run("validate", "--csv", str(OOS), *argv) if "--by-family" not in argv else run("validate", *argv)
    assert rc == 2 and expected in err and "Traceback" not in err, err
    assert out == ""
    if argv[1] == "no_such_run":
        assert "): no run with run_id 'no_such_run'" in err


def test_validate_page_opens_a_run_on_the_plan_page(oos_rows):
    """Validate → out-of-sample → pick a run → "Open on the Plan page": Plan shows that run's
    scenario with the comparison's step time and MFU."""
    from streamlit.testing.v1 import AppTest

    rid = "mbridge_25.11_b200_llama38b_8gpu_fp8cs"
    row = oos_rows[oos_rows["run_id"].eq(rid)].iloc[0]
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    at.switch_page("app_pages/validate.py").run()
    at.segmented_control(key="v_set").set_value("out_of_sample").run()
    assert at.button(key="v_open_btn").disabled  # nothing picked yet
    at.selectbox(key="v_open").set_value(rid).run()
    at.button(key="v_open_btn").click().run()
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics.get("Step time") == f"{float(row['step_time_s']):.2f} s", metrics
    assert metrics.get("MFU") == f"{100 * float(row['mfu']):.1f} %", metrics
    assert at.session_state["scenario"]["name"] == rid


def test_mi350x_is_the_mi355x_die_at_its_clock_and_power():
    """Review 18a: MLPerf v5.1 has MI350X runs (AMD, Cisco) that the reader skipped (no system).
    The MI350X is the MI355X's CDNA4 die air-cooled: 2.2 against 2.4 GHz max clock, 1,000 against
    1,400 W (AMD at Hot Chips 2025). Dense BF16 = 2,516.6 TF × 2.2 / 2.4 = 2,306.9 TF (AMD's own
    MI350X figure: 2.3 PF); FP8 5,033 × 2.2 / 2.4 = 4,613.6 TF; memory 288 GB at 8 TB/s as
    MI355X; the 8-GPU platform 8 × 1,000 W + 4.6 kW (DGX H100's non-GPU share) = 12.6 kW."""
    from planner import catalog

    acc = catalog.accelerators()["mi350x"]
    assert acc.peak_flop_per_s["bf16"] == pytest.approx(2516.6e12 * 2.2 / 2.4, rel=1e-12)
    assert acc.peak_flop_per_s["bf16"] == pytest.approx(2.3e15, rel=0.005)
    assert acc.peak_flop_per_s["fp8"] == pytest.approx(5033e12 * 2.2 / 2.4, rel=1e-12)
    assert "tf32" not in acc.peak_flop_per_s
    assert acc.tdp_w == 1000 and acc.hbm_bw_bytes_per_s == 8e12 and acc.hbm_bytes == 288 * 2**30
    sysm = catalog.systems()["mi350x-8"]
    assert sysm.accelerator == "mi350x" and sysm.gpus_per_node == 8 and sysm.node_power_w == 12600
    for name in ("MI350X (288 GB HBM3E)", "AMD Instinct MI350X", "8xMI350X_2xEPYC"):
        assert validation.system_for_gpu(name) == "mi350x-8", name
    assert validation.system_for_gpu("MI355X OAM") == "mi355x-8"
    # the same split on both parts: the MI350X is slower, by less than its peak ratio (the
    # memory-bound work runs at the same 8 TB/s)
    base = planner.load_preset("default").to_json_dict()
    base["model"] = "llama3-8b"
    base["cluster"] = {"system": "mi355x-8", "n_gpus": 8}
    base["parallelism"] = {"tp": 1, "pp": 1, "zero_stage": 1}
    fast = planner.evaluate(base).results["step_time_s"]
    base["cluster"]["system"] = "mi350x-8"
    slow = planner.evaluate(base).results["step_time_s"]
    assert 1.0 < slow / fast < 2.4 / 2.2


@pytest.mark.parametrize("text, expected", [
    ("--overlap-moe-expert-parallel-comm --delay-wgrad-compute", True),
    ("recipe sets moe_a2a_overlap=True", True),
    ("moe_a2a_overlap: false", False),
    ("run without EP A2A overlap", False),
    ("Notes column '+1f1b overlap' (EP all-to-all overlapped with 1F1B compute)", True),
    ("TP 2, EP 32, DeepEP dispatcher", None),
    # a value given to the flag beats prose around it (review 18b: the "no" of "which no CSV
    # column states" read as a negation of the mention after it)
    ("That preset also sets moe_a2a_overlap=True (Megatron-Core's EP all-to-all overlap), which no "
     "CSV column states", True),
    ("moe_a2a_overlap=True in 25.11, moe_a2a_overlap=False in 26.02", None),  # both ways: unknown
    # review 18d: mentions about another row or after a comparison state nothing about this row
    ("Same split as the row below, which adds +1f1b overlap", None),
    ("Baseline without overlap; the next row adds +1f1b overlap.", None),
    ("compare with the moe_a2a_overlap=True row", None),
    ("unlike Megatron-Bridge presets (moe_a2a_overlap=True), this run uses plain all-to-all", None),
    ("Compared with 25.11, this row sets moe_a2a_overlap=True", True),
    # ... negations after the name, prose without a flag, a number that is no on / off value
    ("--overlap-moe-expert-parallel-comm is not set", False),
    ("--overlap-moe-expert-parallel-comm was not passed", False),
    ("moe_a2a_overlap turned off", False),
    ("The EP A2A overlap does not apply here", False),
    ("the all-to-all is not overlapped", False),
    ("a2a overlap = 0.5", None),
    # review 18f
    ("moe_a2a_overlap=True for this row", True),
    ("Instead of plain all-to-all we use --overlap-moe-expert-parallel-comm", True),
    ("Megatron --overlap-p2p-communication (1F1B overlap of P2P sends)", None),  # pipeline p2p, not EP
])
def test_ep_overlap_statement(text, expected):
    assert validation.ep_overlap_statement(text) is expected


@pytest.mark.parametrize("text, expected", [
    # a value beats prose about the flag (before this session: None, the "no" negating the mention)
    ("TP_COMM_OVERLAP=True; no tp_comm_overlap column in the CSV", True),
    ("without --tp-comm-overlap", False),
    # review 18f: regressions of the first version of the other-row / comparison rules
    ("TP_COMM_OVERLAP=True for this row", True),
    ("--tp-comm-overlap (as the row below)", True),
    ("Unlike NeMo we pass --tp-comm-overlap", True),
    ("Compared with 24.07 we enable --tp-comm-overlap", True),
    # a value before a full stop is a value; the other run's flag is that run's
    ("TP_COMM_OVERLAP=True. Other run: TP_COMM_OVERLAP=False", True),
])
def test_tp_overlap_statement_value_rows_and_comparisons(text, expected):
    assert validation.tp_overlap_statement(text) is expected


def _moe_row(**kw):
    base = {"run_id": "r", "source_key": "X", "model": "Mixtral 8x7B", "layers": 32, "hidden": 4096,
            "heads": 32, "kv_heads": 8, "ffn": 14336, "vocab": 32000, "moe_experts": 8, "moe_topk": 2,
            "seq_len": 4096, "global_batch_seqs": 256, "gpu": "H100-SXM5-80GB", "gpu_count": 64,
            "tp": 1, "pp": 1, "ep": 8, "micro_batch": 1, "source": "Megatron-LM (2025)", "notes": ""}
    return {**base, **kw}


def test_ep_overlap_default_rule_and_its_effect():
    """The reader sets parallelism.ep_comm_overlap from the text, else on for DualPipe, else off;
    on a split where the overlap can hide (PP 1, m = 256/(64·1) = 4 micro-batches) the stated
    overlap shortens the exposed all-to-all, everything else equal."""
    def scen(**kw):
        s, why = validation.row_to_scenario(_moe_row(**kw))
        assert s is not None, why
        return s
    plain, stated = scen(), scen(notes="--overlap-moe-expert-parallel-comm")
    assert plain.parallelism.ep_comm_overlap is False and stated.parallelism.ep_comm_overlap is True
    a, b = plain.to_json_dict(), stated.to_json_dict()
    a["parallelism"].pop("ep_comm_overlap"), b["parallelism"].pop("ep_comm_overlap")
    assert a == b
    ra, rb = planner.evaluate(plain).results, planner.evaluate(stated).results
    assert rb["t_ep_comm_s"] < ra["t_ep_comm_s"] and rb["t_compute_s"] == ra["t_compute_s"]
    # DualPipe (DeepSeek-V3 §3.2.1) overlaps by design; a stated "off" still wins
    assert scen(pp="4 (DualPipe)", gpu_count=256, global_batch_seqs=1024).parallelism.ep_comm_overlap is True
    assert scen(pp="4 (DualPipe)", gpu_count=256, global_batch_seqs=1024, notes="moe_a2a_overlap=False").parallelism.ep_comm_overlap is False


def test_the_two_moe_model_zoo_rows_differ_only_by_the_overlap(oos_rows):
    """Review 18b: the MoE Model Zoo's two cross-node EP 32 Qwen3-235B rows (19.7 s and 17.6 s
    published) had one prediction; the second names "+1F1B overlap" and now reads it."""
    a, _ = validation.run_scenario("moezoo_qwen3_235b_h100_256gpu_xnode_ep32_deepep", OOS)
    b, _ = validation.run_scenario("moezoo_qwen3_235b_h100_256gpu_xnode_ep32_deepep_1f1b_overlap", OOS)
    assert (a.parallelism.ep_comm_overlap, b.parallelism.ep_comm_overlap) == (False, True)
    ja, jb = a.to_json_dict(), b.to_json_dict()
    for j in (ja, jb):
        j.pop("name"), j["parallelism"].pop("ep_comm_overlap")
    assert ja == jb
    step = dict(zip(oos_rows["run_id"], oos_rows["step_time_s"]))
    assert step[b.name] < step[a.name]


# --- review 18d: planner validate --run and the Validate page, found by a new-user review -----------

def test_cli_run_hint_is_a_command_to_paste(tmp_path):
    """The last line's command quotes a path (and an id) with spaces: shlex.quote."""
    path = tmp_path / "with space.csv"
    path.write_bytes(OOS.read_bytes())
    rc, out, err = run("validate", "--csv", str(path), "--run", "opt22_175b_992gpu")
    assert rc == 0, err
    last = out.strip().splitlines()[-1]
    assert f"--run opt22_175b_992gpu --csv '{path}' --format json > run.json" in last, last


@pytest.mark.skipif(not HAS_CAL, reason="../shared/validation/calibration.csv is not beside the checkout")
def test_cli_run_of_a_memory_check_row_says_not_compared_once_and_names_the_placeholder_batch():
    rc, out, err = run("validate", "--run", "korthikanti22_530B_2240gpu_full")
    assert rc == 0, err
    assert out.count("not compared") == 1, out
    # the memory check's batch: pp · micro-batch · dp = 35 · 1 · 8 (Korthikanti 530B at TP 8, 2,240 GPUs)
    assert "the scenario's global batch 280 is the memory check's placeholder" in out


def test_cli_run_works_on_a_file_without_a_compared_row(tmp_path):
    """Two rows, their batch cells emptied: validate refuses the file ("no row can be compared"),
    --run shows the row all the same, in every format."""
    with open(OOS, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields, rows = reader.fieldnames, [next(reader), next(reader)]
    for r in rows:
        r["global_batch_seqs"] = r["global_batch_tokens"] = ""
    path = tmp_path / "nobatch.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    rc, _, err = run("validate", "--csv", str(path))
    assert rc == 2 and "no row can be compared" in err
    for fmt in ("table", "csv", "json"):
        rc, out, err = run("validate", "--csv", str(path), "--run", rows[0]["run_id"], "--format", fmt)
        assert rc == 0 and out, (fmt, err)
    rc, out, _ = run("validate", "--csv", str(path), "--run", rows[0]["run_id"])
    assert "not compared: global batch not published (memory check only)" in out


def test_cli_run_defaults_are_validates_column(oos_rows):
    """The --run view printed run_scenario's list, which lacks what validate adds (the FLOP count
    a TFLOP/s cell is read as): OPT-175B's 'TFLOP/s as model FLOPs (the cell names no recompute)'."""
    rid = "opt22_175b_992gpu"
    rc, out, _ = run("validate", "--csv", str(OOS), "--run", rid)
    want = oos_rows.loc[oos_rows["run_id"].eq(rid), "defaults"].iloc[0]
    assert "TFLOP/s as model FLOPs" in want and f"defaults the row took: {want}" in out


def test_moe_rows_say_which_ep_overlap_the_rule_gave(oos_rows):
    moe = oos_rows[oos_rows["run_id"].str.startswith(("mbridge_25.11_h100_qwen3235b", "mbridge_26.02_h100_qwen3235b",
                                                      "moezoo_", "automodel_"))]
    assert set(moe["run_id"]) >= {"mbridge_26.02_h100_qwen3235ba22b_256gpu_fp8cs",
                                  "moezoo_qwen3_235b_h100_256gpu_xnode_ep32_deepep_1f1b_overlap"}
    stated = {"mbridge_26.02_h100_qwen3235ba22b_256gpu_fp8cs", "moezoo_qwen3_235b_h100_256gpu_xnode_ep32_deepep_1f1b_overlap",
              # review 19b: the Model Zoo's GB200 / GB300 commands state A2A_OVERLAP=0 / 1
              "moezoo_qwen3_235b_gb200_256gpu_bf16_pp8_ep8", "moezoo_qwen3_235b_gb200_256gpu_mxfp8_pp4_vpp6_ep64",
              "moezoo_qwen3_235b_gb300_128gpu_mxfp8_seq128k_cp4"}
    for rid, d in zip(moe["run_id"], moe["defaults"]):
        assert ("EP all-to-all" in str(d)) is (rid not in stated), (rid, d)
    s, d = validation.row_to_scenario(_moe_row(pp="4 (DualPipe)", gpu_count=256, global_batch_seqs=1024), used := [])
    assert "EP all-to-all overlap on (DualPipe)" in used
    _, _ = validation.row_to_scenario(_moe_row(), used2 := [])
    assert "EP all-to-all overlap off (not stated)" in used2
    _, _ = validation.row_to_scenario(_moe_row(notes="moe_a2a_overlap=True"), used3 := [])
    assert not any("EP all-to-all" in u for u in used3)


def test_numeric_run_ids_are_read_as_written(tmp_path):
    with open(OOS, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields, first = reader.fieldnames, next(reader)
    path = tmp_path / "ids.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerow({**first, "run_id": "001"})
        w.writerow({**first, "run_id": "1e3"})
    rows, _ = validation.validate(path)
    assert list(rows["run_id"]) == ["001", "1e3"]
    assert validation.run_scenario("001", path)[0].name == "001"


def test_validate_page_alone_says_where_the_plan_page_is():
    """streamlit run app_pages/validate.py has no Plan page: the button says so (st.error), no
    traceback (review 18d: StreamlitPageNotFoundError)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app_pages" / "validate.py"), default_timeout=300)
    at.run()
    at.selectbox(key="v_open").set_value(at.selectbox(key="v_open").options[0]).run()
    at.button(key="v_open_btn").click().run()
    assert not at.exception
    assert any("streamlit run app.py" in e.value for e in at.error), [e.value for e in at.error]


def test_validate_link_carries_the_picked_run(oos_rows):
    """v_run: the run picked under "Open a run on the Plan page" goes into the page's link and a
    link with it picks the run again; an id that is no compared run of the set is warned about."""
    from streamlit.testing.v1 import AppTest

    rid = "mbridge_25.11_b200_llama38b_8gpu_fp8cs"
    at = AppTest.from_file(str(ROOT / "app_pages" / "validate.py"), default_timeout=300)
    at.query_params.update({"v_set": "out_of_sample", "v_run": rid})
    at.run()
    assert not at.exception
    assert at.selectbox(key="v_open").value == rid
    assert not at.button(key="v_open_btn").disabled
    assert at.query_params.get("v_run") in (rid, [rid])
    assert not [w.value for w in at.warning if "v_run" in w.value]
    at2 = AppTest.from_file(str(ROOT / "app_pages" / "validate.py"), default_timeout=300)
    at2.query_params.update({"v_set": "out_of_sample", "v_run": "no_such_run"})
    at2.run()
    assert not at2.exception
    warn = [w.value for w in at2.warning if "v_run" in w.value]
    assert warn and "no compared run of this set has that id" in warn[0]
    assert at2.selectbox(key="v_open").value is None


@pytest.mark.parametrize("text, gpn, expected", [
    # review 18b: the MoE Model Zoo's H100 cell; 8 NICs of 50 GB/s (400 Gb/s NDR) over 8 GPUs
    ("NVLink 900 GB/s; InfiniBand 8x50 GB/s", 8, 50e9),
    ("InfiniBand 8x50 GB/s", 4, 100e9),  # the same NICs on a 4-GPU node: 8 · 50e9 / 4
    ("RoCE 25 GB/s per GPU", 8, 25e9),
    ("NVLink 900 GB/s", 8, None),  # NVLink's byte rate is no network rate
    ("IB 400 GB/s", 8, None),  # a bare byte rate: per NIC or per node? unread
    ("NVSwitch 8x 900 GB/s", 8, None),
    # review 18f: NVLink's link count after a network's name is no NIC count; Gb/s stays bits
    ("IB + NVLink 18x50 GB/s", 8, None),
    ("InfiniBand and NVLink 18x 50 GB/s", 8, None),
    ("IB 8x50 Gb/s", 8, 8 * 50e9 / 8 / 8),
])
def test_network_rate_in_bytes_after_a_network_name(text, gpn, expected):
    got = validation.network_bw_per_gpu(text, gpn)
    assert got == (pytest.approx(expected, rel=1e-12) if expected else None)



def _write(path, fields, rows, delimiter=","):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n", delimiter=delimiter)
        w.writeheader()
        w.writerows(rows)


def test_run_ids_of_a_semicolon_file_are_kept_and_run_scenario_takes_validates_row(tmp_path):
    """Review 18f: a ;-separated file's run ids went through the decimal-comma reading ("2,5" ->
    2.5); and with a duplicate id whose first row cannot be read, validate compared the second
    row while run_scenario reported the first as skipped."""
    with open(OOS, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields, first = reader.fieldnames, next(reader)
    semi = tmp_path / "semi.csv"
    _write(semi, fields, [{**first, "run_id": "2,5"}, {**first, "run_id": "1,000"}], delimiter=";")
    rows, _ = validation.validate(semi)
    assert list(rows["run_id"]) == ["2,5", "1,000"]
    assert validation.run_scenario("2,5", semi)[0].name == "2,5"
    # a first row with one cell too many (unreadable), then the same id readable
    dup = tmp_path / "dup.csv"
    _write(dup, fields, [{**first, "run_id": "001"}])
    text = dup.read_text().splitlines()
    bad = text[1] + ",x,y"
    dup.write_text("\n".join([text[0], bad, text[1]]) + "\n")
    rows, _ = validation.validate(dup)
    assert list(rows["status"]) == ["ok", rows["status"].iloc[1]] and rows["status"].iloc[1].startswith("skipped")
    s, _ = validation.run_scenario("001", dup)
    assert planner.evaluate(s).results["step_time_s"] == pytest.approx(float(rows["step_time_s"].iloc[0]), rel=1e-12)


def test_run_id_prefix_lists_its_runs_and_a_dash_id_is_pasteable(tmp_path):
    with pytest.raises(ValueError, match=r"close: moezoo_qwen3_235b_h100_256gpu_"):
        validation.run_scenario("moezoo_qwen3_235b", OOS)
    with open(OOS, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields, first = reader.fieldnames, next(reader)
    path = tmp_path / "dash.csv"
    _write(path, fields, [{**first, "run_id": "-x"}])
    rc, out, err = run("validate", "--csv", str(path), "--run=-x")
    assert rc == 0, err
    assert "planner validate --run=-x --csv" in out.strip().splitlines()[-1]
