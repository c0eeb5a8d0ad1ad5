"""The ``format`` checks: draft 2020-12's, bounded, with IRIs in linear time and
``regex`` decided by the engines that run ``pattern``.

jsonschema (and the checker built from it) loads on first use, not when hitl_nb is
imported: :data:`FORMAT_CHECKER` is made when it is first read (PEP 562).
"""

from __future__ import annotations

import functools
import ipaddress
from typing import TYPE_CHECKING, Any

from ..errors import SchemaRejected
from ._limits import MAX_FORMAT_LENGTH

if TYPE_CHECKING:
    from jsonschema import FormatChecker

    FORMAT_CHECKER: FormatChecker

__all__ = ["FORMAT_CHECKER", "format_checker", "is_regex", "metaschema_checker"]


def _iri_char_allowed(char: str, in_query: bool) -> bool:
    """RFC 3987 ``ucschar`` anywhere, ``iprivate`` in the query only."""
    code = ord(char)
    plane, low = code >> 16, code & 0xFFFF
    if plane == 0:
        if 0xA0 <= code <= 0xD7FF or 0xF900 <= code <= 0xFDCF or 0xFDF0 <= code <= 0xFFEF:
            return True
        return in_query and 0xE000 <= code <= 0xF8FF
    if plane <= 13:
        return low <= 0xFFFD
    if plane == 14:
        return 0x1000 <= low <= 0xFFFD
    return in_query and low <= 0xFFFD


def _ip_literal_ok(text: str) -> bool:
    """An IPv6 host in brackets is a real IPv6 address (rfc3986-validator's pattern let
    an embedded IPv4 part with a leading zero through: ``[::ffff:192.168.0.01]``)."""
    start = text.find("//[")
    if start < 0:
        return True
    end = text.find("]", start)
    host = text[start + 3 : end] if end > 0 else ""
    if not host or host[:1] in "vV":  # IPvFuture: left to the grammar
        return True
    try:
        ipaddress.IPv6Address(host.split("%25", 1)[0])
    except ValueError:
        return False
    return True


def _iri(rule: str, *, iri: bool = True) -> Any:
    """``iri`` / ``iri-reference`` in linear time (``uri`` / ``uri-reference`` as well).

    jsonschema checks these with an Earley parser (``rfc3987-syntax``): 0.3 to 0.6 ms
    per character, 7 s for one 8 KiB string. RFC 3987 §3.1 maps an IRI to a URI by
    percent-encoding its non-ASCII characters; so: check those characters are ones an
    IRI allows, encode them, and check the URI grammar (``rfc3986-validator``).
    """

    def check(instance: object) -> bool:
        if not isinstance(instance, str):
            return True
        if not _ip_literal_ok(instance):
            return False
        if instance.endswith("\n"):
            # rfc3986-validator's pattern ends in ``$``, which also matches before a
            # final newline.
            return False
        if instance.isascii():
            return bool(_rfc3986()(instance, rule=rule))
        if not iri:
            return False
        fragment = instance.find("#")
        query = instance.find("?", 0, fragment if fragment >= 0 else len(instance))
        out = []
        for index, char in enumerate(instance):
            if char.isascii():
                out.append(char)
                continue
            in_query = query >= 0 and index > query and (fragment < 0 or index < fragment)
            if not _iri_char_allowed(char, in_query):
                return False
            out.append("".join(f"%{byte:02X}" for byte in char.encode("utf-8")))
        return bool(_rfc3986()("".join(out), rule=rule))

    return check


def is_regex(instance: object) -> bool:
    """Format ``regex``: a pattern the engines that run ``pattern`` can run.

    One decision for both: the metaschema's check of a schema's ``pattern`` and the
    search that runs it (Python's ``re`` refused ECMA's ``(?<name>...)`` and
    ``\\p{Letter}``, which RE2 runs). See :func:`hitl_nb._patterns.ecma_to_re2`.
    """
    if not isinstance(instance, str):
        return True
    try:
        from .._patterns import compile_pattern  # RE2 loads with the first pattern

        compile_pattern(instance)
    except SchemaRejected:
        return False
    return True


def _rfc3986() -> Any:
    # Imported on first use: the grammar compiles about 25 ms of regular expressions.
    from rfc3986_validator import validate_rfc3986  # type: ignore[import-untyped]

    return validate_rfc3986


@functools.cache
def format_checker() -> FormatChecker:
    """The format checker shared by the validator and the forms (:data:`FORMAT_CHECKER`):
    the draft 2020-12 formats (date, date-time, time, email, uri, uuid, ...), each
    refusing strings over :data:`MAX_FORMAT_LENGTH` characters. Made on the first call."""
    from .. import _deferred  # noqa: F401  # first: jsonschema's slow format libraries wait

    # isort: split
    from jsonschema import Draft202012Validator, FormatChecker

    base = Draft202012Validator.FORMAT_CHECKER
    checker = FormatChecker(formats=())
    own = {
        "iri": (_iri("URI"), ValueError),
        "iri-reference": (_iri("URI_reference"), ValueError),
        "uri": (_iri("URI", iri=False), ValueError),
        "uri-reference": (_iri("URI_reference", iri=False), ValueError),
        "regex": (is_regex, ()),
    }
    for name, (func, raises) in {**base.checkers, **own}.items():

        def bounded(instance: object, _func: Any = func) -> bool:
            if isinstance(instance, str) and len(instance) > MAX_FORMAT_LENGTH:
                return False
            try:
                return bool(_func(instance))
            except RecursionError:
                # format "regex": Python's re recurses once per nested group.
                return False

        checker.checkers[name] = (bounded, raises)
    return checker


def __getattr__(name: str) -> Any:
    # PEP 562: FORMAT_CHECKER, built (and jsonschema imported) when first read.
    if name == "FORMAT_CHECKER":
        return format_checker()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.lru_cache(maxsize=8)
def metaschema_checker(cls: Any) -> FormatChecker:
    """The format checker a dialect's metaschema is checked with, ``regex`` ours."""
    from .. import _deferred  # noqa: F401  # first: jsonschema's slow format libraries wait

    # isort: split
    from jsonschema import FormatChecker
    from jsonschema.validators import validator_for

    checker = FormatChecker(formats=())
    meta = validator_for(cls.META_SCHEMA, default=cls)
    checker.checkers = {**meta.FORMAT_CHECKER.checkers, "regex": (is_regex, ())}
    return checker
