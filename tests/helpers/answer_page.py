"""What the answer page's browser tests check on every host: nothing scrolls sideways,
every tap target is at least 44 px, and axe-core finds no serious or critical violation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
#: axe-core (``jlpm install`` brings it; the page's own bundle never does).
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
PHONE = (375, 667)
DESK = (1280, 800)

#: JavaScript: what scrolls sideways, and the tap targets under 44 px (visible ones).
LAYOUT = """() => {
  const small = [];
  for (const el of document.querySelectorAll(
      'a[href], button, input:not([type=hidden]), select, textarea, summary')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || style.display === 'none') continue;
    // A checkbox or radio counts with its label (the label is the target people tap).
    const label = el.closest('label')
      || (el.id && document.querySelector(`label[for="${el.id}"]`));
    const box = label && ['checkbox', 'radio'].includes(el.type)
      ? label.getBoundingClientRect() : r;
    if (box.height < 44 || box.width < 44) {
      const size = `${Math.round(box.width)}x${Math.round(box.height)}`;
      const text = (el.textContent || el.value || '').slice(0, 30);
      small.push(`${el.tagName.toLowerCase()}.${el.className} ${size} "${text}"`);
    }
  }
  return {scroll: document.documentElement.scrollWidth, width: innerWidth, small};
}"""


def check_layout(page: Any, what: str) -> None:
    """No sideways scrolling and no tap target under 44 px, or an assertion naming them."""
    layout = page.evaluate(LAYOUT)
    assert layout["scroll"] <= layout["width"], f"{what}: scrolls sideways: {layout}"
    assert layout["small"] == [], f"{what}: tap targets under 44 px: {layout['small']}"


def serious_violations(page: Any) -> list[str]:
    """The serious and critical violations axe-core finds, in words. axe is added as a
    script of the page's own: the page's CSP lets it in only in a browser context opened
    with ``bypass_csp=True`` (or from the page's own site)."""
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.add_script_tag(content=AXE.read_text())
    result = page.evaluate("async () => (await axe.run()).violations")
    return [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:3]}"
        for v in result
        if v["impact"] in ("serious", "critical")
    ]
