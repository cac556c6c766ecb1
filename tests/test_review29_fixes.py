"""Review h29a (new-user break-it review) fixes: each test names the finding and gives the expected
text or figure from the finding, the documentation or a hand calculation, not from the code's output."""
from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

from planner import share
from planner.cli import main


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()


# ---- F1: the CLI refuses what the dashboard ignores, and says so ----------------------------------

def test_f1_cli_says_the_dashboard_would_ignore_an_unknown_key_not_that_it_was_ignored():
    # Before: "planner: --link: 'e': unknown link parameter ignored" with status 2 (the link cut
    # mid-key after '&e'); the other refusals already say "the dashboard would keep ...".
    for link, key in (("?p=default&n=512&e", "e"), ("?p=default&zzz=1", "zzz")):
        rc, out, err = _cli("evaluate", "--link", link)
        assert rc == 2 and out == "", (rc, out, err)
        assert err == f"planner: --link: '{key}': unknown link parameter (the dashboard would ignore it)\n", err
        assert "parameter ignored" not in err


def test_f1_architecture_keys_without_m_custom_are_refused_in_the_same_words():
    rc, _out, err = _cli("evaluate", "--link", "?p=default&mb=4&md=4")
    assert rc == 2
    assert err == ("planner: --link: mb, md: architecture fields are used only with m=custom; "
                   "the dashboard would ignore them\n"), err


def test_f1_the_dashboards_own_warning_still_says_ignored():
    # on the page the key really is ignored (the scenario is shown without it)
    _sj, warns = share.params_to_scenario({"p": "default", "zzz": "1"})
    assert warns == ["'zzz': unknown link parameter ignored"], warns
    assert share.foreign_page_keys({"zzz": "1"}, "compare") == ["'zzz': unknown link parameter ignored"]
