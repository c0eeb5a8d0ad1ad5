"""A real JupyterHub for tests: DummyAuthenticator, the simple local spawner, the npm
``configurable-http-proxy`` pinned in ``tests/hub/proxy/``, and hitl-nb's service.

:func:`running_hub` writes a ``jupyterhub_config.py`` that ends with the one line users
write (``configure(c, ...)``), starts ``jupyterhub`` in a folder of its own on
127.0.0.1 with free ports (the proxy's API port too: two hubs on one machine must not
share it), waits until the hub's API answers through the proxy, and yields a
:class:`Hub`. Everything it started is stopped after: the hub (SIGTERM; it stops the
users' servers and its services), then the proxy by the pid file the hub leaves.

An admin service ``test-admin`` (its token in :attr:`Hub.admin_token`) creates users,
starts their servers and issues tokens; a hub admin user ``dora`` exists for the audit
trail's tests. The users' servers run this environment's ``jupyterhub-singleuser``,
so their kernels import this tree's ``hitl_nb``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.helpers.js import npm_workdir
from tests.helpers.ports import free_port
from tests.helpers.until import until

PROXY_SOURCE = Path(__file__).resolve().parents[1] / "hub" / "proxy"
ADMIN_TOKEN = "test-admin-token-0123456789abcdef"
USERS = ("alice", "bob", "carol")
HUB_ADMIN = "dora"

_CONFIG = """
import sys
c = get_config()  # noqa: F821
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {proxy_port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.ConfigurableHTTPProxy.command = [{chp!r}]
c.JupyterHub.db_url = "sqlite:///{root}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "{root}/jupyterhub_cookie_secret"
c.JupyterHub.pid_file = "{root}/jupyterhub.pid"
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.Authenticator.admin_users = {{{hub_admin!r}}}
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = "{root}/home/{{username}}"
c.Spawner.cmd = [{singleuser!r}]
# JupyterLab gives the browser tests its application object (window.jupyterapp). A
# kernel whose port another process took in the meantime is restarted on new ports
# (with cached ports jupyter_client restarts it on the same taken ones, five times).
c.Spawner.args = ["--allow-root", "--ServerApp.port_retries=0",
                  "--LabApp.expose_app_in_browser=True", "--KernelManager.cache_ports=False"]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.Spawner.environment = {{"PYTHONPATH": {pythonpath!r}}}
c.JupyterHub.services = [{{"name": "test-admin", "api_token": {admin_token!r}}}]
c.JupyterHub.load_roles = [{{
    "name": "test-admin",
    "scopes": ["admin:users", "admin:servers", "tokens", "read:services", "list:services",
               "access:servers"],
    "services": ["test-admin"],
}}]

from hitl_nb.hub import configure
configure(
    c,
    port={service_port},
    state_dir="{root}/hitl-state",
    poll_interval={poll_interval!r},
    push_url="http://127.0.0.1:{proxy_port}/services/hitl/",{service_options}
)
"""


@dataclass
class Hub:
    """A running hub: ``url`` is the proxy's (what people open), ``api`` the hub's API
    through the proxy, ``service`` the hitl service's own address (as kernels find it)
    and ``public_service`` its address through the proxy."""

    url: str
    api: str
    service: str
    public_service: str
    root: Path
    proc: subprocess.Popen[bytes]
    admin_token: str = ADMIN_TOKEN
    tokens: dict[str, str] = field(default_factory=dict)

    def admin(self) -> httpx.Client:
        """A client of the hub's API as the admin service."""
        return httpx.Client(
            base_url=self.api, headers={"Authorization": f"token {self.admin_token}"}, timeout=60
        )

    def token(self, user: str, scopes: list[str] | None = None) -> str:
        """A new API token of ``user`` (all their scopes, or only ``scopes``)."""
        body: dict[str, Any] = {"note": "hitl-nb tests"}
        if scopes is not None:
            body["scopes"] = scopes
        with self.admin() as hub:
            r = hub.post(f"users/{user}/tokens", json=body)
        assert r.status_code in (200, 201), r.text
        return str(r.json()["token"])

    def user_token(self, user: str) -> str:
        """One token of ``user`` with all their scopes, made once."""
        if user not in self.tokens:
            self.tokens[user] = self.token(user)
        return self.tokens[user]

    def start_server(self, user: str) -> str:
        """Start ``user``'s single-user server (if it is not running); its URL."""
        with self.admin() as hub:
            r = hub.post(f"users/{user}/server")
            assert r.status_code in (201, 202, 400), r.text  # 400: running already

            def ready() -> Any:
                model = hub.get(f"users/{user}").json()
                server = (model.get("servers") or {}).get("")
                return server if server and server.get("ready") else None

            server = until(ready, timeout=180, what=f"{user}'s server to start", interval=0.5)
            return self.url.rstrip("/") + str(server["url"])

    def runtime_dir(self, user: str) -> Path:
        """Where ``user``'s server keeps its kernels' connection files."""
        return self.root / "home" / user / ".local" / "share" / "jupyter" / "runtime"

    def service_pid(self) -> int:
        """The process id of the hitl service (0 while the hub has none)."""
        with self.admin() as hub:
            r = hub.get("services/hitl")
        assert r.status_code == 200, r.text
        return int(r.json().get("pid") or 0)

    def log(self) -> str:
        """The hub's log so far (its services' and servers' output included)."""
        return (self.root / "hub.log").read_text(errors="replace")


def _wait(check: Any, what: str, hub: Hub | None, timeout: float = 120) -> Any:
    """Until ``check()`` is truthy (a refused connection counts as not yet); fails at
    once, with the hub's log, when the hub has exited."""

    def ready() -> Any:
        if hub is not None and hub.proc.poll() is not None:
            raise AssertionError(f"the hub exited while waiting for {what}:\n{hub.log()[-6000:]}")
        return check()

    return until(
        ready,
        timeout=timeout,
        what=what,
        interval=0.3,
        ignore=httpx.TransportError,
        detail=(lambda: hub.log()[-6000:]) if hub is not None else None,
    )


def wait_for_service(hub: Hub, timeout: float = 120) -> None:
    """Until the hitl service answers (401 to a request without credentials)."""

    def up() -> bool:
        return httpx.get(hub.service + "api/me", timeout=5).status_code == 401

    _wait(up, "the hitl service", hub, timeout)


@contextmanager
def running_hub(
    root: Path,
    env: Mapping[str, str] | None = None,
    *,
    poll_interval: float = 2.0,
    service_options: Mapping[str, Any] | None = None,
) -> Iterator[Hub]:
    """Start a hub in ``root`` (see the module docstring); stopped after.
    ``poll_interval``: how often the service reads a watched task that does not push;
    ``service_options``: more keywords of ``configure`` (their values written as Python
    literals, e.g. ``notify={...}``; ``{hub_url}`` in them is the hub's public URL)."""
    proxy = npm_workdir(PROXY_SOURCE, "the JupyterHub tests")
    chp = proxy / "node_modules" / ".bin" / "configurable-http-proxy"
    root.mkdir(parents=True, exist_ok=True)
    ports = {
        name: free_port() for name in ("proxy_port", "hub_port", "proxy_api_port", "service_port")
    }
    singleuser = Path(sys.executable).with_name("jupyterhub-singleuser")
    repo = str(Path(__file__).resolve().parents[2])
    config = _CONFIG.format(
        root=root,
        chp=str(chp),
        singleuser=str(singleuser),
        admin_token=ADMIN_TOKEN,
        hub_admin=HUB_ADMIN,
        pythonpath=repo,
        poll_interval=float(poll_interval),
        service_options="".join(
            f"\n    {key}={value!r}," for key, value in (service_options or {}).items()
        ).replace("{hub_url}", f"http://127.0.0.1:{ports['proxy_port']}/"),
        **ports,
    )
    full_env = {"PYTHONPATH": repo, **(env or {})}
    with jupyterhub_process(root, config, full_env) as proc:
        url = f"http://127.0.0.1:{ports['proxy_port']}/"
        hub = Hub(
            url=url,
            api=url + "hub/api/",
            service=f"http://127.0.0.1:{ports['service_port']}/services/hitl/",
            public_service=url + "services/hitl/",
            root=root,
            proc=proc,
        )
        auth = {"Authorization": f"token {ADMIN_TOKEN}"}
        _wait(
            lambda: httpx.get(hub.api, headers=auth, timeout=5).status_code == 200,
            "the hub's API through the proxy",
            hub,
        )
        wait_for_service(hub)
        with hub.admin() as admin:
            for name in (*USERS, HUB_ADMIN):
                r = admin.post(f"users/{name}")
                assert r.status_code in (201, 409), r.text
        yield hub


@contextmanager
def jupyterhub_process(
    root: Path, config: str, env: Mapping[str, str]
) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``jupyterhub`` with ``config`` (the text of its ``jupyterhub_config.py``) in
    ``root``, its output in ``root / "hub.log"``; ``env``: added to this process's
    environment (which never passes on a server's own JUPYTERHUB_* variables). Yields the
    process at once (the caller waits for what it needs); stops it after, with what it
    started: its services and proxy run in sessions of their own."""
    (root / "jupyterhub_config.py").write_text(config)
    full_env = {**os.environ, **env}
    for name in ("JUPYTERHUB_API_TOKEN", "JUPYTERHUB_API_URL", "JUPYTERHUB_USER"):
        full_env.pop(name, None)  # this process is nobody's server
    log = open(root / "hub.log", "wb")  # noqa: SIM115 - closed in finally
    proc = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("jupyterhub")),
            "-f",
            str(root / "jupyterhub_config.py"),
        ],
        cwd=root,
        env=full_env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        yield proc
    finally:
        _stop(proc, root)
        log.close()


def _stop(proc: subprocess.Popen[bytes], root: Path) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    # A hub stopped abruptly leaves its proxy (own session) running: stop it by its pid.
    pid_file = root / "jupyterhub-proxy.pid"
    if pid_file.exists():
        with suppress(ValueError, ProcessLookupError, PermissionError):
            os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)
    # So does a hub stopped while it started its services (each in a session of its own):
    # what is left running with this hub's folder on its command line is stopped too.
    for pid in _named(root):
        with suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)


def _named(folder: Path) -> list[int]:
    """The processes whose command line names ``folder`` (Linux's /proc; none elsewhere)."""
    # The folder itself or a path in it ("hub1" must not find "hub10"'s processes).
    needles = (str(folder).encode() + b"/", str(folder).encode() + b"\0")
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        with suppress(OSError):
            cmdline = (entry / "cmdline").read_bytes()
            if any(n in cmdline for n in needles) and int(entry.name) != os.getpid():
                found.append(int(entry.name))
    return found


def hub_json(r: httpx.Response) -> Any:
    """The JSON body of a response, or its text when it has none (for messages)."""
    try:
        return r.json()
    except json.JSONDecodeError:
        return r.text
