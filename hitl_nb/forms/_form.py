"""``Form``: a response_schema drawn as ipywidgets, returning exactly valid data.

::

    form = Form(envelope.response_schema)
    form                               # displays the widgets (or text without a front end)
    form.on_submit(lambda payload: client.respond(prompt_id, payload))
    form.value = {"approved": True}    # fill from code
    form.submit()                      # ... and submit from code (tests, scripts)

Errors come from :mod:`hitl_nb.validation` (same bounded validator and format checker
the agent side uses) and from the widgets themselves (text that is not a number, an
empty array entry). Each message is shown on the field its JSON Pointer names once the
field was touched (or after a Submit attempt); after a Submit attempt a summary at the
top lists every one, each entry moving the focus to its field.

``Form`` is itself a widget (a ``VBox``): it goes inside other layouts, and its
``value`` trait can be observed like any widget's.
"""

from __future__ import annotations

import concurrent.futures
import copy
import gc
import html
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import ipywidgets as W
import traitlets

from .._schema_in import settle_schema
from .._waiting import wait_async, wait_blocking
from ..errors import FormClosed, FormInvalid
from ..validation import ValidationIssue, compile_schema
from ._base import Field, FieldMessage, FormContext
from ._normalize import Resolver
from ._registry import Registry, default_registry
from ._text import render_text
from ._theme import error_html, make, stylesheet
from ._util import MISSING, FormValueError, child_pointer, esc, json_equal, split_pointer
from ._wording import plural, readable


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a form is built.

    A form of 840 fields allocates about a million small objects; each allocation burst
    set off collections that walk every object alive, the widgets of earlier forms too,
    so a build grew faster than its size (about a sixth of it). Nothing a build makes
    is garbage until the form is dropped; the collector resumes afterwards (and stays
    off if the caller had turned it off).
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _issue(entry: Any) -> ValidationIssue:
    if isinstance(entry, ValidationIssue):
        return entry
    return ValidationIssue.from_json(entry)


#: What to do instead of blocking a cell for a click (ClickNeeded's advice).
_CLICK = "in a cell, `await form.wait_async(timeout)`; or submit from code: `form.submit()`"


class Form(W.VBox):  # type: ignore[misc]
    """A form for ``schema`` (a JSON Schema, draft 2020-12), itself an ipywidgets VBox.

    ``ui`` holds presentation hints shaped like the data (see :mod:`hitl_nb.forms._hints`);
    ``value`` pre-fills the form (else the schema's defaults are shown). The caller's
    schema is never modified. A schema that cannot be used (over 64 KiB, not a valid
    JSON Schema, a remote ``$ref``) raises :class:`~hitl_nb.errors.SchemaRejected`;
    parts the widgets cannot draw become JSON text fields with a note.

    Attributes: ``submitted`` (a ``concurrent.futures.Future`` resolved with the
    payload on submit), ``summary`` (the error summary), ``submit_button``, ``status``.
    ``form.observe(callback, names="value")`` reports every change of the payload.
    """

    #: The payload as it stands (``None`` if even the top level is left out). Setting
    #: it fills the form; a value that does not fit raises FormValueError and leaves the
    #: form as it was.
    value = traitlets.Any(None, allow_none=True)

    def __init__(
        self,
        schema: Mapping[str, Any],
        ui: Mapping[str, Any] | None = None,
        value: Any = None,
        *,
        registry: Registry | None = None,
        submit_label: str = "Submit",
    ) -> None:
        with _collector_paused():
            self._build(schema, ui, value, registry, submit_label)

    def _build(
        self,
        schema: Mapping[str, Any],
        ui: Mapping[str, Any] | None,
        value: Any,
        registry: Registry | None,
        submit_label: str,
    ) -> None:
        compile_schema(schema)  # the S-2 bounds, before anything walks the schema
        # An independent copy in the caller's key order (the tab order follows it), its
        # numbers settled as the client settles a prompt's (``maxLength: 1024.0`` from a
        # protobuf agent is 1024): the same schema draws the same form, however it came.
        self.schema: dict[str, Any] = settle_schema(json.loads(json.dumps(schema)))
        self._compiled = compile_schema(self.schema)  # the same one, unless it was settled
        self.ui = copy.deepcopy(dict(ui)) if isinstance(ui, Mapping) else None
        self.registry = registry or default_registry()
        self.ctx = FormContext(Resolver(self.schema, compiled=self._compiled), self.registry.build)
        self._callbacks: list[Callable[[Any], Any]] = []
        self._server_errors: list[ValidationIssue] = []
        self._issues: list[ValidationIssue] = []
        self._disabled = False
        self._attempted = False  # a Submit was tried: the summary is shown
        self._publishing = False
        self.submitted: concurrent.futures.Future[Any] = concurrent.futures.Future()
        # The form's own parts get Layouts of their own (the fields share theirs): callers
        # may change them, e.g. ``form.status.layout.display = "none"``.
        self.summary = make(W.VBox, ("hitl-errors",), layout=W.Layout(display="none"))
        self.status = make(W.HTML, ("hitl-status",), layout=W.Layout(), value="")
        self.submit_button = make(
            W.Button,
            ("hitl-submit",),
            layout=W.Layout(),
            description=submit_label,
            button_style="primary",
            tooltip="send the answer",
        )
        self.submit_button.on_click(self._on_click)
        with self.ctx.quietly():
            self.root: Field = self.ctx.build(self.schema, "", self.ui, True, "")
        super().__init__(
            children=[
                stylesheet(),
                self.summary,
                *self.root.widgets,
                self.submit_button,
                self.status,
            ],
            _dom_classes=("hitl-form",),
        )
        self.ctx.listeners.append(self._on_change)
        if value is not None:
            self._set_value(value, reveal=False)  # pre-filled is not yet an answer
        else:
            self._refresh()

    # --- value ---------------------------------------------------------------------------
    @traitlets.validate("value")
    def _fill(self, proposal: Any) -> Any:
        if self._publishing:
            return proposal["value"]
        self._set_value(proposal["value"], reveal=True, publish=False)
        return self._read()

    def _read(self) -> Any:
        value = self.root.get()
        return None if value is MISSING else copy.deepcopy(value)

    def _publish(self, value: Any) -> None:
        """Set the ``value`` trait to what the form holds (observers are told)."""
        new = None if value is MISSING else copy.deepcopy(value)
        if not json_equal(new, self.value) or type(new) is not type(self.value):
            self._publishing = True
            try:
                self.value = new
            finally:
                self._publishing = False

    def _set_value(self, value: Any, reveal: bool, publish: bool = True) -> None:
        old = self.root.get()
        try:
            with self.ctx.batch():
                self.root.set(copy.deepcopy(value))
        except FormValueError:
            self.root.set(old)  # never leave the form half-filled
            self._refresh(publish)
            raise
        except RecursionError:
            self.root.set(old)
            self._refresh(publish)
            raise FormValueError("", "the value is nested too deeply") from None
        self._server_errors = []
        self.ctx.reveal = self.ctx.reveal or reveal
        self._refresh(publish)

    def _on_change(self) -> None:
        self._server_errors = []  # the person is changing the answer the agent rejected
        self._refresh()

    def field(self, pointer: str) -> Field:
        """The field drawn at JSON Pointer ``pointer`` (``""`` is the form itself).

        Opens closed sections on the way (opening is not answering); raises KeyError if
        nothing is drawn there. Where a pointer has a wrapper and the field it wraps
        (a variant and its option, a nullable field), the one with the input widget is
        returned. Set its ``value`` to act as a person would:
        ``form.field("/approve").value = True``.
        """
        found: Field | None = None
        for f in self.root.walk():
            if f.pointer == pointer:
                found = f
                if f.input is not None:
                    return f
            elif pointer.startswith(f.pointer + "/") and not f.is_built():
                f.build_if_needed()
                return self.field(pointer)
        if found is None:
            raise KeyError(f"no field at {pointer!r}")
        return found

    # --- errors --------------------------------------------------------------------------
    def _refresh(self, publish: bool = True) -> None:
        for reactor in list(self.ctx.reactors):
            reactor.react()
        value = self.root.get()
        issues = [ValidationIssue(p, "input", m) for p, m in self.root.local_errors()]
        if value is MISSING:
            issues.append(ValidationIssue("", "required", "a value is required"))
        else:
            issues += self._compiled.validate(value)
        self._issues = issues
        shown = self._shown()
        agent = {id(i) for i in self._server_errors}
        by_pointer: dict[str, list[FieldMessage]] = {}
        for issue in shown:
            message = FieldMessage(issue.keyword, issue.message, id(issue) in agent)
            by_pointer.setdefault(issue.path, []).append(message)
        with self.ctx.batch():
            self.root.show_errors(by_pointer)
        self._draw_summary(shown)
        self.submit_button.disabled = self._disabled
        if publish:
            self._publish(value)

    def _shown(self) -> list[ValidationIssue]:
        """Every issue once: where the form finds a problem with a field itself, the
        agent's 422 entries for that field are left out (they judged the value that was
        sent; the form's own messages speak about the value there now)."""
        seen = {i.path for i in self._issues}
        extra = [i for i in self._server_errors if i.path not in seen]
        return self._issues + extra

    def _titles(self) -> tuple[dict[str, str], dict[str, int]]:
        titles: dict[str, str] = {}
        order: dict[str, int] = {}
        for n, f in enumerate(self.root.walk()):
            titles.setdefault(f.pointer, f.title)  # the outermost (a variant, not its option)
            order.setdefault(f.pointer, n)
        return titles, order

    def where(self, pointer: str) -> str:
        """Where ``pointer`` is, in the labels a person sees: ``Owner › Email``."""
        return self._where(pointer, self._titles()[0])

    @staticmethod
    def _where(pointer: str, titles: Mapping[str, str]) -> str:
        parts = split_pointer(pointer)
        names: list[str] = []
        current = ""
        for seg in parts:
            current = child_pointer(current, seg)
            names.append(titles.get(current) or readable(seg))
        return " › ".join(names) if names else "The answer"

    def _draw_summary(self, shown: list[ValidationIssue]) -> None:
        if not shown or not (self._attempted or self._server_errors):
            if self.summary.children:
                self.summary.children = []
            self._summary_hidden(True)
            return
        titles, order = self._titles()

        def rank(issue: ValidationIssue) -> int:
            path = issue.path
            while path not in order and path:
                path = path.rsplit("/", 1)[0]
            return order.get(path, 0)

        ordered = sorted(shown, key=rank)
        agent = {id(i) for i in self._server_errors}
        head = make(
            W.HTML,
            ("hitl-summary-head",),
            value=(
                f"<span>{esc(plural(len(ordered), 'problem'))} to fix before submitting"
                f"{' (the agent checked the answer)' if self._server_errors else ''}</span>"
            ),
        )
        entries = []
        for issue in ordered:
            field = self._field_for(issue.path)
            text = issue.message[:1].upper() + issue.message[1:]
            if field is not None and id(issue) not in agent:
                text = field.say(issue.keyword, issue.message)
            label = f"{self._where(issue.path, titles)}: {text}"
            entry = make(
                W.Button,
                ("hitl-summary-link",),
                description=label,
                tooltip=f"go to {self._where(issue.path, titles)}",
            )
            entry.on_click(lambda _b, p=issue.path: self._go_to(p))
            entries.append(entry)
        self.summary.children = [head, *entries]
        self._summary_hidden(False)

    def _summary_hidden(self, hidden: bool) -> None:
        want = "none" if hidden else None
        if self.summary.layout.display != want:
            self.summary.layout.display = want
        classes = ("hitl-errors",) if hidden else ("hitl-errors", "hitl-summary")
        if self.summary._dom_classes != classes:
            self.summary._dom_classes = classes

    def _field_for(self, pointer: str) -> Field | None:
        """The built field nearest to ``pointer`` (without opening anything)."""
        best: Field | None = None
        for f in self.root.walk():
            if f.pointer == pointer or pointer.startswith(f.pointer + "/"):
                if best is None or len(f.pointer) > len(best.pointer) or f.input is not None:
                    best = f
        return best

    def _go_to(self, pointer: str) -> None:
        """Focus the field at ``pointer`` (the browser scrolls to it)."""
        try:
            target = self.field(pointer)
        except KeyError:
            target = self._field_for(pointer) or self.root
        target.focus()

    def summary_text(self) -> str:
        """The summary as plain text, one entry a line (empty until a Submit attempt)."""
        lines = []
        for w in self.summary.children:
            text = w.description if isinstance(w, W.Button) else w.value
            lines.append(html.unescape(re.sub(r"<[^>]+>", "", text)))
        return "\n".join(lines)

    @property
    def errors(self) -> list[ValidationIssue]:
        """Every problem now: local ones, the validator's, and the agent's last 422."""
        return list(self._shown())

    @property
    def is_valid(self) -> bool:
        """True when the value validates and every input is readable."""
        return not self._issues

    def set_errors(self, validation_errors: Iterable[Any]) -> None:
        """Show the agent's ``validation_errors`` (422 / -32011) on the fields they name.

        Takes ValidationIssue objects, ``{path, keyword, message}`` dicts or a
        :class:`~hitl_nb.errors.ResponseInvalid`. The form is opened again for a
        corrected answer, with a fresh :attr:`submitted` future; the messages stay until
        the person changes something. An entry the form also finds itself is shown once.
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

        Raises :class:`FormInvalid` while there are errors (they are then shown, with
        the summary) and :class:`FormClosed` when the form is disabled or was submitted
        already.
        """
        self.ctx.reveal = True  # from now on every field shows all its messages
        self._attempted = True
        self._refresh()
        if self.submitted.cancelled():  # someone gave up waiting: a new future for this one
            self.submitted = concurrent.futures.Future()
        if self._disabled or self.submitted.done():
            raise FormClosed("the form is closed: it was submitted or disabled")
        if self._issues:
            raise FormInvalid(self.errors, self.where)
        payload = self._read()
        self.disabled = True
        self.status.value = '<span class="hitl-ok">✓ Submitted</span>'
        self.submitted.set_result(payload)
        for callback in list(self._callbacks):
            try:
                callback(copy.deepcopy(payload))
            except Exception as exc:
                self.status.value = error_html(f"The submit handler failed: {exc}")
                raise
        return payload

    def _on_click(self, _button: Any) -> None:
        try:
            self.submit()
        except FormInvalid as exc:
            if exc.errors:
                self._go_to(exc.errors[0].path)  # as a form library does: to the first
        except FormClosed:
            pass  # the button is disabled then; a late click changes nothing

    def wait(self, timeout: float | None = None) -> Any:
        """Block until the form is submitted; return the payload.

        :class:`~hitl_nb.errors.WaitTimedOut` (a ``TimeoutError``) when nothing came
        within ``timeout`` seconds (None: no limit). In a notebook cell only a click
        can submit the form, and a cell that blocks cannot receive one: there ``wait``
        raises :class:`~hitl_nb.errors.ClickNeeded` at once (the payload is returned
        when the form was submitted already); ``await form.wait_async(timeout)`` waits
        for the click. Waiting never cancels anything: wait again after a timeout.
        """
        return wait_blocking(lambda: self.submitted, timeout, click=_CLICK)

    async def wait_async(self, timeout: float | None = None) -> Any:
        """``await`` form of :meth:`wait`, for a notebook cell: the click is handled while
        the cell awaits (ipykernel >= 7.4). Same timeout and result."""
        return await wait_async(lambda: self.submitted, timeout, click=_CLICK)

    @property
    def touched(self) -> bool:
        """Whether any field holds a value a person (or the caller, with ``value=``) put
        there; the schema's defaults alone do not count."""
        return self.root.touched()

    @property
    def disabled(self) -> bool:
        """Whether the inputs are disabled (they are after a submit)."""
        return self._disabled

    @disabled.setter
    def disabled(self, disabled: bool) -> None:
        self._disabled = bool(disabled)
        self.root.set_disabled(self._disabled)
        self.submit_button.disabled = self._disabled

    # --- display -------------------------------------------------------------------------
    @property
    def widget(self) -> Form:
        """The form itself (it is a widget); kept for code written before it was one."""
        return self

    def _state(self) -> str:
        if self.submitted.done() and not self.submitted.cancelled():
            return "submitted " + json.dumps(self.submitted.result(), ensure_ascii=False)
        if self.is_valid and not self._server_errors:
            return "ready to submit"
        shown = self._attempted or self._server_errors
        if not shown and not any(f.messages for f in self.root.walk()):
            # What the browser shows of it: nothing is wrong before the person has done
            # anything (messages wait for a touch or a Submit); say what is left to do.
            missing = sum(1 for issue in self.errors if issue.keyword == "required")
            if missing == len(self.errors):
                return f"waiting for an answer ({plural(missing, 'required field')} to fill in)"
            return "waiting for an answer"
        return f"{plural(len(self.errors), 'problem')} to fix"

    def state_text(self) -> str:
        """The form's state in one line, as the browser shows it: "waiting for an answer
        (1 required field to fill in)" (nothing is wrong before the person has done
        anything), "ready to submit", "2 problems to fix", "submitted {...}"."""
        return self._state()

    def problems(self) -> list[str]:
        """The messages the fields show now, each as "Label › Label: message" (the
        form's own without a label); empty while the browser shows none."""
        titles = self._titles()[0]
        out = []
        for f in self.root.walk():
            for message in f.messages:
                out.append(f"{self._where(f.pointer, titles)}: {message}" if f.pointer else message)
        return out

    def to_text(self) -> str:
        """The form as plain text: fields, values and messages (no widget front end)."""
        title = self.schema.get("title")
        return render_text(self.root, title if isinstance(title, str) else "", self._state())

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        title = self.schema.get("title")
        name = f"{title!r}" if isinstance(title, str) and title else "(untitled)"
        fields = [f for f in self.root.walk() if f.input is not None]
        required = sum(1 for f in fields if f.required)
        if self.submitted.done() and not self.submitted.cancelled():
            state = "submitted"
        elif self.is_valid and not self._server_errors:
            state = "valid"
        else:
            state = f"{plural(len(self.errors), 'problem')}"
        return f"<Form {name}: {plural(len(fields), 'field')} ({required} required), {state}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle: dict[str, Any] = dict(super()._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.to_text()
        return bundle
