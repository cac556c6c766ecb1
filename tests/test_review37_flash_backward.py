"""Session 37: the flash attention backward pays one exp per score element, as the forward does.

The forward core's time per score element is ``4·d_h`` matmul FLOPs plus one exp, which the model's
rate ``∝ d_h/(d_h + knee)`` expresses (the exp costs ``knee`` in units of ``d_h``). The backward runs
5 matmuls against the forward's 2 (FlashAttention-2 §3.1.2) but recomputes ``P = exp(S − LSE)`` once
per element (Alg. 2), so its time is ``(2.5·d_h + knee)/(d_h + knee)`` × the forward's, not 2.5×.
Expected values below are hand calculations from that form and the catalogue's knees (H100 64,
FlashAttention-3 §3.1; A100 32; B200 / GB200 128; hardware/accelerators.json), never the code's
output:

* H100, d_h 128:  (320 + 64)/(128 + 64)   = 384/192 = 2.0
* A100, d_h 128:  (320 + 32)/(128 + 32)   = 352/160 = 2.2
* B200, d_h 128:  (320 + 128)/(128 + 128) = 448/256 = 1.75
* B200, MLA d_qk 192: (480 + 128)/(192 + 128) = 608/320 = 1.9
* no exp cost (knee 0): 2.5, the matmul ratio.

Forward + backward of the same core at knee 128 against knee 64 (the same part otherwise):
``(3.5·128 + 2·128)/(3.5·128 + 2·64) = 704/576 = 1.2222`` (a knee on every pass gave 256/192 = 1.3333;
NVIDIA's cuDNN 9.26 benchmark measures GB300 / GB200, knees 64 / 128 at one peak, 1.11–1.21×).
"""
from __future__ import annotations

import numpy as np
import pytest

import planner
from planner import batch as _batch
from planner import model_stats, timing


@pytest.mark.parametrize(("d_h", "knee", "want"), [
    (128.0, 64.0, 2.0), (128.0, 32.0, 2.2), (128.0, 128.0, 1.75), (192.0, 128.0, 1.9), (128.0, 0.0, 2.5),
])
def test_backward_over_forward_by_hand(d_h, knee, want):
    assert timing.flash_bwd_over_fwd(d_h, knee) == pytest.approx(want, rel=1e-15)


def test_backward_ratio_is_vectorised():
    r = timing.flash_bwd_over_fwd(np.array([128.0, 128.0, 192.0]), np.array([64.0, 128.0, 128.0]))
    assert r.shape == (3,) and np.allclose(r, [2.0, 1.75, 1.9], rtol=1e-15)


def _terms(d: dict) -> dict:
    b = _batch.from_scenarios([planner.Scenario.model_validate(d)])
    b.update(model_stats.stats(b))
    T = timing._terms(b)
    return {k: float(np.ravel(v)[0]) for k, v in T.items() if np.size(v) >= 1 and np.asarray(v).dtype.kind in "fib"}


def _llama8b(system: str, *, recompute="none", flash=True, accelerator=None, attention_kernel=None,
             **training) -> dict:
    d = planner.load_preset("llama3-8b-h100-64").to_json_dict()
    d["cluster"]["system"] = system
    d["cluster"].pop("accelerator", None)
    if accelerator is not None:
        d["cluster"]["accelerator"] = accelerator
    d["training"].update(training)
    d["parallelism"].update(recompute=recompute, flash_attention=flash)
    if attention_kernel is not None:
        d["parallelism"]["attention_kernel"] = attention_kernel
    return d


@pytest.mark.parametrize(("system", "r"), [("dgx-h100", 2.0), ("dgx-a100-80gb", 2.2), ("dgx-b200", 1.75)])
def test_attention_passes_use_the_ratio(system, r):
    """No recompute: the attention core runs 1 + r times its forward per micro-batch, and the layer's
    time per micro-batch is 3 × (projections + MLP + elementwise) + (1 + r) × core."""
    T = _terms(_llama8b(system))
    assert T["_attn_bwd"] == pytest.approx(r, rel=1e-12)
    assert T["_ap"] == pytest.approx(1.0 + r, rel=1e-12)
    want = 3.0 * (T["_t_attn_proj"] + T["_t_mlp_dense"] + T["_t_elem_dense"]) + (1.0 + r) * T["_t_core"]
    assert T["_layer_mb"] == pytest.approx(want, rel=1e-12)


def test_selective_recompute_adds_one_forward():
    T = _terms(_llama8b("dgx-h100", recompute="selective"))
    assert T["_ap"] == pytest.approx(1.0 + 2.0 + 1.0, rel=1e-12)


def test_materialised_scores_keep_two_backward_passes():
    T = _terms(_llama8b("dgx-b200", flash=False))
    assert T["_attn_bwd"] == 2.0 and T["_ap"] == 3.0


def _knee_part(knee: float) -> dict:
    """The catalogue's GB200 with its head-dim knee set to ``knee`` (everything else as it is)."""
    acc = planner.catalog.accelerators()["gb200"].model_dump(mode="json")
    acc["attention_dhead_knee"] = knee
    acc["name"] = f"GB200, knee {knee:g}"
    return acc


def test_knee_weighs_once_per_pass():
    """The same part at knee 128 and 64: forward + backward of the core 704/576 = 1.2222 × (it was
    256/192 = 1.3333 with the knee on every pass); the forward alone keeps 256/192."""
    t128 = _terms(_llama8b("gb200-nvl72", accelerator=_knee_part(128.0), precision="bf16", seq_len=32768))
    t64 = _terms(_llama8b("gb200-nvl72", accelerator=_knee_part(64.0), precision="bf16", seq_len=32768))
    fwd = t128["_t_core"] / t64["_t_core"]
    assert fwd == pytest.approx(256.0 / 192.0, rel=1e-12)
    both = (t128["_t_core"] * (1.0 + t128["_attn_bwd"])) / (t64["_t_core"] * (1.0 + t64["_attn_bwd"]))
    assert both == pytest.approx(704.0 / 576.0, rel=1e-12)


def test_the_fp8_core_keeps_the_16bit_backward_ratio():
    """FP8 attention on B200 (knee 256 at the FP8 peak): the backward stays 1.75 × the (faster) forward,
    the forward's factor applying to both passes (cuDNN's FP8 backward gains less than its forward)."""
    off = _terms(_llama8b("dgx-b200", precision="fp8"))
    on = _terms(_llama8b("dgx-b200", precision="fp8", fp8_attention=True))
    assert on["_t_core"] < off["_t_core"]
    assert on["_attn_bwd"] == off["_attn_bwd"] == pytest.approx(1.75, rel=1e-12)


def test_a_row_gives_the_same_bits_alone_and_beside_other_rows():
    rows = [_llama8b("dgx-h100"), _llama8b("dgx-b200", flash=False), _llama8b("dgx-a100-80gb", recompute="full"),
            _llama8b("dgx-b200", precision="fp8", fp8_attention=True)]
    b = _batch.from_scenarios([planner.Scenario.model_validate(r) for r in rows])
    b.update(model_stats.stats(b))
    together = np.broadcast_to(np.asarray(timing._terms(b)["_attn_bwd"], dtype=float).reshape(-1), (len(rows),))
    alone = np.array([_terms(r)["_attn_bwd"] for r in rows])
    assert np.array_equal(together, alone)
    assert np.allclose(alone, [2.0, 2.0, 2.2, 1.75], rtol=1e-15)


def test_explain_states_the_backward_ratio():
    e = planner.evaluate(_llama8b("dgx-b200")).explain["t_compute_s"]
    assert "attention core × 2.75 (backward 1.75 × its forward = (2.5·d_h + knee)/(d_h + knee)" in e
    e = planner.evaluate(_llama8b("dgx-b200", flash=False)).explain["t_compute_s"]
    assert "attention core × 3" in e and "(2.5·d_h + knee)" not in e


@pytest.mark.parametrize("recompute", ["none", "selective", "full"])
def test_a_bounded_flash_core_is_costed_as_materialised_scores_at_any_pass_count(recompute):
    """Review 17c's invariant with the new ratio: FlashAttention-2-class kernels on B200 at 4,096 tokens
    over CP 4, DeepSeek-V3's MLA (d_qk 192, the native knee 128: r = (2.5·192 + 128)/(192 + 128) = 1.9):
    the flash core at its own rate would be slower over a step than the materialised scores, so it is
    costed as theirs, forward and backward (t_core = theirs, backward 2): fwd + 2 bwd (+ 1 recomputed
    fwd) either way. (Its forward held at min(3/2.9, 4/3.9) × theirs, as first written in session 37,
    left a step that shortened as the knee grew: review 37.)"""
    d = planner.load_preset("default").to_json_dict()
    d["model"] = "deepseek-v3"
    d["cluster"].update(system="dgx-b200", n_gpus=32)
    d["training"].update(seq_len=4096, micro_batch_size=1, global_batch_size=8)
    d["parallelism"].update(tp=1, pp=1, cp=4, dp=8, vpp=1, schedule="1f1b", sequence_parallel=False,
                            attention_kernel="flash2", recompute=recompute)
    fl = _terms(d)
    d["parallelism"]["flash_attention"] = False
    mat = _terms(d)
    assert fl["_core_bounded"] == 1.0
    assert fl["_attn_bwd"] == mat["_attn_bwd"] == 2.0 and fl["_t_core"] == mat["_t_core"]
    assert fl["_ap"] == mat["_ap"]


def test_flash2_takes_the_native_knees_ratio():
    """FlashAttention-2-class kernels on H100 (the forward on the FA2 curve, knee 32, a fit to its
    forward speed): the backward ratio of the part's own exp units, knee 64: (320 + 64)/192 = 2.0 (a
    stated simplification, docs/timing.md), and the explain says which knee."""
    d = _llama8b("dgx-h100", attention_kernel="flash2")
    assert _terms(d)["_attn_bwd"] == pytest.approx(2.0, rel=1e-12)
    assert "with the native kernels' knee, for FlashAttention-2-class kernels too" in (
        planner.evaluate(d).explain["t_compute_s"])


def test_fp32_flash_on_a100_is_never_slower_than_materialised_scores():
    """Found by review 37: Llama 2 7B in fp32 on A100 at 32K tokens, no recompute. The fp32 knee is
    32 × 19.5/312 = 2, r = (320 + 2)/130 = 2.477, and the flash core's forward 0.866 × the materialised
    one gave a step 0.3 % slower with flash (1709.0 against 1703.1 s). Rows with a core below the
    16-bit peak are bounded too: the flash compute over a step is at most the materialised one's."""
    d = _llama8b("dgx-a100-80gb", precision="fp32", seq_len=32768)
    d["model"] = "llama2-7b"
    d["training"]["micro_batch_size"] = 1
    d["parallelism"].update(cp=1, dp=None)
    on = planner.evaluate(d).results
    d["parallelism"]["flash_attention"] = False
    off = planner.evaluate(d).results
    assert on["t_compute_s"] <= off["t_compute_s"] * (1 + 1e-12)
    assert timing.flash_bwd_over_fwd(128.0, 32.0 * 19.5 / 312.0) == pytest.approx(322.0 / 130.0, rel=1e-12)
    fl = _terms({**d, "parallelism": {**d["parallelism"], "flash_attention": True}})
    assert fl["_core_bounded"] == 1.0 and fl["_attn_bwd"] == 2.0  # costed as the materialised scores'
    assert on["t_compute_s"] == pytest.approx(off["t_compute_s"], rel=1e-12)


@pytest.mark.parametrize(("kernel", "seq", "cp", "recompute"), [("flash2", 4096, 4, "full"), ("native", 2048, 8, "none")])
def test_a_bounded_core_does_not_shorten_the_step_as_the_exp_units_slow(kernel, seq, cp, recompute):
    """Found by review 37: GB200 with its knee set to 192 then 256 (slower exp units), flash2, CP 4, full
    recompute: the step fell 2.508549 → 2.508382 s when the bound depended on min(3/(1 + r), 4/(2 + r)).
    With the row's own pass count the bounded core's compute over a step is the materialised one's,
    whatever the knee (the native kernels here reach the bound at knee 1,024)."""
    steps, bounded = [], []
    for knee in (128.0, 256.0, 512.0, 1024.0, 2048.0):
        d = _llama8b("gb200-nvl72", accelerator=_knee_part(knee), seq_len=seq, recompute=recompute,
                     attention_kernel=kernel)
        d["parallelism"].update(cp=cp, dp=None)
        steps.append(planner.evaluate(d).results["step_time_s"])
        bounded.append(bool(_terms(d)["_core_bounded"]))
    assert any(bounded)  # the case reaches the bound
    assert all(b >= a * (1 - 1e-12) for a, b in zip(steps, steps[1:])), steps
