"""``report.json`` as written: built without cattrs, the same JSON as the report converter's."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from asf_core.codec import report_converter
from asf_core.findings import KINDS, Finding
from asf_core.pipeline.report import RunReport, StoreReport, json_bytes, store_json

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
_JSON = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=12,
)
_FINDINGS = st.builds(
    Finding,
    kind=st.sampled_from(KINDS),
    message=st.text(),
    code=st.sampled_from(["", "bad-id"]),
    unit=st.sampled_from(["", "db:messages/4"]),
    session=st.text(max_size=4),
    entry=st.none() | st.text(max_size=4),
    line=st.integers(0, 3),
    path=st.sampled_from(["", "a.jsonl"]),
    data=st.dictionaries(st.text(max_size=4), _JSON, max_size=3),
)
_COUNTS = st.dictionaries(st.text(max_size=6), st.integers(), max_size=4)
_REPORTS = st.builds(
    StoreReport,
    format=st.text(max_size=5),
    plugin=st.text(max_size=5),
    path=st.text(max_size=5),
    output=st.text(max_size=5),
    store=st.dictionaries(st.text(max_size=5), _JSON, max_size=3),
    sessions_read=st.integers(0, 9),
    files_written=st.integers(0, 9),
    bytes_written=st.integers(0, 2**40),
    strays=st.lists(_FINDINGS, max_size=2),
    dropped=st.lists(_FINDINGS, max_size=2),
    findings=st.lists(_FINDINGS, max_size=2),
    files=st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3),
    counts=_COUNTS,
    redacted=st.booleans(),
    redactions=st.dictionaries(st.text(max_size=4), _COUNTS, max_size=2),
    error=st.none() | st.text(max_size=5),
    complete=st.booleans(),
)


def _by_converter(report: StoreReport) -> dict[str, Any]:
    obj: dict[str, Any] = report_converter().unstructure(report)
    obj["counts"] = dict(sorted(obj["counts"].items()))
    return obj


@given(_REPORTS)
def test_a_report_is_the_json_the_converter_gives(report: StoreReport) -> None:
    mine = store_json(report)
    assert mine == _by_converter(report)
    assert list(mine) == list(_by_converter(report))  # members in the same order
    assert json_bytes(mine) == json_bytes(_by_converter(report))


def test_a_value_that_is_not_plain_json_is_left_to_the_converter() -> None:
    """A plugin's odd value (here a finding inside a store's info, a set in a finding's
    data) gets the converter's account of it, not another."""
    odd = Finding(kind="info", message="inner", line=2)
    report = StoreReport(format="f", plugin="p", path="/s", output="/o", store={"odd": odd})
    report.note([Finding(kind="stray", message="m", data={"ids": frozenset({3})})])
    assert store_json(report) == _by_converter(report)
    assert store_json(report)["store"]["odd"] == {"kind": "info", "message": "inner", "line": 2}


def test_a_run_s_totals_sum_its_stores_figures_and_findings_by_kind() -> None:
    """What ``--json`` prints under ``totals``: each figure summed over the stores, the
    findings of each list counted, warnings among the findings, every value redacted."""

    def store(n: int, kinds: list[str], redactions: dict[str, dict[str, int]]) -> StoreReport:
        report = StoreReport(format="f", plugin="p", path=f"/s{n}", output=f"/o{n}")
        report.sessions_read = report.sessions_written = n
        report.files_written, report.files_unchanged = n, 10 * n
        report.entries_written, report.bytes_written = 100 * n, 1000 * n
        report.note([Finding(kind=kind, message=f"{kind} {n}") for kind in kinds])
        report.redactions = redactions
        return report

    run = RunReport(output="/o")
    run.stores = [
        store(1, ["warning", "info", "info", "stray"], {"a": {"email": 2, "url": 1}}),
        store(2, ["error", "warning", "dropped", "dropped"], {"(store)": {"email": 4}}),
    ]
    assert run.to_json()["totals"] == {
        "sessions_read": 3,
        "sessions_written": 3,
        "files_written": 3,
        "files_unchanged": 30,
        "entries_written": 300,
        "bytes_written": 3000,
        "strays": 1,
        "dropped": 2,
        "findings": 5,
        "warnings": 2,
        "redacted": 7,
    }
