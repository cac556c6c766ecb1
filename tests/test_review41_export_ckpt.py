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
    pfs = next(n for n in ex.notes if n.startswith("checkpoint tier parallel file system every 25 steps"))
    assert "engine.save_checkpoint(DIR) on every rank every 25 steps" in pfs
    assert any(n.startswith("checkpoint tier host memory every 3 steps") for n in ex.notes)


def test_the_optimum_is_converted_to_the_nearest_whole_step():
    """Without given intervals: the engine's optimum over its step time, rounded (docs/reliability.md:
    405B host memory 24.7 s = 3.59 steps of 6.889 s → every 4; PFS 43.4 s → 6)."""
    sj = _scenario()
    r = planner.evaluate(sj).results
    tiers, step_s = checkpoint_plan(sj)
    assert step_s == r["step_time_s"]
    want = {k: max(1, round(r[f"ckpt_{k}_interval_opt_s"] / step_s)) for k in ("host_memory", "pfs")}
    assert {t.kind: t.steps for t in tiers} == want == {"host_memory": 4, "pfs": 6}
    assert not any(t.given for t in tiers)
    assert "(the planner's optimum 24.71 s over 6.889 s a step)" in " ".join(megatron_args(sj).notes)


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
    assert any(n.startswith("checkpoint tier object store every 400 steps: Megatron-LM's --save takes one tier")
               for n in ex.notes)
