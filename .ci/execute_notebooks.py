"""Re-execute the tutorial notebooks and store their outputs, as strict nbval expects.

Run after any change that alters what a tutorial prints (strict nbval compares the stored
outputs, so a stale output fails the tests)::

    PYTHONPATH=$PWD python .ci/execute_notebooks.py            # every notebook
    PYTHONPATH=$PWD python .ci/execute_notebooks.py 02 07      # those whose name starts so

Each notebook runs in a fresh kernel from the notebooks folder, as JupyterLab's Run All
would. The metadata is left as Jupyter itself writes it (kernelspec "Python 3
(ipykernel)", the kernel's language_info), without per-cell timing or widget state, so
opening a tutorial does not mark it modified and re-running one changes only outputs.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

FOLDER = Path(__file__).resolve().parent.parent / "notebooks"
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def execute(path: Path) -> float:
    """Run ``path`` top to bottom, store its outputs; return the seconds it took."""
    nb = nbformat.read(path, as_version=4)
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    started = time.monotonic()
    client = NotebookClient(
        nb,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        record_timing=False,
        store_widget_state=False,
    )
    client.execute()
    elapsed = time.monotonic() - started
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nbformat.validate(nb)
    nbformat.write(nb, path)
    return elapsed


def main(prefixes: list[str]) -> int:
    paths = sorted(FOLDER.glob("*.ipynb"))
    if prefixes:
        paths = [p for p in paths if any(p.name.startswith(x) for x in prefixes)]
    for path in paths:
        print(f"{path.name:45} {execute(path):6.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
