"""Review 13b of the split search (planner.sweep) and the Explore / Compare pages: each test failed
before its fix. Expected values come from the definitions (the fewest GPUs that fit is the first
doubling whose sweep has a feasible row while the one before has none; goodput × tokens/s from
planner.evaluate of the row's own scenario), never from the code's own message numbers."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import planner
from planner.presets import preset_json

sw = importlib.import_module("planner.sweep")

ROOT = Path(__file__).resolve().parents[1]
EXPLORE = str(ROOT / "app_pages" / "explore.py")
TIMEOUT = 120
#: The Explore page's "focused" search space (app_pages/explore.py SPACES), spelled out here.
FOCUSED = dict(zero_stages=(1,), recompute=("selective", "full"), offload=("none",),
               schedules=("1f1b", "interleaved"), cp_max=4, vpp_max=4, micro_batch_max=4)
FULL = dict(recompute=("none", "selective", "full", "op_sac"),
            schedules=("1f1b", "interleaved", "zero_bubble", "dualpipe"))


@pytest.fixture(autouse=True)
def _clear_caches():
    st.cache_data.clear()
    yield


def _seventy_b_on(n: int) -> dict:
    sj = preset_json("default")  # Llama 3 70B, DGX H100
    sj["cluster"]["n_gpus"] = n
    sj["parallelism"].update(tp=8, pp=1, vpp=1, schedule="1f1b", dp=None)
    return sj


# ---- the out-of-memory reason names what the space tried and what would work -----------------


def test_out_of_memory_reason_in_a_space_without_offload_does_not_advise_offload_settings():
    """Llama 3 70B on 16 H100, ZeRO-1 without offload (the Explore page's focused space): no split
    fits. The reason said "set offload_optimizer = cpu ... to let it offload more", but this space
    sets offload none on every row whatever the scenario says (found by review)."""
    sj = _seventy_b_on(16)
    df = planner.sweep(sj, **FOCUSED)
    assert df.empty and df.attrs["n_configurations"] > 0
    why = df.attrs["reason"]
    assert why.startswith("every valid split runs out of memory")
    assert "offload_optimizer = cpu (e.g." not in why
    assert "offloads nothing" in why and "ZeRO stage 1" in why and "recompute (selective, full)" in why
    # the scenario's own offload settings indeed change nothing in this space
    sj2 = _seventy_b_on(16)
    sj2["parallelism"].update(offload_optimizer="cpu", offload_master_weights=True, offload_grads=True)
    assert planner.sweep(sj2, **FOCUSED).empty


def test_out_of_memory_reason_names_the_fewest_gpus_that_fit():
    """With the GPU count swept, the reason names cluster.n_gpus and the first doubling at which
    a split of the same space fits; by definition the count before it has none."""
    sj = _seventy_b_on(16)
    why = sw.no_split_reason(sj, 10, gpus=16, **FOCUSED)
    n, k = sw.fewest_gpus_that_fit(sj, 16, **FOCUSED)
    assert n in (32, 64, 128, 256) and k > 0
    assert planner.sweep(sj, gpus=n, top=1, **FOCUSED).attrs["n_feasible"] == k
    assert planner.sweep(sj, gpus=n // 2, top=1, **FOCUSED).attrs["n_feasible"] == 0
    assert f"{n:,} GPUs (cluster.n_gpus, doubling from 16) give {k:,} splits that fit" in why


def test_explore_out_of_memory_in_the_focused_space_points_to_the_full_space():
    """Explore, Llama 3 70B on 16 H100, focused space: nothing fits, but the full space (ZeRO-3,
    CPU offload) has splits that fit on the same 16 GPUs; the page now says how many, and names
    the Search space box (it advised the offload settings the focused space ignores)."""
    at = AppTest.from_file(EXPLORE, default_timeout=TIMEOUT)
    at.query_params.update({"p": "default"})
    at.run()
    at.number_input(key="w_n").set_value(16).run()
    assert not at.exception, [e.message for e in at.exception]
    warn = next(w.value for w in at.warning if "No split of this model fits" in w.value)
    assert "offload_optimizer = cpu (e.g." not in warn
    scen = sw.sweep_start(at.session_state["scenario"])[0]
    k_full = len(planner.sweep(scen, gpus=16, **FULL))
    assert k_full > 0
    assert f"On these 16 GPUs the full search space (Search space: full" in warn and f"finds {k_full:,} splits" in warn


# ---- the Explore table shows what it ranks on -----------------------------------------------


def test_explore_goodput_ranking_shows_the_ranked_column():
    """Ranked by goodput × throughput the table said 'ranked on goodput %', a column equal to
    96.4 % in every row of the default preset (the order was MFU's). The ranked quantity now has a
    column, non-increasing, equal to tokens/s × goodput of the row's own scenario."""
    at = AppTest.from_file(EXPLORE, default_timeout=TIMEOUT)
    at.query_params.update({"p": "default", "ex_obj": "goodput_tokens_per_s", "ex_top": "10"})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    t = at.dataframe[0].value
    col = "gp·Mtok/s"
    assert col in t.columns and list(t.columns).index(col) == list(t.columns).index("sched.") + 1
    assert np.all(np.diff(t[col].to_numpy()) <= 0)
    row0 = at.session_state["_ex_top_rows"][0]
    res = planner.evaluate(sw.scenario_for_row(planner.load_preset("default"), row0)).results
    assert t[col][0] == pytest.approx(res["tokens_per_s"] * res["goodput"] / 1e6, rel=1e-9)
    assert any(f"ranked on **{col}**" in c.value for c in at.caption)
    # the other objectives keep their width: no such column
    at2 = AppTest.from_file(EXPLORE, default_timeout=TIMEOUT)
    at2.query_params.update({"p": "default"})
    at2.run()
    assert col not in at2.dataframe[0].value.columns


# ---- API input: flags and ZeRO stages --------------------------------------------------------


@pytest.mark.parametrize(("kw", "text"), [
    (dict(allow_uneven="no"), "sweep: allow_uneven = 'no': give True or False"),
    (dict(allow_tp_beyond_nvlink="no"), "sweep: allow_tp_beyond_nvlink = 'no': give True or False"),
    (dict(include_invalid="no"), "sweep: include_invalid = 'no': give True or False"),
    (dict(zero_stages=[True]), "sweep: zero_stages [True]: allowed: 0, 1, 2, 3"),
])
def test_flags_that_are_not_booleans_are_refused_naming_the_option(kw, text):
    """'no' is a non-empty string, so it was taken as True (uneven splits allowed, TP across
    nodes); True was taken as ZeRO stage 1 (found by review)."""
    with pytest.raises(planner.InputError) as e:
        planner.sweep(planner.load_preset("llama31-8b-torchtitan-h100-8"), top=1, **kw)
    assert text in e.value.lines[0]


def test_allow_uneven_none_still_means_the_scenario_s_layer_split():
    s = planner.load_preset("default")  # 80 layers, even split: PP 3 never valid
    assert sw.count_splits(s, pp=[3], allow_uneven=None) == 0
    assert sw.count_splits(s, pp=[3], allow_uneven=True, gpus=768) > 0


# ---- an empty sweep says why, naming the field ----------------------------------------------


def test_nvme_offload_on_a_system_without_nvme_is_not_called_out_of_memory():
    """GH200 quad nodes have no local NVMe: every offload = nvme row breaks a rule and none is
    evaluated; the reason said 'every valid split runs out of memory' (found by review)."""
    s = planner.load_preset("llama31-8b-torchtitan-h100-8")
    df = planner.sweep(s, systems=["gh200-quad"], offload=["nvme"])
    assert df.empty
    why = df.attrs["reason"]
    assert "out of memory" not in why
    assert "offload = nvme needs local NVMe" in why and "gh200-quad" in why


def test_an_empty_python_sweep_names_the_batch_and_gpu_count():
    """1,000 GPUs, a global batch of 512: DP must divide both (1, 2, 4 or 8), so TP·PP·CP >= 125,
    which 64 heads and 80 layers on an even split do not allow. Python's reason named no field
    ('try a count with more small factors'); it now says what the CLI says."""
    s = planner.load_preset("default")
    df = planner.sweep(s, gpus=1000, top=3)
    assert df.empty and df.attrs["n_configurations"] == 0
    why = df.attrs["reason"]
    assert why.startswith("no split satisfies the divisibility rules")
    assert "training.global_batch_size = 512" in why and "cluster.n_gpus = 1,000" in why


def test_cli_out_of_memory_names_the_space_tried_and_the_fewest_gpus(capsys):
    """`planner sweep --recompute none` on a 405B model and 16 GPUs: nothing fits. The message says
    which recompute list was tried (it read as if the default list had been) and the fewest GPUs,
    doubling from 16, at which a split of that space fits: by definition the sweep of that count
    has that many feasible splits and the count before it none."""
    from planner.cli import main as cli_main

    rc = cli_main(["sweep", "--preset", "llama3-405b-h100-16k", "--gpus", "16", "--recompute", "none",
                   "--top", "1"])
    err = capsys.readouterr().err
    assert rc == 1
    assert "The sweep chooses recompute (none)" in err
    s = planner.load_preset("llama3-405b-h100-16k")
    n, k = sw.fewest_gpus_that_fit(s, 16, recompute=("none",))
    assert planner.sweep(s, gpus=n, top=1, recompute=("none",)).attrs["n_feasible"] == k > 0
    assert planner.sweep(s, gpus=n // 2, top=1, recompute=("none",)).attrs["n_feasible"] == 0
    assert f"{n:,} GPUs (cluster.n_gpus, doubling from 16) give {k:,} splits that fit" in err


def test_every_even_interleaved_split_is_enumerated():
    """The default preset's own split, Llama 3 70B (80 layers) on PP 4 with VPP 5 (the NeMo /
    Megatron-Bridge recipe), was never swept: VPP took powers of two only. An even split needs
    pp·vpp to divide the 80 layers, pp > 1 dividing the 1,024 GPUs (2, 4, 8, 16, ...): vpp | 40,
    20, 10, 5 respectively, up to vpp_max 16, gives {2, 4, 5, 8, 10} (16 would need pp·16 | 80,
    pp = 5, which does not divide 1,024)."""
    s = planner.load_preset("default")
    assert (s.parallelism.pp, s.parallelism.vpp, s.parallelism.layer_split) == (4, 5, "even")
    df = planner.sweep(s, feasible_only=False)
    inter = df[df["schedule"] == "interleaved"]
    assert sorted(set(inter["vpp"].tolist())) == [2, 4, 5, 8, 10]
    own = df[(df["tp"] == 8) & (df["pp"] == 4) & (df["vpp"] == 5) & (df["schedule"] == "interleaved")]
    assert len(own) > 0


def test_sweep_candidates_beyond_the_schema_are_refused_or_capped():
    """Found by review: vpp=[2048] returned rows with vpp 2,048, which the schema (VPP_MAX 1,000)
    refuses, so Open in Plan failed; vpp_max is capped at the same ceiling."""
    from planner.schema import InputError, VPP_MAX

    s = planner.load_preset("mpt-7b-a100-8")
    with pytest.raises(InputError, match=f"allowed 1 to {VPP_MAX:,}"):
        planner.sweep(s, vpp=[VPP_MAX + 1], schedules=["interleaved"])
    df = planner.sweep(s, vpp_max=10**9)
    assert df["vpp"].max() <= VPP_MAX
