"""The report's inline CSS and script, and the Content-Security-Policy that allows exactly them.

The page loads nothing: the policy forbids every fetch (default-src 'none') and runs only this script and
this style, by hash, so an evidence string that escaping somehow let through still could not run.
"""

from __future__ import annotations

import base64
import hashlib

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1b1f24}h1{margin:0 0 .3rem}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1.5rem}td,th{border-bottom:1px solid #d8dee4;
padding:.3rem .5rem;text-align:left;vertical-align:top}th{background:#f3f5f7}
.passed{color:#1a7f37}.failed{color:#cf222e}.error{color:#9a6700}.not_measured{color:#6e7781}.info{color:#0969da}
.badge{display:inline-block;padding:.2rem .6rem;border-radius:1rem;color:#fff;font-weight:600}
.PASSED{background:#1a7f37}.FAILED{background:#cf222e}.HARNESS_INVALID{background:#9a6700}
code{font-size:12px}details{margin:.2rem 0}pre{margin:.2rem 0;white-space:pre-wrap;word-break:break-word;
font-size:12px;background:#f6f8fa;padding:.3rem .4rem;border-radius:4px}
tr.conv-row>td{border-bottom:none;padding:0 .5rem 0 1.5rem}
details.conversation{border-left:3px solid #8c959f;padding:.2rem .8rem;margin:.3rem 0 1rem}
details.conversation.has-diffs{border-left-color:#cf222e}
details.conversation>summary{cursor:pointer;font-weight:600}
.diff-count{color:#cf222e}.no-diff{color:#1a7f37}
ul.diffs{background:#ffebe9;border:1px solid #ff818266;border-radius:6px;padding:.4rem .4rem .4rem 1.6rem}
ul.findings{border:1px solid #d0d7de;border-radius:6px;padding:.4rem .4rem .4rem 1.6rem}
li.finding.diff{color:#cf222e}
li.finding pre{max-height:8rem;overflow:auto}
li.diff{margin:.2rem 0}.turn{border-top:1px dashed #d0d7de;margin-top:.6rem;padding-top:.3rem}
.msg{margin:.3rem 0}.role{display:inline-block;min-width:5.5rem;font-weight:600;color:#57606a}
.msg.user .role{color:#0969da}.msg.final .role{color:#1a7f37}
details.model-call{background:#f6f8fa;border-radius:6px;padding:.2rem .6rem}
details.model-call>summary{cursor:pointer}
table.calls{margin:.3rem 0 .6rem;table-layout:fixed}table.calls th,table.calls td{font-size:12px}
table.calls th:first-child{width:2rem}
table.calls td.absent{color:#cf222e;font-style:italic}tr.disagree>td{background:#fff5f5}
tr.diff-note>td{color:#cf222e;font-weight:600;border-bottom:1px solid #ff8182}
.conv-error{color:#9a6700}.muted{color:#6e7781}.toolbar{margin:.5rem 0}
"""

SCRIPT = """
(function () {
  function reveal(id) {
    var target = document.getElementById(id);
    if (!target) { return; }
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") { node.open = true; }
    }
    target.scrollIntoView({block: "start"});
  }
  function fromHash() {
    if (location.hash.length > 1) { reveal(decodeURIComponent(location.hash.slice(1))); }
  }
  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest("a[href^='#']") : null;
    if (link) { reveal(decodeURIComponent(link.getAttribute("href").slice(1))); }
    var button = event.target.closest ? event.target.closest("button[data-open]") : null;
    if (button) {
      var open = button.getAttribute("data-open") === "true";
      document.querySelectorAll("details.conversation" + (open ? ".has-diffs" : "")).forEach(
        function (node) { node.open = open; });
    }
  });
  window.addEventListener("hashchange", fromHash);
  fromHash();
})();
"""


def _digest(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def content_security_policy() -> str:
    """No fetch of any kind; only the page's own style and script run (data: for the empty favicon)."""
    return (
        f"default-src 'none'; style-src '{_digest(STYLE)}'; script-src '{_digest(SCRIPT)}'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
