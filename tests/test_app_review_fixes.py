"""Regression tests for a review of the dashboard (A1–A6): imports the sidebar cannot hold are
refused whole, host memory is checked on Plan and Compare, Explore sweeps a GPU count its sidebar
split does not suit, the Monte Carlo table picks its units by size, a custom-model link blames the
key at fault, and number boxes can show their minimum.

Expected values come from the widgets' definitions (the TP box takes 1 to 100,000, the sequence
length 1 to 4,194,304: app_pages/_common.py), the catalogue (a DGX A100 80GB node has 2 TiB of host
memory: hardware/systems.json) and the engine's result columns, never from the page's own text."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

import planner
from planner import share
from planner.presets import preset_json

ROOT = Path(__file__).resolve().parents[1]
PLAN = str(ROOT / "app_pages" / "plan.py")
EXPLORE = str(ROOT / "app_pages" / "explore.py")
GIB = 2**30
# the dashboard tests' AppTest helpers: the per-test cache clearing (an autouse fixture) and _run
from test_app import TIMEOUT, _clear_caches, _compare_default_and_link, _run  # noqa: E402,F401


def _upload(at, label, name, payload: bytes):
    u = next(u for u in at.get("file_uploader") if u.label == label)
    u.set_value((name, payload, "application/json"))
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _with(sj: dict, path: tuple, value) -> dict:
    out = copy.deepcopy(sj)
    cur = out
    for p in path[:-1]:
        cur = cur.setdefault(p, {})
    cur[path[-1]] = value
    return out


# --- A1: an import the sidebar cannot hold is refused whole ----------------------------------

# (path, value, the range the Plan page's box takes, as the box is defined in _common.py)
_OUT_OF_BOX = [
    (("training", "seq_len"), 10**8, "1 to 4,194,304"),
    (("training", "tokens_total"), 1e20, "1,000,000 to 1e16"),
    (("reliability", "rate_scale"), 1000, "0 to 100"),
    (("cluster", "pue"), 10, "1 to 3"),
    (("parallelism", "vpp"), 5000, "1 to 1,000"),
    (("cluster", "n_gpus"), 10**9, "1 to 10,000,000"),
    (("parallelism", "tp"), 0, "1 to 100,000"),
    (("parallelism", "tp"), 10**9, "1 to 100,000"),
    (("reliability", "hot_spare_nodes"), 10**7, "0 to 100,000"),
]


@pytest.mark.parametrize(("path", "value", "allowed"), _OUT_OF_BOX)
def test_widget_range_errors_name_the_field_its_value_and_the_boxs_range(path, value, allowed):
    errs = share.widget_range_errors(_with(preset_json("default"), path, value))
    assert len(errs) == 1, errs
    assert errs[0].startswith(".".join(path) + " = ") and allowed in errs[0]
    # the TP box's range, never the schema's 10,000,000 (review: "allowed 1 to 10,000,000")
    if path[-1] == "tp":
        assert "10,000,000" not in errs[0]


@pytest.mark.parametrize("interval", [0.01, 1e12])
def test_widget_range_errors_check_checkpoint_intervals(interval):
    # the interval box takes 0.01 to 10⁷ minutes = 0.6 to 6·10⁸ s
    sj = _with(preset_json("default"), ("checkpoint", "tiers"), [{"tier": "pfs", "interval_s": interval}])
    errs = share.widget_range_errors(sj)
    assert len(errs) == 1 and errs[0].startswith("checkpoint.tiers[0].interval_s") and "0.6 to 6e8 s" in errs[0]


def test_widget_range_errors_check_an_inline_models_architecture():
    md = {"name": "x", "n_layers": 32, "hidden_size": 4096, "n_heads": 32, "head_dim": 10**6,
          "ffn_hidden_size": 14336, "vocab_size": 32000,
          "moe": {"n_experts": 10**6, "top_k": 2, "expert_ffn_hidden_size": 14336}}
    errs = share.widget_range_errors({"model": md})
    assert {e.split(" = ")[0] for e in errs} == {"model.head_dim", "model.moe.n_experts"}
    assert all("100,000" in e for e in errs)


@pytest.mark.parametrize("bad", [None, [], "x", {"training": "x"}, {"training": {"seq_len": [1]}},
                                 {"parallelism": {"tp": "abc"}}, {"checkpoint": {"tiers": [1, {"interval_s": "x"}]}},
                                 {"model": {"n_layers": {"a": 1}, "moe": "x"}}, {"cluster": {"pue": float("nan")}}])
def test_widget_range_errors_never_raise(bad):
    out = share.widget_range_errors(bad)
    assert isinstance(out, list) and all(isinstance(x, str) for x in out)


def test_every_preset_fits_the_widgets():
    for pid in planner.list_presets():
        assert share.widget_range_errors(preset_json(pid)) == [], pid


def test_import_the_sidebar_cannot_hold_is_refused_and_the_scenario_kept():
    at = _run(PLAN, {"p": "default"})
    before = copy.deepcopy(at.session_state["scenario"])
    link_before = dict(at.query_params)
    sj = preset_json("default")
    sj["training"]["seq_len"] = 10**8
    sj["parallelism"]["tp"] = 10**9
    sj["reliability"]["hot_spare_nodes"] = 10**7
    sj["checkpoint"]["tiers"] = [{"tier": "pfs", "interval_s": 0.01}]
    _upload(at, "Import scenario JSON", "big.json", json.dumps(sj).encode())
    err = [e.value for e in at.sidebar.error if e.value.startswith("Import refused")]
    assert len(err) == 1, [e.value for e in at.sidebar.error]
    for field, allowed in (("training.seq_len = 100000000", "4,194,304"), ("parallelism.tp = 1000000000", "100,000"),
                           ("reliability.hot_spare_nodes = 10000000", "100,000"),
                           ("checkpoint.tiers[0].interval_s = 0.01", "0.6 to 6e8 s")):
        line = next((ln for ln in err[0].splitlines() if field in ln), None)
        assert line is not None and allowed in line, (field, err[0])
    # nothing of the file was loaded: the scenario, the boxes, the link and the results stay
    assert at.session_state["scenario"] == before
    assert at.number_input(key="w_seq").value == 8192 and at.number_input(key="w_tp").value == 8
    assert dict(at.query_params) == link_before
    assert not at.main.error and at.metric


def test_import_with_a_cross_field_error_still_loads():
    at = _run(PLAN, {"p": "default"})
    sj = preset_json("default")
    sj["parallelism"].update(tp=3, dp=None)  # each value fits its box; 3·4·1 does not divide 1,024
    _upload(at, "Import scenario JSON", "tp3.json", json.dumps(sj).encode())
    assert at.number_input(key="w_tp").value == 3
    assert not [e for e in at.sidebar.error if e.value.startswith("Import refused")]


@pytest.mark.parametrize(("extra", "field"), [({"num_local_experts": 10**6, "num_experts_per_tok": 2}, "model.moe.n_experts"),
                                              ({"head_dim": 10**6}, "model.head_dim")])
def test_hf_config_the_model_section_cannot_hold_is_refused(extra, field):
    cfg = {"model_type": "mixtral", "architectures": ["MixtralForCausalLM"], "num_hidden_layers": 32,
           "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
           "vocab_size": 32000, **extra}
    at = _run(PLAN, {"p": "default"})
    before = copy.deepcopy(at.session_state["scenario"])
    _upload(at, "Import a Hugging Face config.json", "config.json", json.dumps(cfg).encode())
    err = [e.value for e in at.sidebar.error if "refused" in e.value]
    assert len(err) == 1 and field in err[0] and "100,000" in err[0], [e.value for e in at.sidebar.error]
    assert at.session_state["scenario"] == before and at.selectbox(key="w_model").value == "llama3-70b"


# --- A2: host memory on Plan and Compare ------------------------------------------------------

HOST = {"p": "gpt3-175b-a100-1024", "n": "8", "tp": "8", "pp": "1", "vpp": "1", "sch": "1f1b", "z": "3",
        "off": "cpu", "offw": "1", "offg": "1", "gbs": "64"}
DGX_A100_HOST_GIB = 2048.0  # hardware/systems.json: dgx-a100-80gb, 2 TiB of host memory per node


def test_plan_says_when_the_offloaded_states_exceed_host_memory():
    at = _run(PLAN, HOST)
    res = planner.evaluate(at.session_state["scenario"]).results
    assert res["host_fits"] is False and res["fits"] is True  # the premise: HBM fits, the host does not
    err = [e.value for e in at.error if "host memory" in e.value]
    assert len(err) == 1, [e.value for e in at.error]
    assert f"{res['host_mem_per_node_bytes'] / GIB:,.1f} GiB" in err[0]
    assert f"{DGX_A100_HOST_GIB:,.1f} GiB" in err[0] and "2³⁰" in err[0]


def test_plan_says_when_in_memory_checkpoints_exceed_host_memory():
    # 0.1 GiB per node; the Llama 3 405B preset saves its host-memory tier (every 22 s; a tier never
    # saved holds no copy, so the default preset, which does not save it, would fit)
    at = _run(PLAN, {"p": "llama3-405b-h100-16k", "hostmem": "107374182.4"})
    res = planner.evaluate(at.session_state["scenario"]).results
    assert res["host_fits_ckpt"] is False and res["host_fits"] is True  # the premise
    err = [e.value for e in at.error if "host memory" in e.value]
    assert len(err) == 1 and "checkpoint" in err[0]
    assert f"{res['ckpt_host_mem_per_node_bytes'] / GIB:,.1f} GiB" in err[0] and "0.1 GiB" in err[0]


def test_compare_marks_a_slot_that_exceeds_host_memory():
    at, t, c1, c2 = _compare_default_and_link(HOST)
    assert "✗" not in c1 and "✗" in c2 and "host memory" in c2
    assert t.loc["fits in host memory", c1] == "yes"
    assert t.loc["fits in host memory", c2].startswith("no ✗") and f"{DGX_A100_HOST_GIB:,.1f} GiB" in \
        t.loc["fits in host memory", c2]
    assert t.loc["time to train", c2].endswith(" ✗")
    assert any(e.value.startswith("Scenario 2: **Does not fit in host memory:**") for e in at.error)
    assert not any(e.value.startswith("Scenario 1") for e in at.error)


# --- A3: Explore on a GPU count the sidebar's split does not suit -----------------------------

def test_explore_sweeps_a_gpu_count_the_sidebar_split_does_not_suit_and_names_the_limit():
    at = _run(EXPLORE)
    at.number_input(key="w_n").set_value(1000).run()
    assert not at.exception
    assert not [e.value for e in at.error if "nothing to sweep" in e.value]
    why = " ".join(w.value for w in at.warning)
    # 1,000 = 2³·5³ GPUs, a global batch of 512 = 2⁹: DP can only be 1 to 8, leaving 125 to 1,000
    # GPUs per model replica, more than TP (≤ 64 heads) × PP (≤ 80 layers) can use
    assert "training.global_batch_size = 512" in why and "cluster.n_gpus = 1,000" in why
    at.number_input(key="w_gbs").set_value(1000).run()  # the batch the GPU count divides: splits exist
    assert not at.exception and int(at.metric[0].value.replace(",", "")) > 0


# --- A4: Monte Carlo table units ----------------------------------------------------------------

def test_monte_carlo_table_shows_a_short_run_in_seconds_not_zero_days():
    from planner.simulate import summarize

    at = _run(PLAN, {"ck": "none", "tok": "1e6", "pl_mct": "200", "pl_mcs": "1"})
    at.button(key="pl_mc_run").click().run()
    table = next(d.value for d in at.dataframe if list(d.value.columns)[:1] == ["mean"])
    want = summarize(planner.simulate(at.session_state["scenario"], n_trials=200, seed=1)).set_index("metric")
    p50_s = want.loc["time_to_train_days", "p50"] * 86400.0
    assert 1 <= p50_s < 120  # the premise: about a second (the headline shows s)
    assert "days to train" not in table.index and "time to train, s" in table.index
    assert table.loc["time to train, s", "P50"] == f"{p50_s:,.2f}" != "0.00"


# --- A5: a custom-model link blames the key at fault --------------------------------------------

def test_custom_model_link_refuses_only_the_key_at_fault():
    sj, warns = share.params_to_scenario({"m": "custom", "ml": "40", "mh": "4096", "ma": "7"})
    planner.Scenario.model_validate(sj)
    m = sj["model"]
    assert isinstance(m, dict)  # the custom model stays
    # ml and mh kept; n_heads back to the base model's (llama3-70b: 64 heads, 8 KV heads)
    assert (m["n_layers"], m["hidden_size"], m["n_heads"], m["n_kv_heads"]) == (40, 4096, 64, 8)
    assert len(warns) == 1 and warns[0].startswith("ma='7' (model.n_heads): refused"), warns
    assert "n_kv_heads = 8" in warns[0] and "mk=" in warns[0]


def test_a_refused_custom_model_lists_every_dropped_architecture_key():
    # 4,096 is not divisible by 7 heads whichever single key goes back: the custom model itself is
    # refused, and each of its keys is named
    sj, warns = share.params_to_scenario({"m": "custom", "ml": "40", "mh": "4096", "ma": "7", "mk": "7"})
    planner.Scenario.model_validate(sj)
    assert sj["model"] == "llama3-70b"
    for k in ("m", "ml", "mh", "ma", "mk"):
        assert any(w.startswith((f"{k}:", f"{k}=")) for w in warns), (k, warns)


# --- A6: number boxes show their minimum ----------------------------------------------------------

def test_every_sidebar_number_box_can_show_its_minimum():
    # the boxes have no browser-side bounds since review h27b (D4): their minimum is the range the page
    # checks (share.FIELDS through _common's box tables; the checkpoint interval's share.CK_INTERVAL_MIN_S)
    from app_pages import _common as C
    at = _run(PLAN, {"p": "default"})
    lows = {key: share.FIELDS[link].lo / share.box_scale(link)[0]
            for key, link, _, _ in C._MODEL_BOXES + C._MOE_BOXES + C._SCENARIO_BOXES + C._CKPT_REL_BOXES}
    lows.update({f"w_ck_{t}": share.CK_INTERVAL_MIN_S / 60.0 for t in at.session_state["w_tiers"]})
    boxes = [b for b in at.sidebar.number_input if b.proto.format and b.key in lows]
    keys = {b.key for b in boxes}
    assert {"w_hostmem", "w_ck_pfs"} <= keys, keys
    for b in boxes:
        assert not b.proto.has_min and not b.proto.has_max, b.key  # the page names the range, not the browser
        lo = lows[b.key]
        if lo > 0:
            assert b.proto.format % lo != b.proto.format % 0, (b.key, b.proto.format, lo)


# --- a last review of the fixes -------------------------------------------------------------------

def test_import_takes_the_scenario_of_an_evaluate_result_as_the_cli_does():
    """`planner evaluate --format json` writes {"scenario", "results", ...}; the CLI reads such a file
    back as its scenario, the page refused it ("unknown top-level keys"; found by review)."""
    import io
    from contextlib import redirect_stdout
    from planner.cli import main
    sj = preset_json("llama3-8b-h100-64")
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["evaluate", "--preset", "llama3-8b-h100-64", "--format", "json"]) == 0
    at = _run(PLAN)
    _upload(at, "Import scenario JSON", "result.json", buf.getvalue().encode())
    assert "_upload_error" not in at.session_state
    assert planner.Scenario.model_validate(at.session_state["scenario"]) == planner.Scenario.model_validate(sj)


def test_monte_carlo_table_shows_a_run_of_centuries_in_years_as_the_headline():
    """The headline turns days into years above 1,000 days ("380 years"); the table row said
    "days to train 138,619.3" (found by review): the row is now in Julian years too."""
    from planner.simulate import summarize

    at = _run(PLAN, {"tok": "1e16", "pl_mct": "200", "pl_mcs": "1"})
    at.button(key="pl_mc_run").click().run()
    table = next(d.value for d in at.dataframe if list(d.value.columns)[:1] == ["mean"])
    want = summarize(planner.simulate(at.session_state["scenario"], n_trials=200, seed=1)).set_index("metric")
    p50_days = want.loc["time_to_train_days", "p50"]
    assert p50_days > 1000  # the premise: the headline is in years
    assert "days to train" not in table.index and "time to train, years" in table.index
    assert table.loc["time to train, years", "P50"] == f"{p50_days / 365.25:,.1f}"
