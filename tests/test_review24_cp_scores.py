"""Review 24 (new-user review): materialised-score attention (flash attention off) under context
parallelism kept a rank's scores as (s/c)², a quarter of the scores at CP 2, while the timing
charged its s/c queries against all s keys. A CP rank keeps its s/c queries' scores against all s
keys for the backward pass: Korthikanti et al. 2022 Table 2's ``5·a·s`` bytes per token (with
dropout; ``2·a·s`` without) stays, times the rank's s/c tokens, so the score memory falls as 1/c.
The combination is also one no framework runs, which a note now says."""

from __future__ import annotations

import pytest

import planner
from planner import memory


@pytest.mark.parametrize("cp", [1, 2, 8])
def test_score_term_of_one_layer_scales_as_one_over_cp(cp):
    # s = 4,096, b = 1, h = 4,096, a = 32, t = 1, dropout (Table 2): 5·a·s bytes per token for
    # the s/c tokens of a rank = 5 × 32 × 4,096 × 4,096 / c
    s, b, h, a = 4096, 1, 4096, 32
    off = memory.activation_bytes_per_layer(s, b, h, a, 1, flash_attention=False, cp=cp)
    on = memory.activation_bytes_per_layer(s, b, h, a, 1, flash_attention=True, cp=cp)
    assert float(off - on) == pytest.approx(5 * a * s * (s / cp) * b, rel=1e-12)


def _act_bytes(cp: int, flash: bool) -> tuple[float, list[str]]:
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["parallelism"].update(cp=cp, dp=None, flash_attention=flash, recompute="none")
    r = planner.evaluate(d)
    return r.results["mem_activations_bytes"], r.notes


def test_engine_scores_scale_as_one_over_cp_and_the_combination_is_noted():
    """Llama 3 8B (32 layers, 32 heads, no dropout: 2 B per score), s = 8,192, mbs 1, PP 1
    (one micro-batch in flight): the scores of all 32 layers are 2 × 32 × 8,192 × 8,192/c × 32 B
    = 128 GiB / c."""
    for cp in (1, 2, 8):
        off, notes = _act_bytes(cp, False)
        on, notes_on = _act_bytes(cp, True)
        assert off - on == pytest.approx(32 * 2 * 32 * 8192 * (8192 / cp), rel=1e-12), cp
        said = [n for n in notes if n.startswith("Materialised-score attention")]
        assert bool(said) == (cp > 1), cp
        assert not any(n.startswith("Materialised-score attention") for n in notes_on)


def test_sweep_offers_no_cp_without_flash_attention():
    """The GPT-3 175B preset (flash attention off, as its 2021 run) swept to CP 4 with materialised
    scores, which no framework runs (Transformer Engine disables unfused attention under CP;
    planner export says so): the sweep's rule now keeps CP at 1 there and names the rule."""
    from planner.sweep import count_splits, enumerate_splits, no_valid_split_reason, reason_strings
    s = planner.load_preset("gpt3-175b-a100-1024")
    assert not s.parallelism.flash_attention
    df = planner.sweep(s, top=20)
    assert (df["cp"] == 1).all()
    e = enumerate_splits(s, cp=[1, 2, 4], include_invalid=True)
    reasons = reason_strings(e["sweep_reason"])
    cp = e["cp"]
    assert all(r != "" for r in reasons[cp > 1])  # none valid (an earlier rule may name another reason)
    assert sum("needs flash attention" in r for r in reasons[cp > 1]) > 0
    assert not any("needs flash attention" in r for r in reasons[cp == 1])
    # with flash attention on, CP splits are back
    d = s.to_json_dict()
    d["parallelism"]["flash_attention"] = True
    assert count_splits(planner.schema.validate_scenario(d)) > count_splits(s)
    # a CP-only space without flash says why no split is left
    msg = no_valid_split_reason(s, 1024, cp=[2, 4])
    assert "CP > 1 needs flash attention" in msg, msg


# ---- review 24b (diff review): the rest of the code follows the rule --------------------------

def test_link_fitter_invents_no_cp_without_flash_attention():
    """A GPT-3 link with gbs 24 (DP 16 does not divide it): the split fitter changed CP 1 → 2 with
    flash attention off; it now finds PP 16 (DP 8), and with flash on CP 2 is still allowed."""
    from planner import share
    sj, warns = share.params_to_scenario({"p": "gpt3-175b-a100-1024", "gbs": "24"})
    assert sj["parallelism"]["cp"] == 1 and sj["parallelism"]["pp"] == 16, warns
    sj, _ = share.params_to_scenario({"p": "gpt3-175b-a100-1024", "gbs": "24", "fa": "1"})
    assert sj["parallelism"]["cp"] == 2


def test_no_fit_message_says_cp_was_not_tried_without_flash():
    from planner.sweep import no_split_reason
    s = planner.load_preset("gpt3-175b-a100-1024")
    d = s.to_json_dict()
    d["training"].update(seq_len=65536, global_batch_size=192)
    sc = planner.schema.validate_scenario(d)
    df = planner.sweep(sc, top=1)
    assert len(df) == 0
    msg = no_split_reason(sc, 1)
    assert "CP > 1 was not tried: parallelism.flash_attention is off" in msg, msg
    d["parallelism"]["flash_attention"] = True
    on = planner.schema.validate_scenario(d)
    assert len(planner.sweep(on, top=1)) == 1  # with flash attention CP splits fit
    assert "CP > 1 was not tried" not in no_split_reason(on, 1)


def test_cli_sweep_notes_cp_stays_one():
    from test_review15f_cli_links import _cli
    rc, out, err = _cli("sweep", "--preset", "gpt3-175b-a100-1024", "--top", "1")
    assert rc == 0 and "note: CP stays 1 in this sweep: parallelism.flash_attention is off" in err, err
    rc, out, err = _cli("sweep", "--preset", "llama3-8b-h100-64", "--top", "1")
    assert rc == 0 and "CP stays 1" not in err


def test_explore_caption_says_cp_stays_one():
    from test_app import EXPLORE, _run
    at = _run(EXPLORE, {"p": "gpt3-175b-a100-1024"})
    assert any("CP stays 1: flash attention is off" in c.value for c in at.caption)
