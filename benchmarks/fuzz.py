"""Time-boxed fuzzing of the export loader and the HTTP request parser (hypothesis; not part of the test run).

    .venv/bin/python benchmarks/fuzz.py --seconds 60 --json benchmarks/results/fuzz.json
    .venv/bin/python benchmarks/fuzz.py --targets request --seconds 30 --seed 7

Each target runs hypothesis rounds (`--round` examples each, a fresh seed per round: `--seed` + round) until its
time box ends, and counts every input it ran. `export` writes a real export (save_export of a ScopedQA over the
demo corpus), mutates its files and checks that load_export either loads it or raises a ScopeRagError naming a
file of that directory, never anything else, and never touches the caller's program. `request` sends request
bodies through QueryRequest (the model POST /v1/query validates) and, for about one example in five, through
the real app (httpx ASGI transport, scripted LM): statuses are 2xx/4xx only, agree with the model, error bodies
are JSON naming the problem and streams end with `completed` or `error`. The minimal failing input of each
distinct failure is written to benchmarks/results/fuzz-failures/.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

import argparse
import asyncio
import base64
import contextlib
import email.message
import json
import logging
import platform
import shutil
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import dspy
import httpx
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException
from measure import Row, log, table
from pydantic import ValidationError

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the scripted DummyLM lives with the tests

from pipeline.errors import ScopeRagError, UnknownScopeError  # noqa: E402
from pipeline.export import MANIFEST, MAX_FILE_BYTES, PROGRAM, PROMPTS, canonical_json, load_export, render_prompts  # noqa: E402
from pipeline.export.jsonio import sha256_hex  # noqa: E402
from pipeline.guards.ids import is_canonical_uuid  # noqa: E402
from pipeline.guards.sanitise import MAX_QUESTION_CHARS  # noqa: E402
from pipeline.intake.scope import resolve_scope  # noqa: E402
from pipeline.program.module import ScopedQA  # noqa: E402
from pipeline.serving import create_app, parse_sse  # noqa: E402
from pipeline.serving.limits import DEFAULT_MAX_BODY_BYTES  # noqa: E402
from pipeline.serving.schemas import MAX_DOCUMENT_IDS, MAX_PROPERTY_CHARS, QueryRequest  # noqa: E402
from pipeline.store import Store, open_store  # noqa: E402
from pipeline.store.build import build_index  # noqa: E402
from pipeline.store.embedders import HashEmbedder  # noqa: E402
from tests.support.fakes import cooperative, scripted_lm  # noqa: E402
from tests.support.properties import JSON_VALUES, edit_a_predictor, mutated_bytes, mutated_json, save_sample_export  # noqa: E402

FAILURES_DIR = ROOT / "benchmarks" / "results" / "fuzz-failures"
TARGETS = ("export", "request")
ROUND_EXAMPLES = 100
Record = dict[str, Any]

# -- strategies shared by both targets ------------------------------------------------------------

# Bigger than the property tests' HUGE_VALUES (and nesting 200 deep, not 50): the fuzzer can afford them.
HUGE = ("x" * 100_000, 10**400, -(2**63) - 1, 1e308, [None] * 5000, {"k" * 300: 1}, "\x00" * 50, "\u202e" * 50)
RAW_TRAPS = (
    b"",
    b"null",
    b'{"a": 1, "a": 2}',
    b'{"a": NaN}',
    b'{"a": -Infinity}',
    b'{"a": 1e999}',
    b'{"a": "\\ud800"}',
    b'{"a": ' + b"9" * 5000 + b"}",
    b"\xef\xbb\xbf{}",
    b"{}\x00",
    b"\xff\xfe{\x00}\x00",
)
# Keys an added JSON member may have: any text, or one an LM config or the export format uses.
ADD_KEYS = st.text(max_size=10) | st.sampled_from(["lm", "fields", "api_key", "model", "metadata"])
ANY_TEXT = st.text(alphabet=st.one_of(st.characters(), st.sampled_from(["\ud800", "\udfff", "\u200b", "\u202e"])))


def _deep(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def _shown(data: bytes, limit: int = 4000) -> str:
    """Bytes for a failure file: text when they are UTF-8, else base64 (both cut at `limit` bytes)."""
    try:
        return data[:limit].decode("utf-8")
    except UnicodeDecodeError:
        return "base64:" + base64.b64encode(data[:limit]).decode()


# -- the export target ----------------------------------------------------------------------------

MISSING, DIRECTORY, SYMLINK, DANGLING, FIFO = "missing", "directory", "symlink", "dangling symlink", "fifo"
FileContent = bytes | str  # bytes, or one of the special entries above
FILES = (MANIFEST, PROGRAM, PROMPTS)


def _vouch(files: dict[str, FileContent]) -> None:
    """Regenerate prompts.md from program.json and make the manifest vouch for both, where they still parse."""
    try:
        state = json.loads(files[PROGRAM])
        manifest = json.loads(files[MANIFEST])
    except (TypeError, ValueError, RecursionError):
        return
    with contextlib.suppress(KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError):
        files[PROMPTS] = render_prompts(state).encode("utf-8")
    listed = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(listed, dict):
        return
    for name in (PROGRAM, PROMPTS):
        content = files[name]
        if isinstance(content, bytes):
            listed[name] = {"sha256": sha256_hex(content), "size": len(content)}
    with contextlib.suppress(TypeError, ValueError, RecursionError):
        files[MANIFEST] = canonical_json(manifest)


@st.composite
def valid_program_edits(draw: st.DrawFn, program: bytes) -> bytes:
    """program.json (if it still parses) with one predictor's instructions and demos replaced by any text and
    JSON without LM keys: what an optimizer could legitimately write."""
    try:
        state = json.loads(program)
        edit_a_predictor(draw, state)
        return canonical_json(state)
    except (ValueError, RecursionError, KeyError, TypeError):
        return program


@st.composite
def export_edits(draw: st.DrawFn, base: dict[str, bytes]) -> tuple[dict[str, FileContent], list[str]]:
    """The export's files after 1-3 edits: byte edits, JSON edits (maybe vouched for by the manifest), any
    bytes or JSON, deep nesting, BOM/CRLF, or the file missing, a directory, a symlink or a FIFO."""
    files: dict[str, FileContent] = dict(base)
    edits = []
    for _ in range(draw(st.integers(1, 3))):
        name = draw(st.sampled_from(FILES))
        op = draw(
            st.sampled_from(
                [
                    "valid_edit",
                    "json_edit_vouched",
                    "json_edit_vouched",
                    "json_edit",
                    "bytes_edit",
                    "any_json",
                    "any_bytes",
                    "raw_trap",
                    "deep",
                    "bom",
                    "crlf",
                    "special",
                ]
            )
        )
        content = files[name]
        if op == "valid_edit" and isinstance(files[PROGRAM], bytes):
            files[PROGRAM] = draw(valid_program_edits(files[PROGRAM]))
            _vouch(files)
            name = PROGRAM
        elif op in ("json_edit", "json_edit_vouched") and isinstance(content, bytes):
            try:
                value = json.loads(content)
            except (ValueError, RecursionError):
                value = content.decode("utf-8", "replace")[:1000]
            try:
                files[name] = canonical_json(draw(mutated_json(value, huge=HUGE, max_nest=200, add_keys=ADD_KEYS)))
            except (TypeError, ValueError, RecursionError):  # a value canonical JSON cannot write (huge int, depth)
                files[name] = json.dumps(draw(JSON_VALUES)).encode()
            if op == "json_edit_vouched":
                _vouch(files)
        elif op == "bytes_edit" and isinstance(content, bytes):
            files[name] = draw(mutated_bytes(content, duplicate=True, max_cut=64))
        elif op == "any_json":
            files[name] = json.dumps(draw(JSON_VALUES), indent=draw(st.sampled_from([None, 2]))).encode()
        elif op == "any_bytes":
            files[name] = draw(st.binary(max_size=300))
        elif op == "raw_trap":
            files[name] = draw(st.sampled_from(RAW_TRAPS))
        elif op == "deep":
            files[name] = _deep(draw(st.sampled_from([100, 900, 1100, 5000, 200_000])))
        elif op == "bom" and isinstance(content, bytes):
            files[name] = b"\xef\xbb\xbf" + content
        elif op == "crlf" and isinstance(content, bytes):
            files[name] = content.replace(b"\n", b"\r\n")
        else:
            files[name] = draw(st.sampled_from([MISSING, DIRECTORY, SYMLINK, DANGLING, FIFO]))
        edits.append(f"{op}:{name}")
    return files, edits


def _write_export(directory: Path, files: dict[str, FileContent], original: Path) -> None:
    directory.mkdir()
    for name, content in files.items():
        path = directory / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif content == DIRECTORY:
            path.mkdir()
        elif content == SYMLINK:
            path.symlink_to(original / name)  # a symlink to the valid file: refused all the same
        elif content == DANGLING:
            path.symlink_to(directory / "nowhere")
        elif content == FIFO:
            os.mkfifo(path)  # opening it would block: the loader must refuse it before reading


class Target(Protocol):
    name: str

    def check(self, data: st.DataObject, record: Record) -> str: ...


@dataclass
class ExportTarget:
    """load_export on mutated copies of a real export: loads, or a ScopeRagError; the caller's program intact."""

    store: Store
    workdir: Path
    name: str = "export"
    base: dict[str, bytes] = field(default_factory=dict)

    def __post_init__(self) -> None:
        save_sample_export(self.store, self.workdir / "original")
        self.base = {name: (self.workdir / "original" / name).read_bytes() for name in FILES}
        self.program = ScopedQA(self.store)
        self.before = self.program.dump_state()

    def check(self, data: st.DataObject, record: Record) -> str:
        files, edits = data.draw(export_edits(self.base), label="files")
        limit = data.draw(st.sampled_from([MAX_FILE_BYTES, 64 * 1024, 2048]), label="max_file_bytes")
        record.update(edits=edits, max_file_bytes=limit)
        record["files"] = {n: _shown(c) if isinstance(c, bytes) else f"<{c}>" for n, c in files.items()}
        case = self.workdir / "case"
        shutil.rmtree(case, ignore_errors=True)
        _write_export(case, files, self.workdir / "original")
        try:
            loaded = load_export(case, self.program, max_file_bytes=limit)
            outcome = "loaded"
            assert loaded.program is not self.program
        except ScopeRagError as exc:
            outcome = type(exc).__name__
            where = getattr(exc, "file", "")
            assert str(case) in where, f"the error does not name a file of the export: {exc}"
        finally:
            assert self.program.dump_state() == self.before, "load_export changed the caller's program"
        return outcome


# -- the request target ---------------------------------------------------------------------------

CONTENT_TYPES = (
    "application/json",
    "application/json",
    None,
    "",
    "application/json; charset=latin-1",
    "application/merge-patch+json",
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/octet-stream",
    "application/jsonx",
)
LONG_TEXT = ("x" * (MAX_QUESTION_CHARS - 1), "x" * MAX_QUESTION_CHARS, "x" * (MAX_QUESTION_CHARS + 1), "é" * 5000)
NON_STRINGS = st.one_of(
    st.none(),
    st.integers(),
    st.booleans(),
    st.floats(),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


@dataclass(frozen=True)
class Vocabulary:
    """Known document ids and property names of the served store, to build requests that get through."""

    documents: tuple[str, ...]
    properties: tuple[str, ...]


def _questions() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from(["What is the monthly rent?", "Who is the tenant?", "rent?"]),
        ANY_TEXT,
        st.sampled_from(["", " ", "\n\t", "\u200b", *LONG_TEXT]),
        NON_STRINGS,
    )


def _document_ids(vocabulary: Vocabulary) -> st.SearchStrategy[Any]:
    known = st.sampled_from(vocabulary.documents)
    return st.one_of(
        st.none(),
        st.lists(known, min_size=1, max_size=3),
        st.lists(st.one_of(known, st.uuids().map(str), known.map(str.upper), ANY_TEXT), max_size=4),
        st.lists(known, min_size=MAX_DOCUMENT_IDS, max_size=MAX_DOCUMENT_IDS + 1),
        st.lists(NON_STRINGS, min_size=1, max_size=2),
        NON_STRINGS.filter(lambda v: not isinstance(v, list) and v is not None),
    )


def _properties(vocabulary: Vocabulary) -> st.SearchStrategy[Any]:
    known = st.sampled_from(vocabulary.properties)
    return st.one_of(
        st.none(),
        known,
        known.map(str.upper),
        known.map(_fullwidth),
        ANY_TEXT,
        st.sampled_from(["", "x" * MAX_PROPERTY_CHARS, "x" * (MAX_PROPERTY_CHARS + 1), "Atlantis Towers"]),
        NON_STRINGS.filter(lambda v: v is not None),
    )


@st.composite
def request_bodies(draw: st.DrawFn, vocabulary: Vocabulary) -> tuple[bytes, str | None]:
    """(body, content type): request-shaped JSON with good and bad fields, or any JSON, bytes, nesting, traps."""
    content_type = draw(st.sampled_from(CONTENT_TYPES))
    kind = draw(st.integers(0, 9))
    if kind <= 6:
        body: dict[str, Any] = {}
        for key, values in (
            ("question", _questions()),
            ("document_ids", _document_ids(vocabulary)),
            ("property", _properties(vocabulary)),
        ):
            if key == "question" or draw(st.booleans()):
                body[key] = draw(values)
        if draw(st.integers(0, 9)) == 9:
            body[draw(st.sampled_from(["scope", "k", "Question", ""]))] = draw(JSON_VALUES)
        if draw(st.integers(0, 9)) == 9:
            body.pop("question", None)
        encoding = draw(st.sampled_from(["utf-8", "utf-8", "utf-8", "utf-16", "utf-32"]))
        text = json.dumps(body, ensure_ascii=draw(st.booleans()), allow_nan=True)
        return text.encode(encoding, "surrogatepass"), content_type
    if kind == 7:
        valid = json.dumps({"question": "What is the rent?", "property": vocabulary.properties[0]}).encode()
        return draw(mutated_bytes(valid, duplicate=True, max_cut=64)), content_type
    if kind == 8:
        return json.dumps(draw(JSON_VALUES)).encode(), content_type
    return draw(
        st.one_of(
            st.binary(max_size=200),
            st.sampled_from(RAW_TRAPS),
            st.sampled_from([100, 900, 1100, 100_000]).map(_deep),
            st.sampled_from([DEFAULT_MAX_BODY_BYTES - 40, DEFAULT_MAX_BODY_BYTES + 1]).map(
                lambda n: b'{"question": "' + b"x" * (n - 16) + b'"}'
            ),
        )
    ), content_type


def _reads_json(content_type: str | None) -> bool:
    """Whether FastAPI parses the body as JSON for this content type (the rule in fastapi/routing.py; with
    strict_content_type, its default, a body without a content type is not JSON)."""
    if not content_type:
        return False
    message = email.message.Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (subtype == "json" or subtype.endswith("+json"))


def _check_model(request: QueryRequest) -> None:
    """Every invariant a QueryRequest that validated must hold."""
    assert isinstance(request.question, str) and 1 <= len(request.question) <= MAX_QUESTION_CHARS
    assert request.question.strip()
    assert request.document_ids is None or len(request.document_ids) <= MAX_DOCUMENT_IDS
    assert all(is_canonical_uuid(d) for d in request.document_ids or ())
    assert request.property is None or 1 <= len(request.property) <= MAX_PROPERTY_CHARS


@dataclass
class RequestTarget:
    """Request bodies through QueryRequest, and a share of them through the real app."""

    store: Store
    name: str = "request"

    def __post_init__(self) -> None:
        entities = list(self.store.catalog.entities.values())
        self.vocabulary = Vocabulary(
            documents=tuple(sorted(self.store.catalog.documents)),
            properties=tuple(n for e in entities for n in (e.name, e.slug, e.entity_id)),
        )
        app = create_app(
            store=self.store, program=ScopedQA(self.store), lm=scripted_lm(cooperative()), adapter=dspy.ChatAdapter()
        )
        self.runner = asyncio.Runner()
        self.client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app, raise_app_exceptions=False), base_url="http://fuzz", timeout=60
        )

    def close(self) -> None:
        self.runner.run(self.client.aclose())
        self.runner.close()

    def expected(self, body: bytes, content_type: str | None) -> str:
        """What the server should answer, from the model alone: ok, too_large, unparseable, invalid, unknown_scope."""
        if len(body) > DEFAULT_MAX_BODY_BYTES:
            return "too_large"
        if not _reads_json(content_type):
            return "invalid" if body else "missing"
        if not body:
            return "missing"
        try:
            value = json.loads(body)
        except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            return "unparseable"
        try:
            request = QueryRequest.model_validate(value)
        except ValidationError:
            return "invalid"
        _check_model(request)
        try:
            resolve_scope(self.store, document_ids=request.document_ids, property_ref=request.property)
        except UnknownScopeError:
            return "unknown_scope"
        return "ok"

    def check(self, data: st.DataObject, record: Record) -> str:
        body, content_type = data.draw(request_bodies(self.vocabulary), label="request")
        through_app = data.draw(st.sampled_from([False, False, False, False, True]), label="through_app")
        record.update(content_type=content_type, body=_shown(body), body_bytes=len(body), through_app=through_app)
        expected = self.expected(body, content_type)
        if not through_app:
            return f"model: {expected}"
        headers = {"content-type": content_type} if content_type is not None else {}
        response = self.runner.run(self.client.post("/v1/query", content=body, headers=headers))
        record["status"] = response.status_code
        self._check_response(response, expected)
        return f"app: {response.status_code}"

    def _check_response(self, response: httpx.Response, expected: str) -> None:
        status = response.status_code
        assert status < 500, f"server error {status}: {response.text[:300]}"
        allowed = {
            "ok": {200},
            "too_large": {413},
            "unparseable": {400, 422},
            "invalid": {422},
            "missing": {422},
            "unknown_scope": {422},
        }[expected]
        assert status in allowed, f"expected {sorted(allowed)} ({expected}), got {status}: {response.text[:300]}"
        if status == 200:
            events = list(parse_sse(response.text.splitlines()))
            assert events and events[-1].event in ("completed", "error"), [e.event for e in events]
            assert [e.data["seq"] for e in events] == list(range(len(events)))
            return
        assert response.headers["content-type"].startswith("application/json"), response.headers["content-type"]
        detail = response.json()["detail"]
        if status == 422:
            assert detail and all(item["loc"] and item["msg"] for item in detail), detail
        else:
            assert isinstance(detail, str) and detail, detail


# -- the time-boxed loop --------------------------------------------------------------------------


@dataclass
class Result:
    target: str
    examples: int = 0
    seconds: float = 0.0
    rounds: int = 0
    failures: list[dict[str, Any]] = field(default_factory=list)
    outcomes: Counter[str] = field(default_factory=Counter)

    def row(self) -> Row:
        distinct = len({(f["exception"], f["message"][:120]) for f in self.failures})
        return {
            "target": self.target,
            "examples": self.examples,
            "seconds": round(self.seconds, 1),
            "per_s": round(self.examples / self.seconds, 1) if self.seconds else None,
            "rounds": self.rounds,
            "failures": len(self.failures),
            "distinct": distinct,
        }


def fuzz(target: Target, seconds: float, first_seed: int, round_examples: int) -> Result:
    """Hypothesis rounds of `round_examples` against `target` until `seconds` have passed."""
    result = Result(target.name)
    started = time.monotonic()
    record: Record = {}

    def one(data: st.DataObject) -> None:
        record.clear()
        try:
            outcome = target.check(data, record)
        except HypothesisException:  # the input could not be drawn (too large): hypothesis discards it
            raise
        except Exception:
            result.examples += 1
            raise
        result.examples += 1
        result.outcomes[outcome] += 1

    while time.monotonic() - started < seconds:
        round_seed = first_seed + result.rounds
        test = settings(
            max_examples=round_examples,
            database=None,
            deadline=None,
            phases=[Phase.generate, Phase.shrink],
            report_multiple_bugs=False,
            suppress_health_check=list(HealthCheck),
            print_blob=False,
        )(seed(round_seed)(given(data=st.data())(one)))
        try:
            test()
        except Exception as exc:  # the minimal failing example ran last, so `record` holds it
            result.failures.append(_failure(target.name, round_seed, exc, dict(record)))
        result.rounds += 1
    result.seconds = time.monotonic() - started
    return result


def _failure(target: str, round_seed: int, exc: BaseException, record: Record) -> dict[str, Any]:
    FAILURES_DIR.mkdir(parents=True, exist_ok=True)
    failure = {
        "target": target,
        "seed": round_seed,
        "exception": type(exc).__name__,
        "message": str(exc)[:2000],
        "traceback": "".join(traceback.format_exception(exc))[-6000:],
        "input": record,
    }
    path = FAILURES_DIR / f"{target}-seed{round_seed}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(failure, indent=2, ensure_ascii=True, default=repr) + "\n", encoding="utf-8")
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    log(f"{target}: {failure['exception']}: {failure['message'][:200]} -> {shown}")
    failure["file"] = str(shown)
    return failure


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", nargs="+", choices=TARGETS, default=list(TARGETS))
    parser.add_argument("--seconds", type=float, default=60.0, help="time box per target (default: 60)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first round; round i uses seed + i")
    parser.add_argument("--round", type=int, default=ROUND_EXAMPLES, help="examples per hypothesis round")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # the loaders log every rejection; keep the output readable

    load_start = os.getloadavg()
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="scoperag-fuzz-") as tmp:
        workdir = Path(tmp)
        embedder = HashEmbedder(64)
        log("indexing the demo corpus (hash embedder)")
        build_index(ROOT / "datasets" / "demo", workdir / "index", embedder)
        store = open_store(workdir / "index", embedder)
        for name in args.targets:
            log(f"fuzzing {name} for {args.seconds:g} s")
            if name == "export":
                results.append(fuzz(ExportTarget(store, workdir), args.seconds, args.seed, args.round))
            else:
                target = RequestTarget(store)
                try:
                    results.append(fuzz(target, args.seconds, args.seed, args.round))
                finally:
                    target.close()
    columns = ["target", "examples", "seconds", "per_s", "rounds", "failures", "distinct"]
    print(table(f"fuzz: {args.seconds:g} s per target, seed {args.seed}", [r.row() for r in results], columns))
    for result in results:
        outcomes = [{"outcome": k, "count": v} for k, v in sorted(result.outcomes.items(), key=lambda kv: -kv[1])]
        print(table(f"{result.target}: outcomes", outcomes, ["outcome", "count"]))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        meta = {
            "seconds_per_target": args.seconds,
            "seed": args.seed,
            "round_examples": args.round,
            "python": platform.python_version(),
            "loadavg_start": load_start,
            "loadavg_end": os.getloadavg(),
        }
        rows = [{**r.row(), "outcomes": dict(r.outcomes), "failure_details": r.failures} for r in results]
        args.json.write_text(json.dumps({"meta": meta, "targets": rows}, indent=2) + "\n", encoding="utf-8")
    if any(r.failures for r in results):
        sys.exit(1)


if __name__ == "__main__":
    main()
