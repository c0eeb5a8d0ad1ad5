"""The forms' look (hitl_nb.forms._theme): a stylesheet scoped to hitl-* classes, whose
colours are the front end's theme variables. How it renders is measured in
tests/forms/test_browser.py."""

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


def test_widgets_send_the_state_ipywidgets_would_send() -> None:
    """Forms work out each widget class's synced traits and serializers once; every
    widget of a form still reports exactly the state ipywidgets' own code computes."""
    import ipywidgets as W
    from ipywidgets.widgets.widget import _instances

    before = set(_instances)
    schema = {
        "type": "object",
        "required": ["ok", "when"],
        "properties": {
            "name": {"type": "string", "description": "help"},
            "n": {"type": "integer", "maximum": 3},
            "ok": {"type": "boolean"},
            "flag": {"type": "boolean"},
            "pick": {"enum": ["a", "b"]},
            "when": {"type": "string", "format": "date-time"},
            "tags": {"type": "array", "items": {"type": "string"}, "default": ["x"]},
            "kind": {"const": "k"},
            "owner": {"type": "object", "properties": {"e": {"type": "string"}}},
            "alt": {"anyOf": [{"type": "string"}, {"type": "number"}]},
        },
    }
    form = Form(schema)
    form.field("/n").value = 7  # messages and values set after creation sync too
    form.submit_button.click()
    made = [w for key, w in _instances.items() if key not in before]
    assert len({type(w).__name__ for w in made}) >= 8
    for widget in made:
        assert widget.keys == list(widget.traits(sync=True))
        assert widget.get_state() == W.Widget.get_state(widget), type(widget)
        for key in widget.keys[-3:]:  # one trait, as a change sends it
            assert widget.get_state(key) == W.Widget.get_state(widget, key)


def test_a_bare_widget_has_no_layout_or_style_model_and_keeps_its_classes() -> None:
    import ipywidgets as W

    from hitl_nb.forms import bare

    line = bare(W.HTML, ("hitl-card-status",), value="<b>ok</b>")
    assert isinstance(line, W.HTML) and line.layout is None and line.style is None
    assert line._dom_classes == ("hitl-card-status",) and line.value == "<b>ok</b>"
    state = line.get_state()
    assert state["layout"] is None and state["style"] is None  # nothing for the browser
    box = bare(W.Checkbox, ("hitl-x",), layout=W.Layout(display="none"))
    assert box.layout.display == "none" and box.style is None  # a Layout when asked
