"""axe-core (WCAG 2.2 AA) in the page: no serious or critical violation.

axe-core comes from npm, pinned with its integrity hash in this folder's
package-lock.json; ``make browser-deps`` installs it (``npm ci``) and fails loudly if it
cannot. Run without it, a check skips with the reason printed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

AXE_JS = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
BLOCKING = ("serious", "critical")

RUN = """async (tags) => {
  // Colours as they settle: a fade-in caught half way is not the page's contrast.
  for (const a of document.getAnimations()) {
    const end = a.effect?.getComputedTiming?.().endTime;
    if (Number.isFinite(end)) a.finish();
  }
  const out = await window.axe.run(document, {runOnly: {type: 'tag', values: tags},
                                              resultTypes: ['violations']});
  return out.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map((n) => ({target: n.target.join(' '), html: n.html.slice(0, 160),
                                why: n.failureSummary}))}));
}"""


def violations(page: Any) -> list[dict[str, Any]]:
    """Every WCAG 2.2 AA violation axe finds on the page as it is now."""
    if not AXE_JS.exists():
        pytest.skip(f"axe-core is not installed ({AXE_JS} is missing): run `make browser-deps`")
    if not page.evaluate("() => Boolean(window.axe)"):
        # Evaluated, not a <script> tag: the page's Content-Security-Policy (script-src
        # 'self') rightly refuses inline scripts, and a DevTools evaluation is not one.
        page.evaluate(AXE_JS.read_text(encoding="utf-8") + "\n;undefined")
    found: list[dict[str, Any]] = page.evaluate(RUN, TAGS)
    return found


def readable(found: list[dict[str, Any]]) -> str:
    lines = []
    for v in found:
        lines.append(f"- {v['id']} ({v['impact']}): {v['help']}")
        for n in v["nodes"][:6]:
            why = " ".join(str(n["why"]).split())
            lines.append(f"    at {n['target']}: {n['html']}\n      {why}")
        if len(v["nodes"]) > 6:
            lines.append(f"    … and {len(v['nodes']) - 6} more")
    return "\n".join(lines)


def assert_accessible(page: Any, where: str) -> list[dict[str, Any]]:
    """No serious or critical violation; returns the minor and moderate ones."""
    found = violations(page)
    bad = [v for v in found if v["impact"] in BLOCKING]
    assert not bad, f"axe (WCAG 2.2 AA) on {where}:\n{readable(bad)}"
    return found
