"""OTLP/JSON on the wire: derived trace and span ids, attribute values, sending to a collector.

OTLP/JSON is the protobuf JSON mapping of ``ExportTraceServiceRequest`` with two changes the
OTLP specification makes: trace and span ids are hex strings (not base64) and enums are
numbers. 64-bit integers are written as strings, which every OTLP/JSON reader accepts.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from asf_core import DISTRIBUTION
from asf_core.entry_points import installed_version

__all__ = ["SendError", "attributes", "envelope", "send", "span_id", "trace_id"]

JSON = dict[str, Any]


def _digest(*parts: str, size: int) -> str:
    raw = hashlib.sha256("\0".join(("asf", *parts)).encode("utf-8", "surrogatepass")).digest()
    out = bytearray(raw[:size])
    if not any(out):  # an all-zero id is invalid in OTLP
        out[-1] = 1
    return out.hex()


def trace_id(session_id: str, leaf: str) -> str:
    """The trace of the path of ``session_id`` that ends at ``leaf`` (32 hex digits)."""
    return _digest("trace", session_id, leaf, size=16)


def span_id(session_id: str, entry_id: str) -> str:
    """The span standing for an entry of a session (16 hex digits), the same in every trace."""
    return _digest("span", session_id, entry_id, size=8)


def _value(value: Any) -> JSON:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [_value(v) for v in value]}}
    return {"stringValue": value if isinstance(value, str) else json.dumps(value)}


def attributes(values: dict[str, Any]) -> list[JSON]:
    """OTLP ``KeyValue`` list of the values that are not None, in order."""
    return [{"key": k, "value": _value(v)} for k, v in values.items() if v is not None]


def envelope(resource: dict[str, Any], spans: list[JSON]) -> JSON:
    """An ``ExportTraceServiceRequest`` of one resource and this library's scope."""
    scope = {"name": "asf", "version": installed_version(DISTRIBUTION) or "unknown"}
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": attributes(resource)},
                "scopeSpans": [{"scope": scope, "spans": spans}],
            }
        ]
    }


class SendError(Exception):
    """The collector could not be reached or refused the traces."""


def send(endpoint: str, request: JSON, *, timeout: float = 30.0) -> None:
    """POST one ``ExportTraceServiceRequest`` to an OTLP/HTTP endpoint as JSON.

    ``endpoint`` is the full URL (a collector listens on ``http://host:4318/v1/traces``).
    Raises :class:`SendError` for anything but a 2xx answer.
    """
    import http.client  # only here: http.client and the rest are not loaded otherwise
    import urllib.error
    import urllib.request

    if not endpoint.lower().startswith(("http://", "https://")):
        raise SendError(f"{endpoint}: not an http:// or https:// URL")
    data = json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode()
    try:
        req = urllib.request.Request(  # noqa: S310 (the scheme is checked above)
            endpoint, data=data, method="POST", headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=timeout) as answer:  # noqa: S310
            answer.read()
    except urllib.error.HTTPError as exc:
        raise SendError(f"{endpoint}: the collector answered {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise SendError(f"{endpoint}: cannot send: {reason}") from None
    except (http.client.InvalidURL, ValueError) as exc:  # a bracket left open, a bad port
        raise SendError(f"{endpoint}: not a valid URL: {exc}") from None
    except http.client.HTTPException as exc:  # an answer that is not HTTP
        raise SendError(f"{endpoint}: cannot send: {type(exc).__name__} {exc}") from None
