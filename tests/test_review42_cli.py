"""Review 42a: the command line on a terminal that is not UTF-8, a sweep restricted to one
pipeline schedule, Hugging Face files whose MoE keys are left out (or given to a dense type), a
sequence that sequence parallelism cannot split, standard input, --version and the link's address.

Expected values come from sources: MixtralConfig's defaults (num_local_experts 8,
num_experts_per_tok 2: transformers/models/mixtral/configuration_mixtral.py) and the Mixtral paper's
46.7B total / 12.9B active parameters (Jiang et al. 2024, arXiv:2401.04088 §2); Llama 3.1 8B's
8.03B parameters (Meta's model card); Megatron-LM's rule that sequence parallelism splits the
sequence over the TP ranks (Korthikanti et al. 2022 §4.2.2); the ASCII spellings are the ones the
module names (planner/_textout.py), checked on the characters the table prints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import planner
import importlib

from planner import _textout, import_hf_config
from planner.batch import SCHEDULES
from planner.share import box_value_error
from test_cli import run
from test_hf_config import _params

sw = importlib.import_module("planner.sweep")

DATA = Path(__file__).resolve().parent / "data" / "hf_configs14"


# --- a terminal that cannot show − × ≤ -------------------------------------------------------

@pytest.mark.parametrize("encoding", ["ascii", "cp1252"])
@pytest.mark.parametrize("argv", [["evaluate", "--preset", "default"], ["presets"],
                                  ["validate", "--run", "narayanan21_t1_1.7B"]])
def test_table_output_on_a_narrow_encoding_has_no_traceback(encoding, argv):
    env = {**os.environ, "PYTHONIOENCODING": encoding}
    r = subprocess.run([sys.executable, "-m", "planner", *argv], capture_output=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr.decode(encoding, "replace")
    assert b"Traceback" not in r.stderr and b"UnicodeEncodeError" not in r.stderr
    r.stdout.decode(encoding)  # every byte is in the terminal's encoding
    if argv[0] == "evaluate" and encoding == "ascii":
        # the header's "TP 8 · PP 4 · ..." and "× 855,654,400" in ASCII, meaning kept
        assert b"TP 8 * PP 4 * CP 1 * DP 32" in r.stdout and b"80 x 855,654,400" in r.stdout


def test_ascii_spelling_keeps_the_meaning():
    # ≠ is not "=", 10⁻³ is not "10-3" or "103"; µ is "u"; a character outside the table (a user's
    # text quoted back) is escaped as Python's backslashreplace writes it, never a look-alike
    assert _textout.ascii_spelling("a ≠ b, 10⁻³ s, 5 µs, ≤ 2 → ok") == "a != b, 10^-3 s, 5 us, <= 2 -> ok"
    assert _textout.ascii_spelling("中") == "\\u4e2d"
    assert _textout.ascii_spelling("défault ８") == "d\\u00e9fault \\uff18"
    assert _textout.ascii_spelling("2³⁰") == "2^30"  # one caret for the run, also where cp1252 has ³


def test_cp1252_spells_a_mixed_superscript_run_whole():
    env = {**os.environ, "PYTHONIOENCODING": "cp1252"}
    r = subprocess.run([sys.executable, "-m", "planner", "evaluate", "--preset", "default"], capture_output=True,
                       env=env, timeout=300)
    assert r.returncode == 0 and b"GiB = 2^30 B" in r.stdout and "³".encode("cp1252") not in r.stdout


@pytest.mark.parametrize(("encoding", "shown"), [("ascii", b"'d\\u00e9fault'"), ("cp1252", "'défault'".encode("cp1252"))])
def test_a_user_typed_name_is_escaped_only_where_the_terminal_lacks_it(encoding, shown):
    """Escaped as JSON and TOML read it back, never a look-alike ('default' beside "unknown id");
    left as typed where the code page has the letter (review 43b)."""
    env = {**os.environ, "PYTHONIOENCODING": encoding}
    r = subprocess.run([sys.executable, "-m", "planner", "evaluate", "--preset", "défault"], capture_output=True,
                       env=env, timeout=300)
    assert r.returncode == 2 and shown in r.stderr, r.stderr


@pytest.mark.parametrize("encoding", ["ascii", "cp1252"])
@pytest.mark.parametrize("to", ["torchtitan", "deepspeed", "megatron"])
def test_an_export_is_utf8_whatever_the_terminal(encoding, to, tmp_path):
    """TOML and JSON are UTF-8 by their specifications (TOML 1.0 "A TOML file must be a valid UTF-8
    encoded Unicode document"; RFC 8259 §8.1): a name with 'è' reads back as typed."""
    env = {**os.environ, "PYTHONIOENCODING": encoding}
    r = subprocess.run([sys.executable, "-m", "planner", "export", "--preset", "default", "--set", "name=Modèle 70B",
                        "--to", to], capture_output=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    text = r.stdout.decode("utf-8")
    if to == "torchtitan":
        import tomllib
        assert tomllib.loads(text)["job"]["description"] == "Modèle 70B"
    elif to == "deepspeed":
        json.loads(text)
    else:
        assert "Modèle 70B" in text


def test_a_utf8_stream_is_left_as_it_is():
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    r = subprocess.run([sys.executable, "-m", "planner", "evaluate", "--preset", "default"], capture_output=True,
                       env=env, timeout=300)
    assert r.returncode == 0 and "TP 8 · PP 4".encode() in r.stdout


# --- sweep --schedules gpipe keeps the PP 1 splits ----------------------------------------------

def test_a_schedule_filter_keeps_pp1_splits_as_1f1b():
    """Without a pipeline there is no schedule: the PP 1 splits of a GPipe-only sweep are exactly
    those of a 1F1B sweep (plain gradient accumulation), and every PP > 1 split is GPipe."""
    s = planner.load_preset("llama3-8b-h100-64")
    opts = dict(zero_stages=(1,), recompute=("selective",), offload=("none",))
    g = sw.enumerate_splits(s, schedules=("gpipe",), **opts)
    f = sw.enumerate_splits(s, schedules=("1f1b",), **opts)
    pp1_g, pp1_f = g["pp"] == 1, f["pp"] == 1
    assert pp1_f.sum() > 0 and pp1_g.sum() == pp1_f.sum()
    assert np.all(g["schedule"][pp1_g] == SCHEDULES.index("1f1b"))
    assert np.all(g["schedule"][~pp1_g] == SCHEDULES.index("gpipe"))
    # and a sweep asking for both does not repeat the PP 1 rows
    both = sw.enumerate_splits(s, schedules=("1f1b", "gpipe"), **opts)
    assert (both["pp"] == 1).sum() == pp1_f.sum()


def test_cli_sweep_gpipe_recommends_a_split():
    rc, out, err = run("sweep", "--preset", "llama3-8b-h100-64", "--schedules", "gpipe", "--top", "3",
                       "--format", "json")
    assert rc == 0, err
    rows = json.loads(out)
    rows = rows["rows"] if isinstance(rows, dict) and "rows" in rows else rows
    assert len(rows) >= 1


# --- Hugging Face MoE keys ----------------------------------------------------------------------

def _cfg(name: str) -> dict:
    return {k: v for k, v in json.loads((DATA / name).read_text()).items() if not k.startswith("_")}


def test_mixtral_without_expert_keys_takes_mixtralconfig_defaults():
    cfg = {k: v for k, v in _cfg("mixtral_8x7b.json").items() if k not in ("num_local_experts", "num_experts_per_tok")}
    imp = import_hf_config(cfg)
    assert (imp.model.moe.n_experts, imp.model.moe.top_k) == (8, 2)
    total, active = _params(imp.model)
    assert total == pytest.approx(46.7e9, rel=0.005) and active == pytest.approx(12.9e9, rel=0.005)
    assert any("num_local_experts = 8" in n and "num_experts_per_tok = 2" in n for n in imp.notes)


def test_an_explicit_null_is_still_an_error():
    cfg = {**_cfg("mixtral_8x7b.json"), "num_experts_per_tok": None}
    with pytest.raises(planner.InputError, match="without num_experts_per_tok"):
        import_hf_config(cfg)


def test_expert_keys_in_a_llama_file_are_ignored_and_said():
    cfg = {**_cfg("llama31_8b.json"), "num_local_experts": 8, "num_experts_per_tok": 2}
    imp = import_hf_config(cfg)
    assert imp.model.moe is None
    total, _ = _params(imp.model)
    assert total == pytest.approx(8.03e9, rel=0.005)  # Llama 3.1 8B, dense
    assert any("ignored" in n and "'llama'" in n for n in imp.notes)


def test_a_llama_file_with_remote_code_keeps_its_expert_keys():
    cfg = {**_cfg("llama31_8b.json"), "num_local_experts": 8, "num_experts_per_tok": 2,
           "auto_map": {"AutoModelForCausalLM": "modeling_x.XForCausalLM"}}
    imp = import_hf_config(cfg)
    assert imp.model.moe is not None and imp.model.moe.n_experts == 8


# --- sequence parallelism needs s / cp divisible by tp ------------------------------------------

@pytest.mark.parametrize(("seq", "sp", "said"), [(8191, True, True), (8192, True, False), (8191, False, False)])
def test_sp_with_a_sequence_tp_does_not_divide_is_said(seq, sp, said):
    d = planner.load_preset("default").to_json_dict()  # TP 8, CP 1
    d["training"]["seq_len"] = seq
    d["parallelism"]["sequence_parallel"] = sp
    notes = planner.evaluate(d).notes
    hit = [n for n in notes if "not a multiple of tp = 8" in n]
    assert bool(hit) == said, notes


# --- standard input, --version, the link's address, grouped digits ------------------------------

def test_evaluate_reads_standard_input():
    sj = json.dumps(planner.load_preset("default").to_json_dict())
    r = subprocess.run([sys.executable, "-m", "planner", "evaluate", "-", "--format", "json"], input=sj.encode(),
                       capture_output=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["scenario"]["parallelism"]["tp"] == 8
    r = subprocess.run([sys.executable, "-m", "planner", "evaluate", "-"], input=b"{", capture_output=True, timeout=300)
    assert r.returncode == 2 and b"standard input" in r.stderr and b"Traceback" not in r.stderr


def test_version_and_bare_command():
    rc, out, err = run("--version")
    assert rc == 0 and planner.__version__ in out + err
    rc, out, err = run()
    assert rc == 2 and "evaluate" in err and "sweep" in err


def test_link_to_an_address_without_a_path_gets_its_slash():
    rc, out, err = run("link", "--preset", "default", "--base-url", "http://host:9000")
    assert rc == 0 and out.startswith("http://host:9000/?p=default"), out
    rc, out, err = run("link", "--preset", "default", "--base-url", "http://host:9000/app")
    assert rc == 0 and out.startswith("http://host:9000/app?p=default"), out


@pytest.mark.parametrize("value", [9007199254740991, 9007199254740991.0])
def test_a_huge_box_value_is_grouped_like_its_bound(value):
    msg = box_value_error("GPUs", value, 1, 10_000_000, whole=True, where="cluster.n_gpus")
    assert msg == "GPUs = 9,007,199,254,740,991: allowed a whole number 1 to 10,000,000 (cluster.n_gpus)"


@pytest.mark.parametrize("value", ["abc", "true"])
def test_power_limit_of_the_wrong_type_names_its_range(value):
    """The range is the schema's rule, POWER_LIMIT_MIN_FRAC·TDP to the TDP: 0.25 × 700 W = 175 W
    to 700 W on an H100 SXM (NVIDIA H100 datasheet: 700 W TDP)."""
    rc, out, err = run("evaluate", "--preset", "default", "--set", f"cluster.overrides.power_limit_w={value}")
    assert rc == 2 and "power_limit_w: must be a number, allowed 0.25·TDP to the accelerator's TDP" in err
    assert "175 to 700" in err



def test_an_explicit_null_expert_count_is_an_error_not_a_dense_model():
    cfg = {**_cfg("mixtral_8x7b.json"), "num_local_experts": None}
    with pytest.raises(planner.InputError, match="num_local_experts: null"):
        import_hf_config(cfg)


def test_phimoe_without_routing_keys_takes_phimoeconfig_defaults():
    """PhimoeConfig: num_local_experts 16, num_experts_per_tok 2 (transformers/models/phimoe)."""
    cfg = {"model_type": "phimoe", "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
           "num_key_value_heads": 8, "intermediate_size": 6400, "vocab_size": 32064}
    imp = import_hf_config(cfg)
    assert (imp.model.moe.n_experts, imp.model.moe.top_k) == (16, 2)


def test_deep_nesting_is_one_line_not_a_traceback(tmp_path):
    d = planner.load_preset("default").to_json_dict()
    v: object = 8
    for _ in range(600):
        v = [v]
    d["parallelism"]["tp"] = v
    f = tmp_path / "deep.json"
    f.write_text(json.dumps(d))
    rc, out, err = run("evaluate", str(f))
    assert rc == 2 and "nested too deeply (more than 64 levels" in err and "Traceback" not in err


def test_sp_note_gives_the_exact_token_count():
    d = planner.load_preset("default").to_json_dict()
    d["training"].update(global_batch_size=128, seq_len=1_000_001)
    notes = planner.evaluate(d).notes
    assert any("seq_len / cp = 1,000,001 tokens per rank" in n for n in notes), notes


def test_sweep_says_pp1_rows_are_shown_as_1f1b():
    rc, out, err = run("sweep", "--preset", "llama3-8b-h100-64", "--schedules", "gpipe", "--top", "2")
    assert rc == 0 and "PP 1 splits" in err and "shown as 1f1b" in err


def test_olmoe_without_routing_or_tie_keys_takes_its_class_defaults():
    """OlmoeConfig: num_experts 64, num_experts_per_tok 8, tie_word_embeddings False; with the
    architecture of OLMoE-1B-7B (16 layers, hidden 2,048, 16 heads, expert width 1,024, vocabulary
    50,304) that is 6.9B total and 1.3B active parameters (Muennighoff et al. 2024, arXiv:2409.02060)."""
    cfg = {"model_type": "olmoe", "num_hidden_layers": 16, "hidden_size": 2048, "num_attention_heads": 16,
           "intermediate_size": 1024, "vocab_size": 50304}
    imp = import_hf_config(cfg)
    assert (imp.model.moe.n_experts, imp.model.moe.top_k) == (64, 8) and imp.model.tied_embeddings is False
    total, active = _params(imp.model)
    assert total == pytest.approx(6.9e9, rel=0.01) and active == pytest.approx(1.3e9, rel=0.02)
