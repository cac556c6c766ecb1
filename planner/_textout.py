"""The command line's output on a terminal that cannot show every character.

The CLI's tables and messages use a few non-ASCII characters (− × · ≤ → … 10⁸). Where stdout's
encoding cannot hold them (``PYTHONIOENCODING=cp1252``, an ASCII locale, a Windows console with a
legacy code page) Python raised ``UnicodeEncodeError`` mid-table, a stack trace (review 42a). Each
character the stream's encoding lacks is written as the ASCII most readers would type for it,
meaning kept: ``≠`` is ``!=`` and ``10⁸`` is ``10^8`` — general transliteration tables (anyascii,
Unidecode) write ``=`` and ``108``, which change what a line says, so the table here is the
project's own. A run of superscripts is spelled whole when any of it is missing (cp1252 has ``³``
but not ``⁰``: ``2³⁰`` is ``2^30``, not ``2³^0``, review 43a). A character outside the table (a
user's ``é`` quoted back where the code page has none) is written ``\u00e9``, an escape JSON and
TOML strings read back as the character (review 43b: ``\xe9`` made the TorchTitan export invalid
TOML), never a look-alike; what the encoding can show is left as it is.
"""

from __future__ import annotations

import codecs
import sys

#: Characters the CLI writes, and their ASCII spelling.
ASCII_SPELLING: dict[str, str] = {
    "\u2212": "-", "\u2013": "-", "\u2014": "--", "\u2026": "...", "\u00d7": "x", "\u00b7": "*", "\u00f7": "/",
    "\u2192": "->", "\u2190": "<-", "\u2194": "<->", "\u2264": "<=", "\u2265": ">=", "\u2260": "!=", "\u2248": "~",
    "\u226a": "<<", "\u226b": ">>", "\u00b1": "+/-", "\u221e": "inf", "\u221a": "sqrt", "\u221d": "~",
    "\u2208": " in ", "\u2209": " not in ", "\u00bd": "1/2", "\u00b5": "u", "\u03bc": "u", "\u00a7": "S",
    "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " ", "\u202f": " ", "\u2009": " ",
    "\u2713": "yes", "\u2714": "yes", "\u2717": "no", "\u2718": "no", "\u25c6": "*", "\u25cb": "o",
    "\u2308": "ceil(", "\u2309": ")", "\u230a": "floor(", "\u230b": ")", "\u03a3": "sum", "\u03a0": "prod",
    "\u03b1": "alpha", "\u03b2": "beta", "\u03b4": "delta", "\u03b5": "eps", "\u03ba": "kappa", "\u03bb": "lambda",
    "\u039b": "Lambda", "\u03c1": "rho", "\u03c4": "tau", "\u03c6": "phi", "\u03c8": "psi", "\u03a8": "Psi",
    "\u03c3": "sigma", "\u1d40": "^T",
}
_SUPERSCRIPT = dict(zip("\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b\u207a", "0123456789-+"))

ERRORS = "clusterplan-ascii"


def ascii_spelling(text: str) -> str:
    """``text`` with every non-ASCII character spelled in ASCII (see the module docstring).

    >>> ascii_spelling("TP·PP = 8 × 4 ≠ 30, 10⁻³ s")
    'TP*PP = 8 x 4 != 30, 10^-3 s'
    >>> ascii_spelling("'défault'")
    "'d\\\\u00e9fault'"
    """
    out: list[str] = []
    for ch in spell_superscript_runs(text, "ascii"):  # one '^' for a run: 10⁻³ is 10^-3
        if ord(ch) < 128:
            out.append(ch)
        elif ch in ASCII_SPELLING:
            out.append(ASCII_SPELLING[ch])
        else:
            out.append(_escape(ch))
    return "".join(out)


def _escape(ch: str) -> str:
    """``\\u00e9`` (``\\U0001f600`` beyond the Basic Multilingual Plane): the escape JSON and TOML
    strings read as the character."""
    return f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}"


def _can_encode(ch: str, encoding: str) -> bool:
    try:
        ch.encode(encoding)
        return True
    except (UnicodeEncodeError, LookupError):
        return False


def spell_superscript_runs(text: str, encoding: str) -> str:
    """``text`` with each run of superscripts that ``encoding`` cannot hold whole written as
    ``^`` and its digits (``2³⁰`` → ``2^30`` in cp1252, which has ``³`` and not ``⁰``)."""
    if not any(ch in _SUPERSCRIPT for ch in text):
        return text
    out, run = [], []

    def flush() -> None:
        if run:
            whole = "".join(run)
            out.append(whole if all(_can_encode(c, encoding) for c in run)
                       else "^" + "".join(_SUPERSCRIPT[c] for c in run))
            run.clear()

    for ch in text:
        if ch in _SUPERSCRIPT:
            run.append(ch)
        else:
            flush()
            out.append(ch)
    flush()
    return "".join(out)


def _handler(err: UnicodeError) -> tuple[str, int]:
    if not isinstance(err, UnicodeEncodeError):
        raise err
    return ascii_spelling(err.object[err.start:err.end]), err.end


codecs.register_error(ERRORS, _handler)


def use_ascii_where_needed() -> None:
    """Make stdout and stderr whose encoding is not a Unicode one write what that encoding lacks
    as :func:`ascii_spelling` spells it (a UTF-8 terminal, or a stream without an encoding such
    as a test's StringIO, sees no change). Never raises."""
    for stream in (sys.stdout, sys.stderr):
        enc = (getattr(stream, "encoding", None) or "").lower().replace("_", "-")
        if not enc or enc.startswith("utf") or not hasattr(stream, "reconfigure"):
            continue
        if getattr(stream, "_clusterplan_spelled", False):
            continue
        try:
            stream.reconfigure(errors=ERRORS)
            write = stream.write

            def spelled_write(text, _write=write, _enc=enc):
                return _write(spell_superscript_runs(text, _enc) if isinstance(text, str) else text)

            stream.write = spelled_write
            stream._clusterplan_spelled = True
        except (ValueError, OSError, AttributeError, TypeError):  # a detached or closed stream: leave it
            pass


def write_utf8(text: str) -> None:
    """Write ``text`` to stdout as UTF-8 bytes, whatever the stream's encoding (a file meant for
    another program: a launch script, TOML, JSON, which are UTF-8 by their specifications); a
    stream without a byte buffer (a test's StringIO) gets the text."""
    enc = (getattr(sys.stdout, "encoding", None) or "").lower().replace("_", "-")
    buf = getattr(sys.stdout, "buffer", None)
    if enc.startswith("utf") or buf is None:
        sys.stdout.write(text)
        return
    sys.stdout.flush()
    buf.write(text.encode("utf-8"))
    buf.flush()
