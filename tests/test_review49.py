"""Review 49 (2026-12-07): the lax-type rules of a field are read once per (model class, field)
(planner.schema._lax_rules) instead of from the annotation on every validation; the messages
must stay those of reviews 38 / 40 and must follow each class's own annotation."""
from typing import Literal, Optional

import numpy as np
import pytest
from pydantic import ValidationError

from planner import schema


class _A(schema._Strict):
    x: int = 1
    flag: bool = False


class _B(schema._Strict):  # the same field names, other types: the rules are per class
    x: Optional[float] = None
    flag: Literal[0, 1, 3] = 0


def _msg(cls, **kw) -> str:
    with pytest.raises(ValidationError) as e:
        cls(**kw)
    return str(e.value)


def test_rules_follow_each_class_annotation():
    # int field: "a whole number"; float field of the other class with the same name: "a number"
    assert "a whole number, not true" in _msg(_A, x=True)
    assert "a number, not true" in _msg(_B, x=True) and "whole" not in _msg(_B, x=True)
    # bool field vs an int Literal of the same name (zero_stage's rule)
    assert "must be true or false (got 1)" in _msg(_A, flag=1)
    assert "must be 0, 1 or 3 (got 'no')" in _msg(_B, flag="no")
    # asked again (rules now cached), in the other order: the same answers
    assert "a number, not the text '8'" in _msg(_B, x="8")
    assert "a whole number, not the text '8'" in _msg(_A, x="8")
    assert _A(x=np.int64(4), flag=np.bool_(True)).flag is True
    assert _B(x=2.5).x == 2.5


def test_cache_entries_are_per_class_and_field():
    _A(x=2)
    _B(x=2.0)
    assert schema._LAX_RULES[(_A, "x")][:3] == (True, True, False)  # numeric, int only, not bool
    assert schema._LAX_RULES[(_B, "x")][:3] == (True, False, False)
    assert schema._LAX_RULES[(_B, "flag")][3] == ["0", "1", "3"]


def test_scenario_messages_unchanged():
    import planner

    s = planner.load_preset("default").to_json_dict()
    s["parallelism"]["tp"] = True
    with pytest.raises(planner.InputError) as e:
        planner.evaluate(s)
    # the message the engine gave before the cache (review 40's wording, checked on c09f390)
    assert str(e.value) == "parallelism.tp: must be a whole number, allowed 1 to 10,000,000 (got true)"
