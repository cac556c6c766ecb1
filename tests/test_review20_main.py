"""Session 20 (main): a validation CSV line with fewer cells than its header says so in the
reason it is skipped; the CLI's refusal of a share link does not say it "kept" a value.

Expected counts are those of the lines written here (a header of the calibration file's columns,
a data line cut after a known number of cells).
"""

from __future__ import annotations

import csv
import json
import re
import io
from pathlib import Path

import pytest

from planner import validation
from planner.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[1]
OOS = ROOT / "validation" / "out_of_sample.csv"


def _lines() -> tuple[list[str], list[list[str]]]:
    rows = list(csv.reader(io.StringIO(OOS.read_text(encoding="utf-8"))))
    return rows[0], rows[1:]


def _write(tmp_path: Path, header: list[str], rows: list[list[str]]) -> Path:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    p = tmp_path / "runs.csv"
    p.write_text(buf.getvalue(), encoding="utf-8")
    return p


def _dense_row(header, rows):
    """The first out-of-sample row that validate compares (a published split and metric)."""
    tp = header.index("tp")
    return next(r for r in rows if r[tp].strip() and r[header.index("tokens_per_s_per_gpu")].strip())


def test_a_line_cut_short_says_how_many_cells_it_has(tmp_path):
    header, rows = _lines()
    good = _dense_row(header, rows)
    cut = header.index("gpu_count") + 1  # cells up to gpu_count: the split (tp, pp, ...) is missing
    short = [good[0] + "_short"] + good[1:cut]
    p = _write(tmp_path, header, [good, short])
    b, meta, skipped = validation.calibration_batch(p)
    assert list(meta["run_id"]) == [good[0]]
    why = skipped.set_index("run_id").loc[good[0] + "_short", "reason"]
    assert why.endswith(f"; the line has {cut} cells where the header has {len(header)}: cut short, or a quote left open?"), why
    assert "not published" in why  # the reader's own reason comes first


def test_a_full_line_skipped_for_its_values_gets_no_count(tmp_path):
    header, rows = _lines()
    good = _dense_row(header, rows)
    blank_tp = list(good)
    blank_tp[0] += "_notp"
    blank_tp[header.index("tp")] = ""
    blank_tp[header.index("pp")] = ""
    p = _write(tmp_path, header, [good, blank_tp])
    _, _, skipped = validation.calibration_batch(p)
    why = skipped.set_index("run_id").loc[good[0] + "_notp", "reason"]
    assert "not published" in why and "cells where the header has" not in why


def test_a_line_without_its_trailing_text_cells_is_still_compared(tmp_path):
    # notes and source are the last two columns: a line that stops before them still holds the run
    header, rows = _lines()
    good = _dense_row(header, rows)
    order = [c for c in header if c not in ("notes", "source")] + ["notes", "source"]  # as calibration.csv ends
    line = [good[header.index(c)] for c in order]
    assert line[-1].strip()  # the source cell is not empty: leaving it out shortens the line
    p = _write(tmp_path, order, [line[:-2]])
    _, meta, skipped = validation.calibration_batch(p)
    assert list(meta["run_id"]) == [good[0]] and skipped.empty


def test_blank_and_whitespace_lines_do_not_shift_the_counts(tmp_path):
    # pandas leaves out blank and whitespace-only lines; the count must name the right row
    header, rows = _lines()
    good = _dense_row(header, rows)
    cut = header.index("gpu_count") + 1
    text = (",".join(f'"{c}"' for c in header) + "\n\n   \n"
            + ",".join(f'"{c}"' for c in good) + "\n" + ",".join(f'"{c}"' for c in good[:cut]).replace(
                f'"{good[0]}"', f'"{good[0]}_short"', 1) + "\n")
    p = tmp_path / "runs.csv"
    p.write_text(text, encoding="utf-8")
    _, meta, skipped = validation.calibration_batch(p)
    assert list(meta["run_id"]) == [good[0]]
    assert skipped.set_index("run_id").loc[good[0] + "_short", "reason"].endswith(
        f"the line has {cut} cells where the header has {len(header)}: cut short, or a quote left open?")


def test_cli_link_refusal_says_what_the_dashboard_would_keep(capsys):
    link = "http://localhost:8501/?p=default&n=1024&s=-5&ck=pfs:auto:9999"
    assert cli_main(["evaluate", "--link", link]) == 2
    err = capsys.readouterr().err
    assert "kept the base value" not in err and "; used 0" not in err
    assert ("--link: s='-5' (training.seq_len): out of range; allowed 1 to 4,194,304; "
            "the dashboard would keep the base value") in err
    assert "for tier 'pfs' refused; allowed 0 to 1000; the dashboard would use 0" in err
    assert "Traceback" not in err


def _readme_table_row(label: str) -> tuple[int, float, float, float]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(re.escape(label) + r"[^|]*\| (\d+) \| ([\d.]+) % \| ([\d.]+) % \| ([\d.]+) % \|", text)
    assert m, f"README's short accuracy table lost its row {label!r}: update this test"
    return int(m[1]), float(m[2]), float(m[3]), float(m[4])


def _rounded(x: float, shown: float) -> bool:
    """``shown`` is 100·x rounded as the README writes it (one decimal, or none from 100 %)."""
    digits = 0 if shown >= 100 else 1
    return round(100 * x, digits) == shown


@pytest.mark.parametrize("label, csv_path", [("calibration file", None), ("`validation/out_of_sample.csv`", OOS)])
def test_readme_short_accuracy_table_is_what_validate_prints(label, csv_path):
    if csv_path is None and not validation.DEFAULT_CSV.is_file():
        pytest.fail(f"{validation.DEFAULT_CSV} missing: the shared folder must sit beside the checkout")
    n, med, p90, worst = _readme_table_row(label)
    rows, summary = validation.validate(csv_path)
    overall = summary.set_index("group").loc["overall"]
    assert int(overall["n"]) == n
    assert _rounded(overall["median_abs_err"], med)
    assert _rounded(overall["p90_abs_err"], p90)
    assert _rounded(overall["max_abs_err"], worst)


# --- review 20a (a new user's break test) ----------------------------------------------------------

@pytest.mark.parametrize("ck, needle", [
    ("pfs:60:0:junk", "ck: entry 'pfs:60:0:junk' has 4 fields; allowed tier:interval_s|auto:replicas (3 fields); "
                      "used 'pfs:60:0'"),
    ("pfs:auto:0:9:9", "has 5 fields"),
    ("pfs::0", "ck: empty interval for tier 'pfs' (entry 'pfs::0'); allowed a number of seconds or 'auto'; "
               "used 'auto' (the optimum)"),
    ("pfs:", "ck: empty interval for tier 'pfs' (entry 'pfs:')"),
    ("pfs:60:", "ck: empty replicas for tier 'pfs' (entry 'pfs:60:'); allowed 0 to 1000; used 0"),
])
def test_a_malformed_checkpoint_entry_in_a_link_is_warned_about(ck, needle):
    from planner import share
    _, warnings = share.params_to_scenario({"p": "default", "ck": ck})
    assert any(needle in w for w in warnings), warnings


@pytest.mark.parametrize("ck", ["pfs:60:0", "pfs:auto:0", "pfs", "host_memory:auto:0,pfs:3600:0"])
def test_a_well_formed_checkpoint_entry_gets_no_warning(ck):
    from planner import share
    _, warnings = share.params_to_scenario({"p": "default", "ck": ck})
    assert not any(w.startswith("ck") for w in warnings), warnings


def _scenario_text() -> str:
    from planner.presets import preset_json
    return json.dumps(preset_json("default"))


def test_a_scenario_file_naming_a_key_twice_is_refused(tmp_path, capsys):
    text = _scenario_text()
    assert text.count('"n_gpus": 1024') == 1
    p = tmp_path / "dup.json"
    p.write_text(text.replace('"n_gpus": 1024', '"n_gpus": 1024, "n_gpus": 512'), encoding="utf-8")
    assert cli_main(["evaluate", str(p)]) == 2
    err = capsys.readouterr().err
    assert f"planner: {p}: key 'n_gpus' given twice in one object (1024, then 512); give it once" in err


def test_a_scenario_file_with_a_5000_digit_number_names_no_python_setting(tmp_path, capsys):
    p = tmp_path / "big.json"
    p.write_text(_scenario_text().replace('"n_gpus": 1024', '"n_gpus": ' + "9" * 5000), encoding="utf-8")
    assert cli_main(["evaluate", str(p)]) == 2
    err = capsys.readouterr().err
    assert "a whole number of 5,000 digits, beyond any field's allowed range" in err
    assert "set_int_max_str_digits" not in err


def test_set_an_integer_too_large_to_parse_names_the_range(capsys):
    assert cli_main(["evaluate", "--preset", "default", "--set", "parallelism.tp=1e30"]) == 2
    err = capsys.readouterr().err
    assert "parallelism.tp: out of range; allowed 1 to 10,000,000 (got 1e+30)" in err


@pytest.mark.parametrize("index", ["-1", "x"])
def test_set_a_list_index_that_is_no_index(index, capsys):
    assert cli_main(["evaluate", "--preset", "default", "--set", f"checkpoint.tiers[{index}].interval_s=10"]) == 2
    err = capsys.readouterr().err
    # the default preset has two tiers (host memory, PFS)
    assert f"'checkpoint.tiers.{index}' needs an index from 0 to 1" in err


def test_validate_csv_with_a_quote_never_closed_names_the_line(tmp_path):
    header, rows = _lines()
    good = _dense_row(header, rows)
    text = ",".join(header) + "\n" + ",".join(f'"{c}"' for c in good) + "\n" + 'x,"abc,1,2\n'
    p = tmp_path / "runs.csv"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=r'a quote \(\"\) opened on line 3 is never closed'):
        validation.validate(p)


def test_link_base_url_with_a_query_is_refused(capsys):
    assert cli_main(["link", "--preset", "default", "--base-url", "http://localhost:8600/?p=foo"]) == 2
    err = capsys.readouterr().err
    assert ("--base-url 'http://localhost:8600/?p=foo': has a query (?p=foo), which the link written replaces; "
            "give the dashboard's address only, 'http://localhost:8600/'") in err


def test_set_a_5000_digit_integer_is_bad_input_not_a_traceback(capsys):
    assert cli_main(["evaluate", "--preset", "default", "--set", "parallelism.tp=" + "9" * 5000]) == 2
    err = capsys.readouterr().err
    assert err.startswith("planner: --set parallelism.tp: a whole number of 5,000 digits, beyond any field's "
                          "allowed range") and "Traceback" not in err


def test_cli_link_rewording_leaves_the_users_quoted_value_alone(capsys):
    assert cli_main(["evaluate", "--link", "http://localhost:8501/?m=x;%20used%20y&ck=pfs:1:0,pfs:2:0"]) == 2
    err = capsys.readouterr().err
    assert "m='x; used y': unknown model; the dashboard would keep 'llama3-70b'" in err
    assert "ck: tier 'pfs' listed twice; the dashboard would keep the first" in err


def test_a_whole_list_refusal_drops_the_entrys_own_fallback():
    # the 4-field entry's "used 'pfs:xx:1'" did not happen: the whole list went back to the base
    from planner import share
    _, warnings = share.params_to_scenario({"p": "default", "ck": "pfs:xx:1:9"})
    four = [w for w in warnings if "has 4 fields" in w]
    assert four == ["ck: entry 'pfs:xx:1:9' has 4 fields; allowed tier:interval_s|auto:replicas (3 fields)"]
    assert any(w.startswith("ck: refused") for w in warnings)


def test_loads_json_is_what_the_app_uploads_use():
    from planner import schema
    with pytest.raises(schema.JsonTextError, match="key 'a' given twice in one object"):
        schema.loads_json('{"a": 1, "a": 2}')
    assert schema.loads_json('{"a": {"b": [1, 2]}}') == {"a": {"b": [1, 2]}}
    src = (ROOT / "app_pages" / "_common.py").read_text(encoding="utf-8")
    assert src.count("loads_json(f.getvalue()") == 2 and "json.loads(f.getvalue()" not in src


def _csv_text(header, rows_text: list[str]) -> str:
    return ",".join(header) + "\n" + "\n".join(rows_text) + "\n"


def test_a_quote_left_open_mid_file_refuses_the_file_naming_the_line(tmp_path):
    # pandas' python engine dropped such a record without a word (two runs vanished, review 20c)
    header, rows = _lines()
    good = [r for r in rows if r[header.index("tp")].strip()][:3]

    def line(cells):
        buf = io.StringIO()
        csv.writer(buf, lineterminator="").writerow(cells)
        return buf.getvalue()

    broken = line(good[1][:-3]) + ',"unclosed note,' + ",".join(good[1][-2:])  # data line 2 = file line 3
    p = tmp_path / "runs.csv"
    p.write_text(_csv_text(header, [line(good[0]), broken, line(good[2])]), encoding="utf-8")
    with pytest.raises(ValueError, match=r"the file cannot be read as CSV: line 3 runs on over the lines after it "
                                         rf"\(\d+ cells where the header has {len(header)}\)"):
        validation.validate(p)


def test_the_open_quote_line_counts_lines_inside_quoted_cells(tmp_path):
    # pandas counts records ("row 2"); a quoted cell over 3 lines above puts the quote on line 5
    header, rows = _lines()
    good = _dense_row(header, rows)
    cells = [f'"{c}"' for c in good]
    cells[header.index("notes")] = '"a note\nover three\nlines"'
    text = _csv_text(header, [",".join(cells), 'x,"abc,1,2'])
    p = tmp_path / "runs.csv"
    p.write_text(text, encoding="utf-8")
    assert text.splitlines()[4] == 'x,"abc,1,2'  # line 5
    with pytest.raises(ValueError, match=r'a quote \(\"\) opened on line 5 is never closed'):
        validation.validate(p)


# --- flash attention's per-query overhead (timing.ATTN_QUERY_OVERHEAD_KEYS) ----------------------------

def _core(system="dgx-h100", seq=8192, mbs=1, cp=1, flash=True, kernel="native", model="llama3-8b"):
    """One forward's attention-core time of one layer and micro-batch (timing._terms' _t_core)."""
    import numpy as np

    from planner import batch, model_stats, timing
    import planner
    d = planner.load_preset("default").to_json_dict()
    d["model"] = model
    d["cluster"].update(system=system, n_gpus=8 * cp)
    d["training"].update(seq_len=seq, micro_batch_size=mbs, global_batch_size=8 * mbs)
    d["parallelism"].update(tp=1, pp=1, cp=cp, dp=8, vpp=1, schedule="1f1b", sequence_parallel=False,
                            flash_attention=flash, attention_kernel=kernel)
    b = batch.from_scenarios([planner.Scenario.model_validate(d)])
    b.update(model_stats.stats(b))
    T = timing._terms(b)
    return float(np.asarray(T["_t_core"]).reshape(-1)[0]), bool(np.any(T["_core_bounded"]))


def test_overhead_constant_is_the_tables_fit():
    """Least squares of 1/T = (1 + C/k)/T∞ over pytorch/benchmark PR #2391's H100 tables (d_h 128,
    no mask): FlashAttention-3 and the Triton FlashAttention-2 kernel both give C ≈ 240 keys."""
    import numpy as np

    from planner import timing
    k = np.array([512, 1024, 2048, 4096, 8192, 16384.0])
    for T in ([430.32, 517.099, 565.544, 590.233, 614.234, 620.73], [328.882, 389.723, 433.721, 458.359, 470.732, 476.753]):
        a, b = np.linalg.lstsq(np.vstack([np.ones_like(k), 1 / k]).T, 1 / np.array(T), rcond=None)[0]
        assert 230 < b / a < 250
    assert timing.ATTN_QUERY_OVERHEAD_KEYS == {"hopper": 240.0, "blackwell": 240.0}


def test_core_time_grows_as_keys_plus_overhead():
    """The same tokens per micro-batch (2 × 4,096 against 1 × 8,192): the causal work per token
    doubles with s, and the time per query is ∝ k + C with k = s/2 keys — on H100 (4,096 + 240) /
    (2,048 + 240) = 1.89510, on A100 (no overhead) exactly 2."""
    h_long, _ = _core(seq=8192, mbs=1)
    h_short, _ = _core(seq=4096, mbs=2)
    assert h_long / h_short == pytest.approx(4336 / 2288, rel=1e-12)
    a_long, _ = _core("dgx-a100-80gb", seq=8192, mbs=1)
    a_short, _ = _core("dgx-a100-80gb", seq=4096, mbs=2)
    assert a_long / a_short == pytest.approx(2.0, rel=1e-12)


def test_each_ring_hop_pays_the_overhead():
    """CP 2 at 8,192 tokens: each rank holds half the queries and runs two kernel calls of
    2,048 causal keys per query: time ∝ (s/cp)·cp·(k/cp + C) → (2,048 + 240)/(4,096 + 240) =
    0.52768 of the CP 1 core (0.5 without the overhead)."""
    one, _ = _core(cp=1)
    two, _ = _core(cp=2)
    assert two / one == pytest.approx(2288 / 4336, rel=1e-12)


def test_below_the_tables_shortest_length_the_factor_is_held():
    """1,024 tokens: k = 512 keys per query, the tables' shortest; over CP 4 each hop would visit
    128, but the factor stays 512/752, so the core is exactly a quarter of the CP 1 one."""
    one, b1 = _core(seq=1024, cp=1)
    four, b4 = _core(seq=1024, cp=4)
    assert not b1 and not b4
    assert four / one == pytest.approx(0.25, rel=1e-12)


def test_flash_core_is_bounded_by_the_materialised_one_and_says_so():
    """FlashAttention-2-class kernels on B200 (Hopper's factor, the exp knee of 128) at 4,096 tokens
    over CP 4, DeepSeek-V3's MLA (d_qk 192): the flash core would be slower over a step than the
    materialised scores (fwd + r bwd + the recomputed fwd against fwd + 2 bwd + the recomputed fwd, r
    = (2.5·192 + 128)/(192 + 128) = 1.9, timing.flash_bwd_over_fwd); it is costed as theirs, forward and
    backward (since session 37; before, its forward at 3/3.5 × theirs, r = 2.5), and the explain says so.
    (Llama 3 8B, d_h 128, was bounded here until session 37; with its backward at 1.75 × the forward it
    is no longer slower.)"""
    import planner
    flash, bounded = _core("dgx-b200", seq=4096, cp=4, kernel="flash2", model="deepseek-v3")
    mat, _ = _core("dgx-b200", seq=4096, cp=4, kernel="flash2", flash=False, model="deepseek-v3")
    assert bounded and flash == mat
    d = planner.load_preset("default").to_json_dict()
    d["model"] = "deepseek-v3"
    d["cluster"].update(system="dgx-b200", n_gpus=32)
    d["training"].update(seq_len=4096, micro_batch_size=1, global_batch_size=8)
    d["parallelism"].update(tp=1, pp=1, cp=4, dp=8, vpp=1, schedule="1f1b", sequence_parallel=False,
                            attention_kernel="flash2")
    e = planner.evaluate(d).explain["t_compute_s"]
    assert ("costed as the materialised scores' core, forward and backward (fwd + 2 bwd + the recomputed fwd): at its "
            "own rate the flash core's compute over a step (fwd + r bwd + the recomputed fwd") in e
    assert "attention core × 4 (backward 2 × its forward: costed as the materialised scores')" in e
    native, nb = _core("dgx-h100")
    assert not nb


def test_explain_prints_the_overhead_factor():
    import planner
    text = planner.evaluate(planner.load_preset("default")).explain["t_compute_s"]
    assert "per-query overhead × k/(k + 240) = 4,096/4,336 = 0.945, k = s/2 = 4,096" in text
    d = planner.load_preset("default").to_json_dict()
    d["cluster"]["system"] = "dgx-a100-80gb"
    assert "per-query overhead" not in planner.evaluate(d).explain["t_compute_s"]


def test_the_bound_acts_only_on_the_rows_that_pay_the_overhead():
    """Review 20d: an A100 row (no overhead) was bounded only when a Hopper row shared its batch.
    An inline A100 with a very slow exp unit (knee 2,000) has a flash core above the materialised
    one; alone or beside the default preset it keeps it, and its step is the same either way."""
    import numpy as np

    import planner
    d = planner.load_preset("llama31-8b-torchtitan-h100-8").to_json_dict()
    acc = planner.catalog.accelerators()["a100-sxm-80gb"].model_dump(mode="json")
    acc["attention_dhead_knee"] = 2000.0
    acc["sources"]["attention_dhead_knee"] = "test: a slow exp unit"
    d["cluster"].update(system="dgx-a100-80gb", accelerator=acc)
    d["cluster"].pop("overrides", None)
    d["training"]["seq_len"] = 2048
    from planner import batch, model_stats, timing
    b = batch.from_scenarios([planner.Scenario.model_validate(d)])
    b.update(model_stats.stats(b))
    T = timing._terms(b)
    assert not bool(np.any(T["_core_bounded"]))
    alone = planner.evaluate(d).results["step_time_s"]
    both = planner.evaluate_many([d, planner.load_preset("default")])
    assert float(both["step_time_s"].iloc[0]) == pytest.approx(alone, rel=1e-12)


def test_set_a_json_value_naming_a_key_twice_is_refused(capsys):
    assert cli_main(["evaluate", "--preset", "default", "--set",
                     'checkpoint.tiers=[{"tier": "pfs", "tier": "host_memory"}]']) == 2
    err = capsys.readouterr().err
    assert "--set checkpoint.tiers: key 'tier' given twice in one object (\"pfs\", then \"host_memory\"); give it once" in err
