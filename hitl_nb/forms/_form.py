"""``Form``: a response_schema drawn as ipywidgets, returning exactly valid data.

::

    form = Form(envelope.response_schema)
    form                               # displays the widgets (or text without a front end)
    form.on_submit(lambda payload: client.respond(prompt_id, payload))
    form.value = {"approved": True}    # fill from code
    form.submit()                      # ... and submit from code (tests, scripts)

Errors come from :mod:`hitl_nb.validation` (same bounded validator and format checker
the agent side uses) and from the widgets themselves (text that is not a number, an
empty array entry). Each message is shown on the field its JSON Pointer names, and
all of them in a summary at the top; the submit button is disabled while any remain.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import ipywidgets as W

from ..errors import FormClosed, FormInvalid
from ..validation import ValidationIssue, compile_schema
from ._base import Context, Field, Message
from ._normalize import Resolver
from ._registry import Registry, default_registry
from ._util import MISSING, FormValueError, esc, make

#: How many messages the summary lists before "and N more".
SUMMARY_LINES = 8


def _issue(entry: Any) -> ValidationIssue:
    if isinstance(entry, ValidationIssue):
        return entry
    return ValidationIssue.from_json(entry)


class Form:
    """A form for ``schema`` (a JSON Schema, draft 2020-12).

    ``ui`` holds presentation hints shaped like the data (see :mod:`hitl_nb.forms._hints`);
    ``value`` pre-fills the form (else the schema's defaults are shown). The caller's
    schema is never modified. A schema that cannot be used (over 64 KiB, not a valid
    JSON Schema, a remote ``$ref``) raises :class:`~hitl_nb.errors.SchemaRejected`;
    parts the widgets cannot draw become JSON text fields with a note.

    Attributes: ``widget`` (the ipywidgets VBox), ``submitted`` (a
    ``concurrent.futures.Future`` resolved with the payload on submit).
    """

    def __init__(
        self,
        schema: Mapping[str, Any],
        ui: Mapping[str, Any] | None = None,
        value: Any = None,
        *,
        registry: Registry | None = None,
        submit_label: str = "Submit",
    ) -> None:
        self._compiled = compile_schema(schema)
        # an independent copy in the caller's key order (the tab order follows it)
        self.schema: dict[str, Any] = json.loads(json.dumps(schema))
        self.ui = copy.deepcopy(dict(ui)) if isinstance(ui, Mapping) else None
        self.registry = registry or default_registry()
        self.ctx = Context(Resolver(self.schema), self.registry.build)
        self._callbacks: list[Callable[[Any], Any]] = []
        self._server_errors: list[ValidationIssue] = []
        self._issues: list[ValidationIssue] = []
        self._disabled = False
        self.submitted: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.summary = make(W.HTML, ("hitl-errors",), value="")
        self.status = make(W.HTML, ("hitl-status",), value="")
        self.submit_button = make(
            W.Button,
            ("hitl-submit",),
            description=submit_label,
            button_style="primary",
            tooltip="send the answer",
        )
        self.submit_button.on_click(self._on_click)
        self.ctx.quiet += 1
        try:
            self.root = self.ctx.build(self.schema, "", self.ui, True, "")
        finally:
            self.ctx.quiet -= 1
        self.widget = make(
            W.VBox,
            ("hitl-form",),
            children=[
                self.summary,
                *self.root.widgets,
                self.submit_button,
                self.status,
            ],
        )
        self.ctx.listeners.append(self._on_change)
        if value is not None:
            self._set_value(value, reveal=False)  # pre-filled is not yet an answer
        else:
            self._refresh()

    # --- value ---------------------------------------------------------------------------
    @property
    def value(self) -> Any:
        """The payload as it stands (``None`` if even the top level is left out)."""
        value = self.root.get()
        return None if value is MISSING else copy.deepcopy(value)

    @value.setter
    def value(self, value: Any) -> None:
        self._set_value(value, reveal=True)

    def _set_value(self, value: Any, reveal: bool) -> None:
        old = self.root.get()
        try:
            self.root.set(copy.deepcopy(value))
        except FormValueError:
            self.root.set(old)  # never leave the form half-filled
            self._refresh()
            raise
        except RecursionError:
            self.root.set(old)
            self._refresh()
            raise FormValueError("", "the value is nested too deeply") from None
        self._server_errors = []
        self.ctx.reveal = self.ctx.reveal or reveal
        self._refresh()

    def _on_change(self) -> None:
        self._server_errors = []  # the person is changing the answer the agent rejected
        self._refresh()

    def field(self, pointer: str) -> Field:
        """The field drawn at JSON Pointer ``pointer`` (``""`` is the form itself).

        Opens closed sections on the way; raises KeyError if nothing is drawn there.
        A field with an input widget has it as ``.input`` (set its ``value`` to act as
        the person would).
        """
        found: Field | None = None
        for f in self.root.walk():
            if f.pointer == pointer:
                found = f
                if hasattr(f, "input"):
                    return f
            elif pointer.startswith(f.pointer + "/") and getattr(f, "built", True) is False:
                f.build()  # type: ignore[attr-defined]
                return self.field(pointer)
        if found is None:
            raise KeyError(f"no field at {pointer!r}")
        return found

    # --- errors --------------------------------------------------------------------------
    def _refresh(self) -> None:
        for reactor in list(self.ctx.reactors):
            reactor.react()
        value = self.root.get()
        issues = [ValidationIssue(p, "input", m) for p, m in self.root.local_errors()]
        if value is MISSING:
            issues.append(ValidationIssue("", "required", "a value is required"))
        else:
            issues += self._compiled.validate(value)
        self._issues = issues
        shown = issues + self._server_errors
        by_pointer: dict[str, list[Message]] = {}
        for issue in shown:
            by_pointer.setdefault(issue.path, []).append((issue.keyword, issue.message))
        self.ctx.begin()
        try:
            self.root.show_errors(by_pointer)
        finally:
            self.ctx.end()
        self._draw_summary(shown)
        self.submit_button.disabled = bool(issues) or self._disabled

    def _draw_summary(self, shown: list[ValidationIssue]) -> None:
        if not shown:
            self.summary.value = ""
            return
        titles: dict[str, str] = {}
        for f in self.root.walk():
            titles.setdefault(f.pointer, f.title)  # the outermost (a variant, not its option)
        items = "".join(
            f"<li>{self._where(i.path, titles)}: {esc(i.message)}</li>"
            for i in shown[:SUMMARY_LINES]
        )
        more = len(shown) - SUMMARY_LINES
        tail = f"<li>… and {more} more</li>" if more > 0 else ""
        self.summary.value = (
            f'<div style="color:#b00020"><b>{len(shown)} problem(s) to fix before '
            f"submitting</b><ul>{items}{tail}</ul></div>"
        )

    @staticmethod
    def _where(pointer: str, titles: Mapping[str, str]) -> str:
        # the person reads titles; the pointer stays for whoever compares with a log
        found = pointer
        while found and found not in titles:
            found = found.rsplit("/", 1)[0]
        code = f"<code>{esc(pointer or '/')}</code>"
        if not found:
            return code
        parts = found.split("/")
        names = ["/".join(parts[:n]) for n in range(2, len(parts) + 1)]
        path = " › ".join(titles[p] for p in names if p in titles)
        return f"<b>{esc(path)}</b> ({code})"

    @property
    def errors(self) -> list[ValidationIssue]:
        """Every problem now: local ones, the validator's, and the agent's last 422."""
        return list(self._issues) + list(self._server_errors)

    @property
    def is_valid(self) -> bool:
        """True when the value validates and every input is readable."""
        return not self._issues

    def set_errors(self, validation_errors: Iterable[Any]) -> None:
        """Show the agent's ``validation_errors`` (422 / -32011) on the fields they name.

        Takes ValidationIssue objects, ``{path, keyword, message}`` dicts or a
        :class:`~hitl_nb.errors.ResponseInvalid`. The form is opened again for a
        corrected answer, with a fresh :attr:`submitted` future; the messages stay until
        the person changes something.
        """
        entries = getattr(validation_errors, "validation_errors", validation_errors)
        self._server_errors = [_issue(e) for e in entries]
        self.ctx.reveal = True
        if self.submitted.done():
            self.submitted = concurrent.futures.Future()
        self.disabled = False
        self.status.value = ""
        self._refresh()

    # --- submitting ----------------------------------------------------------------------
    def on_submit(self, callback: Callable[[Any], Any], remove: bool = False) -> None:
        """Call ``callback(payload)`` on every submit (``remove=True`` unregisters)."""
        if remove:
            self._callbacks.remove(callback)
        else:
            self._callbacks.append(callback)

    def submit(self) -> Any:
        """Submit from code: the same as clicking the button. Returns the payload.

        Raises :class:`FormInvalid` while there are errors and :class:`FormClosed` when
        the form is disabled or was submitted already.
        """
        self.ctx.reveal = True  # from now on every field shows all its messages
        self._refresh()
        if self.submitted.cancelled():  # someone gave up waiting: a new future for this one
            self.submitted = concurrent.futures.Future()
        if self._disabled or self.submitted.done():
            raise FormClosed("the form is closed: it was submitted or disabled")
        if self._issues:
            raise FormInvalid(self.errors)
        payload = self.value
        self.disabled = True
        self.status.value = '<span style="color:#1b5e20">✓ submitted</span>'
        self.submitted.set_result(payload)
        for callback in list(self._callbacks):
            try:
                callback(copy.deepcopy(payload))
            except Exception as exc:
                self.status.value = (
                    f'<span style="color:#b00020">submit handler failed: {esc(exc)}</span>'
                )
                raise
        return payload

    def _on_click(self, _button: Any) -> None:
        try:
            self.submit()
        except (FormInvalid, FormClosed):
            pass  # the summary already says why

    async def wait(self, timeout: float | None = None) -> Any:
        """Wait for the payload; ``asyncio.TimeoutError`` after ``timeout`` seconds."""
        # shield: a timeout must not cancel the form's own future
        return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(self.submitted)), timeout)

    @property
    def disabled(self) -> bool:
        """Whether the inputs are disabled (they are after a submit)."""
        return self._disabled

    @disabled.setter
    def disabled(self, disabled: bool) -> None:
        self._disabled = bool(disabled)
        self.root.set_disabled(self._disabled)
        self.submit_button.disabled = self._disabled or bool(self._issues)

    # --- display -------------------------------------------------------------------------
    def to_text(self) -> str:
        """The form as plain text: fields, values and messages (no widget front end)."""
        from ._text import render_text

        return render_text(self)

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        state = (
            "submitted"
            if self.submitted.done()
            else ("valid" if self.is_valid else f"{len(self.errors)} error(s)")
        )
        return f"<Form {self.root.title!r}: {state}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle: dict[str, Any] = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.to_text()
        return bundle

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self._repr_mimebundle_(), raw=True)  # type: ignore[no-untyped-call]
