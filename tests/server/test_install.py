"""A plain ``pip install`` of the wheel enables the extension in that environment."""

from __future__ import annotations

import os
import re
import subprocess
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.helpers.wheel import build_wheel, install_wheel

ROOT = Path(__file__).resolve().parents[2]


def test_the_config_file_ships_as_wheel_data() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert (
        '"jupyter-config/jupyter_server_config.d/hitl_nb.json" = '
        '"etc/jupyter/jupyter_server_config.d/hitl_nb.json"'
    ) in text
    shipped = ROOT / "jupyter-config" / "jupyter_server_config.d" / "hitl_nb.json"
    assert '"hitl_nb.server": true' in shipped.read_text()


@pytest.mark.slow
def test_pip_install_enables_the_extension(tmp_path: Path) -> None:
    pytest.importorskip("hatchling", reason="the test extra brings hatchling")
    dist = tmp_path / "dist"
    wheel = build_wheel(dist, timeout=120)
    with zipfile.ZipFile(wheel) as built:  # the license travels with the package
        (name,) = [n for n in built.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
        shipped = built.read(name)
    assert shipped == (ROOT / "LICENSE").read_bytes()
    assert b"Apache License" in shipped and b"Version 2.0, January 2004" in shipped
    env_dir = tmp_path / "env"
    python = install_wheel(wheel, env_dir, timeout=120)
    assert (env_dir / "etc/jupyter/jupyter_server_config.d/hitl_nb.json").is_file()
    # jupyter-server itself comes from this interpreter's site-packages (no network);
    # the configuration is read from the new environment's prefix.
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path / "home"),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_DATA_DIR": str(tmp_path / "data"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "PYTHONPATH": sysconfig.get_paths()["purelib"],
    }
    listed = subprocess.run(
        [str(python), "-m", "jupyter_server", "extension", "list"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    out = re.sub(r"\x1b\[[0-9;]*m", "", listed.stdout + listed.stderr)  # no colours
    assert listed.returncode == 0, out
    assert str(env_dir / "etc" / "jupyter") in out
    assert "hitl_nb.server enabled" in out, out
    assert "hitl_nb.server OK" in " ".join(out.split()), out
