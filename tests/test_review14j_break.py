"""Review 14j: a demanding user's attempts to break this session's sweep headroom options, the
sweep's own-mode defaults, the Monte Carlo goodput mean, link warnings, the HF import changes
and the export changes.

Expected values come from definitions and hand arithmetic (stated beside each assertion), not
from the code's own output.

Browser-only checks (done by hand with Debian's Chromium through Playwright, not kept as tests):
the Explore page's five controls ("Rank by", "Search space", "Top K", "HBM left free, %",
"Colour by") at 1,280 and 900 px wide; screenshots under /tmp/r14j/ (see the report)."""

from __future__ import annotations

import pytest

import planner
from planner.sweep import no_split_reason

from test_app import EXPLORE, _clear_caches, _run  # noqa: F401
from test_input_ranges import _cli


# ---- 1. the no-split reason under min_headroom / memory_rule --------------------------------

def test_sweep_headroom_that_removes_every_split_says_so_not_out_of_memory():
    """Llama 3 8B on 64 H100 fits in many ways (the preset itself uses 38.6 of 79.6 GiB); no split
    can leave 99 % of usable HBM free (the bf16 weights alone, 16 GB over at most 64 GPUs... the
    activations and ZeRO states of one rank exceed 0.8 GiB). Before the fix the reason was "every
    valid split runs out of memory" (with a prefix), which is false."""
    s = planner.load_preset("llama3-8b-h100-64")
    df = planner.sweep(s, top=3, min_headroom=0.99)
    assert len(df) == 0
    why = df.attrs["reason"]
    assert "runs out of memory" not in why, why
    assert why.startswith("no split meets min_headroom = 0.99"), why
    assert "lower min_headroom" in why and "--min-headroom" in why, why
    # the splits that fit without the headroom are counted: the same space without it
    n_fit = planner.sweep(s, top=1).attrs["n_feasible"]
    assert f"{n_fit:,} valid splits fit in memory without it" in why, why


def test_sweep_headroom_reason_counts_on_the_swept_gpu_count():
    """sweep(gpus=128): the splits that fit without the headroom are those of 128 GPUs, not of the
    scenario's own 64."""
    s = planner.load_preset("llama3-8b-h100-64")
    why = planner.sweep(s, gpus=128, top=3, min_headroom=0.99).attrs["reason"]
    n128 = planner.sweep(s, gpus=128, top=1).attrs["n_feasible"]
    n64 = planner.sweep(s, top=1).attrs["n_feasible"]
    assert n128 != n64
    assert f"{n128:,} valid splits fit" in why, why


def test_sweep_conservative_and_headroom_both_named_with_their_fixes():
    s = planner.load_preset("llama3-8b-h100-64")
    why = planner.sweep(s, top=3, min_headroom=0.99, memory_rule="conservative").attrs["reason"]
    assert "min_headroom = 0.99" in why and "memory_rule = 'conservative'" in why, why
    assert "without them" in why and "--memory-rule fits" in why and "--min-headroom" in why, why


def test_cli_headroom_no_split_message_names_the_option_not_oom():
    """Before the fix: "every valid split runs out of memory ... With this search space, 128 GPUs
    (cluster.n_gpus, doubling from 64) give 37,022 splits that fit", both counted without the
    headroom."""
    rc, out, err = _cli("sweep", "--preset", "llama3-8b-h100-64", "--top", "3", "--min-headroom", "0.99")
    assert rc == 1
    assert "runs out of memory" not in err and "doubling" not in err, err
    assert "no split meets min_headroom = 0.99" in err and "--min-headroom" in err, err


def test_fewest_gpus_hint_applies_the_headroom():
    """Llama 3.1 405B on 16 H100 runs out of memory whatever the split; the hint "N GPUs give k
    splits that fit" must count splits that also keep the headroom: every split it promises
    leaves 30 % free (checked by sweeping that count with the headroom)."""
    s = planner.load_preset("llama3-405b-h100-16k")
    why = no_split_reason(s, 1, gpus=16, min_headroom=0.3)
    assert why.startswith("every valid split runs out of memory"), why
    assert "min_headroom = 0.3" in why, why
    import re
    m = re.search(r"([\d,]+) GPUs \(cluster\.n_gpus, doubling from 16\) give ([\d,]+) splits", why)
    assert m, why
    g, k = (int(x.replace(",", "")) for x in m.groups())
    assert planner.sweep(s, gpus=g, top=1, min_headroom=0.3).attrs["n_feasible"] == k
    assert planner.sweep(s, gpus=g // 2, top=1, min_headroom=0.3).attrs["n_feasible"] == 0


def test_explore_headroom_empty_table_says_lower_the_box():
    """Llama 3.1 405B on 128 H100, focused space: 9 splits fit (the page's own count without the
    headroom), none leaves half the HBM free. Before the fix: "No split of this model fits this
    cluster: every valid split runs out of memory ..." with the headroom named only at the end."""
    at = _run(EXPLORE, {"p": "llama3-405b-h100-16k", "n": "128", "ex_head": "50", "ex_top": "5"})
    text = " ".join(w.value for w in at.warning)
    assert "runs out of memory" not in text and "does not fit" not in text.lower(), text
    assert "no split meets min_headroom = 0.5" in text and "HBM left free" in text, text


# ---- 3. the Monte Carlo summary's goodput mean -----------------------------------------------

def test_one_trial_summary_mean_equals_its_percentiles():
    """With one trial every statistic is that trial's value: mean = P10 = P50 = P90 exactly
    (before the fix the goodput mean was 1 / (1 / g), 0.9750138071025605 beside P50
    0.9750138071025604 for the default preset, seed 0)."""
    from planner.simulate import summarize

    df = planner.simulate(planner.load_preset("default"), n_trials=1, seed=0)
    s = summarize(df).set_index("metric")
    g = float(df["goodput"].iloc[0])
    assert s.loc["goodput", "mean"] == g == s.loc["goodput", "p50"]


def test_summary_goodput_mean_is_work_over_mean_time_by_hand():
    """Runs of equal work W = 10 days: T = 10, 20, 40 days; pooled goodput = W / mean(T) =
    10 / (70 / 3) = 3 / 7 = 0.428571..., the plain mean of W/T = (1 + 0.5 + 0.25) / 3 = 0.5833."""
    import pandas as pd
    from planner.simulate import summarize

    df = pd.DataFrame({"time_to_train_days": [10.0, 20.0, 40.0], "goodput": [1.0, 0.5, 0.25]})
    s = summarize(df).set_index("metric")
    assert s.loc["goodput", "mean"] == pytest.approx(3 / 7, rel=1e-15)


def test_cli_simulate_table_says_goodput_mean_is_pooled():
    rc, out, err = _cli("simulate", "--preset", "default", "--trials", "3")
    assert rc == 0, err
    assert "goodput's mean is pooled" in out, out


# ---- 4. link warnings, Compare's pasted text, the import's file name ---------------------------

def test_ck_with_no_valid_tier_says_the_base_tiers_are_kept():
    """ck=foo:1:1: the only tier is unknown, so the base preset's tiers stay; the warning said only
    "unknown storage tier 'foo'" before."""
    from planner import share

    sj, warns = share.params_to_scenario({"p": "default", "ck": "foo:1:1"})
    assert len(warns) == 1 and "unknown storage tier 'foo'" in warns[0], warns
    assert warns[0].endswith("kept the base value"), warns
    base, _ = share.params_to_scenario({"p": "default"})
    assert sj["checkpoint"]["tiers"] == base["checkpoint"]["tiers"]
    # one tier unknown beside a valid one: that one is dropped, nothing "kept"
    _, warns = share.params_to_scenario({"p": "default", "ck": "foo:1,pfs:30"})
    assert not any("kept the base value" in w for w in warns), warns


def test_ck_interval_refusal_groups_its_digits():
    """CK interval bounds 0.6 s to 6·10⁸ s = 10⁷ minutes: written 600,000,000 and 10,000,000, as the
    other link ranges, not 6e+08 / 1e7."""
    from planner import share

    _, warns = share.params_to_scenario({"p": "default", "ck": "pfs:xx"})
    assert any("allowed 0.6 to 600,000,000 seconds (the Plan page's 0.01 to 10,000,000 minutes)" in w
               for w in warns), warns


@pytest.mark.parametrize("text", ["hello=world", "https://www.google.com/search?q=llama&hl=en"])
def test_compare_pasted_key_value_text_without_share_keys_is_not_a_link(text):
    from test_app import COMPARE

    at = _run(COMPARE, {"c_n": "2", "c_src1": "default", "c_src2": "link", "2.x": "1"})
    at.text_input(key="c_link1").set_value(text).run()
    warns = [w.value for w in at.warning]
    assert any("is not a share link" in w and "showing the default scenario" in w for w in warns), warns
    assert not any("unknown link parameter" in w for w in warns), warns


def test_compare_real_link_with_one_stray_key_is_still_read():
    from test_app import COMPARE

    at = _run(COMPARE, {"c_n": "2", "c_src1": "default", "c_src2": "link", "2.x": "1"})
    at.text_input(key="c_link1").set_value("?p=default&tp=abc&zzz=1").run()
    warns = [w.value for w in at.warning]
    assert not any("is not a share link" in w for w in warns), warns
    assert any("'zzz': unknown link parameter ignored" in w for w in warns), warns


@pytest.mark.parametrize("payload", [b'{"model_type": "llama"}', b'{"foo": 1}'])
def test_scenario_import_long_file_name_is_cut_in_every_message(payload):
    """A 255-character file name (the longest Linux allows) was quoted whole by three of the
    import's five messages and cut at 80 characters by the others."""
    from test_app import PLAN
    from test_app_review_fixes import _upload

    at = _run(PLAN, {"p": "default"})
    _upload(at, "Import scenario JSON", "n" * 250 + ".json", payload)
    err = " ".join(e.value for e in at.sidebar.error)
    assert "n" * 79 + "…" in err and "n" * 81 not in err, err
    assert "current scenario is kept" in err, err


# ---- 2. the expert all-to-all overlap of a swept row opened in Plan ---------------------------

def test_explore_row_opened_in_plan_has_the_sweeps_overlap_rule():
    """Mixtral 8x7B with ep_comm_overlap on: the sweep turns the overlap off on a plain 1F1B
    pipeline (PP > 1: no second micro-batch beside the all-to-all) and keeps it on the interleaved
    schedule. The Explore page's "Open in Plan" (row_scenario) kept the sidebar's overlap on every
    row, so the Plan page showed another step time than the table (2.98 s against 3.08 s)."""
    from app_pages.explore import row_scenario

    sj = planner.load_preset("mixtral-8x7b-h100-64").to_json_dict()
    sj["parallelism"]["ep_comm_overlap"] = True
    s = planner.Scenario.model_validate(sj)
    df = planner.sweep(s, top=None, tp=(1,), ep=(8,), cp=(1,), zero_stages=(1,), recompute=("selective",),
                       offload=("none",), schedules=("1f1b", "interleaved"))
    picked = {}
    for _, row in df.iterrows():
        key = (row["schedule"], int(row["pp"]) > 1)
        picked.setdefault(key, row)
    assert ("1f1b", True) in picked and ("interleaved", True) in picked
    for (sched, _), row in picked.items():
        opened = row_scenario(sj, row.to_dict())
        want_overlap = sched == "interleaved" or int(row["pp"]) == 1
        assert opened["parallelism"]["ep_comm_overlap"] is want_overlap, (sched, row["pp"])
        r = planner.evaluate(opened).results
        assert r["step_time_s"] == pytest.approx(float(row["step_time_s"]), rel=1e-12), (sched, row["pp"])


def test_engine_applies_the_sweeps_ep_overlap_rule_with_a_note():
    """planner.evaluate and the sweep agree (review 14j): ep_comm_overlap on a plain 1F1B with
    pp = 4 runs one micro-batch at a time, so nothing hides the all-to-all — the step equals the
    step without the overlap and a note says why; on the interleaved schedule without full
    recompute it hides part of it (a shorter step, no note)."""
    import planner as _pl

    s = _pl.load_preset("mixtral-8x7b-h100-64").to_json_dict()
    s["parallelism"].update(pp=4, dp=None, ep=8, schedule="1f1b", vpp=1, layer_split="uneven",
                            recompute="selective", ep_comm_overlap=True)
    on = _pl.evaluate(s)
    s["parallelism"]["ep_comm_overlap"] = False
    off = _pl.evaluate(s)
    assert on.results["step_time_s"] == off.results["step_time_s"]
    assert any(n.startswith("parallelism.ep_comm_overlap has no effect here") and "1f1b" in n for n in on.notes)
    s["parallelism"].update(schedule="interleaved", vpp=2, ep_comm_overlap=True)
    on = _pl.evaluate(s)
    s["parallelism"]["ep_comm_overlap"] = False
    off = _pl.evaluate(s)
    assert on.results["step_time_s"] < off.results["step_time_s"]
    assert not any("ep_comm_overlap has no effect" in n for n in on.notes)
