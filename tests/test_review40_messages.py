"""Review 39B's nitpicks, left then, fixed in session 40: numpy scalars quoted as numpy 2's repr,
tokens_total's range worded two ways by the schema, and ``--set section={…}`` replacing a whole
object without a word."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest

import planner
from planner.cli import main


@pytest.mark.parametrize("value,got", [(np.float64("nan"), "(got nan)"), (np.int64(-3), "(got -3)"),
                                       (np.float32(2.5), "(got 2.5)")])
def test_a_numpy_scalar_is_quoted_as_its_number(value, got):
    d = planner.load_preset("default").to_json_dict()
    d["training"]["seq_len"] = value
    with pytest.raises(planner.InputError) as e:
        planner.evaluate(d)
    assert got in str(e.value) and "np." not in str(e.value)


@pytest.mark.parametrize("bad,got", [(0, "(got 0)"), (-1, "(got -1)"), (1e30, "(got 1e+30)")])
def test_tokens_total_is_refused_in_one_wording_at_both_ends(bad, got):
    d = planner.load_preset("default").to_json_dict()
    d["training"]["tokens_total"] = bad
    with pytest.raises(planner.InputError) as e:
        planner.evaluate(d)
    msg = str(e.value)
    assert msg.startswith("training.tokens_total: allowed 1,000,000 to 1e+16 " + got), msg


def _cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()


def test_set_of_a_whole_object_names_the_fields_it_drops():
    rc, out, err = _cli("evaluate", "--preset", "default", "--set", 'parallelism={"tp": 8, "pp": 4}',
                        "--format", "csv")
    assert rc == 0, err
    assert "note: --set parallelism={…} replaces the whole object" in err
    # the default preset sets vpp 5 and ZeRO 1: both named, as they go back to their defaults
    line = next(x for x in err.splitlines() if x.startswith("note: --set parallelism="))
    named = line.split("are dropped (", 1)[1].split(")", 1)[0].split(", ")
    assert "vpp" in named and "zero_stage" in named and "tp" not in named and "pp" not in named
    # one field set: no note
    rc, out, err = _cli("evaluate", "--preset", "default", "--set", "parallelism.tp=8", "--format", "csv")
    assert rc == 0 and "replaces the whole object" not in err


def test_set_whole_object_note_covers_list_items_and_skips_fields_set_later():
    """Review 40c D12: a list item replaced whole (checkpoint.tiers.0={…}) dropped its interval
    without a word; fields a later --set gives were listed as dropped."""
    rc, out, err = _cli("evaluate", "--preset", "default", "--set", 'checkpoint.tiers.0={"tier": "host_memory"}',
                        "--format", "csv")
    assert rc == 0, err
    assert "note: --set checkpoint.tiers.0={…} replaces the whole object; the fields it does not give are " \
           "dropped (interval_s)" in err
    rc, out, err = _cli("evaluate", "--preset", "default", "--set", 'parallelism={"tp": 8, "pp": 4}',
                        "--set", "parallelism.vpp=5", "--set", "parallelism.schedule=interleaved", "--format", "csv")
    assert rc == 0, err
    named = next(x for x in err.splitlines() if "replaces the whole object" in x).split(
        "are dropped (", 1)[1].split(")", 1)[0].split(", ")
    assert "vpp" not in named and "schedule" not in named and "zero_stage" in named


def test_complex_and_numpy_text_are_refused_by_name():
    """Review 40c D9/D10: numpy's complex ran as its real part (TP 8+1j as TP 8); numpy's text was
    quoted as np.str_('4096'); D11: a value above the bound is not rounded onto it."""
    d = planner.load_preset("default").to_json_dict()
    d["parallelism"]["tp"] = np.complex128(8 + 1j)
    with pytest.raises(planner.InputError) as e:
        planner.evaluate(d)
    assert str(e.value) == "parallelism.tp: must be a whole number, allowed 1 to 10,000,000 (got the complex number (8+1j))"
    d = planner.load_preset("default").to_json_dict()
    d["training"]["seq_len"] = np.str_("4096")
    with pytest.raises(planner.InputError) as e:
        planner.evaluate(d)
    assert "(got the text '4096')" in str(e.value)
    d = planner.load_preset("default").to_json_dict()
    d["training"]["tokens_total"] = 1.0000000000000002e16
    with pytest.raises(planner.InputError) as e:
        planner.evaluate(d)
    assert "(got 1.0000000000000002e+16)" in str(e.value)
