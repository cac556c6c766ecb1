"""Review 17b (a new user on a fresh clone, README only, then trying to break the app): regression
tests for what that review found. Expected values are worked out by hand in each test."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest
from test_app import COMPARE, EXPLORE, TIMEOUT, VALIDATE, _clear_caches  # noqa: F401  (the pages' AppTest cache fixture)

from planner import charts, cli, share


# ------------------------------------------------------------- Explore: short runs were all "0.0 days"

def test_days_column_picks_a_unit_by_size():
    # 0.0171 days = 0.0171 × 1,440 = 24.6 min: below one hour, so minutes (one decimal)
    assert charts.days_column([0.0171, 0.0172]) == ("min", 1440.0, 1)
    # 207.9 days (the default preset): days, as before
    assert charts.days_column([207.9, 210.0]) == ("days", 1.0, 1)
    # 0.5 days = 12 h: hours
    assert charts.days_column([0.5]) == ("h", 24.0, 1)
    # 1,500 days: years, as the Plan headline (1 year = 365.25 days)
    unit, scale, dec = charts.days_column([1500.0])
    assert unit == "years" and scale == pytest.approx(1 / 365.25) and dec == 1


def test_cost_column_picks_a_unit_by_size():
    assert charts.cost_column([1.1e7, 1.2e7]) == ("M USD", 1e-6, 2)   # $11 M
    assert charts.cost_column([5e5]) == ("k USD", 1e-3, 1)            # $500,000 = 500.0 k USD
    assert charts.cost_column([7.09, 7.13]) == ("USD", 1.0, 2)        # $7.09
    # $0.0034: -log10(0.0034) = 2.47 -> 3, + 2 = 5 decimals: 0.00340 (three significant digits)
    assert charts.cost_column([0.0034]) == ("USD", 1.0, 5)


def test_explore_table_of_a_short_run_is_readable():
    """10⁸ tokens of Llama 3 8B on 8 H100: every row read 0.0 days and 0.00 M USD (review 17b). A run of
    about 25 minutes (10⁸ tokens at ~0.07 M tokens/s) costing about $7 (8 GPUs × 0.4 h × $2.155):
    the table shows minutes and USD, each value the engine's days × 1,440 and USD × 1."""
    at = AppTest.from_file(EXPLORE, default_timeout=TIMEOUT)
    at.query_params.update({"p": "llama3-8b-h100-64", "tok": "1e8", "n": "8", "cp": "1"})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    show = at.dataframe[0].value
    cols = list(show.columns)
    assert "min" in cols and "USD" in cols and "days" not in cols and "M USD" not in cols, cols
    assert cols.index("min") == cols.index("sched.") + 1  # still the ranking column, first of the results
    rows = at.session_state["_ex_top_rows"]
    assert show["min"].iloc[0] == pytest.approx(rows[0]["time_to_train_days"] * 1440.0, rel=1e-12)
    assert show["USD"].iloc[0] == pytest.approx(rows[0]["cost_usd"], rel=1e-12)
    assert 10.0 < show["min"].iloc[0] < 60.0 and 1.0 < show["USD"].iloc[0] < 20.0
    assert any("ranked on **min**" in c.value for c in at.caption)


def test_pareto_chart_of_a_short_run_names_its_units():
    import pandas as pd
    df = pd.DataFrame({"time_to_train_days": [0.0171, 0.0180], "cost_usd": [7.09, 7.46], "tp": [1, 2],
                       "pareto_time_cost": [True, False]})
    spec = charts.pareto_cost_days_chart(df).to_dict()
    enc = spec["layer"][0]["encoding"]
    assert enc["x"]["title"] == "time to train (min)" and enc["y"]["title"] == "cost (USD)"
    data = next(iter(spec["datasets"].values()))
    assert data[0]["t_shown"] == pytest.approx(0.0171 * 1440) and data[0]["cost_shown"] == pytest.approx(7.09)


# ------------------------------------------------------------- planner link --base-url

@pytest.mark.parametrize("url", ["localhost:8871", "ftp://host/", "", "http://", "http://h:abc/", "http://h:70000/",
                                 "http://h:0/"])
def test_link_refuses_a_base_url_a_browser_cannot_open(url, capsys):
    """'localhost:8871' (no scheme) was written as 'localhost:8871?p=...': no terminal makes it a link."""
    rc = cli.main(["link", "--preset", "default", "--base-url", url])
    out, err = capsys.readouterr()
    assert rc == 2 and out == ""
    assert err.startswith(f"planner: --base-url {url!r}: expected the dashboard's address, http:// or https://")


# an empty path is written "/" (RFC 3986 §6.2.3: for http an empty path is equivalent to "/", the form a
# browser shows; review 42a: "http://host:9000?p=" read as a malformed address)
@pytest.mark.parametrize("url, head", [("http://localhost:8871", "http://localhost:8871/?p=default&"),
                                       ("https://plan.example.org/app/", "https://plan.example.org/app/?p=default&"),
                                       ("http://[::1]:8501/", "http://[::1]:8501/?p=default&")])
def test_link_takes_a_browser_address(url, head, capsys):
    assert cli.main(["link", "--preset", "default", "--base-url", url]) == 0
    assert capsys.readouterr().out.startswith(head)


# ------------------------------------------------------------- planner simulate: a multi-hour run said nothing

def test_simulate_says_first_how_long_a_huge_monte_carlo_takes():
    """1,000,000 trials of the default preset at 10¹⁶ tokens ran for hours without a word. By hand:
    λ = 0.02067 /h (evaluate's failure_rate_per_h) over 10¹⁶ / 1.5·10¹³ × 209.09 days = 139,393
    days = 3.345·10⁶ h gives about 69,148 failures per run; × 10⁶ trials = 6.9·10¹⁰ simulated
    failures, at 10⁷ a second 6,915 s = 1.9 h; 10⁸ / 69,148 = 1,446 trials stay within 10 s
    (206.98 days, 68,450 failures and 1,461 trials before session 37's flash backward and refit;
    207.9 days, 68,750 failures and 1,454 trials before review 20's refit). cmd_simulate writes
    this note on stderr before it calls planner.simulate. Since review 45a trials × failures above
    10¹⁰ are refused instead (10¹⁰ / 69,148 = 144,617 trials at most), so the note is checked at
    100,000 trials: 6.9·10⁹ failures, 691 s ≈ 12 min."""
    import inspect

    import planner
    s = planner.load_preset("default").model_copy(deep=True)
    s.training.tokens_total = 1e16
    note = cli.simulate_time_note(s, 100_000)
    assert note is not None and note.startswith("100,000 trials × about 69,1"), note
    assert "6.9e+09 simulated failures: roughly 12 min" in note and "--trials 1,44" in note
    with pytest.raises(cli.UsageError, match="--trials at most 144,6"):
        cli.simulate_time_note(s, 1_000_000)
    src = inspect.getsource(cli.cmd_simulate)
    assert src.index("simulate_time_note(") < src.index("df = simulate(")


def test_simulate_of_the_default_says_nothing_extra(capsys):
    """10,000 trials × about 103 failures (206.98 days × 24 h × 0.02067 /h) = 10⁶ rounds: no note."""
    assert cli.main(["simulate", "--preset", "default", "--trials", "10000"]) == 0
    assert "simulated failures" not in capsys.readouterr().err


# ------------------------------------------------------------- Compare / Validate: unknown keys were dropped silently

def _page_warnings(page: str, params: dict) -> list[str]:
    at = AppTest.from_file(page, default_timeout=TIMEOUT)
    at.query_params.update(params)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return [w.value for w in at.warning]


def test_compare_says_which_keys_it_does_not_read():
    warns = _page_warnings(COMPARE, {"c_n": "2", "zzz": "1", "tp": "4", "c_src5": "default", "pl_mct": "5"})
    assert "Link: 'zzz': unknown link parameter ignored" in warns, warns
    assert any(w.startswith("Link: 'tp': a scenario key without a slot prefix") and "1.tp, 2.tp" in w
               for w in warns), warns
    assert any(w.startswith("Link: 'c_src5': not a key of the Compare page (allowed: c_n, c_src1") for w in warns)
    assert not any("pl_mct" in w for w in warns)  # the Plan page's own key: passed over, as Plan passes ex_*


def test_validate_says_which_keys_it_does_not_read():
    warns = _page_warnings(VALIDATE, {"zzz": "1", "p": "default", "v_x": "1", "c_n": "2"})
    assert "Link: 'zzz': unknown link parameter ignored" in warns, warns
    assert any(w.startswith("Link: 'p': a scenario key; the Validate page shows no scenario") for w in warns)
    assert any(w.startswith("Link: 'v_x': not a key of the Validate page (allowed: v_set, v_metric, v_group, v_run)")
               for w in warns)
    assert not any("c_n" in w for w in warns)


def test_a_page_link_with_only_its_own_keys_has_no_such_warning():
    assert share.foreign_page_keys({"c_n": "3", "c_src1": "default", "2.tp": "4", "3.m": "x"}, "compare") == []
    assert share.foreign_page_keys({"v_set": "calibration", "v_metric": "mfu", "v_group": ["a", "b"]},
                                   "validate") == []


# ------------------------------------------------------------- Compare chart: short runs drawn as 0.0000x days

def test_compare_chart_of_short_runs_names_minutes_and_dollars():
    """Two 10⁸-token runs: 0.0171 days = 24.6 min and 0.0200 days = 28.8 min; $7.10 and $8.00."""
    res = {"1": {"time_to_train_days": 0.0171, "cost_usd": 7.10}, "2": {"time_to_train_days": 0.0200, "cost_usd": 8.0}}
    df = charts.compare_frame(res)
    got = {(r.scenario, r.metric): r.value for r in df.itertuples()}
    assert got[("1", "time to train (min)")] == pytest.approx(24.624)
    assert got[("2", "time to train (min)")] == pytest.approx(28.8)
    assert got[("2", "cost (USD)")] == pytest.approx(8.0)
    sort = charts.compare_chart(res).to_dict()["facet"]["sort"]
    assert "time to train (min)" in sort and "cost (USD)" in sort
    # a pre-training run keeps the usual units: 207.9 days, $11.01 M
    big = charts.compare_frame({"1": {"time_to_train_days": 207.9, "cost_usd": 1.101e7}})
    assert set(big["metric"]) == {"time to train (days)", "cost (M USD)"}


# ------------------------------------------------------------- a link of 200 unknown keys: 200 warning boxes

@pytest.mark.parametrize("page", ["plan", "explore", "validate"])
def test_a_link_of_many_unknown_keys_gives_at_most_21_boxes(page):
    """200 unknown keys: the first 20 warnings, then one box counting the other 180 (200 − 20)."""
    import test_app
    at = AppTest.from_file(getattr(test_app, page.upper()), default_timeout=TIMEOUT)
    at.query_params.update({f"k{i}": "1" for i in range(200)})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    warns = [w.value for w in at.warning if w.value.startswith("Link:")]
    assert len(warns) == 21, len(warns)
    assert warns[0] == "Link: 'k0': unknown link parameter ignored"
    assert warns[-1].startswith("Link: … and 180 more problems in the link, not listed")


def test_compare_caps_a_slots_warnings_too():
    at = AppTest.from_file(COMPARE, default_timeout=TIMEOUT)
    at.query_params.update({"c_n": "2", "c_src1": "default", "c_src2": "link", "2.p": "default",
                            **{f"2.k{i}": "1" for i in range(50)}})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    warns = [w.value for w in at.warning if w.value.startswith("Scenario 2:")]
    assert len(warns) == 21 and warns[-1].startswith("Scenario 2: … and 30 more problems in the link"), warns[-2:]


def test_capped_warnings_keeps_a_short_list_whole():
    assert share.capped_warnings(["a", "b"]) == ["a", "b"]
    assert share.capped_warnings([str(i) for i in range(20)]) == [str(i) for i in range(20)]
    assert share.capped_warnings([str(i) for i in range(21)])[-1].startswith("… and 1 more problem in the link")


def test_cli_sweep_table_of_a_short_run_reads_in_minutes_and_dollars():
    """planner sweep's table for the same 10⁸-token run read "days 0.01522" and "cost_MUSD 6.299e-06";
    now min and cost_USD: the engine's days × 1,440 and USD × 1 (a 100-day $10 M run keeps days and M USD)."""
    import pandas as pd
    df = pd.DataFrame({"time_to_train_days": [0.01522, 0.0160], "cost_usd": [6.299, 6.62]})
    t = cli.sweep_table(df)
    assert list(t.columns) == ["min", "cost_USD"]
    assert t["min"].iloc[0] == pytest.approx(0.01522 * 1440) and t["cost_USD"].iloc[0] == pytest.approx(6.299)
    big = cli.sweep_table(pd.DataFrame({"time_to_train_days": [100.0], "cost_usd": [1e7]}))
    assert list(big.columns) == ["days", "cost_MUSD"] and big["cost_MUSD"].iloc[0] == pytest.approx(10.0)
