"""The answer page's HTML shell: the config is data no value can break out of."""

from __future__ import annotations

import json
import re

from hitl_nb.gateway import Caller, PageConfig, shell
from hitl_nb.gateway._page import CSP, script_json

CONFIG = re.compile(r'<script id="hitl-page-config" type="application/json">(.*?)</script>', re.S)
HOSTILE = "</script><script>alert(1)</script>\u2028\u2029<!-- &amp; \u202e"


def test_a_hostile_config_stays_inside_its_script_element_and_reads_back_whole() -> None:
    config = PageConfig(
        api="/api/",
        page="/answer/",
        xsrf=HOSTILE,
        me=Caller("bob", HOSTILE),
        prompt=("r", HOSTILE),
        lab="/lab?a=1&b=</script>",
    )
    page = shell(config)
    assert page.count("</script>") == 2  # the page's script tag and the config's own
    (text,) = CONFIG.findall(page)
    assert "<" not in text and ">" not in text and "&" not in text
    assert "\u2028" not in text and "\u2029" not in text
    assert json.loads(text) == config.to_json()
    assert json.loads(text)["me"]["display"] == HOSTILE
    assert "<noscript>" in page and 'href="/lab?a=1&amp;b=&lt;/script&gt;"' in page


def test_script_json_escapes_what_could_end_a_script() -> None:
    assert script_json({"a": "</script>&\u2028"}) == '{"a":"\\u003c/script\\u003e\\u0026\\u2028"}'


def test_the_policy_allows_nothing_inline() -> None:
    assert "'unsafe-inline'" not in CSP and "default-src 'self'" in CSP
    assert "script-src 'self'" in CSP and "frame-ancestors 'self'" in CSP
