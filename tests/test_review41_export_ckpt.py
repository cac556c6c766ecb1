"""Review 40a D4, left in session 40, done in session 41: the launch-configuration exports wrote no
checkpoint interval, the number the reliability model exists to give. Now the Megatron arguments
carry ``--save-interval`` (and ``--async-save``), the TorchTitan TOML a ``[checkpoint]`` section,
and the DeepSpeed notes the interval to call ``engine.save_checkpoint`` at — each in optimizer
steps, the interval over the step time rounded to the nearest whole step (at least 1).

Flag and key names: tests/data/framework_flags.json (Megatron-LM arguments.py at 000c4ac2,
TorchTitan job_config.py class Checkpoint at 6404b932, both read in session 41). The expected step
counts are hand arithmetic on intervals given as whole multiples of the evaluated step time.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path

import pytest

import planner
from planner.export import checkpoint_plan, deepspeed_config, megatron_args, torchtitan_toml

from test_export import _parse, _parser  # noqa: E402 - tests/ is on sys.path (rootdir conftest)

FLAGS = json.loads((Path(__file__).parent / "data" / "framework_flags.json").read_text())
TT_CKPT = FLAGS["torchtitan"]["keys"]["checkpoint"]


def _scenario(pid="llama3-405b-h100-16k", **ck):
    sj = planner.load_preset(pid).model_dump(mode="json", by_alias=True)
    sj["checkpoint"].update(ck)
    return sj


def _step_s(sj) -> float:
    return float(planner.evaluate(sj).results["step_time_s"])


def _given(sj, host_steps, pfs_steps):
    """The scenario with host memory / PFS intervals of whole multiples of its step time (+0.4 of a
    step, so rounding to the nearest step gives the multiple: hand arithmetic, not the engine's optimum)."""
    st = _step_s(sj)
    sj["checkpoint"]["tiers"] = [{"tier": "host_memory", "interval_s": (host_steps + 0.4) * st},
                                 {"tier": "pfs", "interval_s": (pfs_steps + 0.4) * st}]
    return sj


def test_megatron_writes_the_pfs_interval_in_steps_and_names_the_host_memory_flags():
    sj = _scenario()
    sj["parallelism"]["zero_stage"] = 1  # --use-distributed-optimizer: the torch_dist format, so async is written
    sj = _given(sj, 3, 25)  # (after the change: the step counts are of this scenario's step time)
    ex = megatron_args(sj)
    ns = _parse(ex.text)
    assert ns.save_interval == 25 and ns.async_save is True
    assert getattr(ns, "save", None) is None  # the path is the user's: said in a note
    note = next(n for n in ex.notes if n.startswith("checkpoints: --save-interval 25"))
    assert "(the given " in note and "add --save DIR" in note
    assert not any("synchronous" in n for n in ex.notes)  # torch_dist: saved async, as planned
    # the host memory tier: Megatron's non-persistent local checkpoint, its flags in a note (they need
    # nvidia_resiliency_ext); the flags named there parse with the verified parser
    hn = next(n for n in ex.notes if n.startswith("checkpoint tier host memory every 3 steps"))
    added = re.search(r"add (--non-persistent-save-interval .*?) \(a tmpfs", hn).group(1)
    extra = _parser().parse_args(shlex.split(added))
    assert (extra.non_persistent_save_interval, extra.non_persistent_ckpt_type) == (3, "local")
    assert extra.non_persistent_local_ckpt_dir.startswith("/dev/shm/")
    # validate_args accepts only 'global' and 'local' (in_memory is refused there)
    assert "in_memory" in FLAGS["megatron"]["flags"]["--non-persistent-ckpt-type"]["choices"]
    assert "'global', 'local', None" in FLAGS["megatron"]["flags"]["--non-persistent-ckpt-type"]["validate_args"]


def test_megatron_fsdp_format_leaves_out_async_and_says_so():
    sj = _given(_scenario(), 3, 25)  # the 405B preset: ZeRO-2 written as Megatron-FSDP (fsdp_dtensor)
    assert sj["parallelism"]["zero_stage"] == 2
    ex = megatron_args(sj)
    ns = _parse(ex.text)
    assert ns.ckpt_format == "fsdp_dtensor" and not ns.async_save and ns.save_interval == 25
    assert any("--async-save runs only with --ckpt-format torch_dist" in n for n in ex.notes)


def test_a_synchronous_scenario_writes_no_async_flag():
    sj = _scenario(**{"async": False})
    sj["parallelism"]["zero_stage"] = 1
    sj = _given(sj, 3, 25)
    ns = _parse(megatron_args(sj).text)
    assert ns.save_interval == 25 and not ns.async_save
    doc = tomllib.loads(torchtitan_toml(sj).text)
    assert doc["checkpoint"] == {"enable_checkpoint": True, "interval": 25}  # async_mode left at "disabled"


def test_torchtitan_checkpoint_section_uses_verified_keys():
    sj = _given(_scenario(), 3, 25)
    ex = torchtitan_toml(sj)
    ck = tomllib.loads(ex.text)["checkpoint"]
    assert ck == {"enable_checkpoint": True, "interval": 25, "async_mode": "async"}
    assert set(ck) <= set(TT_CKPT["keys"]) and ck["async_mode"] in TT_CKPT["allowed_values"]["async_mode"]
    assert any(n.startswith("checkpoint tier host memory every 3 steps") and "no node-local tier" in n
               for n in ex.notes)


def test_deepspeed_notes_give_the_save_calls():
    ex = deepspeed_config(_given(_scenario(), 3, 25))
    assert "save" not in json.loads(ex.text)  # DeepSpeed's config has no interval key
    note = next(n for n in ex.notes if n.startswith("checkpoints: DeepSpeed's config has no save interval"))
    assert "engine.save_checkpoint(DIR) on every rank" in note
    assert "every 25 steps (the given " in note and "with DIR on the parallel file system" in note
    assert "every 3 steps (the given " in note and "with DIR in host memory" in note
    ds = FLAGS["deepspeed"]["checkpointing"]
    assert "all processes must call this method" in ds["save_checkpoint"]
    assert set(ds["checkpoint_section_keys"]) == {"tag_validation", "load_universal", "use_node_local_storage",
                                                  "parallel_write"}


def test_the_optimum_is_converted_to_the_nearest_whole_step():
    """Without given intervals: the engine's optimum over its step time, rounded (docs/reliability.md:
    405B host memory 24.7 s = 3.59 steps of 6.889 s → every 4; PFS 43.4 s → 6)."""
    sj = _scenario()
    r = planner.evaluate(sj).results
    plan = checkpoint_plan(sj)
    assert plan.step_time_s == r["step_time_s"] and plan.goodput == r["goodput"]
    want = {k: max(1, round(r[f"ckpt_{k}_interval_opt_s"] / plan.step_time_s)) for k in ("host_memory", "pfs")}
    assert {t.kind: t.steps for t in plan.tiers} == want == {"host_memory": 4, "pfs": 6}
    assert {t.why for t in plan.tiers} == {"the planner's optimum"}
    sj["parallelism"]["zero_stage"] = 1  # torch_dist: the launch saves async as planned
    r = planner.evaluate(sj).results
    iv = r["ckpt_host_memory_interval_opt_s"]
    assert f"(the planner's optimum {iv:.4g} s over {r['step_time_s']:.4g} s a step)" in " ".join(megatron_args(sj).notes)


def _variant(sj, **ck):
    v = json.loads(json.dumps(sj))
    v["checkpoint"].update(ck)
    return planner.evaluate(v).results


def test_a_synchronous_launch_gets_the_synchronous_optimum():
    """Review 41a D1: Megatron-FSDP (fsdp_dtensor) and this DeepSpeed file save synchronously, and
    the async optimum written for them cost the 405B preset 3.8 days. The steps are now those of
    the scenario evaluated with checkpoint.async = false, and a note gives both goodputs."""
    sj = _scenario()  # ZeRO-2: Megatron-FSDP
    sync = _variant(sj, **{"async": False})
    asyn = planner.evaluate(sj).results
    want = max(1, round(sync["ckpt_pfs_interval_opt_s"] / sync["step_time_s"]))
    assert want != max(1, round(asyn["ckpt_pfs_interval_opt_s"] / asyn["step_time_s"]))  # the case at hand
    ex = megatron_args(sj)
    assert _parse(ex.text).save_interval == want
    note = next(n for n in ex.notes if "this launch saves synchronously" in n)
    assert (f"goodput {sync['goodput']:.4f}, {sync['time_to_train_days']:.4g} d; with the scenario's async saves "
            f"goodput {asyn['goodput']:.4f}, {asyn['time_to_train_days']:.4g} d" in note)
    ds = " ".join(deepspeed_config(sj).notes)
    assert f"every {want} steps (the planner's optimum" in ds and "the saves are synchronous" in ds


def test_a_tier_the_launch_cannot_hold_is_left_out_of_its_optimum():
    """Review 41a D2: TorchTitan has no node-local tier, so its interval is the optimum of the PFS
    alone (the scenario evaluated without the NVMe tier), not the PFS interval chosen beside it."""
    sj = _scenario()
    sj["checkpoint"]["tiers"] = [{"tier": "local_nvme", "replicas": 1}, {"tier": "pfs"}]
    alone = _variant(sj, tiers=[{"tier": "pfs"}])
    both = planner.evaluate(sj).results
    want = max(1, round(alone["ckpt_pfs_interval_opt_s"] / alone["step_time_s"]))
    assert want != max(1, round(both["ckpt_pfs_interval_opt_s"] / both["step_time_s"]))
    ex = torchtitan_toml(sj)
    assert tomllib.loads(ex.text)["checkpoint"]["interval"] == want
    assert any(f"the interval above is the optimum without it: goodput {alone['goodput']:.4f} without it, "
               f"{both['goodput']:.4f} with it" in n for n in ex.notes)
    # Megatron writes the interval of the plan with both, and names the one to use without the local flags
    sj["parallelism"]["zero_stage"] = 1
    alone = _variant(sj, tiers=[{"tier": "pfs"}])
    k = max(1, round(alone["ckpt_pfs_interval_opt_s"] / alone["step_time_s"]))
    ex = megatron_args(sj)
    nv = next(n for n in ex.notes if n.startswith("checkpoint tier local NVMe"))
    assert f"Without it, use --save-interval {k} (the optimum with the parallel file system alone" in nv
    assert "The plan's 1 peer-node copy is not written." in nv
    # the NVMe directory is a path the shell and argparse take
    added = re.search(r"add (--non-persistent-save-interval .*?) \(a directory", nv).group(1)
    assert _parser().parse_args(shlex.split(added)).non_persistent_local_ckpt_dir == "/path/to/local_nvme/ckpt"


def test_a_local_save_on_persistent_steps_only_is_said_to_add_nothing():
    """Review 41a D9: Megatron skips the non-persistent save on a --save-interval step (training.py,
    recorded), so a local interval that is a multiple of the persistent one never saves."""
    sj = _scenario(**{"tiers": [{"tier": "host_memory", "interval_s": 1.0}, {"tier": "pfs", "interval_s": 1.0}]})
    sj["parallelism"]["zero_stage"] = 1
    ex = megatron_args(sj)
    assert _parse(ex.text).save_interval == 1
    hn = next(n for n in ex.notes if n.startswith("checkpoint tier host memory every step (the given 1 s, raised "
                                                  "to one step: "))
    assert "so it would never run: it adds nothing here" in hn
    assert "skipped on steps the persistent one takes" in FLAGS["megatron"]["flags"]["--save"]["training_py"]


def test_no_persistent_tier_names_the_save_interval_megatron_needs():
    """Review 41a D3: --save needs --save-interval (validate_args, recorded)."""
    sj = _scenario("default", tiers=[{"tier": "host_memory"}])
    ex = megatron_args(sj)
    assert getattr(_parse(ex.text), "save_interval", None) is None
    hn = next(n for n in ex.notes if n.startswith("checkpoint tier host memory"))
    assert "with --save DIR and a --save-interval above the run's" in hn
    assert "assert args.save_interval is not None" in FLAGS["megatron"]["flags"]["--save"]["validate_args"]


def test_no_failures_no_saves_said():
    sj = _scenario("default")
    sj["reliability"]["rate_scale"] = 0
    ex = megatron_args(sj)
    assert getattr(_parse(ex.text), "save_interval", None) is None
    assert any(n.startswith("the planner's plan saves no checkpoint during the run; none written; add --save DIR")
               for n in ex.notes)


def test_a_tier_never_saved_and_an_interval_longer_than_the_run():
    # the default preset: the optimum never saves to host memory (its saves would only stall)
    ex = megatron_args(planner.load_preset("default"))
    assert any(n.startswith("checkpoint tier host memory: the planner's optimum never saves to it") for n in ex.notes)
    assert not any("--non-persistent" in n for n in ex.notes)
    # a PFS interval beyond the run: written, and said to save only at the end
    sj = _scenario("default")
    sj["training"]["tokens_total"] = 1e10  # 1e10 / (512·8192 tokens a step) = 2,385 steps (ceil)
    st = _step_s(sj)
    sj["checkpoint"]["tiers"] = [{"tier": "pfs", "interval_s": 5000.4 * st}]
    ex = megatron_args(sj)
    assert _parse(ex.text).save_interval == 5000
    assert any("more than the run's 2,385 steps: saved at the end only" in n for n in ex.notes)


def test_an_interval_below_one_step_is_one_step_and_no_tier_writes_nothing():
    sj = _scenario("default")
    sj["checkpoint"]["tiers"] = [{"tier": "pfs", "interval_s": 0.01}]
    assert _parse(megatron_args(sj).text).save_interval == 1
    sj["checkpoint"]["tiers"] = []
    ex = megatron_args(sj)
    assert getattr(_parse(ex.text), "save_interval", None) is None
    assert "no checkpoint tier in the scenario: no checkpoint flags written." in ex.notes
    assert "checkpoint" not in tomllib.loads(torchtitan_toml(sj).text)


def test_two_tiers_of_one_kind_group_keep_the_more_frequent():
    sj = _scenario("default")
    st = _step_s(sj)
    sj["checkpoint"]["tiers"] = [{"tier": "pfs", "interval_s": 40.4 * st},
                                 {"tier": "object_store", "interval_s": 400.4 * st}]
    ex = megatron_args(sj)
    assert _parse(ex.text).save_interval == 40
    assert ("Megatron's --save holds one persistent tier: the object store every 400 steps is not written (the "
            "parallel file system is saved more often)." in ex.notes)


def test_the_plan_pages_downloads_carry_the_interval(monkeypatch):
    """The sidebar's Export expander: the Megatron and TorchTitan downloads carry the checkpoint steps
    (the same text as the CLI's), and the DeepSpeed button's help names what its file cannot carry."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    got: dict = {}
    real = st.download_button

    def capture(label, data, *a, **k):
        got[k.get("key")] = (data, k.get("help"))
        return real(label, data, *a, **k)

    monkeypatch.setattr(st, "download_button", capture)
    st.cache_data.clear()
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app_pages" / "plan.py"), default_timeout=120)
    at.run()
    assert not at.exception
    sj = at.session_state["scenario"]
    assert got["dl_meg"][0] == megatron_args(sj).text and "--save-interval " in got["dl_meg"][0]
    assert got["dl_tt"][0] == torchtitan_toml(sj).text and "[checkpoint]" in got["dl_tt"][0]
    assert "the checkpoint steps, called in the training loop" in got["dl_ds"][1]
    assert "engine.save_checkpoint(DIR) on every rank" in got["dl_ds"][1]


def test_review41c_given_intervals_and_goodput_0_are_worded_as_they_are():
    """Review 41c: given intervals were called "the planner's optimum" in the synchronous-save note and
    "the optimum without it" in TorchTitan's node-local note; a goodput-0 plan printed "0.0000, inf d";
    a node-local tier the plan never saves to was not named by the TorchTitan export."""
    sj = _scenario(tiers=[{"tier": "host_memory", "interval_s": 60}, {"tier": "pfs", "interval_s": 600}])
    sync = next(n for n in megatron_args(sj).notes if "this launch saves synchronously" in n)
    assert "the checkpoint intervals here are the given ones (goodput" in sync and "optimum" not in sync
    tt = _scenario("default", tiers=[{"tier": "host_memory", "interval_s": 30}, {"tier": "pfs", "interval_s": 3600}])
    note = next(n for n in torchtitan_toml(tt).notes if "of the plan" in n)
    assert "the interval above is the given one: goodput" in note and "optimum" not in note
    zero = _scenario("default", tiers=[{"tier": "host_memory"}])
    zero["training"]["tokens_total"] = 2e10
    text = " ".join(deepspeed_config(zero).notes + torchtitan_toml(zero).notes)
    assert "inf d" not in text and "0.0000" not in text
    assert "goodput 0 in the steady state: planner evaluate's note 'Goodput is 0' gives the run's time" in text
    nv = _scenario("default", tiers=[{"tier": "local_nvme"}, {"tier": "pfs"}, {"tier": "object_store"}])
    assert any(n.startswith("checkpoint tier local NVMe: the planner's optimum never saves to it")
               for n in torchtitan_toml(nv).notes)
