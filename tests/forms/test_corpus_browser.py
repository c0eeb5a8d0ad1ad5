"""The shared round-trip corpus, held to the browser's renderer in a real Chromium page
(``src/__tests__/form-corpus.spec.ts`` holds it to the same file in jsdom,
``tests/forms/test_corpus.py`` the Python forms).

``src/form/index.ts`` is bundled by esbuild (the node_modules' one, the options of
``scripts/page.mjs``: one IIFE for the browser) into a global ``HitlForm``, loaded into a
blank page, and every value of ``tests/forms/corpus/round_trip.json`` is drawn with
``renderForm(host, schema, {value})``: ``value()`` gives it back exactly, nothing added,
nothing dropped, types kept. The page parses the corpus as the jest test does
(``JSON.parse``), so a number is a JavaScript number there: ``2.0`` is the number ``2``,
and what comes back is compared with the value as JavaScript reads it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.forms.test_corpus import CORPUS
from tests.forms.test_fidelity import same

if TYPE_CHECKING:
    from tests.helpers.lab import Chromium

pytestmark = [pytest.mark.slow, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]

# Every case and value, drawn in one page: what value() gave (as JSON text) or why not.
ROUND_TRIPS = """
(text) => {
  const out = [];
  for (const c of JSON.parse(text)) {
    c.values.forEach((value, i) => {
      const host = document.createElement('div');
      document.body.append(host);
      const id = `${c.name}-${i}`;
      try {
        const form = HitlForm.renderForm(host, c.schema, { value });
        const back = form.value();
        out.push(
          back.ok
            ? { id, ok: true, json: JSON.stringify(back.value) }
            : { id, ok: false, problems: JSON.stringify(back.problems) }
        );
        form.dispose();
      } catch (error) {
        out.push({ id, ok: false, problems: String(error) });
      }
      host.remove();
    });
  }
  return out;
}
"""


def _esbuild() -> Path:
    """The extension's esbuild (``jlpm install`` puts it in node_modules); skipped where
    it or node is not, but under CI."""
    esbuild = ROOT / "node_modules" / ".bin" / "esbuild"
    if shutil.which("node") is None or not esbuild.exists():
        why = "the JupyterLab extension's node_modules (pip install -e . builds them) and node"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI needs {why}", pytrace=False)
        pytest.skip(f"needs {why}")
    return esbuild


def as_javascript(value: Any) -> Any:
    """``value`` as ``JSON.parse`` then ``JSON.stringify`` give it back: JavaScript has
    one number type, a double, written in its shortest digits, an integral one below 1e21
    without a fraction (``2.0`` is ``2``; ``2**60`` is ``1152921504606847000``)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        number = float(value)
        if number.is_integer() and abs(number) < 1e21:
            return int(Decimal(repr(number)))
        return number
    if isinstance(value, dict):
        return {k: as_javascript(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_javascript(v) for v in value]
    return value


def canonical(value: Any) -> str:
    """JSON text with sorted keys (what form-corpus.spec.ts compares)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def test_chromium_gives_back_every_value_of_the_corpus(chromium: Chromium, tmp_path: Path) -> None:
    bundle = tmp_path / "form.js"
    command = [
        str(_esbuild()),
        "src/form/index.ts",
        "--bundle",
        "--format=iife",
        "--global-name=HitlForm",
        "--platform=browser",
        "--target=es2020",
        "--log-level=warning",
        f"--outfile={bundle}",
    ]
    built = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stdout + built.stderr
    text = CORPUS.read_text(encoding="utf-8")
    expected = {
        f"{case['name']}-{i}": as_javascript(value)
        for case in json.loads(text)
        for i, value in enumerate(case["values"])
    }
    with chromium() as context:
        page = context.new_page()
        page.set_content("<!doctype html><html><head></head><body></body></html>")
        page.add_script_tag(path=str(bundle))
        results = page.evaluate(ROUND_TRIPS, text)
    assert [r["id"] for r in results] == list(expected)
    wrong = []
    for result in results:
        want = expected[result["id"]]
        if not result["ok"]:
            wrong.append(f"{result['id']}: not read back: {result['problems']}")
            continue
        back = json.loads(result["json"])
        if not same(back, want) or canonical(back) != canonical(want):
            wrong.append(f"{result['id']}: gave {result['json']}, given {canonical(want)}")
    assert not wrong, "\n".join(wrong)
