"""The files of a conversion's output, to compare two runs of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from asf_core.layout import FINGERPRINTS_NAME

#: What a report says of how its run went, not of the store: where it wrote, and how many
#: files it wrote or found unchanged (a re-run and a fresh conversion differ there alone).
HOW_IT_RAN = ("output", "files_written", "files_unchanged", "bytes_written")


def output_files(out: Path, *, reports: bool = True, ran: bool = True) -> dict[str, bytes]:
    """Every file of an output tree but the record of the last run (which names its own
    times and inodes); each report without the output directory it names (without all of
    :data:`HOW_IT_RAN` unless ``ran``) and, unless ``reports``, no report at all."""
    found = {}
    for path in sorted(out.rglob("*")):
        if not path.is_file() or path.name == FINGERPRINTS_NAME:
            continue
        data = path.read_bytes()
        if path.name == "report.json":
            if not reports:
                continue
            report = json.loads(data)
            for key in HOW_IT_RAN if not ran else ("output",):
                report.pop(key)
            data = json.dumps(report, sort_keys=True).encode()
        found[path.relative_to(out).as_posix()] = data
    return found


def store_report(store: Path | None) -> dict[str, Any]:
    """A store's ``report.json`` without what it says of how its run went (:data:`HOW_IT_RAN`);
    empty when there is none."""
    path = store / "report.json" if store is not None else None
    if path is None or not path.is_file():
        return {}
    report: dict[str, Any] = json.loads(path.read_text())
    for key in HOW_IT_RAN:
        report.pop(key, None)
    return report


#: The codes of the findings naming files of earlier runs left in place (docs/cli.md,
#: "Re-running").
LEFT_CODES = ("left", "superseded")


def take_left(report: dict[str, Any]) -> set[str]:
    """Take the findings naming files of earlier runs out of a store's report (a fresh
    conversion has none); return the paths they name."""
    left = [f for f in report.get("findings", ()) if f.get("code") in LEFT_CODES]
    for finding in left:
        report["findings"].remove(finding)
    return {str(f["path"]) for f in left}


def written_sessions(out: Path) -> dict[str, Path]:
    """Every session file the reports under ``out`` name, by the name its report gives it."""
    found: dict[str, Path] = {}
    for report_path in sorted(out.rglob("report.json")):
        report = json.loads(report_path.read_text())
        for name, rel in report["files"].items():
            found[name] = report_path.parent / rel
    return found
