"""Review 16g: the validation reader's optional ``etp`` column (expert tensor parallelism,
``parallelism.etp``; Megatron-Core ``expert_tensor_parallel_size``, default = TP) and the two
Megatron-Bridge Qwen3-235B-A22B H100 rows it makes statable.

Published figures (typed from the source, never read back from the planner): NVIDIA-NeMo/
Megatron-Bridge ``docs/performance-summary.md`` at commit df0289c180dd20ff26933455c7a0a11084f6a36f,
System DGX-H100, row ``Qwen3_235B_a22B | 256 | FP8-CS``:

* 26.02 container: GBS 8192, MBS 1, seq 4096, FSDP 0, TP 2, PP 8, CP 1, VP 4, EP 32, GA 512,
  1633 tokens/s/GPU, 242 model TFLOP/s/GPU;
* 25.11 container: GBS 2048, MBS 1, seq 4096, FSDP 0, TP 2, PP 8, CP 1, VP 4, EP 32, GA 128,
  1575 tokens/s/GPU, 233 model TFLOP/s/GPU.

Expert TP from the recipe files: ``BASE_QWEN3_235B_A22B_CONFIG = WorkloadBaseConfig(
expert_tensor_parallel_size=1)`` in ``scripts/performance/configs/qwen/qwen3_workload_base_configs.py``
(commit f29a269f8728ff9075f88a226f92e554196a7e41; H100 FP8-CS V1: GBS 2048, V2: GBS 8192) and in the
earlier ``scripts/performance/configs/qwen3/workload_base_configs.py`` (commit
0fa501acee1ebfe3d1ab8088b638e2089d800df6; H100 FP8-CS: GBS 2048).

Hand arithmetic: dp = 256 / (2·8·1) = 16; GBS = MBS·GA·dp: 1·512·16 = 8192 and 1·128·16 = 2048;
expert group etp·ep = 1·32 = 32, expert DP = tp·cp·dp/(etp·ep) = 2·1·16/32 = 1; with etp = tp = 2
the expert group 2·32 = 64 does not divide tp·cp·dp = 32, so without the column the row is refused.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import pandas as pd
import pytest

from planner import validation as V

ROOT = Path(__file__).resolve().parents[1]
OOS = ROOT / "validation" / "out_of_sample.csv"
CAL = ROOT.parent / "shared" / "validation" / "calibration.csv"
DF = "df0289c180dd20ff26933455c7a0a11084f6a36f"

# (run id, container, GBS, GA, tokens/s/GPU, TFLOP/s/GPU, recipe file, its commit)
NEW_ROWS = [
    ("mbridge_25.11_h100_qwen3235ba22b_256gpu_fp8cs", "25.11", 2048, 128, 1575, 233,
     "scripts/performance/configs/qwen3/workload_base_configs.py", "0fa501acee1ebfe3d1ab8088b638e2089d800df6"),
    ("mbridge_26.02_h100_qwen3235ba22b_256gpu_fp8cs", "26.02", 8192, 512, 1633, 242,
     "scripts/performance/configs/qwen/qwen3_workload_base_configs.py", "f29a269f8728ff9075f88a226f92e554196a7e41"),
]


@pytest.fixture(scope="module")
def oos() -> pd.DataFrame:
    return V._read(OOS)


def _row(oos, run_id) -> dict:
    sel = oos[oos["run_id"] == run_id]
    assert len(sel) == 1, run_id
    return sel.iloc[0].to_dict()


def _write(path: Path, rows: list[dict], columns: list[str]) -> Path:
    pd.DataFrame(rows).reindex(columns=columns).to_csv(path, index=False)
    return path


def _cols(extra=()) -> list[str]:
    return list(V.REQUIRED_COLUMNS) + ["interconnect", "source", "notes"] + list(extra)


# --- (1) the reader: column by name, empty = absent, bad values refused with row and column ------

def test_etp_column_is_read_by_name_anywhere_in_the_header(oos, tmp_path):
    """The reader maps columns by name: an etp column first, last or in the middle is the same."""
    r = _row(oos, NEW_ROWS[1][0])
    for k, cols in enumerate((_cols(["etp"]), ["etp"] + _cols(), _cols()[:10] + ["etp"] + _cols()[10:])):
        path = _write(tmp_path / f"f{k}.csv", [r], cols)
        scen, idx, skipped = V.rows_to_scenarios(V._read(path))
        assert not skipped, skipped
        assert len(scen) == 1 and scen[0].parallelism.etp == 1 and scen[0].parallelism.tp == 2


def test_empty_etp_cell_is_the_same_as_no_column(tmp_path):
    """A missing column, an empty cell and an unstated cell ('n/a', '-') all leave etp unset
    (= tp): the same scenario, the same defaults note, the same validate row."""
    src = V._read(OOS)
    moe = src[(src["run_id"].str.startswith("mbridge_")) & src["etp"].isna()].head(6).to_dict("records")
    dense_tp = src[(src["run_id"] == "mbridge_26.02_h100_llama3_70b_64gpu_fp8cs")].to_dict("records")
    rows = moe + dense_tp
    assert len(rows) == 7
    without = _write(tmp_path / "without.csv", rows, _cols())
    outs = []
    for name, cell in (("empty", ""), ("na", "n/a"), ("dash", "-")):
        outs.append(_write(tmp_path / f"{name}.csv", [dict(r, etp=cell) for r in rows], _cols(["etp"])))
    used0: list = []
    s0, i0, k0 = V.rows_to_scenarios(V._read(without), used0)
    r0, _ = V.validate(without)
    for path in outs:
        used: list = []
        s, i, k = V.rows_to_scenarios(V._read(path), used)
        assert i == i0 and k == k0 and used == used0
        assert [x.model_dump() for x in s] == [x.model_dump() for x in s0]
        assert all(x.parallelism.etp is None for x in s)
        r, _ = V.validate(path)
        pd.testing.assert_frame_equal(r, r0)


def test_calibration_file_has_no_etp_column_and_every_row_keeps_etp_unset():
    df = V._read(CAL)
    assert "etp" not in df.columns
    scen, _, _ = V.rows_to_scenarios(df)
    assert scen and all(s.parallelism.etp is None for s in scen)


def test_every_pre_existing_out_of_sample_row_reads_as_without_the_column(oos, tmp_path):
    """The etp column added to out_of_sample.csv is empty on every row but the two new ones and
    the rows collected later that publish it (review 18b: the MoE Model Zoo's Qwen3-235B and
    Megatron-LM's DeepSeek-V3 GB200 guide); the file with the column dropped gives the same
    validate rows for all the others."""
    filled = oos[oos["etp"].notna()]
    later = filled[~filled["run_id"].isin([r[0] for r in NEW_ROWS])]
    assert set(r[0] for r in NEW_ROWS) <= set(filled["run_id"])
    # review 19: the Model Zoo's GB200 / GB300 rows (19b) and Megatron-Bridge 25.09's token-drop
    # Qwen3-235B rows, whose EP exceeds the data-parallel group at ETP = TP (19a: ETP 1, as the recipe)
    # review 46c: MLPerf v6.0's DeepSeek-V3 on 256 GB200 (Google) states ETP 1
    assert set(later["source_key"]) <= {"MOEZOO_QWEN3_H100", "MCORE_DSV3_GB200", "MOEZOO_QWEN3_GB200",
                                        "MBRIDGE_25.09", "MLPERF_T60_GOOGLE_DSV3_GB200",
                                        "MLPERF_T60_NV_DSV3_GB200"}, sorted(later["source_key"])
    dropped = tmp_path / "dropped.csv"
    raw = list(csv.reader(io.StringIO(OOS.read_text(), newline="")))
    k = raw[0].index("etp")
    assert k == len(raw[0]) - 1  # added at the end
    with open(dropped, "w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows([row[:k] + row[k + 1:] for row in raw])
    with_col, _ = V.validate(OOS)
    without, _ = V.validate(dropped)
    keep = ~with_col["run_id"].isin(filled["run_id"])
    pd.testing.assert_frame_equal(with_col[keep].reset_index(drop=True),
                                  without[~without["run_id"].isin(filled["run_id"])].reset_index(drop=True),
                                  check_dtype=False)  # 'fits' is object beside the skipped rows' NaN
    # without the column the two new rows cannot be built: etp = tp = 2 makes the expert group 64
    new = without[without["run_id"].isin([r[0] for r in NEW_ROWS])]
    assert len(new) == 2 and new["status"].str.startswith("skipped").all()
    assert new["status"].str.contains("parallelism.ep = 32 must divide dp·cp = 16", regex=False).all()


@pytest.mark.parametrize("cell, want", [
    ("1", 1), ("2", 2), ("ETP=1", 1), ("ETP 1", 1), ("expert tensor parallel 1", 1),
    ("--expert-tensor-parallel-size 1", 1), ("expert_tensor_parallel_size: 1", 1), (1.0, 1),
])
def test_etp_cell_readings(oos, cell, want):
    r = dict(_row(oos, NEW_ROWS[1][0]), etp=cell)
    s, why = V.row_to_scenario(r)
    if want == 2:  # etp = tp = 2 on this split: the schema's rule, named
        assert s is None and "parallelism.ep = 32 must divide dp·cp = 16" in why
    else:
        assert why == "" and s.parallelism.etp == want


@pytest.mark.parametrize("extra, want", [
    ({"ep": "EP=32 (ETP=1)"}, 1), ({"ep": "32 (ETP 1)"}, 1), ({"tp": "TP2-ETP1"}, 1),
    ({"tp": "TP=2, ETP=1"}, 1),
])
def test_etp_named_in_the_tp_or_ep_cell_fills_an_empty_etp(oos, extra, want):
    r = dict(_row(oos, NEW_ROWS[1][0]), etp=None, **extra)
    s, why = V.row_to_scenario(r)
    assert why == "" and s.parallelism.etp == want and s.parallelism.tp == 2 and s.parallelism.ep == 32


@pytest.mark.parametrize("cell, said", [
    ("abc", "etp = 'abc' is not a number this column can read (write the number in full, e.g. 1)"),
    ("0", "etp = '0' must be at least 1"),
    ("1.5", "etp = '1.5' is not a finite whole number"),
    ("none", "etp = 'none' is ambiguous: write 1"),
    ("no", "etp = 'no' is ambiguous: write 1"),
    ("1/2", "etp = '1/2' names several degrees"),
    ("4", "parallelism.etp = 4 must divide tp = 2"),
])
def test_bad_etp_cell_skips_the_row_naming_the_column(oos, cell, said):
    s, why = V.row_to_scenario(dict(_row(oos, NEW_ROWS[1][0]), etp=cell))
    assert s is None and said in why and "Traceback" not in why


def test_etp_in_the_ep_cell_beside_a_different_etp_cell_is_refused(oos):
    s, why = V.row_to_scenario(dict(_row(oos, NEW_ROWS[1][0]), etp="2", ep="EP=32 (ETP=1)"))
    assert s is None and why.startswith("etp = ") and "unclear" in why and "EP=32 (ETP=1)" in why


def test_bad_etp_in_a_file_names_the_row_and_column(oos, tmp_path):
    """Through validate() and the CLI: the bad row is listed by its run id with the column named;
    the good row is still compared (no traceback, exit status 0)."""
    bad_id, good_id = NEW_ROWS[0][0], NEW_ROWS[1][0]
    rows = [dict(_row(oos, bad_id), etp="abc"), _row(oos, good_id)]
    path = _write(tmp_path / "bad.csv", rows, _cols(["etp"]))
    got, _ = V.validate(path)
    st = dict(zip(got["run_id"], got["status"]))
    assert st[bad_id] == "skipped: etp = 'abc' is not a number this column can read (write the number in full, e.g. 1)"
    assert st[good_id] == "ok"
    from test_cli import run as _cli
    rc, out, err = _cli("validate", "--csv", str(path), "--format", "csv")
    assert rc == 0, err
    printed = pd.read_csv(io.StringIO(out))
    line = printed[printed["run_id"] == bad_id]
    assert len(line) == 1 and "etp = 'abc'" in line.iloc[0]["status"]


def test_semicolon_file_reads_the_etp_column(oos, tmp_path):
    r = _row(oos, NEW_ROWS[1][0])
    path = tmp_path / "semi.csv"
    pd.DataFrame([r]).reindex(columns=_cols(["etp"])).to_csv(path, index=False, sep=";")
    scen, _, skipped = V.rows_to_scenarios(V._read(path))
    assert not skipped and scen[0].parallelism.etp == 1


# --- (2) the two new Megatron-Bridge rows --------------------------------------------------------

@pytest.mark.parametrize("run_id, ver, gbs, ga, tok, tfl, recipe, commit", NEW_ROWS)
def test_new_row_cells_are_the_published_table_row(oos, run_id, ver, gbs, ga, tok, tfl, recipe, commit):
    r = _row(oos, run_id)
    assert r["source_key"] == "MBRIDGE_H100" and r["model"] == "Qwen3-235B-A22B"
    assert r["source"] == (f"NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md (commit {DF}), "
                           f"section '{ver} NeMo Container', Pre-Training Performance, System DGX-H100")
    ints = {c: int(float(r[c])) for c in ("gpu_count", "global_batch_seqs", "micro_batch", "seq_len", "tp", "pp",
                                          "cp", "vpp", "ep", "grad_accum", "tokens_per_s_per_gpu",
                                          "tflops_per_gpu", "etp", "dp")}
    assert ints == {"gpu_count": 256, "global_batch_seqs": gbs, "micro_batch": 1, "seq_len": 4096, "tp": 2, "pp": 8,
                    "cp": 1, "vpp": 4, "ep": 32, "grad_accum": ga, "tokens_per_s_per_gpu": tok,
                    "tflops_per_gpu": tfl, "etp": 1, "dp": 16}
    assert r["precision"] == "FP8-CS" and r["gpu"] == "DGX-H100"
    # GBS = MBS · GA · dp with dp = 256 / (tp · pp · cp)
    assert 256 // (2 * 8 * 1) == 16 and 1 * ga * 16 == gbs
    # the notes cite the recipe file and commit the etp comes from, and state the layout
    notes = r["notes"]
    assert notes.startswith(f"{ver} container. FSDP 0. ")
    assert recipe in notes and f"commit {commit}" in notes
    assert "expert_tensor_parallel_size=1" in notes and "etp = 1 from the recipe file" in notes
    assert "etp*ep = 1*32 = 32" in notes and "tp*cp*dp/(etp*ep) = 2*1*16/32 = 1" in notes
    assert "94 layers over pp*vp = 32 chunks -> uneven split." in notes


@pytest.mark.parametrize("run_id, ver, gbs, ga, tok, tfl, recipe, commit", NEW_ROWS)
def test_new_row_scenario_has_the_split_its_notes_state(oos, run_id, ver, gbs, ga, tok, tfl, recipe, commit):
    s, why = V.row_to_scenario(_row(oos, run_id))
    assert why == ""
    p = s.parallelism
    assert (p.tp, p.pp, p.dp, p.cp, p.ep, p.etp, p.vpp) == (2, 8, 16, 1, 32, 1, 4)
    assert p.schedule == "interleaved" and p.layer_split == "uneven"  # 94 % (8·4) = 30 ≠ 0
    assert p.sequence_parallel  # etp < tp needs SP; the NVIDIA-recipe default with tp > 1
    assert s.training.global_batch_size == gbs and s.training.micro_batch_size == 1 and s.training.seq_len == 4096
    assert s.training.precision == "fp8" and s.cluster.n_gpus == 256 and s.cluster.system == "dgx-h100"
    # expert group and expert DP (Megatron-Core parallel folding), by hand: 1·32 and 2·1·16 / 32
    assert p.etp * p.ep == 32 and p.tp * p.cp * p.dp % (p.etp * p.ep) == 0
    assert p.tp * p.cp * p.dp // (p.etp * p.ep) == 1
    assert s.model.moe is not None and s.model.moe.n_experts == 128 and s.model.moe.top_k == 8
    assert s.model.n_layers == 94


def test_new_rows_are_compared_on_the_published_tokens_per_gpu(oos):
    got, _ = V.validate(OOS)
    for run_id, _, _, _, tok, _, _, _ in NEW_ROWS:
        line = got[got["run_id"] == run_id].iloc[0]
        assert line["status"] == "ok" and line["metric"] == "tokens_per_s_per_gpu"
        assert line["published"] == tok
        assert math.isclose(line["rel_err"], line["predicted"] / tok - 1.0, rel_tol=1e-12)
        assert "etp" not in str(line["defaults"])  # stated by the cell, not a default
