"""The forms' look (hitl_nb.forms._theme): a stylesheet scoped to hitl-* classes, whose
colours are the front end's theme variables. How it renders is measured in
tests/test_forms_browser.py."""

from __future__ import annotations

from hitl_nb.forms import Form
from hitl_nb.forms._theme import CSS


def test_the_stylesheet_is_scoped_and_uses_theme_variables() -> None:
    from hitl_nb.forms._theme import CSS

    rules = [r.strip() for r in CSS.split("}") if r.strip()]
    for rule in rules:
        selectors = rule.split("{")[0]
        assert all(".hitl-" in sel for sel in selectors.split(",")), selectors
    colours = [
        part.split(":", 1)[1]
        for rule in rules
        for part in rule.split("{")[1].split(";")
        if part.strip().split(":")[0] in ("color", "background", "border", "border-left")
    ]
    # every colour is a theme variable (a fallback only inside var(), for front ends
    # without them)
    assert colours and all("var(--jp-" in c or c.strip() in ("none",) for c in colours), colours


def test_every_form_carries_the_stylesheet_once() -> None:
    form = Form({"type": "object", "properties": {"a": {"type": "string"}}})
    styles = [w for w in form.children if "hitl-style" in w._dom_classes]
    assert len(styles) == 1 and styles[0].value == f"<style>{CSS}</style>"
    assert styles[0].layout.display == "none"  # it takes no space
