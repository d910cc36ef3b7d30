"""Server-sent events: one pipeline event per frame, tagged with its stream's id; and a parser for clients."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pipeline.program.events import Event

MEDIA_TYPE = "text/event-stream"
KEEPALIVE = b": keep-alive\n\n"


def frame(event: Event, stream_id: str, seq: int) -> bytes:
    """`event: <phase>` and one `data:` line of JSON carrying the event, `stream_id` and `seq`.

    json.dumps escapes CR and LF inside strings, so the data is always a single line.
    """
    data = {"stream_id": stream_id, "seq": seq, **event.model_dump(mode="json")}
    return f"event: {event.phase}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


@dataclass(frozen=True)
class SSEMessage:
    """One parsed server-sent event."""

    event: str
    data: dict[str, Any]


def parse_sse(lines: Iterable[str]) -> Iterator[SSEMessage]:
    """The events in a stream of SSE lines (without line ends); comments and unknown fields are skipped."""
    name = "message"
    data: list[str] = []
    for line in lines:
        if not line:
            if data:
                yield SSEMessage(name, json.loads("\n".join(data)))
            name, data = "message", []
        elif line.startswith(":"):
            continue
        else:
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
    if data:
        yield SSEMessage(name, json.loads("\n".join(data)))
