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
    assert msg.startswith("training.tokens_total: allowed more than 0, up to 1e+16 " + got), msg


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
    named = line.split("not given (", 1)[1].split(")", 1)[0].split(", ")
    assert "vpp" in named and "zero_stage" in named and "tp" not in named and "pp" not in named
    # one field set: no note
    rc, out, err = _cli("evaluate", "--preset", "default", "--set", "parallelism.tp=8", "--format", "csv")
    assert rc == 0 and "replaces the whole object" not in err
