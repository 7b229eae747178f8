"""JUnit XML from case records: one <testsuite> per group, failures and errors with their messages."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

CaseStatus = Literal["passed", "failed", "error", "skipped", "info"]
INFO_TYPE = "info"
"""`info`: an optional observation, reported as neither passed nor failed: a <skipped type="info">."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseRecord:
    """One test case in a report: `group` becomes the testsuite, `name` the testcase."""

    group: str
    name: str
    status: CaseStatus
    message: str = ""
    details: str = ""
    seconds: float = 0.0
    properties: Mapping[str, str] = field(default_factory=dict)


def to_junit(records: Sequence[CaseRecord], *, suite_name: str = "windtunnel") -> str:
    root = ET.Element("testsuites", name=suite_name)
    groups: dict[str, list[CaseRecord]] = {}
    for record in records:
        groups.setdefault(record.group, []).append(record)
    for group, cases in groups.items():
        suite = ET.SubElement(
            root,
            "testsuite",
            name=group,
            tests=str(len(cases)),
            failures=str(sum(c.status == "failed" for c in cases)),
            errors=str(sum(c.status == "error" for c in cases)),
            skipped=str(sum(c.status in ("skipped", "info") for c in cases)),
            time=f"{sum(c.seconds for c in cases):.3f}",
        )
        for case in cases:
            element = ET.SubElement(
                suite, "testcase", classname=group, name=case.name, time=f"{case.seconds:.3f}"
            )
            if case.properties:
                props = ET.SubElement(element, "properties")
                for key, value in case.properties.items():
                    ET.SubElement(props, "property", name=key, value=str(value))
            if case.status != "passed":
                tag = {"failed": "failure", "error": "error", "skipped": "skipped", "info": "skipped"}[
                    case.status
                ]
                child = ET.SubElement(element, tag, message=case.message)
                if case.status == "info":
                    child.set("type", INFO_TYPE)
                child.text = case.details or case.message
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
