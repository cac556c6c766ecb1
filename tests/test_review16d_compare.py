"""Review 16d: the Compare page (AppTest). Found by trying to break it with four scenarios at once
(a preset, one that does not fit in HBM, one whose analytic goodput is 0, one that misses host
memory, MoE beside dense) and by checking every number against ``planner evaluate --link`` (the CLI
is the reference: another reader of the same link keys, and the engine).

Defects fixed in app_pages/compare.py:
* a slot that does not fit had its goodput unmarked although the error above the table says "the
  step time, throughput, goodput, days, cost and energy in its column (marked ✗)";
* a slot that fits in HBM but not in host memory was drawn in the chart as "memory: fits" while the
  caption under the chart listed it among the pale bars;
* a metric the engine gives as infinite (time to train and cost of a goodput-0 run) had no bar and no
  word, so an empty "cost" panel read as the cheapest run;
* "Scenarios" 4 → 2 → 4 lost slots 3 and 4 (Streamlit drops the state of widgets a run does not
  draw): they came back as empty link slots showing the default scenario;
* the caption said "durations in s, min or h" above a time to train in days and years.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlencode

import pandas as pd
import pytest
from shown import COMPARE_ROWS, UNITS_SI, parse_shown
from test_app import COMPARE, _clear_caches, _run  # noqa: F401  (the pages' AppTest helper and cache fixture)

ROOT = Path(__file__).resolve().parents[1]
GIB = 2.0**30

#: Llama 3 70B on 8 H100 at TP 8, PP 1: 178.8 GiB per GPU, more than the 79.6 GiB usable (test_app.NO_FIT).
HBM_NO_FIT = {"p": "default", "n": "8", "tp": "8", "pp": "1", "vpp": "1", "sch": "1f1b"}
#: GPT-3 175B on one DGX A100 with ZeRO-3 and CPU offload of the optimizer, weights and gradients: fits in
#: HBM, needs 2,604 GiB of host memory per node against the node's 2,048 GiB (test_app_review_fixes.HOST).
HOST_NO_FIT = {"p": "gpt3-175b-a100-1024", "n": "8", "tp": "8", "pp": "1", "vpp": "1", "sch": "1f1b", "z": "3",
               "off": "cpu", "offw": "1", "offg": "1", "gbs": "64"}
#: Llama 3.1 405B on 16,384 H100 with no checkpoint tier and 100× the failure rates: goodput 0 (test_app.NEVER).
NEVER = {"p": "llama3-405b-h100-16k", "rs": "100", "ck": "none"}


def _slots(*slots) -> dict:
    """Compare link params: each slot a preset id (str) or link keys (dict)."""
    q = {"c_n": str(len(slots))}
    for i, s in enumerate(slots, 1):
        if isinstance(s, str):
            q[f"c_src{i}"] = s
        else:
            q[f"c_src{i}"] = "link"
            q.update({f"{i}.{k}": v for k, v in s.items()})
    return q


def _col(t: pd.DataFrame, i: int) -> str:
    (c,) = [c for c in t.columns if c.startswith(f"{i}: ")]
    return c


def _chart(at) -> tuple[dict, pd.DataFrame]:
    from streamlit import dataframe_util

    chart = at.get("vega_lite_chart")[0]
    data = pd.concat([dataframe_util.convert_arrow_bytes_to_pandas_df(d.data.data) for d in chart.proto.datasets])
    return json.loads(chart.proto.spec), data


def _captions(at) -> str:
    return " ".join(c.value for c in at.caption)


# --- every number against the CLI ------------------------------------------------------------

_SCALE, _ROWS = UNITS_SI, COMPARE_ROWS  # tests/shown.py


def _parse(cell: str) -> tuple[float, float]:
    """(value in SI, half a unit of the last digit shown) of a shown number (tests/shown.py)."""
    return parse_shown(cell, _SCALE)


def _cli(link_keys: dict) -> dict:
    """``planner evaluate --link`` of one slot's keys as a Plan page link (the CLI refuses Compare links)."""
    url = "http://localhost:8501/?" + urlencode(link_keys, doseq=True)
    r = subprocess.run([sys.executable, "-m", "planner", "evaluate", "--link", url, "--format", "json"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["results"]


def test_every_number_of_four_slots_is_the_clis_for_the_slots_own_link():
    """Dense beside MoE, one that does not fit in HBM, one with goodput 0: each cell is the CLI's value
    for the keys the page wrote for that slot, within half a unit of the last digit shown; a value the
    CLI gives as infinite is "—"; fits / host fits agree."""
    at = _run(COMPARE, _slots("default", "mixtral-8x7b-h100-64", HBM_NO_FIT, NEVER))
    t, qp = at.dataframe[0].value, dict(at.query_params)
    for i in range(1, 5):
        keys = {k[len(f"{i}."):]: v for k, v in qp.items() if k.startswith(f"{i}.")}
        res, col = _cli(keys), _col(t, i)
        for row, (key, si) in _ROWS.items():
            v = res[key]
            if v == "inf":
                assert t.loc[row, col] == "—", (i, row, t.loc[row, col])
                continue
            shown, half = _parse(t.loc[row, col])
            assert math.isclose(shown, float(v) * si, abs_tol=half * 1.0001), (i, row, t.loc[row, col], v)
        assert t.loc["fits in HBM", col].startswith("yes" if res["fits"] else "no ✗"), (i, t.loc["fits in HBM", col])
        assert t.loc["fits in host memory", col].startswith("yes" if res["host_fits"] else "no ✗")
    # the premises: slot 3 does not fit, slot 4 never finishes, slot 2 is the MoE one (8 experts, EP 8)
    assert _col(t, 3).startswith("3: ✗ no fit") and t.loc["time to train", _col(t, 4)] == "—"
    assert qp["2.ep"] == "8"


# --- defects ---------------------------------------------------------------------------------

@pytest.mark.parametrize("slot", [HBM_NO_FIT, HOST_NO_FIT], ids=["hbm", "host"])
def test_goodput_of_a_slot_that_does_not_fit_is_marked_as_the_error_says(slot):
    at = _run(COMPARE, _slots("default", slot))
    t = at.dataframe[0].value
    c1, c2 = _col(t, 1), _col(t, 2)
    err = " ".join(e.value for e in at.error if e.value.startswith("Scenario 2"))
    assert "goodput" in err and "(marked ✗)" in err  # what the page promises
    assert t.loc["goodput", c2].endswith(" ✗") and not t.loc["goodput", c1].endswith("✗")
    for row in ("step time", "MFU", "throughput", "time to train", "GPU-hours", "cost to train", "energy"):
        assert t.loc[row, c2].endswith(" ✗"), row
    assert "its step time, MFU, throughput, goodput, time to train, GPU-hours, cost and energy assume that it fits" \
        in _captions(at)


def test_a_slot_that_misses_host_memory_is_pale_in_the_chart_and_named_in_its_legend():
    at = _run(COMPARE, _slots("default", HBM_NO_FIT, HOST_NO_FIT))
    spec, data = _chart(at)
    t = at.dataframe[0].value
    c1, c2, c3 = _col(t, 1), _col(t, 2), _col(t, 3)
    assert c3.startswith("3: ✗ host memory")
    assert set(data[data["scenario"] == c1]["memory"]) == {"fits"}
    assert set(data[data["scenario"] == c2]["memory"]) == {"does not fit in HBM"}
    assert set(data[data["scenario"] == c3]["memory"]) == {"does not fit in host memory"}
    enc = spec["spec"]["encoding"]
    dom = ["fits", "does not fit in HBM", "does not fit in host memory"]
    style = {"opacity": [1.0, 0.3, 0.3], "stroke": ["transparent", "#d62728", "#d62728"],
             "strokeDash": [[1, 0], [4, 2], [4, 2]]}  # the host slot drawn as the HBM one: pale, dashed red
    for ch, rng in style.items():
        assert enc[ch]["field"] == "memory" and enc[ch]["scale"]["domain"] == dom and enc[ch]["scale"]["range"] == rng
        assert enc[ch]["legend"]["labelLimit"] >= 240  # "does not fit in host memory" whole (Vega cuts at 160 px)
    cap = _captions(at)
    assert ("Pale bars with a dashed red outline: does not fit in HBM (scenario 2) or does not fit in host "
            "memory (scenario 3)") in cap


def test_a_slot_with_only_host_memory_missing_gets_no_hbm_claim():
    at = _run(COMPARE, _slots("default", HOST_NO_FIT))
    cap = _captions(at)
    assert "Pale bars with a dashed red outline: does not fit in host memory (scenario 2)" in cap
    assert "does not fit in HBM (scenario" not in cap


def test_the_chart_says_which_bars_are_missing_and_why():
    """Goodput 0: time to train and cost are infinite, so their panels have no bar for the slot; the
    caption says so (an empty bar would read as zero: the cheapest run)."""
    at = _run(COMPARE, _slots("default", NEVER))
    _, data = _chart(at)
    c2 = _col(at.dataframe[0].value, 2)
    assert set(data[data["scenario"] == c2]["metric"]) == {
        "peak memory per GPU (GiB)", "step time (s)", "MFU (%)", "throughput (M tokens/s)", "goodput (%)"}
    assert "No bar for scenario 2: time to train, cost: the engine gives no finite value (— in the table); " \
           "not zero." in _captions(at)
    at2 = _run(COMPARE, _slots("default", "mixtral-8x7b-h100-64"))
    assert "No bar for" not in _captions(at2)


def test_fewer_scenarios_and_back_keeps_slots_3_and_4():
    at = _run(COMPARE, _slots("default", {"p": "default", "n": "512"}, "mixtral-8x7b-h100-64",
                              {"p": "deepseek-v3-h800-2048", "price": "3.5"}))
    before = at.dataframe[0].value
    assert list(before.columns)[2].startswith("3: mixtral-8x7b · 64 × dgx-h100")
    at.number_input(key="c_n").set_value(2).run()
    assert at.dataframe[0].value.shape[1] == 2 and "c_src3" not in at.query_params
    at.number_input(key="c_n").set_value(4).run()
    assert not at.exception
    assert at.selectbox(key="c_src2").value == "mixtral-8x7b-h100-64"
    assert at.query_params["4.price"] == "3.5" and at.query_params["c_src3"] == "mixtral-8x7b-h100-64"
    assert at.dataframe[0].value.equals(before)


def test_the_caption_names_the_unit_of_a_time_to_train_in_days_or_years():
    at = _run(COMPARE, _slots("default", HBM_NO_FIT))
    t = at.dataframe[0].value
    # 1.5e13 tokens at 7,464 tok/s (goodput 0.997): 23,330 days, shown in years
    assert t.loc["time to train", _col(t, 2)].endswith("years ✗")
    assert "time to train in days (years above 1,000 days)" in _captions(at)


def test_the_chart_tooltip_shows_values_in_plain_notation():
    """d3's ".3g" wrote a time to train of 23,330 days as "2.33e+4" and 178.8 GiB as "179"; ",.4~r" gives
    four significant digits without an exponent (d3-format: "r" is decimal notation rounded to
    significant digits, "~" trims trailing zeros): "23,330", "178.8"."""
    at = _run(COMPARE, _slots("default", HBM_NO_FIT))
    spec, _ = _chart(at)
    tips = {t["field"]: t for t in spec["spec"]["encoding"]["tooltip"]}
    assert set(tips) == {"scenario", "metric", "value", "memory"}
    assert tips["value"]["format"] == ",.4~r"


def test_no_slot_that_can_be_evaluated_says_what_to_do(monkeypatch):
    """Every slot refused (here: the validator made to refuse everything): the errors, then one line
    saying there is nothing to compare and how to get something; no table, no chart."""
    from app_pages import _common

    monkeypatch.setattr(_common, "validate", lambda sj: (None, ["cluster.n_gpus: refused for the test"]))
    at = _run(COMPARE, _slots("default", "mixtral-8x7b-h100-64", "llama3-8b-h100-64"))
    assert [e.value.split(" is not valid")[0] for e in at.error] == ["Scenario 1", "Scenario 2", "Scenario 3"]
    assert not at.dataframe and not at.get("vega_lite_chart")
    assert [i.value for i in at.info] == [
        "Nothing to compare: none of the 3 scenarios could be evaluated (the errors above say why). "
        "Choose another preset in a slot, or paste another share link."]


@pytest.mark.parametrize("text", ["'http://localhost:8501/?p=default&n=512'",
                                  '"http://localhost:8501/?p=default&n=512"',
                                  "<http://localhost:8501/?p=default&n=512>", " `?p=default&n=512` "])
def test_a_pasted_link_in_quotes_or_angle_brackets_is_read_whole(text):
    """The README tells to quote a link passed on in a shell; pasted with its quotes, the last value
    carried the closing quote (n="512'": refused, 1,024 GPUs shown)."""
    at = _run(COMPARE, _slots("default", {"p": "default"}))
    at.text_input(key="c_link1").set_value(text).run()
    assert not at.exception and not at.warning, [w.value for w in at.warning]
    assert _col(at.dataframe[0].value, 2) == "2: llama3-70b · 512 × dgx-h100"
    assert at.query_params["2.n"] == "512"


def test_the_split_row_of_a_moe_slot_names_its_expert_parallel_degree():
    """Mixtral 8x7B in Megatron-Core's mapping: TP 1 · PP 4 · CP 1 · DP 16 with EP 8 (the preset's
    description); DeepSeek-V3 on 2,048 H800: PP 16, EP 64, ZeRO-1 DP (its technical report, §3.2:
    "16-way PP, 64-way EP", DP 2,048 / 16 = 128). A dense slot's split stays four numbers, and EP is not
    repeated in "other differences"."""
    at = _run(COMPARE, _slots("default", "mixtral-8x7b-h100-64", "deepseek-v3-h800-2048"))
    t = at.dataframe[0].value
    assert t.loc["split TP·PP·CP·DP", _col(t, 1)] == "8·4·1·32"
    assert t.loc["split TP·PP·CP·DP", _col(t, 2)] == "1·4·1·16 · EP 8"
    assert t.loc["split TP·PP·CP·DP", _col(t, 3)] == "1·16·1·128 · EP 64"
    assert not any(re.search(r"(^| )ep=", t.loc["other differences", c]) for c in t.columns)


@pytest.mark.parametrize("extra", [{}, {"1.n": "512"}], ids=["alone", "with-other-keys"])
def test_a_slot_whose_source_and_base_preset_disagree_says_so(extra):
    """A tampered link: c_src1=default but 1.p=mixtral-8x7b-h100-64. It showed Llama 3 70B without a
    word, and with another key (1.n=512) Mixtral instead; now the slot's choice wins, always, with a
    warning naming both keys, and the other slot is untouched."""
    at = _run(COMPARE, {"c_n": "2", "c_src1": "default", "1.p": "mixtral-8x7b-h100-64",
                        "c_src2": "llama3-8b-h100-64", **extra})
    warns = [w.value for w in at.warning]
    assert len(warns) == 1 and warns[0].startswith(
        "Link: c_src1='default' and 1.p='mixtral-8x7b-h100-64' name different presets; the slot shows preset "
        "'default'"), warns
    t = at.dataframe[0].value
    assert _col(t, 1) == f"1: llama3-70b · {extra.get('1.n', '1024')} × dgx-h100"
    assert _col(t, 2) == "2: llama3-8b · 64 × dgx-h100"
    assert at.query_params["1.p"] == "default"


def test_other_differences_lead_with_the_fields_that_say_most_about_a_run():
    """Llama 3 70B on 1,024 H100 (global batch 512, 15 T tokens, ZeRO-1, VPP 5, no hot spares, even
    layer split) against Llama 3.1 405B on 16,384 H100 (2,048 sequences, 15.6 T tokens, ZeRO-2, VPP 7,
    16 hot spares, uneven split: the presets' inputs): batch, tokens, ZeRO and VPP before the rest, so
    that a 4-slot cell, cut at about 25 characters at 1,280 px, shows them (alphabetically it began
    "ak=native ce=fused ep8=0 e…" for four presets)."""
    at = _run(COMPARE, _slots("default", "llama3-405b-h100-16k"))
    t = at.dataframe[0].value
    assert t.loc["other differences", _col(t, 1)] == "gbs=512 tok=1.5e13 z=1 vpp=5 hs=0 ls=even"
    assert _other_differences(at, _col(t, 2)) == "gbs=2048 tok=1.56e13 z=2 vpp=7 hs=16 ls=uneven"
    # 45 characters in a 300 px cell, which shows (300 - 16) / 6.5 = 43: cut after the last whole
    # key=value, with "…" (review h29a F6: the grid clipped it without one); the header's hover has all
    assert t.loc["other differences", _col(t, 2)] == "gbs=2048 tok=1.56e13 z=2 vpp=7 hs=16…"


def _other_differences(at, col: str) -> str:
    """The whole "other differences" of a column, from its header's hover (the cell may be cut)."""
    help_text = json.loads(at.dataframe[0].proto.columns)[col]["help"]
    m = re.search(r" · mbs \S+ · \S+ · (.*)$", help_text)
    assert m, help_text
    return m.group(1)


@pytest.mark.parametrize("text,keys", [
    ("http://localhost:8501/validate?v_set=calibration&v_metric=mfu", "'v_set', 'v_metric'"),
    ("?pl_mct=500&pl_mcs=1", "'pl_mct', 'pl_mcs'"),
])
def test_a_pasted_link_with_only_page_settings_says_it_holds_no_scenario(text, keys):
    """A Validate page link holds no scenario: it showed the default scenario without a word (its
    v_* keys are left out silently, as a Plan link's pl_* keys beside its scenario keys are)."""
    at = _run(COMPARE, _slots("mixtral-8x7b-h100-64", {"p": "default"}))
    at.text_input(key="c_link1").set_value(text).run()
    warns = [w.value for w in at.warning]
    assert len(warns) == 1 and warns[0].startswith("Scenario 2: ") and \
        f"holds no scenario, only a page's own settings ({keys}); showing the default scenario" in warns[0], warns
    t = at.dataframe[0].value
    assert _col(t, 1) == "1: mixtral-8x7b · 64 × dgx-h100" and _col(t, 2) == "2: llama3-70b · 1024 × dgx-h100"
    # a Plan link with its page keys beside the scenario's: read without a warning, as before
    at.text_input(key="c_link1").set_value("http://localhost:8501/?p=default&n=512&pl_mct=500").run()
    assert not at.warning and _col(at.dataframe[0].value, 2) == "2: llama3-70b · 512 × dgx-h100"


def test_a_custom_copy_of_a_preset_model_differs_only_where_it_differs():
    """Review 16 new-user: DeepSeek-V3's preset beside a custom copy with one MTP module listed some
    30 architecture keys as "(base)" against their values; only the MTP depth differs (and the name a
    custom model gets). A refused value (mtp=99, range 0 to 16) leaves the copy equal: no mtp at all."""
    at = _run(COMPARE, _slots("deepseek-v3-h800-2048", {"p": "deepseek-v3-h800-2048", "m": "custom", "mtp": "1"}))
    t = at.dataframe[0].value
    d1, d2 = _other_differences(at, _col(t, 1)), _other_differences(at, _col(t, 2))
    assert "mtp=0" in d1 and "mtp=1" in d2 and "(default)" not in d1 + d2
    assert set(re.findall(r"(?:^| )([a-z0-9]+)=", d2)) == {"mn", "mtp"}, d2  # the name: "custom (deepseek-v3)"
    at = _run(COMPARE, _slots("deepseek-v3-h800-2048", {"p": "deepseek-v3-h800-2048", "m": "custom", "mtp": "99"}))
    t = at.dataframe[0].value
    assert "mtp=" not in t.loc["other differences", _col(t, 2)]
