"""Review 13i: hostile text from a share link, an imported scenario JSON or config.json, and a
scenario file, reaching the dashboard, the launch-configuration exports and the CLI.

A name, an id or a link value is the sender's text. On the page it must read as text: no bold,
image, link, LaTeX, colour or HTML it carries may be rendered (Streamlit renders markdown in
warnings, errors, captions, markdown, widget labels and tooltips), a backtick must not close the
code span it is quoted in, invisible / bidirectional characters are dropped and its length is
bounded. In an export it must not start a line of its own (a newline in a ``#`` comment would
start shell arguments or TOML keys). On a terminal it must not run an escape sequence.

The expected strings below are written by hand from CommonMark's escaping rules, the TOML 1.0
string grammar and the terminal's ESC (0x1b); none is taken from the code's own output.
"""

from __future__ import annotations

import copy
import io
import json
import re
import sys
import tomllib
from pathlib import Path

import pandas as pd
import pytest

import planner
from planner import catalog

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_app import COMPARE, EXPLORE, PLAN, VALIDATE, _clear_caches, _run  # noqa: E402,F401

ROOT = Path(__file__).resolve().parents[1]

#: A name that formats the page if read as markdown: bold, an external image (a tracking pixel),
#: a javascript: link, a colour directive, LaTeX, HTML, strikethrough, an entity for U+202E
#: (right-to-left override) and a backtick that would close a code span.
PAY = ("**PWN** ![i](http://127.0.0.1:9/p.png) [l](javascript:alert(1)) :red[RED] $$X$$ "
       "<img src=x onerror=alert(1)> ~~del~~ &#x202e;ent `tick")
#: What must never reach the rendered text: each would be a construct, not characters.
MARKERS = ("**PWN**", "![i](", "[l](", ":red[", "$$X", "<img", "~~del", "&#x202e;")


def live(md: str) -> str:
    """The part of a markdown source that is read as markdown: code spans removed (CommonMark: a
    run of n backticks closes at the next run of exactly n), then every backslash escape."""
    md = re.sub(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", " ", md, flags=re.S)
    return re.sub(r"\\[!-/:-@\[-`{-~]", "", md)


def assert_inert(md: str) -> None:
    text = live(md)
    for m in MARKERS:
        assert m not in text, (m, md[:400])


def _sources(at) -> list[str]:
    """The markdown source of every element that Streamlit renders as markdown."""
    out = []
    for kind in ("markdown", "caption", "warning", "error", "info", "success"):
        out += [e.value for e in getattr(at, kind)]
    for w in list(at.number_input) + list(at.selectbox) + list(at.multiselect) + list(at.text_input):
        out.append(w.label)
        if getattr(w, "help", None):
            out.append(w.help)
    return out


def _inline(table: str, key: str, name: str, by_alias: bool = False) -> dict:
    obj = getattr(catalog, table)()[key].model_dump(mode="json", by_alias=by_alias, exclude_none=True)
    obj["name"] = name
    return obj


def _tier_link(name: str) -> str:
    return json.dumps([{"tier": "host_memory", "interval_s": None, "replicas": 0},
                       {"tier": _inline("storage_tiers", "pfs", name), "interval_s": None, "replicas": 0}])


# --- the helpers, by hand ---------------------------------------------------------------------

def test_md_text_escapes_each_construct_and_leaves_ordinary_punctuation():
    from app_pages import _common as C

    assert C.md_text("a **b** n_gpus _x_ [l](u) ![i](s) $1$ <img> :red[r] pfs:auto:0 &amp; tp='3' (got 3).") == (
        r"a \*\*b\*\* n_gpus \_x\_ [l\](u) ![i\](s) \$1\$ \<img> \:red[r] pfs:auto:0 \&amp; tp='3' (got 3).")
    # one of a pairing character cannot open and close anything: left as it is (1.* keys, ckj='[]')
    assert C.md_text("no 1.* keys; ckj='[]'; $5; a`b; ~3; _x; a & b <= c") == (
        "no 1.* keys; ckj='[]'; $5; a`b; ~3; _x; a & b <= c")
    assert C.md_text("a*b", whole=False) == r"a\*b"  # inside other markdown (**name**) every one is escaped
    assert C.md_text("x\n\n# H\u202e\u200b\x1b[2J") == "x # H[2J"  # one line; controls dropped
    assert len(C.md_text("y" * 10_000)) == C.MESSAGE_MAX and C.md_text("y" * 10_000).endswith("…")


def test_code_span_is_fenced_longer_than_any_backtick_run_in_it():
    from app_pages import _common as C

    assert C.code("tp = 3") == "`tp = 3`"
    assert C.code("a`b") == "`` a`b ``"
    assert C.code("a``b`") == "``` a``b` ```"
    assert C.code("a\n\n# b") == "`a # b`"  # a blank line would end the list item
    assert live("- " + C.code("x` **PWN** `y")) == "-  "


def test_plain_and_one_line_strip_invisible_characters_and_bound_the_length():
    from app_pages import _common as C

    assert C.one_line("a\u202eb\u2066c\u200bd\ufeff\x00e\x9b\n\tf") == "abcde f"
    assert C.one_line("x" * 300) == "x" * 199 + "…"
    assert C.plain("a&b <c>") == r"a\&b \<c\>"


# --- links -------------------------------------------------------------------------------------

def test_a_link_value_quoted_in_a_warning_is_text_not_markdown():
    """Found by review: ?p=**PWN**![i](http://…) put bold text and an external image (a request
    to the sender's server) into the Plan page's "Link:" warning."""
    at = _run(PLAN, {"p": PAY, "tp": PAY})
    warns = [w.value for w in at.warning if w.value.startswith("Link:")]
    assert any("p='" in w for w in warns) and any("tp='" in w for w in warns), warns
    for w in warns:
        assert_inert(w)


def test_validate_and_compare_link_warnings_are_escaped_and_bounded():
    """v_set / v_metric / v_group and c_n were quoted with repr, unescaped and uncut: a
    10,000-character value filled the page."""
    long = PAY + "x" * 10_000
    at = _run(VALIDATE, {"v_set": long, "v_metric": long, "v_group": long})
    warns = [w.value for w in at.warning]
    assert len(warns) == 3, warns
    for w in warns:
        assert_inert(w)
        assert len(w) < 400, len(w)
    at = _run(COMPARE, {"c_n": long})
    w = next(w.value for w in at.warning if "c_n=" in w.value)
    assert_inert(w)
    assert len(w) < 400, len(w)


def test_an_inline_tier_name_does_not_format_the_page_or_its_labels():
    """Found by review: an inline checkpoint tier's name (ckj) was bold-wrapped raw in "Intervals
    in use" and was the raw label of its interval box (labels are markdown): its image was fetched."""
    at = _run(PLAN, {"ckj": _tier_link("T" + PAY)})
    intervals = next(m.value for m in at.markdown if m.value.startswith("Intervals in use"))
    assert_inert(intervals)
    assert "**T\\*\\*PWN" in intervals and len(intervals) < 600
    labels = [n.label for n in at.number_input if n.key and n.key.startswith("w_ck_inline:")]
    assert labels
    for lab in labels:
        assert_inert(lab)
        assert len(lab) < 300
    opts = [o for ms in at.multiselect for o in ms.options if o.startswith("inline:")]
    assert opts and all(len(o) <= 100 for o in opts), opts
    for src in _sources(at):
        assert_inert(src)


def test_names_in_a_refused_link_value_are_escaped_on_every_page():
    """An inline accelerator named with markdown, then prec=fp4 that it refuses: the schema's
    message names the accelerator, and the warning rendered it."""
    params = {"accj": json.dumps(_inline("accelerators", "h100-sxm-80gb", "A" + PAY, by_alias=True)),
              "sysj": json.dumps(_inline("systems", "dgx-h100", "S" + PAY)), "m": "custom", "mn": "M" + PAY,
              "prec": "fp4"}
    for page in (PLAN, EXPLORE):
        at = _run(page, params)
        assert any("is not supported by A" in w.value for w in at.warning)
        for src in _sources(at):
            assert_inert(src)
    at = _run(COMPARE, {"c_src1": "link", **{f"1.{k}": v for k, v in params.items()}})
    assert any("is not supported by A" in w.value for w in at.warning)
    for src in _sources(at):
        assert_inert(src)


def test_compare_headers_and_their_help_are_bounded_and_escaped():
    """A 10,000-character model name from a slot's link was the whole column header, its
    chart legend and its (markdown) tooltip."""
    at = _run(COMPARE, {"c_src1": "link", "1.m": "custom", "1.mn": PAY + "x" * 10_000})
    cols = list(at.dataframe[0].value.columns)
    assert all(len(c) < 120 for c in cols), [len(c) for c in cols]
    cfg = json.loads(at.dataframe[0].proto.columns)
    helps = [v["help"] for v in cfg.values() if isinstance(v, dict) and v.get("help")]
    assert helps
    for h in helps:
        assert_inert(h)


# --- imports -----------------------------------------------------------------------------------

def _upload(at, label, name, payload: bytes):
    next(u for u in at.get("file_uploader") if u.label == label).set_value((name, payload, "application/json"))
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_an_imported_scenario_s_errors_keep_names_inside_their_code_spans():
    """A backtick in an inline accelerator's name closed the `...` span its error line was
    quoted in (Plan's "This scenario is not valid" list, the sidebar's "Import:" error), and the
    rest of the name was read as markdown."""
    sj = planner.load_preset("default").to_json_dict()
    sj["cluster"]["accelerator"] = _inline("accelerators", "h100-sxm-80gb", "A` " + PAY + " `z", by_alias=True)
    sj["training"]["precision"] = "fp4"
    at = _upload(_run(PLAN), "Import scenario JSON", "s.json", json.dumps(sj).encode())
    errors = [e.value for e in at.error]
    assert any("not supported by A" in e for e in errors), errors
    for src in _sources(at):
        assert_inert(src)
    bad = {"model": "llama3-8b", "cluster": {"system": "dgx-h100", "n_gpus": 8}, PAY: 1}
    at = _upload(_run(PLAN), "Import scenario JSON", "s.json", json.dumps(bad).encode())
    err = next(e.value for e in at.error if "unknown top-level keys" in e.value)
    assert_inert(err)


def test_a_config_json_s_strings_are_escaped():
    """config.json's model_type is quoted in a note and _name_or_path becomes the model's name:
    both reached captions unescaped."""
    cfg = {"model_type": PAY, "_name_or_path": "N" + PAY, "hidden_size": 4096, "num_hidden_layers": 32,
           "num_attention_heads": 32, "intermediate_size": 11008, "vocab_size": 32000}
    at = _upload(_run(PLAN), "Import a Hugging Face config.json", "c" + PAY + ".json", json.dumps(cfg).encode())
    assert any("is not in the planner's list" in c.value for c in at.caption), [c.value for c in at.caption]
    for src in _sources(at):
        assert_inert(src)


# --- launch configurations ---------------------------------------------------------------------

# (no ESC: the schema refuses control characters in names since review 13i; its newlines fold to
# spaces there, and the exports' own line guard is checked with the raw string below)
_EVIL = "x\n--load /tmp/evil \\\nrm -rf ~ #\r[job]\nX = 1[2J\u2028y\"\\"


def _evil_scenario() -> dict:
    sj = planner.load_preset("default").to_json_dict()
    sj["name"] = _EVIL
    m = catalog.models()["llama3-70b"].model_dump(mode="json", exclude_none=True)
    for k in ("source", "published_params_total", "published_params_active"):
        m.pop(k, None)
    m["name"], m["ffn_hidden_size"] = _EVIL, m["ffn_hidden_size"] + 64  # not a TorchTitan flavor: a note names it
    sj["model"] = m
    return sj


def test_a_name_cannot_start_a_line_of_its_own_in_an_export():
    """Found by review: a newline in the scenario's name ended the Megatron export's "#" comment,
    so the next line ("--load … / rm -rf ~") was pasted as arguments; in the TorchTitan TOML it
    started "[job]" / "X = 1" and the description string held a raw newline (invalid TOML)."""
    from planner.export import megatron_args, torchtitan_toml

    sj = _evil_scenario()
    meg = megatron_args(sj).text
    for line in meg.splitlines():
        assert line.startswith(("#", "--")) or not line.strip(), line
    # (the checkpoint note names "--load DIR" since session 41: the name's "--load /tmp/evil" is what must not be)
    assert "--load /tmp" not in meg.replace("# Megatron-LM arguments for 'x --load /tmp", "")
    tt = torchtitan_toml(sj)
    doc = tomllib.loads(tt.text)  # valid TOML
    assert "X" not in doc and set(doc) <= {"job", "model", "training", "parallelism", "activation_checkpoint",
                                           "compile", "float8", "checkpoint"}, set(doc)
    assert set(doc["job"]) == {"description"} and "\n" not in doc["job"]["description"]
    assert doc["job"]["description"].startswith("x --load /tmp/evil \\ rm -rf ~ # [job] X = 1[2J y")
    for text in (meg, tt.text):
        assert "\x1b" not in text and "\u2028" not in text and "\r" not in text
    assert all("\n" not in n for n in tt.notes) and any("has none of the architectures" in n for n in tt.notes)


@pytest.mark.parametrize("raw", ["a\x00b", "tab\there", "nl\nx", "del\x7f", "q\"b\\s", "é\u2028", "\x1f"])
def test_toml_string_round_trips_every_character(raw):
    """TOML 1.0 basic strings forbid raw U+0000–U+0008, U+000A–U+001F and U+007F."""
    from planner.export import _toml_str

    assert tomllib.loads("k = " + _toml_str(raw))["k"] == raw


# --- command line ------------------------------------------------------------------------------

from test_input_ranges import _cli  # noqa: E402  (rc, stdout, stderr of one CLI call)


def test_a_scenario_file_cannot_make_the_cli_print_escape_sequences(tmp_path):
    """Found by review: an inline accelerator named "acc\\x1b[2J…\\nline2" in a scenario file with
    an fp4 precision it refuses printed the raw ESC (the terminal cleared) and a second line
    without the "planner:" prefix; the exports' comments carried it to stdout too."""
    sj = planner.load_preset("default").to_json_dict()
    sj["name"] = "scen\x1b]0;title\x07\x1b[2J"
    sj["cluster"]["accelerator"] = _inline("accelerators", "h100-sxm-80gb", "acc\x1b[2J\x1b[31mPWN\nline2\u202e",
                                           by_alias=True)
    bad = copy.deepcopy(sj)
    bad["training"]["precision"] = "fp4"
    f = tmp_path / "s.json"
    f.write_text(json.dumps(bad))
    rc, out, err = _cli("evaluate", str(f), "--format", "table")
    assert rc == 2
    assert "\x1b" not in err and "\u202e" not in err
    # refused by the schema since review 13i (schema.Name): one line per field, each naming it
    lines = err.splitlines()
    assert all(ln.startswith("planner: ") for ln in lines)
    assert any("name:" in ln and "U+001B" in ln for ln in lines), err
    assert any("accelerator.name:" in ln and "U+001B" in ln for ln in lines), err
    f.write_text(json.dumps(sj))
    for to in ("megatron", "torchtitan", "deepspeed"):
        rc, out, err = _cli("export", str(f), "--to", to)
        assert rc == 2, err  # the names are refused (schema.Name), nothing is exported
        assert "\x1b" not in out + err and "\x07" not in out + err


def test_a_config_json_s_model_type_cannot_reach_the_terminal_raw(tmp_path):
    cfg = {"model_type": "x\x1b[2Jy", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
           "intermediate_size": 11008, "vocab_size": 32000}
    f = tmp_path / "config.json"
    f.write_text(json.dumps(cfg))
    rc, out, err = _cli("evaluate", "--hf-config", str(f), "--format", "csv")
    assert rc == 0, err
    assert "\x1b" not in err and "x\\x1b[2jy" in err  # the importer lower-cases model_type


def test_cli_table_prints_text_cells_as_one_safe_line():
    from planner.cli import print_frame

    buf = io.StringIO()
    print_frame(pd.DataFrame({"source": ["ok", "a\x1b[2J\nb\u202e"], "n": [1, 2]}), "table", buf)
    text = buf.getvalue()
    assert "\x1b" not in text and "\u202e" not in text and text.count("\n") == 3  # header + 2 rows
    assert "a\\x1b[2J\\nb\\u202e" in text


# --- a real browser: what AppTest cannot show (the rendered DOM, the requests it makes) ----------


# The real-browser check of the same link is tests/e2e/test_browser.py
# ::test_hostile_link_renders_as_text_and_fetches_nothing (it shares the e2e session's server and
# Chromium: a second sync Playwright in the same process fails inside the first one's loop).


def test_a_name_with_invisible_characters_or_too_long_is_refused_naming_the_field():
    """schema.Name (review 13i): a right-to-left override, an ESC or a zero-width character in a
    name, or a name over NAME_MAX_CHARS (200) characters, is refused with the field; a newline folds
    to a space. In a link the tier is refused and the base value kept, with a warning."""
    from planner.schema import NAME_MAX_CHARS, Scenario, format_errors
    from pydantic import ValidationError

    sj = planner.load_preset("default").to_json_dict()
    for bad, needle in (("a\u202eb", "U+202E"), ("a\x1bb", "U+001B"), ("a\u200bb", "U+200B"),
                        ("z" * (NAME_MAX_CHARS + 1), f"{NAME_MAX_CHARS + 1} characters; allowed at most {NAME_MAX_CHARS}")):
        sj["name"] = bad
        with pytest.raises(ValidationError) as e:
            Scenario.model_validate(sj)
        assert any(ln.startswith("name: ") and needle in ln for ln in format_errors(e.value)), format_errors(e.value)
    sj["name"] = "two\nlines\tand a tab"
    assert Scenario.model_validate(sj).name == "two lines and a tab"
    at = _run(PLAN, {"ckj": _tier_link("T\u202ez")})
    assert any("checkpoint.tiers[" in w.value and "U+202E" in w.value for w in at.warning), \
        [w.value for w in at.warning]
