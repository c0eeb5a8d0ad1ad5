"""Print the interpreters CI tests the project's Python claim on: of pyenv's (argument:
``pyenv root``) those that satisfy pyproject's ``requires-python``, the oldest and the
newest, by full path (the shims need ``pyenv global``), leaving out the minor version of
the interpreter that runs this script (it ran the whole suite already)."""

from __future__ import annotations

import platform
import re
import sys
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.version import Version

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib


def main(pyenv_root: str) -> None:
    project = tomllib.loads(Path("pyproject.toml").read_text("utf-8"))["project"]
    claim = SpecifierSet(project["requires-python"])
    found = sorted(
        (Version(folder.name), folder / "bin" / "python")
        for folder in (Path(pyenv_root) / "versions").iterdir()
        if re.fullmatch(r"\d+\.\d+\.\d+", folder.name)
        and (folder / "bin" / "python").is_file()
        and Version(folder.name) in claim
    )
    here = Version(platform.python_version()).release[:2]
    for version, python in dict.fromkeys(found[:1] + found[-1:]):
        if version.release[:2] != here:
            print(python)


if __name__ == "__main__":
    main(sys.argv[1])
