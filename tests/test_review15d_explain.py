"""Review 15d: every ``explain`` string of ``planner.evaluate`` is a formula with the numbers
plugged in, and the numbers reproduce the column (docs/timing.md, docs/memory.md,
docs/reliability.md; the app's Plan page shows these strings beside each value).

The sweep below evaluates every preset and variants of them (PP with interleaving, CP > 1, EP > 1
MoE, ZeRO 0-3, HSDP, full / selective / partial / op_sac recompute, CPU and NVMe offload, FP8 /
FP4, GB200 NVL72 with TP 16, TP across nodes, DualPipe, zero bubble, hot spares, a power limit),
parses each explanation and checks mechanically that: the arithmetic shown reproduces the
column's value to the precision shown (interval arithmetic on half a unit of the last shown
digit); the inputs shown (tp, cp, ep, micro-batch, sequence length, hidden size, the DP group)
are the scenario's; units are as named (GiB = 2^30 B for memory, ms / s, MB = 1e6 B for
messages, TFLOP/s); no nan / None appears. The regression tests after it pin the defects this
review found, with expected values from hand calculations."""
from __future__ import annotations

import decimal
import math
import re
import sys

import pytest

import planner
from planner import batch as _batch
from planner import engine as _engine

NUM = r"[-+]?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?"
GIB = 2.0 ** 30


# --------------------------------------------------------------------------------------
# Interval arithmetic on shown numbers
# --------------------------------------------------------------------------------------

class V:
    """A shown number and the absolute error bound of its display (half a unit of its last digit)."""

    def __init__(self, v, e=0.0):
        self.v, self.e = float(v), float(e)

    @staticmethod
    def fx(text: str) -> "V":
        """A fixed-point display (``.2f`` GiB, ``.1f`` MiB): half a unit of the last digit shown."""
        s = text.replace(",", "")
        m = re.fullmatch(r"([-+]?\d+)(?:\.(\d+))?(?:e([+-]?\d+))?", s)
        assert m, text
        return V(float(s), 0.5 * 10.0 ** (int(m.group(3) or 0) - len(m.group(2) or "")))

    @staticmethod
    def of(text: str) -> "V":
        """A ``%g`` display (the explains print 3 or 4 significant digits, trailing zeros dropped:
        ``0.8`` is 0.800): half a unit of the third significant digit, or of the last digit shown
        when more are shown."""
        x = V.fx(text)
        if x.v == 0.0:
            return V(0.0, 0.0)
        return V(x.v, min(x.e, 0.5 * 10.0 ** (math.floor(math.log10(abs(x.v))) - 2)))

    def _v(self, b):
        return b if isinstance(b, V) else V(b)

    def __add__(self, b):
        b = self._v(b)
        return V(self.v + b.v, self.e + b.e)

    __radd__ = __add__

    def __sub__(self, b):
        b = self._v(b)
        return V(self.v - b.v, self.e + b.e)

    def __rsub__(self, b):
        return self._v(b) - self

    def __mul__(self, b):
        b = self._v(b)
        return V(self.v * b.v, abs(self.v) * b.e + abs(b.v) * self.e + self.e * b.e)

    __rmul__ = __mul__

    def __truediv__(self, b):
        b = self._v(b)
        lo = abs(b.v) - b.e
        return V(self.v / b.v, (abs(self.v) * b.e + abs(b.v) * self.e) / (abs(b.v) * lo) if lo > 0 else math.inf)

    def __rtruediv__(self, b):
        return self._v(b) / self


def close(computed: V, shown: V, rel: float = 2e-3) -> bool:
    return abs(computed.v - shown.v) <= computed.e + shown.e + rel * abs(shown.v) + 1e-300

def check(rep) -> list[str]:
    """Every defect found in one report's explain strings, one line each."""
    out: list[str] = []

    def bad(key, msg, text=""):
        out.append(f"{key}: {msg}: {text[:400]}")

    ex, res, sc = rep.explain, rep.results, rep.scenario
    par = sc["parallelism"]
    for k, t in ex.items():
        if re.search(r"\bnan\b|None|\bNaN\b", t):
            bad(k, "nan/None shown", t)
        if k not in _INF_OK and re.search(r"\binf\b", t):
            bad(k, "inf shown", t)
        for m in re.finditer(r"(?<![\w−])-\d[^ ]*( → clipped)?", t):
            if not m.group(1):  # the first-order goodput's raw value, shown before its clipping
                bad(k, "negative number", t)
    # ---- memory
    G = 2**30
    for k in ("mem_weights_bytes", "mem_grads_bytes", "mem_optimizer_bytes", "mem_activations_bytes",
              "mem_logits_bytes", "mem_buffers_bytes"):
        t = ex[k]
        m = re.search(rf"(?:= |: )({NUM}) GiB$", t)
        if not m:
            bad(k, "no final GiB", t); continue
        shown = V.fx(m.group(1))
        # the stage column is the worst stage's; results hold the max over stages? compare with stages
        j = int(res.get("mem_worst_stage", 0))
        col = rep.stages[j][k] if rep.stages and k in rep.stages[j] else res[k]
        if not close(V(col / G), shown):
            bad(k, f"final {shown.v} GiB != column {col / G:.4f} GiB (stage {j}); results {res[k]/G:.4f}", t)
        if k in ("mem_weights_bytes", "mem_grads_bytes", "mem_optimizer_bytes"):
            # counts below 1e9 are written in e6 ("906e6"): to e9 with the same last digit ("0.906e9")
            t = re.sub(r"(\d[\d.]*)e6\b", lambda m6: format(decimal.Decimal(m6.group(1)).scaleb(-3), "f") + "e9", t)
            mm = re.match(rf"({NUM}) B × \(({NUM})e9 non-expert params / ({NUM}) \+ ({NUM})e9 expert params / ({NUM})\)", t)
            if mm:
                b_, pn, sn, pe, se = (V.fx(x) for x in mm.groups())
                calc = b_ * (pn * 1e9 / sn + pe * 1e9 / se) / G
            else:
                mm = re.match(rf"({NUM}) B × ({NUM})e9 params / ({NUM})", t)
                if not mm:
                    bad(k, "unparsed", t); continue
                b_, pn, sn = (V.fx(x) for x in mm.groups())
                calc = b_ * pn * 1e9 / sn / G
            if not close(calc, shown, rel=5e-3):
                bad(k, f"arith {calc.v:.4f}±{calc.e:.4f} != shown {shown.v}", t)
            # the dense shard: dp·cp (dp_shard·cp with HSDP) where the ZeRO stage shards this state
            z = par["zero_stage"]
            sharded = {"mem_weights_bytes": z >= 3, "mem_grads_bytes": z >= 2, "mem_optimizer_bytes": z >= 1}[k]
            group = (par.get("dp_shard") or par["dp"]) * par["cp"]
            if float(sn.v) != (group if sharded else 1):
                bad(k, f"shard {sn.v} != {group if sharded else 1} (ZeRO-{z})", t)
    t = ex["mem_activations_bytes"]
    mm = re.match(rf"({NUM}) MiB per micro-batch \((.*)\) × ({NUM}) micro-batches in flight .*?(?: \+ the recomputed layer's working set ({NUM}) MiB)? = ({NUM}) GiB$", t)
    if mm:
        per, inner, infl, rec, tot = mm.groups()
        calc = V.fx(per) * V.fx(infl) + (V.fx(rec) if rec else V(0))
        calc = calc / 1024
        if not close(calc, V.fx(tot), rel=5e-3):
            bad("mem_activations_bytes", f"arith {calc.v:.4f}±{calc.e:.3f} != {tot}", t)
        # inner mix sum
        mx = re.match(rf"({NUM}) layers × ({NUM}) MiB", inner)
        if mx and not inner.startswith("DualPipe"):
            c2 = V.fx(mx.group(1)) * V.fx(mx.group(2))
            if not close(c2, V.fx(per), rel=5e-3):
                bad("mem_activations_bytes", f"mix {c2.v} != per {per}", t)
        mx = re.match(rf"({NUM}) (?:dense|recomputed layers) × ({NUM}) MiB \+ ({NUM}) (?:MoE|kept whole) × ({NUM}) MiB", inner)
        if mx:
            a1, b1, a2, b2 = (V.fx(x) for x in mx.groups())
            c2 = a1 * b1 + a2 * b2
            if not close(c2, V.fx(per), rel=5e-3) and "hold more" not in inner:
                bad("mem_activations_bytes", f"mix {c2.v:.1f} != per {per}", t)
    elif not ex["mem_activations_bytes"].startswith("activations offloaded"):
        bad("mem_activations_bytes", "unparsed", t)
    t = ex["mem_logits_bytes"]
    mm = re.match(rf"({NUM}) B per logit \(.*\) × s·b/c·V/t = ({NUM})·({NUM})/({NUM})·({NUM})/({NUM}) on the last stage.* = ({NUM}) GiB$", t)
    if mm:
        by, s_, b_, c_, v_, t_, tot = mm.groups()
        calc = V.fx(by) * V.fx(s_) * V.fx(b_) / V.fx(c_) * V.fx(v_) / V.fx(t_) / G
        if not close(calc, V.fx(tot), rel=5e-3):
            bad("mem_logits_bytes", f"arith {calc.v:.4f} != {tot}", t)
        if float(t_) != par["tp"] or float(c_) != par["cp"] or float(b_) != sc["training"]["micro_batch_size"]:
            bad("mem_logits_bytes", "inputs", t)
    t = ex["mem_buffers_bytes"]
    mm = re.match(rf"comm ({NUM}) GiB .* prefetch ({NUM}) GiB \+ fragmentation .* ({NUM}) GiB = ({NUM}) GiB$", t)
    c = V.fx(mm.group(1)) + V.fx(mm.group(2)) + V.fx(mm.group(3))
    if not close(c, V.fx(mm.group(4))): bad("mem_buffers_bytes", "sum", t)
    t = ex["mem_total_bytes"]
    mm = re.match(rf"({NUM}) GiB \+ ({NUM}) GiB \+ ({NUM}) GiB \+ ({NUM}) GiB \+ logits ({NUM}) GiB \+ buffers ({NUM}) GiB = ({NUM}) GiB", t)
    c = sum((V.fx(x) for x in mm.groups()[:6]), V(0))
    if not close(c, V.fx(mm.group(7))): bad("mem_total_bytes", f"sum {c.v}", t)
    if not close(V(res["mem_total_bytes"] / G), V.fx(mm.group(7))): bad("mem_total_bytes", f"col {res['mem_total_bytes']/G}", t)
    for pk in ("mem_weights_bytes", "mem_grads_bytes", "mem_optimizer_bytes", "mem_activations_bytes", "mem_logits_bytes", "mem_buffers_bytes"):
        pass
    # ---- timing
    def final_s(k, pat=rf"= ({NUM}) s$"):
        t = ex[k]; m = re.search(pat, t)
        if not m: bad(k, "no final s", t); return None
        sh = V.of(m.group(1))
        if not close(V(res[k]), sh): bad(k, f"final {sh.v} != col {res[k]:.6g}", t)
        return sh
    final_s("t_tp_comm_s", rf"= ({NUM}) s(?:$|; n_coll)")
    for k in ("t_pp_bubble_s", "t_pp_p2p_s", "step_time_s"):
        final_s(k)
    final_s("t_offload_s", rf"(?:= |: )({NUM}) s$")
    if "=" in ex["t_optimizer_s"]: final_s("t_optimizer_s")
    final_s("t_dp_comm_exposed_s", rf"exposed ({NUM}) s$")
    if "all-to-all" in ex["t_ep_comm_s"] and "no MoE" not in ex["t_ep_comm_s"]: final_s("t_ep_comm_s")
    t = ex["t_compute_s"]
    mm = re.match(rf"m·t_mb = ({NUM}) micro-batches × ({NUM}) ms", t)
    if mm:
        c = V.of(mm.group(1)) * V.of(mm.group(2)) / 1000
        if not close(c, V(res["t_compute_s"]), rel=5e-3): bad("t_compute_s", f"m·t_mb {c.v} != {res['t_compute_s']}", t)
    else: bad("t_compute_s", "unparsed", t)
    mm = re.search(rf"\(= ({NUM}) layers × ({NUM}) ms \+ head\+loss ({NUM}) ms\)", t)
    if mm:
        c = V.of(mm.group(1)) * V.of(mm.group(2)) + V.of(mm.group(3))
        if not close(c, V.of(re.match(rf"m·t_mb = {NUM} micro-batches × ({NUM}) ms", t).group(1)), rel=5e-3):
            bad("t_compute_s", f"stage sum {c.v}", t)
    t = ex["t_tp_comm_s"]
    mm = re.match(rf"m·layers·n_coll·t_AR·exposed = ({NUM}) × ({NUM}) × ({NUM}) × ({NUM}) ms \(ring all-reduce of b·(?:\(s/c\)|s)·h·B = ({NUM})·({NUM})(?:/({NUM}))?·({NUM})·({NUM}) B = ({NUM}) MB over tp = (\d+)(?:, on [^;)]*)?(?:; (?:inside one NVLink domain at ({NUM}) GB/s achieved(?: \(ring {NUM} GB/s × NVLS {NUM}, NVLink SHARP\))?|crossing NVLink domains: min\(NVLink, members per domain × network {NUM} GB/s\) = ({NUM}) GB/s achieved))?\) × ({NUM}) = ({NUM}) s(?:$|; n_coll = )", t)
    if mm:
        g = mm.groups()
        c = V.of(g[0]) * V.of(g[1]) * V.of(g[2]) * V.of(g[3]) / 1000 * V.of(g[13])
        if not close(c, V.of(g[14]), rel=5e-3): bad("t_tp_comm_s", f"arith {c.v}", t)
        if int(g[10]) != par["tp"]: bad("t_tp_comm_s", "tp", t)
        # the link's achieved bandwidth the text states gives t_AR's bandwidth term (review 48a: the
        # NVLS factor was unstated), the ring's latency (2·(t − 1)·α, α of µs) on top
        bw = g[11] or g[12]
        if par["tp"] > 1:
            if not bw: bad("t_tp_comm_s", "no link stated", t)
            else:
                ring = 2.0 * (par["tp"] - 1) / par["tp"] * float(g[9]) * 1e6 / (float(bw) * 1e9) * 1e3  # ms
                lat = 2.0 * (par["tp"] - 1) * 0.006  # ms: 2·(t − 1) ring steps of at most a few µs
                if not (ring * 0.995 <= float(g[3]) <= ring * 1.005 + lat): bad("t_tp_comm_s", f"bw {ring} ms", t)
        tr = sc["training"]
        b_, s_, c_, h_, B_ = float(g[4]), float(g[5]), float(g[6] or 1), float(g[7]), float(g[8])
        if (b_, s_, c_, h_) != (tr["micro_batch_size"], tr["seq_len"], par["cp"], rep_h(rep)): bad("t_tp_comm_s", "inputs", t)
        if not close(V(b_ * s_ / c_ * h_ * B_ / 1e6), V.of(g[9])): bad("t_tp_comm_s", "msg", t)
    else: bad("t_tp_comm_s", "unparsed", t)
    t = ex["t_cp_comm_s"]
    mm = re.search(rf"m·layers = ({NUM}) × ({NUM}) × ({NUM}) ms = ({NUM}) s$", t)
    if mm:
        c = V.of(mm.group(1)) * V.of(mm.group(2)) * V.of(mm.group(3)) / 1000
        if not close(c, V.of(mm.group(4)), rel=5e-3): bad("t_cp_comm_s", f"arith {c.v}", t)
        if not close(V(res["t_cp_comm_s"]), V.of(mm.group(4))): bad("t_cp_comm_s", "col", t)
        mf = re.search(rf"max\(0, ({NUM}) ms − ({NUM}) ms\) × ({NUM}) \+ max\(0, ({NUM}) ms − ({NUM}) × ({NUM}) ms\) = ({NUM}) ms", t)
        if mf:
            a, b, k1, cc, k2, d, e = (V.of(x) for x in mf.groups())
            f1 = V(max(a.v - b.v, 0), a.e + b.e) * k1 + V(max(cc.v - k2.v * d.v, 0), cc.e + k2.v * d.e)
            if not close(f1, e, rel=5e-3): bad("t_cp_comm_s", f"per layer {f1.v}", t)
            if "averages" not in t and not close(e, V.of(mm.group(3)), rel=5e-3): bad("t_cp_comm_s", "per", t)
        if f"(cp = {par['cp']})" not in t: bad("t_cp_comm_s", "cp", t)
    else: bad("t_cp_comm_s", "unparsed", t)
    t = ex["t_ep_comm_s"]
    # review 34: a fully hidden all-to-all reads "= 0 (each MoE layer's ... hidden ...)", no longer
    # "= m × moe_layers × 0 ms"; parsed as the latter, so the check below still asks max(...) = 0
    t = t.replace(" = 0 (each MoE layer's all-to-all hidden: nothing exposed)", " = 1 × moe_layers × 0 ms")
    if not t.startswith("no MoE"):
        mm = re.match(rf"m·moe_layers·max\(0, ({NUM}) all-to-all × ({NUM}) ms − hidden ({NUM}) ms\) = ({NUM}) × (?:({NUM}) MoE layers of the costed stage|moe_layers) × ({NUM}) ms \(b·(?:\(s/c\)|s)·h·top_k·cf(?:/t \(SP\))?·B = ({NUM})·({NUM})(?:/({NUM}))?·({NUM})·({NUM})·({NUM})(?:/({NUM}))?·({NUM}) B = ({NUM}) MB over ep = (\d+).* = ({NUM}) s$", t)
        if mm:
            g = mm.groups()
            per = V(max(V.of(g[0]).v * V.of(g[1]).v - V.of(g[2]).v, 0), (V.of(g[0]) * V.of(g[1])).e + V.of(g[2]).e)
            if not close(per, V.of(g[5]), rel=5e-3): bad("t_ep_comm_s", f"per {per.v}", t)
            if g[4]:
                c = V.of(g[3]) * V.of(g[4]) * V.of(g[5]) / 1000
                if not close(c, V.of(g[16]), rel=5e-3): bad("t_ep_comm_s", f"arith {c.v}", t)
            b_, s_, c_, h_, k_, cf_, t_, B_ = (float(x) if x else 1.0 for x in (g[6], g[7], g[8], g[9], g[10], g[11], g[12], g[13]))
            tr = sc["training"]
            if (b_, s_, c_, h_) != (tr["micro_batch_size"], tr["seq_len"], par["cp"], rep_h(rep)): bad("t_ep_comm_s", "inputs", t)
            if g[12] and float(g[12]) != par["tp"]: bad("t_ep_comm_s", "tp", t)
            if not close(V(b_ * s_ / c_ * h_ * k_ * cf_ / t_ * B_ / 1e6), V.of(g[14])): bad("t_ep_comm_s", "msg", t)
            if int(g[15]) != par["ep"]: bad("t_ep_comm_s", "ep", t)
            if not close(V(res["t_ep_comm_s"]), V.of(g[16])): bad("t_ep_comm_s", "col", t)
        else: bad("t_ep_comm_s", "unparsed", t)
    t = ex["t_dp_comm_exposed_s"]
    mm = re.search(rf"= ({NUM}) s in total", t)
    tot = V.of(mm.group(1))
    body = t[:mm.start()]
    if par["zero_stage"] == 3:
        m3 = re.search(rf"m = ({NUM}) micro-batches × \(2 × param gather ({NUM}) s \+ gradient reduce-scatter ({NUM}) s\) of the stage it runs(?: \+ replica all-reduce ({NUM}) s)?", body)
        c = V.of(m3.group(1)) * (2 * V.of(m3.group(2)) + V.of(m3.group(3))) + (V.of(m3.group(4)) if m3.group(4) else V(0))
    elif par["zero_stage"] == 0:
        m0 = re.search(rf"gradient all-reduce ({NUM}) s", body); c = V.of(m0.group(1))
    else:
        m1 = re.search(rf"gradient reduce-scatter ({NUM}) s (?:\+ replica all-reduce ({NUM}) s )?\+ param gather ({NUM}) s(?:.*? \+ ({NUM}) earlier micro-batches' reduce-scatters × ({NUM}) s)?", body)
        c = V.of(m1.group(1)) + (V.of(m1.group(2)) if m1.group(2) else V(0)) + V.of(m1.group(3)) + ((V.of(m1.group(4)) * V.of(m1.group(5))) if m1.group(4) else V(0))
    if not close(c, tot, rel=5e-3): bad("t_dp_comm_exposed_s", f"total {c.v}", t)
    grp = re.search(r"DP collectives over (dp_shard·cp|dp·cp) = (\d+)", t)
    want = (par.get("dp_shard") or par["dp"]) * par["cp"] if grp.group(1) == "dp_shard·cp" else par["dp"] * par["cp"]
    if int(grp.group(2)) != want: bad("t_dp_comm_exposed_s", f"group {want}", t)
    if f"ZeRO-{par['zero_stage']}:" not in t: bad("t_dp_comm_exposed_s", "zero", t)
    if not par.get("dp_comm_overlap", True) and not close(tot, V(res["t_dp_comm_exposed_s"])): bad("t_dp_comm_exposed_s", "no overlap: exposed != total", t)
    t = ex["t_pp_bubble_s"]
    mm = re.match(rf"bubble fraction ({NUM}) \(p−1\)/\(v·m\) with p = (\d+), v = (\d+), m = ({NUM}) × \(compute \+ TP \+ CP \+ EP\) = ({NUM}) s", t)
    if mm:
        f, p, v, m_, tot = mm.groups()
        fc = (int(p) - 1) / (int(v) * float(m_))
        if not close(V(fc), V.of(f)): bad("t_pp_bubble_s", f"frac {fc}", t)
        if int(p) != par["pp"]: bad("t_pp_bubble_s", "pp", t)
        if par["schedule"] in ("interleaved",) and int(v) != par["vpp"]: bad("t_pp_bubble_s", "vpp", t)
        base = res["t_compute_s"] + res["t_tp_comm_s"] + res["t_cp_comm_s"] + res["t_ep_comm_s"]
        if not close(V.of(f) * base, V.of(tot), rel=5e-3): bad("t_pp_bubble_s", f"frac×base {V.of(f).v*base}", t)
    t = ex["t_pp_p2p_s"]
    mm = re.match(rf"2·v·m·t_p2p = 2 × ({NUM}) × ({NUM}) × ({NUM}) ms \(b·(?:\(s/c\)|s)·h/t·B = ({NUM})·({NUM})(?:/({NUM}))?·({NUM})/({NUM})·({NUM}) B = ({NUM}) MB(?: over (?:the network|NVLink) at ({NUM}) GB/s achieved(?: \(one link of the full mesh\))?)?\) = ({NUM}) s", t)
    if mm:
        g = mm.groups()
        c = 2 * V.of(g[0]) * V.of(g[1]) * V.of(g[2]) / 1000
        if not close(c, V.of(g[11]), rel=5e-3): bad("t_pp_p2p_s", f"arith {c.v}", t)
        if par["pp"] > 1:  # the link the text states gives the send's time, S/BW + α (review 48a)
            if not g[10]: bad("t_pp_p2p_s", "no link stated", t)
            else:
                send = float(g[9]) * 1e6 / (float(g[10]) * 1e9) * 1e3  # ms
                if not (send * 0.995 <= float(g[2]) <= send * 1.005 + 0.006): bad("t_pp_p2p_s", f"bw {send} ms", t)
        b_, s_, c_, h_, t_, B_ = (float(x) if x else 1.0 for x in (g[3], g[4], g[5], g[6], g[7], g[8]))
        tr = sc["training"]
        if (b_, s_, c_, h_, t_) != (tr["micro_batch_size"], tr["seq_len"], par["cp"], rep_h(rep), par["tp"]): bad("t_pp_p2p_s", "inputs", t)
        if not close(V(b_ * s_ / c_ * h_ / t_ * B_ / 1e6), V.of(g[9])): bad("t_pp_p2p_s", "msg", t)
    else: bad("t_pp_p2p_s", "unparsed", t)
    t = ex["step_time_s"]
    parts = re.findall(rf"(\w+) ({NUM})", t.split(" = ")[0])
    c = sum((V.of(x) for _, x in parts), V(0))
    tot = V.of(re.search(rf"= ({NUM}) s$", t).group(1))
    if not close(c, tot): bad("step_time_s", f"sum {c.v}", t)
    t = ex["t_optimizer_s"]
    mm = re.match(rf"({NUM}) M params of the local shard .*? × \(grad ({NUM}) \+ ({NUM})\) B / \(HBM ({NUM}) TB/s × ({NUM})\) = ({NUM}) s", t)
    if mm:
        p_, gb, ob, bw, eff, tot = mm.groups()
        c = V.of(p_) * 1e6 * (V.of(gb) + V.of(ob)) / (V.of(bw) * 1e12 * V.of(eff))
        if not close(c, V.of(tot), rel=5e-3): bad("t_optimizer_s", f"arith {c.v}", t)
    t = ex["tokens_per_s"]
    mm = re.match(rf"B·s / step = ({NUM}) / ({NUM}) s = ({NUM}) tokens/s", t)
    c = V.of(mm.group(1)) / V.of(mm.group(2))
    if not close(c, V.of(mm.group(3))): bad("tokens_per_s", "arith", t)
    if not close(V(res["tokens_per_s"]), V.of(mm.group(3))): bad("tokens_per_s", "col", t)
    for k in ("mfu", "hfu"):
        t = ex[k]
        mm = re.match(rf".* = ({NUM}) / \(({NUM}) × (\d+) × ({NUM})\) = ({NUM})$", t)
        c = V.of(mm.group(1)) / (V.of(mm.group(2)) * V.of(mm.group(3)) * V.of(mm.group(4)))
        if not close(c, V.of(mm.group(5)), rel=5e-3): bad(k, f"arith {c.v}", t)
        if not close(V(res[k]), V.of(mm.group(5))): bad(k, "col", t)
        if int(mm.group(3)) != sc["cluster"]["n_gpus"]: bad(k, "n", t)
    t = ex["tflops_per_gpu"]
    mm = re.match(rf".* = ({NUM}) / \(({NUM}) × (\d+)\) = ({NUM}) TFLOP/s$", t)
    c = V.of(mm.group(1)) / (V.of(mm.group(2)) * V.of(mm.group(3))) / 1e12
    if not close(c, V.of(mm.group(4)), rel=5e-3): bad("tflops_per_gpu", f"arith {c.v}", t)
    if not close(V(res["tflops_per_gpu"]), V.of(mm.group(4))): bad("tflops_per_gpu", "col", t)
    # ---- reliability
    t = ex["failure_rate_per_h"]
    rhs = t.split(") = ", 1)[1] if ") = " in t else t.split(" = ", 1)[1]
    terms = re.findall(rf"[a-z]+ ({NUM})", rhs.rsplit(" = ", 1)[0])
    c = sum((V.of(x) for x in terms), V(0))
    tot = V.of(re.search(rf"= ({NUM}) /h$", t).group(1))
    if not close(c, tot): bad("failure_rate_per_h", f"sum {c.v}", t)
    if not close(V(res["failure_rate_per_h"]), tot): bad("failure_rate_per_h", "col", t)
    t = ex["mtbf_h"]
    mm = re.match(rf"1/λ = 1/({NUM}) = ({NUM}) h", t)
    if mm and not close(1 / V.of(mm.group(1)), V.of(mm.group(2))): bad("mtbf_h", "arith", t)
    t = ex["ckpt_bytes"]
    mm = re.match(rf"({NUM}) B/param × ({NUM}) params = ({NUM}) B = ({NUM}) GiB", t)
    c = V.of(mm.group(1)) * V.of(mm.group(2))
    if not close(c, V.of(mm.group(3))): bad("ckpt_bytes", "arith", t)
    if not close(V(res["ckpt_bytes"] / G), V.of(mm.group(4))): bad("ckpt_bytes", "GiB", t)
    t = ex["goodput"]
    mm = re.search(rf"= ({NUM}) × ({NUM}) × ({NUM}) = ({NUM}) → goodput ({NUM})", t)
    if mm:
        a, b, cc, inv, g = mm.groups()
        c = V.of(a) * V.of(b) * V.of(cc)
        if not close(c, V.of(inv)): bad("goodput", f"product {c.v}", t)
        if not close(1 / V.of(inv), V.of(g)): bad("goodput", "1/inv", t)
        if not close(V(res["goodput"]), V.of(g)): bad("goodput", "col", t)
    for k, lab in (("ckpt_overhead_frac", "overhead"), ("lost_work_frac", "lost work"), ("restart_frac", "restart \\+ repair \\+ reload")):
        mm = re.search(rf"{lab} ({NUM})", ex[k])
        if mm and not close(V(res[k]), V.of(mm.group(1))): bad(k, "col", ex[k])
    mm = re.search(rf"loss 1 − G = ({NUM})", ex["ckpt_overhead_frac"])
    if mm:
        s3 = sum((V.of(re.search(rf"{lab} ({NUM})", ex[k]).group(1)) for k, lab in (("ckpt_overhead_frac", "overhead"), ("lost_work_frac", "lost work"), ("restart_frac", "restart \\+ repair \\+ reload"))), V(0))
        if not close(s3, V.of(mm.group(1))): bad("restart_frac", f"shares sum {s3.v} != {mm.group(1)}", ex["restart_frac"])
    t = ex["goodput_first_order"]
    mm = re.match(rf"1 − Σ stall/τ ({NUM}) − Σ_c λ_c·τ_c/2 ({NUM}) − Σ_c λ_c\(R_c \+ reload_c\) ({NUM}) = ({NUM})", t)
    if mm:
        a, b, cc, r_ = (V.of(x) for x in mm.groups())
        if not close(V(1) - a - b - cc, r_): bad("goodput_first_order", "arith", t)
    # ---- cost
    t = ex["time_to_train_days"]
    mm = re.match(rf"tokens ({NUM}) / ({NUM}) tok/s / goodput ({NUM}) / 86400 = ({NUM}) d", t)
    if mm:
        a, b, g, d = (V.of(x) for x in mm.groups())
        if not close(a / b / g / 86400, d): bad("time_to_train_days", "arith", t)
        t = ex["gpu_hours"]
        mm = re.match(rf"(?:\((\d+) GPUs? \+ (\d+) hot spare nodes? × (\d+)\) = )?(\d+) GPUs? × ({NUM}) h = ({NUM})$", t)
        if mm:
            n, h, gh = int(mm.group(4)), V.of(mm.group(5)), V.of(mm.group(6))
            if not close(n * h, gh): bad("gpu_hours", "arith", t)
            if not close(d * 24, h): bad("gpu_hours", "wall h vs days", t)
            if mm.group(1) and int(mm.group(1)) + int(mm.group(2)) * int(mm.group(3)) != n: bad("gpu_hours", "spares", t)
        else: bad("gpu_hours", "unparsed", t)
        t = ex["cost_usd"]
        # "(the scenario's own price)" after a price override (review 16c)
        mm = re.match(rf"({NUM}) GPU-h × \$({NUM})(?: \(the scenario's own price\))? = \$({NUM})$", t)
        if not close(V.of(mm.group(1)) * V.of(mm.group(2)), V.of(mm.group(3))): bad("cost_usd", "arith", t)
        t = ex["energy_mwh"]
        mm = re.match(rf"(?:(\d+) nodes?|\d+/\d+ = ({NUM}) nodes \(the GPUs' share\)) × ({NUM}) W.*? × ({NUM}) × PUE ({NUM}) × ({NUM}) h / 1e6 = ({NUM}) MWh", t)
        if mm:
            nodes = V.of(mm.group(1) or mm.group(2))
            c = nodes * V.of(mm.group(3)) * V.of(mm.group(4)) * V.of(mm.group(5)) * V.of(mm.group(6)) / 1e6
            if not close(c, V.of(mm.group(7))): bad("energy_mwh", f"arith {c.v}", t)
        else: bad("energy_mwh", "unparsed", t)
    return out


def rep_h(rep) -> float:
    b = _batch.from_scenarios([_engine.validate_scenario(rep.scenario)])
    return float(b["hidden_size"][0])


# --------------------------------------------------------------------------------------
# The scenarios
# --------------------------------------------------------------------------------------

#: columns whose strings may say inf: a run that never finishes (goodput 0) and its 1/G
_INF_OK = {"time_to_train_days", "gpu_hours", "cost_usd", "energy_mwh", "goodput", "mtbf_h"}

PRESETS = sorted(planner.presets.list_presets())


def _var(pid: str, **kw) -> dict:
    d = planner.presets.preset_json(pid)
    for k, v in kw.items():
        sec, f = k.split("__")
        d[sec][f] = v
    return d


VARIANTS = {
    "pp4_interleaved_vpp2": ("llama3-8b-h100-64", dict(parallelism__pp=4, parallelism__vpp=2, parallelism__cp=1,
                                                      parallelism__schedule="interleaved", parallelism__dp=None)),
    "cp4_tp8": ("default", dict(parallelism__cp=4, parallelism__dp=None)),
    "cp16_over_nodes": ("llama3-8b-h100-64", dict(parallelism__cp=16, parallelism__dp=None)),
    "cp16_partial_recompute": ("llama3-8b-h100-64", dict(parallelism__cp=16, parallelism__pp=2, parallelism__dp=None,
                                                        parallelism__recompute="full", parallelism__recompute_layers=4)),
    "cp16_no_flash": ("llama3-8b-h100-64", dict(parallelism__cp=16, parallelism__dp=None, parallelism__recompute="none",
                                               parallelism__flash_attention=False)),
    "moe_ep8": ("mixtral-8x7b-h100-64", dict(parallelism__ep=8, parallelism__dp=None)),
    "moe_ep4_tp2_sp_cp2_fp8_dispatch": ("mixtral-8x7b-h100-64", dict(
        parallelism__cp=2, parallelism__tp=2, parallelism__sequence_parallel=True, parallelism__ep=4,
        parallelism__dp=None, parallelism__ep_dispatch_fp8=True)),
    "moe_ep_overlap_interleaved": ("mixtral-8x7b-h100-64", dict(parallelism__ep=8, parallelism__dp=None,
                                                               parallelism__ep_comm_overlap=True)),
    "deepseek_cp4_1f1b": ("deepseek-v3-h800-2048", dict(parallelism__cp=4, parallelism__schedule="1f1b",
                                                        parallelism__dp=None, parallelism__ep_comm_overlap=False)),
    **{f"zero{z}": ("llama3-8b-h100-64", dict(parallelism__zero_stage=z)) for z in (0, 1, 2, 3)},
    **{f"zero{z}_no_dp_overlap": ("llama3-8b-h100-64", dict(parallelism__zero_stage=z, parallelism__dp_comm_overlap=False))
       for z in (0, 1, 2, 3)},
    **{f"hsdp_zero{z}": ("llama3-8b-h100-64", dict(parallelism__zero_stage=z, parallelism__dp_shard=8)) for z in (1, 2, 3)},
    "full_recompute": ("default", dict(parallelism__recompute="full")),
    "partial_recompute": ("default", dict(parallelism__recompute="full", parallelism__recompute_layers=2)),
    "no_recompute": ("default", dict(parallelism__recompute="none")),
    "selective_no_flash": ("default", dict(parallelism__flash_attention=False)),
    "op_sac": ("llama31-8b-torchtitan-h100-8", dict(parallelism__recompute="op_sac")),
    "cpu_offload_zero2": ("llama3-8b-h100-64", dict(parallelism__zero_stage=2, parallelism__offload_optimizer="cpu")),
    "offload_everything_zero3": ("llama3-8b-h100-64", dict(
        parallelism__zero_stage=3, parallelism__offload_optimizer="cpu", parallelism__offload_grads=True,
        parallelism__offload_master_weights=True, parallelism__offload_activations=True)),
    "nvme_offload": ("llama3-8b-h100-64", dict(parallelism__zero_stage=3, parallelism__offload_optimizer="nvme")),
    "fp8": ("default", dict(training__precision="fp8")),
    "fp8_rowwise": ("default", dict(training__precision="fp8", training__fp8_scaling="rowwise")),
    "fp4_gb200": ("default", dict(cluster__system="gb200-nvl72", training__precision="fp4")),
    "fp32": ("mpt-7b-a100-8", dict(training__precision="fp32")),
    "gb200_moe_tp16": ("qwen3-235b-gb200-256", dict(parallelism__tp=16, parallelism__pp=2, parallelism__ep=8,
                                                     parallelism__dp=None)),
    "gb200_dense_tp16": ("default", dict(cluster__system="gb200-nvl72", parallelism__tp=16, parallelism__dp=None)),
    "h100_tp16_over_two_nodes": ("default", dict(parallelism__tp=16, parallelism__dp=None)),
    "zero_bubble": ("default", dict(parallelism__schedule="zero_bubble", parallelism__vpp=1)),
    "zero_bubble_full": ("llama3-405b-h100-16k", dict(parallelism__schedule="zero_bubble", parallelism__vpp=1,
                                                      parallelism__recompute="full")),
    "1f1b_eager_ce_last_stage": ("llama3-8b-h100-64", dict(parallelism__pp=4, parallelism__cp=1, parallelism__dp=None,
                                                           parallelism__schedule="1f1b", training__cross_entropy="eager")),
    "tp_comm_overlap": ("default", dict(parallelism__tp_comm_overlap=True)),
    "hot_spares": ("default", dict(reliability__hot_spare_nodes=2)),
    "rate_scale_50": ("default", dict(reliability__rate_scale=50.0)),
    "rate_scale_100_16k": ("llama3-405b-h100-16k", dict(reliability__rate_scale=100.0)),
    "power_limit": ("default", dict(cluster__overrides={"power_limit_w": 500})),
    "v100_fp16": ("mpt-7b-a100-8", dict(cluster__system="dgx1-v100", training__precision="fp16",
                                        training__grad_dtype="fp32")),
    "mi300x": ("llama3-8b-h100-64", dict(cluster__system="mi300x-8")),
    "gaudi3": ("llama3-8b-h100-64", dict(cluster__system="gaudi3-8")),
    "12_gpus_partial_node": ("llama3-8b-h100-64", dict(cluster__n_gpus=12, parallelism__dp=None, parallelism__cp=1,
                                                       training__global_batch_size=48)),
    "one_gpu": ("llama3-8b-h100-64", dict(cluster__n_gpus=1, parallelism__dp=None, parallelism__cp=1,
                                          training__global_batch_size=8)),
}


@pytest.mark.parametrize("pid", PRESETS)
def test_every_preset_explains_its_numbers(pid):
    rep = planner.evaluate(planner.load_preset(pid))
    problems = check(rep)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_every_variant_explains_its_numbers(name):
    pid, kw = VARIANTS[name]
    rep = planner.evaluate(_var(pid, **kw))
    problems = check(rep)
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------------------
# The defects found, one regression test each (expected values by hand)
# --------------------------------------------------------------------------------------

def _ev(pid, **kw):
    return planner.evaluate(_var(pid, **kw))


def test_cp_explain_plugs_in_m_layers_and_the_exposed_time_per_layer():
    """CP ring attention's explain said '× m·layers = 10.13 s' with neither m nor the layers nor the
    exposed time per layer in it: nothing to multiply. Llama 3 8B, CP 16 over two DGX nodes,
    64 GPUs, global batch 512, micro-batch 1: dp = 64/16 = 4, m = 512/(1·4) = 128 micro-batches;
    PP 1: all 32 layers on the rank. Per layer (docs/timing.md, t_cp_comm_s): forward hops beyond
    the core, twice with selective recompute (the recomputed forward replays its hops), plus the
    backward hops beyond 2 × the core (flash on H100 at d_h 128: (2.5·128 + 64)/(128 + 64) = 2,
    timing.flash_bwd_over_fwd; 2.5 before session 37)."""
    rep = _ev("llama3-8b-h100-64", parallelism__cp=16, parallelism__dp=None)
    t = rep.explain["t_cp_comm_s"]
    m = re.search(rf"m·layers = ({NUM}) × ({NUM}) × ({NUM}) ms = ({NUM}) s$", t)
    assert m, t
    assert (float(m.group(1)), float(m.group(2))) == (128.0, 32.0)
    assert close(V.of(m.group(1)) * V.of(m.group(2)) * V.of(m.group(3)) / 1000, V.of(m.group(4)), rel=5e-3)
    assert close(V(rep.results["t_cp_comm_s"]), V.of(m.group(4)))
    f = re.search(rf"max\(0, ({NUM}) ms − ({NUM}) ms\) × 2 \+ max\(0, ({NUM}) ms − 2 × ({NUM}) ms\) = ({NUM}) ms", t)
    assert f, t
    fw, core, bw, core2, per = (V.of(x) for x in f.groups())
    assert core.v == core2.v
    assert close((fw - core) * 2 + (bw - core * 2), per, rel=5e-3)
    assert "(cp = 16)" in t


def test_tp_and_p2p_messages_show_the_cp_split_with_numbers():
    """The TP all-reduce and the pipeline p2p messages were labelled 'b·s·h·2 B' and 'b·s·h/t·2 B'
    beside a size that divides s by c (docs/timing.md: b·(s/c)·h): with CP 4 the label did not give
    the number. Llama 3 70B default, CP 4: b·(s/c)·h·2 B = 1 × 8192/4 × 8192 × 2 = 33,554,432 B =
    33.55 MB; the p2p message /t = 8: 4,194,304 B = 4.194 MB."""
    rep = _ev("default", parallelism__cp=4, parallelism__dp=None)
    assert "b·(s/c)·h·B = 1·8192/4·8192·2 B = 33.55 MB over tp = 8" in rep.explain["t_tp_comm_s"]
    assert "b·(s/c)·h/t·B = 1·8192/4·8192/8·2 B = 4.194 MB" in rep.explain["t_pp_p2p_s"]
    assert 1 * 8192 / 4 * 8192 * 2 / 1e6 == pytest.approx(33.554432)


def test_ep_explain_plugs_in_m_and_the_stage_moe_layers_and_the_sp_split():
    """The expert all-to-all explain said 'm·moe_layers·max(...)' without m or the layers: its
    product could not be checked. Mixtral 8x7B, 64 H100, TP 1 × PP 4 (VPP 8) × EP 8, dp = 16,
    global batch 256: m = 256/16 = 16, 32/4 = 8 MoE layers per stage; 4 all-to-alls per layer
    (selective recompute). With TP 2 + SP, CP 2, EP 4 and FP8 dispatch the message is
    b·(s/c)·h·top_k·cf/t·1.5 B = 1 × 4096/2 × 4096 × 2 × 1 / 2 × 1.5 = 12,582,912 B = 12.58 MB."""
    rep = _ev("mixtral-8x7b-h100-64", parallelism__ep=8, parallelism__dp=None)
    t = rep.explain["t_ep_comm_s"]
    m = re.search(rf"max\(0, 4 all-to-all × ({NUM}) ms − hidden 0 ms\) = 16 × 8 MoE layers of the costed stage × "
                  rf"({NUM}) ms .* = ({NUM}) s$", t)
    assert m, t
    a2a, per, tot = (V.of(x) for x in m.groups())
    assert close(a2a * 4, per, rel=5e-3)
    assert close(per * 16 * 8 / 1000, tot, rel=5e-3)
    assert close(V(rep.results["t_ep_comm_s"]), tot)
    assert "b·s·h·top_k·cf·B = 1·4096·4096·2·1·2 B = 67.11 MB over ep = 8" in t
    rep2 = _ev("mixtral-8x7b-h100-64", parallelism__cp=2, parallelism__tp=2, parallelism__sequence_parallel=True,
               parallelism__ep=4, parallelism__dp=None, parallelism__ep_dispatch_fp8=True)
    assert "b·(s/c)·h·top_k·cf/t (SP)·B = 1·4096/2·4096·2·1/2·1.5 B = 12.58 MB over ep = 4" in rep2.explain["t_ep_comm_s"]


def test_moe_tp_collective_count_is_explained():
    """Qwen3-235B-A22B (top-8, cf 1) at TP 16 on GB200 NVL72: the TP explain multiplied by
    n_coll = 18 with no word of where 18 comes from. A MoE layer's MLP half carries top_k·cf
    tokens (docs/timing.md): 4 × (½ + ½ × 8) = 18 (no recompute, every layer MoE)."""
    rep = _ev("qwen3-235b-gb200-256", parallelism__tp=16, parallelism__pp=2, parallelism__ep=8, parallelism__dp=None)
    t = rep.explain["t_tp_comm_s"]
    assert re.search(rf"= 1024 × 47 × 18 × ({NUM}) ms", t), t
    assert 4 * (0.5 + 0.5 * 8) == 18
    assert "n_coll = (a dense layer's 4, + 2 with full recompute, + 1 with op_sac) × (½ + ½·top_k·cf = ½ + ½·8 on MoE layers" in t


def test_hsdp_zero1_gradient_reduce_scatter_is_not_the_replica_all_reduce_too():
    """HSDP with ZeRO-1 (Llama 3 8B, dp 32, dp_shard 8, CP 2): the explain named 'gradient
    reduce-scatter 0.1492 s', a time that held the replica all-reduce as well (0.0837 s + 0.0655 s).
    The reduce-scatter of ZeRO-1 is the same collective, over the same dp_shard·cp = 16 ranks and
    the same gradient bytes, as each of ZeRO-2's per-micro-batch reduce-scatters; and the parts
    add up to the total."""
    t1 = _ev("llama3-8b-h100-64", parallelism__zero_stage=1, parallelism__dp_shard=8).explain["t_dp_comm_exposed_s"]
    t2 = _ev("llama3-8b-h100-64", parallelism__zero_stage=2, parallelism__dp_shard=8).explain["t_dp_comm_exposed_s"]
    m1 = re.search(rf"gradient reduce-scatter ({NUM}) s \+ replica all-reduce ({NUM}) s \+ param gather ({NUM}) s = "
                   rf"({NUM}) s in total", t1)
    assert m1, t1
    rs_mb = re.search(rf"earlier micro-batches' reduce-scatters × ({NUM}) s", t2)
    assert rs_mb, t2
    assert float(m1.group(1)) == pytest.approx(float(rs_mb.group(1)), rel=1e-3)
    rep_once = re.search(rf"over 4 replicas ({NUM}) s once per step", t1)  # dp / dp_shard = 32 / 8
    assert rep_once and rep_once.group(1) == m1.group(2)
    rs, ar, ag, tot = (V.of(x) for x in m1.groups())
    assert close(rs + ar + ag, tot)


def test_optimizer_explain_says_the_shard_is_the_stages_average():
    """t_optimizer_s is sized on params_total / (tp·pp) (docs/timing.md, a stated simplification),
    not on the pacing stage's parameters; the explain called it 'the local shard' only. Llama 3 70B
    (70.554e9 parameters) over tp 8 · pp 4 · dp 32 (ZeRO-1): 70.554e9 / 1024 = 68.9 M; 4 B fp32
    gradient + 26 B of Adam traffic per parameter (docs/timing.md)."""
    t = planner.evaluate(planner.load_preset("default")).explain["t_optimizer_s"]
    assert t.startswith(f"{70.554e9 / 1024 / 1e6:.3g} M params of the local shard (sized on the stages' average")
    assert "(grad 4 + 26) B" in t


def test_energy_explain_says_one_node_not_one_nodes():
    """MPT-7B on one DGX A100 (8 GPUs): the energy explain read '1 nodes × 6500 W'."""
    t = planner.evaluate(planner.load_preset("mpt-7b-a100-8")).explain["energy_mwh"]
    assert t.startswith("1 node × ") and "1 nodes" not in t


def test_nvme_offload_explain_says_nvme_not_host():
    """offload_optimizer = nvme puts Adam m, v on local NVMe (ZeRO-Infinity, planner/memory.py);
    the explain said they were offloaded to the host."""
    t = _ev("llama3-8b-h100-64", parallelism__zero_stage=3, parallelism__offload_optimizer="nvme")
    t = t.explain["mem_optimizer_bytes"]
    assert "offloaded to NVMe" in t and "to the host" not in t


def test_goodput_explain_shows_a_recovery_factor_beyond_the_float_range_by_its_exponent():
    """One job-wide failure class at 1 per hour with a 2.556e6 s (710 h) restart: the recovery
    factor e^(λR) = e^710 ≈ 2.2e308 is beyond the largest float (1.8e308). The explain shows it
    as e^710, not inf beside a goodput above 0 (until 2026-12-02 the old factor's E was floored at
    1e-300 and the explain said it was held there)."""
    d = planner.presets.preset_json("default")
    d["reliability"]["profile"] = {
        "name": "one class", "reference": "test", "source": "test",
        "classes": [{"class": "cluster", "rate": 1.0, "per": "job_hour", "restart_s": 2.556e6,
                     "repair_s": 0.0, "source": "test"}]}
    assert 2.556e6 / 3600 == pytest.approx(710.0) and math.log(sys.float_info.max) < 710  # 709.78
    t = planner.evaluate(d).explain["goodput"]
    assert "× e^710 ×" in t and "inf" not in t, t
    d["reliability"]["profile"]["classes"][0]["restart_s"] = 3600.0  # e^(1 + λ·reload) ≈ 2.72: a number
    t = planner.evaluate(d).explain["goodput"]
    assert re.search(r"× 2\.71\d* ×", t) and "e^" not in t.split("=")[-2], t