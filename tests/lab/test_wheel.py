"""The wheel carries the JupyterLab extension (and the answer page's script and style)
prebuilt: built from this tree, installed in a fresh environment whose PATH has no node,
JupyterLab lists it and loads it."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.helpers import lab
from tests.helpers.panel import wait_ready
from tests.helpers.wheel import build_wheel, install_wheel

pytestmark = [pytest.mark.slow, pytest.mark.once]

ROOT = Path(__file__).resolve().parents[2]
SHARE = "share/jupyter/labextensions/hitl-nb"


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A fresh environment with the wheel installed (nothing else: this environment's
    packages come through PYTHONPATH, as in tests/server/test_install.py), and the
    environment variables that run it without node."""
    pytest.importorskip("hatch_jupyter_builder", reason="the test extra brings it")
    tmp = tmp_path_factory.mktemp("wheel")
    dist = tmp / "dist"
    wheel = build_wheel(dist, timeout=300)
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    data = f"hitl_nb-0.1.0.data/data/{SHARE}/"
    for part in ("package.json", "install.json", "schemas/hitl-nb/plugin.json", "static/style.js"):
        assert data + part in names, f"{part} is not in the wheel"
    assert any(
        re.fullmatch(re.escape(data) + r"static/remoteEntry\.[0-9a-f]+\.js", n) for n in names
    )
    # The answer page's script and style, served by the gateway from the package.
    for page in ("hitl_nb/gateway/static/answer.js", "hitl_nb/gateway/static/answer.css"):
        assert page in names, f"{page} is not in the wheel"
    env_dir = tmp / "env"
    install_wheel(wheel, env_dir, timeout=300)
    path = str(env_dir / "bin")
    assert shutil.which("node", path=path) is None and shutil.which("npm", path=path) is None
    # A home that exists, as a user's does (else IPython in the kernel warns that it is
    # not writable and leaves a temporary folder of its own behind).
    (tmp / "home").mkdir()
    environ = {
        "PATH": path,
        "HOME": str(tmp / "home"),
        "JUPYTER_DATA_DIR": str(tmp / "data"),
        # jupyterlab itself, and its application files, from this environment.
        "PYTHONPATH": sysconfig.get_paths()["purelib"],
        "JUPYTERLAB_DIR": str(Path(sys.prefix) / "share" / "jupyter" / "lab"),
    }
    return env_dir, environ


def test_jupyterlab_lists_the_extension_from_the_wheel(fresh: tuple[Path, dict[str, str]]) -> None:
    env_dir, environ = fresh
    listed = subprocess.run(
        [str(env_dir / "bin" / "python"), "-m", "jupyterlab.labextensions", "list"],
        capture_output=True,
        text=True,
        env={**environ, "JUPYTER_CONFIG_DIR": str(env_dir / "config")},
        timeout=120,
    )
    out = re.sub(r"\x1b\[[0-9;]*m", "", listed.stdout + listed.stderr)
    assert listed.returncode == 0, out
    assert str(env_dir / "share" / "jupyter" / "labextensions") in out, out
    assert re.search(r"hitl-nb v0\.1\.0 enabled\s+OK \(python, hitl-nb\)", out), out


@pytest.mark.browser
@pytest.mark.kernel
def test_jupyterlab_loads_the_extension_without_node(
    chromium: lab.Chromium, fresh: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    env_dir, environ = fresh
    python = str(env_dir / "bin" / "python")
    with lab.jupyter_server(tmp_path, "jupyterlab", env=environ, python=python) as base:
        with chromium(1200, 800) as context:
            page = context.new_page()
            page.goto(f"{base}/lab?reset&token={lab.TOKEN}")
            page.wait_for_function("() => window.jupyterapp?.shell !== undefined", timeout=120_000)
            wait_ready(page)  # the panel read the server's list: the extension runs
            assert page.evaluate(
                "['hitl-nb:prompts', 'hitl-nb:panel', 'hitl-nb:status', 'hitl-nb:plugin']"
                ".every(id => window.jupyterapp.isPluginActivated(id))"
            )
            loaded = page.evaluate(
                "JSON.parse(document.getElementById('jupyter-config-data').textContent)"
                ".federated_extensions.filter(e => e.name === 'hitl-nb').map(e => e.load)"
            )
    (load,) = loaded
    assert (env_dir / SHARE / load).is_file()  # the bundle the wheel installed
