import argparse
import os
from pathlib import Path

import pytest

from hitl_nb import tutorials


def parse(*argv):
    parser = argparse.ArgumentParser()
    tutorials.register(parser.add_subparsers(dest="command"))
    return parser.parse_args(["tutorials", *argv])


def test_finds_the_checkouts_notebooks(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # no ./notebooks here: falls back to the checkout's
    folder = tutorials.find_notebooks()
    assert folder.name == "notebooks" and any(folder.glob("01-*.ipynb"))


def test_explicit_folder_without_notebooks_is_a_clear_error(tmp_path, capsys):
    args = parse("--dir", str(tmp_path / "nowhere"))
    assert args.func(args) == 2
    assert "no tutorial notebooks found" in capsys.readouterr().err


def test_command_opens_the_folder_and_passes_arguments_through(capsys):
    args = parse("--print-command", "--", "--no-browser", "--port", "8899")
    assert args.func(args) == 0
    line = capsys.readouterr().out
    assert "-m jupyterlab --notebook-dir=" in line and line.rstrip().endswith("--port 8899")


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX only")
def test_root_gets_allow_root(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert "--allow-root" in tutorials.lab_command(Path("."), [])
    assert tutorials.lab_command(Path("."), ["--allow-root"]).count("--allow-root") == 1
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert "--allow-root" not in tutorials.lab_command(Path("."), [])
