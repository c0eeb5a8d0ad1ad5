"""``hitl-nb inbox``: finding the server, refusing plainly, and the bundled page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest

from hitl_nb.cli import main
from hitl_nb.server import _reviewer


def test_a_named_server_without_a_gateway_is_refused_in_words() -> None:
    with pytest.raises(LookupError, match=r"http://127\.0\.0\.1:9/ has no hitl-nb gateway"):
        _reviewer.find_server("http://127.0.0.1:9", "t", environ={})


def test_no_running_server_says_how_to_name_one(monkeypatch: pytest.MonkeyPatch) -> None:
    dead = [{"url": "http://127.0.0.1:9/", "token": "x"}, {"url": ""}]
    monkeypatch.setattr(_reviewer, "_running", lambda: iter(dead))
    with pytest.raises(LookupError, match="--server URL --token TOKEN"):
        _reviewer.find_server(environ={})


def test_the_command_exits_2_and_says_why(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inbox", "--server", "http://127.0.0.1:9", "--token", "t"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hitl-nb inbox: ") and "no hitl-nb gateway" in err


def test_the_page_is_served_on_127_0_0_1_with_its_own_token() -> None:
    command = _reviewer.voila_command(8866, "secret", theme="dark")
    assert str(_reviewer.PAGE) in command
    assert {"--Voila.ip=127.0.0.1", "--token=secret", "--theme=dark"} <= set(command)


def test_the_bundled_page_only_shows_an_inbox_and_says_plainly_when_there_is_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import IPython.display

    shown: list[Any] = []
    monkeypatch.setattr(IPython.display, "display", shown.append)
    nb = nbformat.read(_reviewer.PAGE, as_version=4)
    nbformat.validate(nb)
    (code,) = [c.source for c in nb.cells if c.cell_type == "code"]
    assert "Inbox(" in code
    # Outside a server's kernel (here) there is no gateway: a sentence, no traceback.
    namespace: dict[str, Any] = {}
    exec(compile(code, str(_reviewer.PAGE), "exec"), namespace)
    assert "inbox" not in namespace
    (html,) = shown
    assert "no Jupyter server with hitl-nb" in html.data and "<p>" in html.data


def test_the_page_ships_in_the_package() -> None:
    page = Path(_reviewer.PAGE)
    assert page.parent.name == "server" and page.suffix == ".ipynb"
    assert json.loads(page.read_text())["metadata"]["kernelspec"]["name"] == "python3"
