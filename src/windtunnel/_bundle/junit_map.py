"""checks.json <-> junit.xml: one testcase per check, named by its id, status as the JUnit child element."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from windtunnel._bundle.models import CheckRecord, ChecksFile
from windtunnel._core.vocabulary import CheckStatus
from windtunnel._runner.junit import INFO_TYPE, CaseRecord, CaseStatus, to_junit

_TO_JUNIT: dict[CheckStatus, CaseStatus] = {
    CheckStatus.PASSED: "passed",
    CheckStatus.FAILED: "failed",
    CheckStatus.ERROR: "error",
    CheckStatus.NOT_MEASURED: "skipped",
    CheckStatus.INFO: "info",
}
_FROM_CHILD = {"failure": CheckStatus.FAILED, "error": CheckStatus.ERROR, "skipped": CheckStatus.NOT_MEASURED}


class JUnitShapeError(ValueError):
    """junit.xml cannot be read as one testcase per check."""


def junit_for(checks: ChecksFile, *, suite_name: str = "wt certify") -> str:
    """The junit.xml a bundle carries: a testsuite per runtime and stage, a testcase per check."""
    return to_junit([_case(check) for check in checks.checks], suite_name=suite_name)


def _case(check: CheckRecord) -> CaseRecord:
    status = _TO_JUNIT[check.status]
    return CaseRecord(
        group=f"{check.runtime}.{check.stage.value}",
        name=check.id,
        status=status,
        message="" if status == "passed" else check.detail or check.status.value,
        details=check.detail,
        seconds=check.seconds,
        properties={"scope": check.scope.value, "scored": str(check.scored).lower()}
        | ({"tier": check.tier} if check.tier else {}),
    )


def junit_statuses(xml_text: str) -> dict[str, CheckStatus]:
    """testcase name -> status. Documents with a DTD are refused: no entity expansion from a bundle."""
    if "<!DOCTYPE" in xml_text or "<!ENTITY" in xml_text:
        raise JUnitShapeError("junit.xml declares a DTD or entities; a bundle's junit.xml has none")
    try:
        root = ET.fromstring(xml_text)  # noqa: S314  -- DTDs refused above, so no entity expansion
    except ET.ParseError as exc:
        raise JUnitShapeError(f"junit.xml is not well-formed XML ({exc})") from exc
    statuses: dict[str, CheckStatus] = {}
    for case in root.iter("testcase"):
        name = case.get("name")
        if not name:
            raise JUnitShapeError("junit.xml has a testcase without a name")
        if name in statuses:
            raise JUnitShapeError(f"junit.xml has testcase {name!r} twice")
        children = [_status(child) for child in case if child.tag in _FROM_CHILD]
        if len(children) > 1:
            raise JUnitShapeError(f"junit.xml testcase {name!r} has more than one failure/error/skipped")
        statuses[name] = children[0] if children else CheckStatus.PASSED
    return statuses


def _status(child: ET.Element) -> CheckStatus:
    if child.tag == "skipped" and child.get("type") == INFO_TYPE:
        return CheckStatus.INFO
    return _FROM_CHILD[child.tag]
