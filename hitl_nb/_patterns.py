"""Regular expressions as JSON Schema means them, compiled for engines that do not
backtrack without bound.

``pattern`` and ``patternProperties`` are ECMA 262 regular expressions:
:func:`ecma_to_re2` writes them in RE2's syntax, and RE2 runs them (linear time); a
pattern RE2 cannot compile (look-around, back-references) runs on the ``regex`` engine,
which :mod:`hitl_nb._keywords` searches with a timeout. One decision for both: a
pattern is valid when one of them compiles it (the metaschema's ``format: regex``
asks the same question).
"""

from __future__ import annotations

import functools
import re
from typing import Any

import re2

from .errors import SchemaRejected

# --- regular expressions ---------------------------------------------------------------

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False


#: How many program instructions the patterns of one schema may add up to: RE2's
#: ``programsize`` for the patterns it runs, an upper bound of the expanded size for the
#: others. Compiling costs about half a microsecond per instruction, so this bounds the
#: compile time of a schema (64 KiB of ``\\w{1000}``-like patterns is 6,000 of them).
MAX_PATTERN_PROGRAM = 400_000
_QUANTIFIER = re.compile(r"\{(\d*)(?:,(\d*))?\}")


def expanded_size(pattern: str) -> int:
    """An upper bound of the nodes a backtracking engine builds for ``pattern``.

    ``regex`` expands counted repetitions when it compiles: ``((a{100}){100}){100}``
    is a million nodes (0.5 s), one more level exhausts memory. Each atom counts 1; a
    group counts the sum of its contents; ``{m,n}`` multiplies what it applies to by
    ``max(m, n)``. Group syntax (``?:``, ``?=``, names) counts as atoms: a bound, not
    an exact figure.
    """
    levels: list[list[int]] = [[0, 0]]  # per open group: [total, size of the last atom]
    index, end = 0, len(pattern)
    while index < end:
        char = pattern[index]
        size = 1
        if char == "\\":
            index += 2
            if index < end and pattern[index - 1] in "pPNxu" and pattern[index] == "{":
                close = pattern.find("}", index)
                index = end if close < 0 else close + 1
        elif char == "[":
            index += 1
            if index < end and pattern[index] == "^":
                index += 1
            if index < end and pattern[index] == "]":
                index += 1
            while index < end and pattern[index] != "]":
                index += 2 if pattern[index] == "\\" else 1
            index += 1
        elif char == "(":
            levels.append([0, 0])
            index += 1
            continue
        elif char == ")" and len(levels) > 1:
            size = levels.pop()[0]
            index += 1
        elif char == "{" and (match := _QUANTIFIER.match(pattern, index)) is not None:
            low, high = match.group(1), match.group(2)
            count = max(int(low or 0), int(high or 0)) if len(low + (high or "")) < 8 else 10**8
            level = levels[-1]
            level[0] += level[1] * (count - 1)
            level[1] *= count
            index = match.end()
            if level[0] > 10**9:
                return level[0]
            continue
        else:
            index += 1
        levels[-1][0] += size
        levels[-1][1] = size
    while len(levels) > 1:
        inner = levels.pop()[0]
        levels[-1][0] += inner
    return levels[0][0]


#: ECMA 262's ``\s``: its WhiteSpace and LineTerminator characters (RE2's ``\s`` is
#: the ASCII ``[\t\n\f\r ]``, without even ``\v``).
_ECMA_SPACE = (
    r"\t\n\x{0B}\f\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}"
    r"\x{205F}\x{3000}\x{FEFF}"
)
_HEX = re.compile(r"\\x\{([0-9A-Fa-f]+)\}")


def for_regex_engine(re2_pattern: str) -> str:
    """An :func:`ecma_to_re2` result for the ``regex`` engine (``\\x{...}`` written
    ``\\uXXXX``/``\\UXXXXXXXX``, which ``regex`` reads)."""

    def hex_escape(match: Any) -> str:
        code = int(match.group(1), 16)
        return f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}"

    return str(_HEX.sub(hex_escape, re2_pattern))


#: Unicode property names ECMA 262 accepts in ``\p{...}`` that RE2 spells otherwise.
_PROPERTY_NAMES = {
    "letter": "L",
    "cased_letter": "L",
    "lowercase_letter": "Ll",
    "uppercase_letter": "Lu",
    "titlecase_letter": "Lt",
    "modifier_letter": "Lm",
    "other_letter": "Lo",
    "mark": "M",
    "combining_mark": "M",
    "nonspacing_mark": "Mn",
    "spacing_mark": "Mc",
    "enclosing_mark": "Me",
    "number": "N",
    "decimal_number": "Nd",
    "digit": "Nd",
    "letter_number": "Nl",
    "other_number": "No",
    "punctuation": "P",
    "punct": "P",
    "connector_punctuation": "Pc",
    "dash_punctuation": "Pd",
    "open_punctuation": "Ps",
    "close_punctuation": "Pe",
    "initial_punctuation": "Pi",
    "final_punctuation": "Pf",
    "other_punctuation": "Po",
    "symbol": "S",
    "math_symbol": "Sm",
    "currency_symbol": "Sc",
    "modifier_symbol": "Sk",
    "other_symbol": "So",
    "separator": "Z",
    "space_separator": "Zs",
    "line_separator": "Zl",
    "paragraph_separator": "Zp",
    "other": "C",
    "control": "Cc",
    "cntrl": "Cc",
    "format": "Cf",
    "surrogate": "Cs",
    "private_use": "Co",
    "unassigned": "Cn",
}
_PROPERTY = re.compile(r"\\([pP])\{([^}]*)\}")


def _property(kind: str, name: str) -> str:
    key = name.split("=", 1)[-1]  # Script=Greek, sc=Greek, General_Category=Letter
    short = _PROPERTY_NAMES.get(key.lower(), key)
    return f"\\{kind}{{{short}}}"


def ecma_to_re2(pattern: str) -> str:
    """An ECMA 262 pattern (what JSON Schema ``pattern`` is) in RE2's syntax.

    Written for both engines hitl-nb runs patterns on (RE2, and ``regex`` for what RE2
    cannot run): ``(?<name>...)`` named groups, ``\\p{Letter}``-style property names
    and ``Script=`` forms, ``\\uXXXX`` and ``\\u{X...}`` escapes, ``\\cX`` control
    escapes, and ``\\s``/``\\S`` with ECMA's Unicode whitespace (outside character
    classes; a ``\\S`` inside one keeps the engine's ASCII meaning). The differences
    left are listed in docs/forms.md ("Patterns").
    """
    out: list[str] = []
    index, end, in_class = 0, len(pattern), False
    while index < end:
        char = pattern[index]
        if char == "\\" and index + 1 < end:
            nxt = pattern[index + 1]
            if nxt == "s":
                out.append(_ECMA_SPACE if in_class else f"[{_ECMA_SPACE}]")
            elif nxt == "S" and not in_class:
                out.append(f"[^{_ECMA_SPACE}]")
            elif nxt in "pP" and (match := _PROPERTY.match(pattern, index)) is not None:
                out.append(_property(nxt, match.group(2)))
                index = match.end()
                continue
            elif nxt == "u" and pattern[index + 2 : index + 3] == "{":
                close = pattern.find("}", index)
                if close < 0:
                    out.append(pattern[index : index + 2])
                else:
                    out.append(f"\\x{{{pattern[index + 3 : close]}}}")
                    index = close + 1
                    continue
            elif nxt == "u" and re.fullmatch(r"[0-9A-Fa-f]{4}", pattern[index + 2 : index + 6]):
                out.append(f"\\x{{{pattern[index + 2 : index + 6]}}}")
                index += 6
                continue
            elif (
                nxt == "c"
                and index + 2 < end
                and pattern[index + 2].isascii()
                and (pattern[index + 2].isalpha())
            ):
                out.append(f"\\x{{{ord(pattern[index + 2]) % 32:02X}}}")
                index += 3
                continue
            else:
                out.append(pattern[index : index + 2])
            index += 2
            continue
        if in_class:
            if char == "]":
                in_class = False
        elif char == "[":
            in_class = True
            out.append(char)
            index += 1
            if pattern[index : index + 1] == "^":
                out.append("^")
                index += 1
            continue
        elif pattern.startswith("(?<", index) and pattern[index + 3 : index + 4] not in ("=", "!"):
            out.append("(?P<")
            index += 3
            continue
        out.append(char)
        index += 1
    return "".join(out)


def compile_pattern(pattern: str) -> Any:
    """RE2 when it can; otherwise the ``regex`` engine (searched with a timeout).

    Raises :class:`~hitl_nb.errors.SchemaRejected` for an invalid pattern and for one
    RE2 cannot run that would expand past :data:`MAX_PATTERN_PROGRAM` instructions.
    """
    compiled, _ = _compile_pattern(pattern)
    return compiled


def pattern_cost(pattern: str) -> int:
    """The instructions ``pattern`` counts towards :data:`MAX_PATTERN_PROGRAM`."""
    return _compile_pattern(pattern)[1]


@functools.lru_cache(maxsize=1024)
def _compile_pattern(written: str) -> tuple[Any, int]:
    pattern = ecma_to_re2(written)
    try:
        compiled = re2.compile(pattern, _RE2_OPTIONS)
        return compiled, int(compiled.programsize)
    except re2.error:
        pass
    size = expanded_size(pattern)
    if size > MAX_PATTERN_PROGRAM:
        raise SchemaRejected(
            f"regular expression {pattern[:60]!r} is too large: it would expand to about "
            f"{size} instructions (at most {MAX_PATTERN_PROGRAM})"
        )
    import regex  # loaded when a pattern needs it (about 50 ms)

    try:
        # ASCII: ECMA's \d, \w and \b are ASCII, as RE2's are
        return regex.compile(for_regex_engine(pattern), regex.V0 | regex.ASCII), size
    except regex.error as exc:
        raise SchemaRejected(f"invalid regular expression {written!r}: {exc}") from None
