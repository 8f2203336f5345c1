"""An OTLP/JSON document read back with the official protobuf definitions, as a collector
would read it: the tests check the export through them, not through our own reading."""

from __future__ import annotations

import base64
import json
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

__all__ = ["parse_otlp", "span_attributes"]


def parse_otlp(doc: dict[str, Any]) -> ExportTraceServiceRequest:
    """OTLP/JSON -> protobuf, the hex ids (OTLP/JSON's spelling, checked for length) turned
    into the base64 that protobuf's JSON mapping reads; an unknown field is an error."""
    copy = json.loads(json.dumps(doc))
    for resource in copy["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for holder in [span, *span.get("links", [])]:
                    assert len(holder["traceId"]) == 32
                    assert len(holder["spanId"]) == 16
                    for key in ("traceId", "spanId"):
                        holder[key] = base64.b64encode(bytes.fromhex(holder[key])).decode()
    return json_format.ParseDict(copy, ExportTraceServiceRequest(), ignore_unknown_fields=False)


def span_attributes(span: Any) -> dict[str, Any]:
    """A span's (or link's) attributes as plain values, arrays as lists."""
    out: dict[str, Any] = {}
    for kv in span.attributes:
        kind = kv.value.WhichOneof("value")
        value = getattr(kv.value, kind)
        if kind == "array_value":
            value = [getattr(v, v.WhichOneof("value")) for v in value.values]
        out[kv.key] = value
    return out
