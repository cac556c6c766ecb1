"""The command line's output on a terminal that cannot show every character.

The CLI's tables and messages use a few non-ASCII characters (− × · ≤ → … 10⁸). Where stdout's
encoding cannot hold them (``PYTHONIOENCODING=cp1252``, an ASCII locale, a Windows console with a
legacy code page) Python raised ``UnicodeEncodeError`` mid-table, a stack trace (review 42a). On
such a stream every non-ASCII character is written as the ASCII most readers would type for it,
meaning kept: ``≠`` is ``!=`` and ``10⁸`` is ``10^8`` — general transliteration tables (anyascii,
Unidecode) write ``=`` and ``108``, which change what a line says, so the table here is the
project's own. The whole stream goes to ASCII, not only what its code page lacks: cp1252 has
``³`` but not ``⁰``, and ``2³⁰`` came out ``2³^0`` (review 43a). A character outside the table (a
user's ``é`` or ``８`` quoted back in a message) is escaped, ``\xe9`` / ``\uff18``, never
replaced by a look-alike (``'défault'`` shown as ``'default'`` beside "unknown scenario id").
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
    "'d\\xe9fault'"
    """
    out: list[str] = []
    sup = False  # inside a run of superscripts: one '^' for the run (10⁻³ is 10^-3)
    for ch in text:
        if ch in _SUPERSCRIPT:
            out.append(("" if sup else "^") + _SUPERSCRIPT[ch])
            sup = True
            continue
        sup = False
        if ord(ch) < 128:
            out.append(ch)
        elif ch in ASCII_SPELLING:
            out.append(ASCII_SPELLING[ch])
        else:
            out.append(ch.encode("ascii", "backslashreplace").decode("ascii"))
    return "".join(out)


def _handler(err: UnicodeError) -> tuple[str, int]:
    if not isinstance(err, UnicodeEncodeError):
        raise err
    return ascii_spelling(err.object[err.start:err.end]), err.end


codecs.register_error(ERRORS, _handler)


def use_ascii_where_needed() -> None:
    """Make stdout and stderr whose encoding is not a Unicode one write ASCII, each non-ASCII
    character as :func:`ascii_spelling` spells it (a UTF-8 terminal, or a stream without an
    encoding such as a test's StringIO, sees no change). Never raises."""
    for stream in (sys.stdout, sys.stderr):
        enc = (getattr(stream, "encoding", None) or "").lower().replace("_", "-")
        if not enc or enc.startswith("utf") or not hasattr(stream, "reconfigure"):
            continue
        try:
            stream.flush()
            stream.reconfigure(encoding="ascii", errors=ERRORS)
        except (ValueError, OSError, AttributeError):  # a detached or closed stream: leave it
            pass
