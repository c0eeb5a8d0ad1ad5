"""``if``/``then``/``else`` as the forms see them: which members a section shows and
requires for the value it holds now.

:meth:`~hitl_nb.forms._normalize.Resolver.resolve` lifts every condition of a schema
(``allOf`` may bring several) into a list; each is decided on its own, against the
section's value, by the validator's reading of the ``if`` schema. A branch may hold
conditions of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._normalize import CONDITIONS, Resolver, Unsupported

#: How deeply ``if``/``then``/``else`` inside a branch are followed.
_CONDITION_DEPTH = 8


class Condition:
    """One ``if``/``then``/``else``: the test as written, both branches resolved, and
    the conditions nested in each branch."""

    __slots__ = ("test", "branches")

    def __init__(self, test: Any, branches: tuple[Branch, Branch]) -> None:
        self.test, self.branches = test, branches


class Branch:
    """One side of a condition: its schema, resolved, and the conditions inside it."""

    __slots__ = ("schema", "inner")

    def __init__(self, schema: dict[str, Any], inner: list[Condition]) -> None:
        self.schema, self.inner = schema, inner


def conditions_of(resolver: Resolver, schema: Mapping[str, Any], depth: int = 0) -> list[Condition]:
    """The conditions of a resolved schema (unreadable branches count as empty)."""
    found = schema.get(CONDITIONS)
    if not isinstance(found, list) or depth > _CONDITION_DEPTH:
        return []
    out = []
    for entry in found:
        branches = []
        for key in ("then", "else"):
            try:
                branch = resolver.resolve(entry.get(key, True))
            except Unsupported:
                branch = {}  # not drawn; the validator still applies it
            branch = branch if isinstance(branch, dict) else {}
            branches.append(Branch(branch, conditions_of(resolver, branch, depth + 1)))
        out.append(Condition(entry.get("if", True), (branches[0], branches[1])))
    return out


def all_branches(conditions: list[Condition]) -> list[dict[str, Any]]:
    """Every branch, nested ones included (the members a section may show)."""
    out = []
    for cond in conditions:
        for branch in cond.branches:
            out.append(branch.schema)
            out += all_branches(branch.inner)
    return out


def active_branches(
    resolver: Resolver, conditions: list[Condition], current: Any
) -> list[dict[str, Any]]:
    """The branches that apply to the value ``current``, nested ones included."""
    out: list[dict[str, Any]] = []
    for cond in conditions:
        branch = cond.branches[0 if resolver.matches(cond.test, current) else 1]
        out.append(branch.schema)
        out += active_branches(resolver, branch.inner, current)
    return out
