"""pytest fixtures and options for testing an A2A agent's hitl-prompt/v1 side.

Loaded by hitl-nb's pytest plugin (the ``pytest11`` entry point), so an installed
hitl-nb offers them to every project; they cost nothing until a test asks for one.

Fixtures:

- ``mock_agent``: the bundled :class:`~hitl_nb.mock_agent.MockAgent`, started for the
  test and stopped after it. Override ``mock_agent_options`` (a dict of
  ``MockAgent`` keyword arguments: ``scenarios``, ``faults``, ...) to configure it.
- ``hitl_agent_url``: the agent under test: ``--hitl-agent URL`` when given, else the
  ``mock_agent``'s URL.
- ``hitl_client``: a :class:`~hitl_nb.client.SyncHitlClient` for that agent, closed
  after the test. Override ``hitl_client_options`` to pass client arguments.
- ``conversation``: a function that starts a
  :class:`~hitl_nb.notebook.Conversation` with that agent, ``conversation(content)``;
  every conversation started is closed after the test.

The clients of ``hitl_client`` and ``conversation`` record the wire (``trace=True``):
when a test using them fails, its report gets a section "hitl wire trace" with every
exchange, so a CI log shows what the agent actually said.

Option ``--hitl-nbval``: run notebooks under nbval with the shipped sanitize file
(:func:`hitl_nb.testing.sanitize_file`) and stable output in their kernels
(:func:`hitl_nb.testing.stable_output`); on POSIX systems the kernels listen on Unix
sockets, so servers that tests start beside them (on port 0, under pytest-xdist) cannot
take their ports.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from hitl_nb._display import STABLE_OUTPUT_ENV

from ._nbval_kernels import kernels_on_unix_sockets
from ._sanitize import sanitize_file

if TYPE_CHECKING:
    from hitl_nb.client import SyncHitlClient
    from hitl_nb.mock_agent import MockAgent
    from hitl_nb.notebook import Conversation

__all__ = [
    "conversation",
    "hitl_agent_url",
    "hitl_client",
    "hitl_client_options",
    "mock_agent",
    "mock_agent_options",
    "pytest_addoption",
    "pytest_configure",
    "pytest_runtest_makereport",
]


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register ``--hitl-nbval``."""
    group = parser.getgroup("hitl-conformance", "hitl-prompt/v1 conformance harness")
    group.addoption(
        "--hitl-nbval",
        action="store_true",
        default=False,
        help="nbval: use hitl-nb's sanitize file (ids, timestamps, ports, durations), "
        "stable output (no timings) in the notebooks' kernels, and kernels on Unix sockets "
        "(POSIX), whose ports servers started beside them cannot take",
    )


def pytest_configure(config: pytest.Config) -> None:
    """With ``--hitl-nbval``: point nbval at the shipped sanitize file, stable output on,
    the kernels on Unix sockets (POSIX)."""
    if not config.getoption("hitl_nbval", False):
        return
    if not hasattr(config.option, "nbval_sanitize_with"):
        raise pytest.UsageError("--hitl-nbval needs nbval (pip install nbval)")
    own = config.option.nbval_sanitize_with
    if own is not None and os.path.abspath(own) != str(sanitize_file()):
        raise pytest.UsageError(
            f"--hitl-nbval and --nbval-sanitize-with {own} were both given; nbval takes one "
            "sanitize file: copy hitl-nb's (hitl-nb nbval-sanitize --write FILE) and add "
            "your patterns to it"
        )
    config.option.nbval_sanitize_with = str(sanitize_file())
    # Environment variables set here reach the kernels nbval starts (fixtures do not).
    os.environ[STABLE_OUTPUT_ENV] = "1"
    # Kernels on Unix sockets (POSIX): a server started beside them cannot take their
    # ports, as one started on port 0 can take a TCP kernel's before it binds them.
    kernels_on_unix_sockets(config)


_TRACES = pytest.StashKey[list[Any]]()


def _keep_trace(request: pytest.FixtureRequest, trace: Any) -> None:
    if trace is not None:
        request.node.stash.setdefault(_TRACES, []).append(trace)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A failed test that used ``hitl_client`` / ``conversation`` shows the wire."""
    report = yield
    traces = item.stash.get(_TRACES, None)
    if traces and report.failed:
        text = "\n\n".join(t.to_text() for t in traces)
        report.sections.append(("hitl wire trace", text[-200_000:]))
    return report


def _option(config: pytest.Config, name: str, default: Any) -> Any:
    try:
        return config.getoption(name)
    except ValueError:  # the conformance options are not registered (plugin used alone)
        return default


@pytest.fixture
def mock_agent_options() -> dict[str, Any]:
    """Keyword arguments of the ``mock_agent`` fixture's MockAgent; override to configure."""
    return {}


@pytest.fixture
def mock_agent(mock_agent_options: dict[str, Any]) -> Iterator[MockAgent]:
    """The bundled mock agent on 127.0.0.1 (a free port), stopped after the test."""
    from hitl_nb.mock_agent import MockAgent

    with MockAgent(**mock_agent_options) as agent:
        yield agent


@pytest.fixture
def hitl_agent_url(request: pytest.FixtureRequest) -> str:
    """The agent under test: ``--hitl-agent URL``, or else a fresh ``mock_agent``."""
    url = _option(request.config, "hitl_agent", None)
    if url:
        return str(url)
    agent: MockAgent = request.getfixturevalue("mock_agent")
    return agent.url


@pytest.fixture
def hitl_client_options(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Keyword arguments of the clients the fixtures make; override to add your own.

    By default the interface chosen with ``--hitl-binding`` / ``--hitl-a2a-version``.
    """
    options: dict[str, Any] = {}
    binding = _option(request.config, "hitl_binding", "auto")
    version = _option(request.config, "hitl_a2a_version", "auto")
    if binding != "auto":
        options["binding"] = binding
    if version != "auto":
        options["version"] = version
    return options


@pytest.fixture
def hitl_client(
    request: pytest.FixtureRequest, hitl_agent_url: str, hitl_client_options: dict[str, Any]
) -> Iterator[SyncHitlClient]:
    """A blocking client for the agent under test (tracing), closed after the test."""
    from hitl_nb.client import SyncHitlClient

    options = {"trace": True, **hitl_client_options}
    with SyncHitlClient(hitl_agent_url, **options) as client:
        _keep_trace(request, client.trace)
        yield client


@pytest.fixture
def conversation(
    request: pytest.FixtureRequest, hitl_agent_url: str, hitl_client_options: dict[str, Any]
) -> Iterator[Callable[..., Conversation]]:
    """``conversation(content, **options)`` starts a Conversation with the agent under test.

    ``content`` is the first message (text, a dict sent as a data part, or a Message);
    ``options`` go to :meth:`Conversation.start`. Each conversation has its own client;
    all are closed after the test.
    """
    from hitl_nb.notebook import Conversation

    started: list[Conversation] = []

    def start(content: Any = "approval", **options: Any) -> Conversation:
        settings = {"trace": True, **hitl_client_options, **options}
        chat = Conversation.start(hitl_agent_url, content, **settings)
        started.append(chat)
        _keep_trace(request, chat.trace)
        return chat

    try:
        yield start
    finally:
        for chat in started:
            chat.close()
