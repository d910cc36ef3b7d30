"""A file of questions for `scoperag ask --questions`, read and checked line by line before anything is asked.

JSONL (one object a line) or CSV (a header row): `question`, and optionally `id`, `property` (or `entity`) and
`document_ids` (a JSON list, or in CSV ids or corpus paths separated by ";"). A line without an `id` gets the
content hash of its question and scope, so a rerun finds it again.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field, ValidationError, field_validator

from pipeline.errors import ScopeRagError
from pipeline.files import UnreadableFile, read_regular
from pipeline.intake.scope import Scope, resolve_scope
from pipeline.types import StrictJson

if TYPE_CHECKING:
    from pipeline.store import Store

# A question file's own limits: the program cuts a question to its own cap (and records the cut).
MAX_QUESTION_FILE_CHARS = 20_000
MAX_ID_CHARS = 200
MAX_LINE_BYTES = 1 << 20
# A question file larger than this is refused by its size before any of it is read (10,000 questions of the
# largest size a question may be fit in it).
MAX_QUESTION_FILE_BYTES = 256 << 20
# Bad lines named in one error (the count of the rest follows).
MAX_PROBLEMS_LISTED = 20
FIELDS = ("id", "question", "property", "entity", "document_ids")
FORMAT_HELP = (
    'each line holds "question" and optionally "id", "property" (or "entity") and "document_ids" '
    "(JSONL: one JSON object a line, document_ids a list; CSV: a header row, document_ids separated by ';')"
)


class QuestionFileError(ScopeRagError):
    """A question file that cannot be read as it stands: every bad line with its number and what is wrong."""

    def __init__(self, path: Path, problems: Sequence[str], fix: str = FORMAT_HELP) -> None:
        listed = list(problems[:MAX_PROBLEMS_LISTED])
        more = len(problems) - len(listed)
        shown = "; ".join(listed) + (f"; and {more} more" if more > 0 else "")
        super().__init__(f"{path}: {shown}. Nothing was asked: fix or remove these lines ({fix})")
        self.path = path
        self.problems = tuple(problems)


class QuestionLine(StrictJson):
    """One line of a question file as given (unknown fields are reported and left out before this sees them)."""

    id: str | None = Field(default=None, min_length=1, max_length=MAX_ID_CHARS)
    question: str = Field(min_length=1, max_length=MAX_QUESTION_FILE_CHARS)
    property: str | None = Field(default=None, min_length=1, max_length=MAX_ID_CHARS)
    document_ids: tuple[str, ...] = Field(default=(), max_length=1000)

    @field_validator("question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the question is blank")
        return value

    @field_validator("id", "property")
    @classmethod
    def _stripped(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("is blank")
        return None if value is None else value.strip()


@dataclass(frozen=True)
class Asked:
    """A question to answer: its id (given, or the content hash), where it stands in the file, and its scope."""

    id: str
    line: int
    question: str
    scope: Scope


@dataclass(frozen=True)
class QuestionFile:
    """The lines of a question file, in order, and the fields it holds that are not read (named to the user)."""

    lines: tuple[tuple[int, QuestionLine], ...]
    ignored_fields: tuple[str, ...] = ()


def question_id(question: str, property_ref: str | None, document_ids: Sequence[str]) -> str:
    """Content hash of a question and its scope as written: the same line always gets the same id."""
    payload = json.dumps(
        {"question": " ".join(question.split()), "property": property_ref, "document_ids": sorted(document_ids)},
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def read_question_file(path: Path) -> QuestionFile:
    """Every question of `path` (JSONL, or CSV by its suffix or first character), validated; QuestionFileError
    names each bad line (and a repeated id) with its number."""
    try:
        text = read_regular(path, MAX_QUESTION_FILE_BYTES).decode("utf-8-sig")
    except UnreadableFile as exc:
        if exc.problem == "is missing":
            raise QuestionFileError(
                path, ["no such file"], "give the path of a JSONL or CSV file of questions"
            ) from None
        fix = "split it into files of at most that size" if exc.size is not None else "give a JSONL or CSV file"
        raise QuestionFileError(path, [exc.problem.removeprefix("is ")], fix) from None
    except UnicodeDecodeError as exc:
        raise QuestionFileError(path, [f"not UTF-8 text (byte {exc.start})"], "save it as UTF-8") from None
    rows = _csv_rows(text) if _is_csv(path, text) else _jsonl_rows(text)
    problems: list[str] = []
    lines: list[tuple[int, QuestionLine]] = []
    ignored: dict[str, None] = {}
    for number, row in rows:
        if isinstance(row, str):
            problems.append(f"line {number}: {row}")
            continue
        for key in row:
            if key not in FIELDS:
                ignored[key] = None
        try:
            lines.append((number, _question_line(row)))
        except ValueError as exc:
            problems.append(f"line {number}: {_problem(exc)}")
    if not lines and not problems:
        problems.append("no question in it")
    problems.extend(_repeated_ids(lines))
    if problems:
        raise QuestionFileError(path, problems)
    return QuestionFile(tuple(lines), tuple(ignored))


def _is_csv(path: Path, text: str) -> bool:
    suffix = path.suffix.casefold()
    if suffix in (".jsonl", ".json", ".ndjson"):
        return False
    if suffix in (".csv", ".tsv"):
        return True
    return not text.lstrip().startswith("{")


def _jsonl_rows(text: str) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(line number, object or what is wrong with the line) for each non-blank line."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if len(line.encode("utf-8")) > MAX_LINE_BYTES:
            yield number, f"longer than {MAX_LINE_BYTES} bytes"
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            yield number, f"not JSON ({exc.msg} at column {exc.colno})"
            continue
        yield number, value if isinstance(value, dict) else f"a JSON {type(value).__name__}, not an object"


def _csv_rows(text: str) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(line number, row as a mapping, or what is wrong) for each data row; empty cells are left out."""
    sample = text[:4096]
    delimiter = "\t" if sample.count("\t") > sample.count(",") else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header: list[str] | None = None
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:  # a cell over the csv module's field limit, a NUL: the rows after it cannot be read
            yield reader.line_num, f"not CSV the file can be read past ({_csv_problem(exc)})"
            return
        number = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if header is None:
            header = [cell.strip().casefold() for cell in row]
            if "question" not in header:
                yield number, f"the header row names no 'question' column (it names {', '.join(header)})"
                return
            continue
        if len(row) > len(header):
            yield number, f"{len(row)} cells under a header of {len(header)} columns"
            continue
        cells: dict[str, Any] = {name: cell.strip() for name, cell in zip(header, row, strict=False) if cell.strip()}
        if "document_ids" in cells:
            cells["document_ids"] = [part.strip() for part in cells["document_ids"].split(";") if part.strip()]
        yield number, cells


def _csv_problem(exc: csv.Error) -> str:
    """What the csv module refused, in words: a cell over its field limit names the limit."""
    said = str(exc)
    if "field larger than field limit" in said:
        limit = csv.field_size_limit()
        return f"a cell longer than {limit:,} characters; a question holds at most {MAX_QUESTION_FILE_CHARS:,}"
    return said[:200]


def _question_line(row: Mapping[str, Any]) -> QuestionLine:
    """The known fields of `row` as a QuestionLine ("entity" is another name for "property"); ValueError."""
    fields = {key: value for key, value in row.items() if key in FIELDS}
    if "entity" in fields:
        if "property" in fields and fields["property"] != fields["entity"]:
            raise ValueError("'property' and 'entity' name different entities: give one")
        fields["property"] = fields.pop("entity")
    if isinstance(fields.get("id"), int) and not isinstance(fields.get("id"), bool):
        fields["id"] = str(fields["id"])  # a numeric id in JSON is the same id as its digits
    if isinstance(fields.get("document_ids"), list):
        fields["document_ids"] = tuple(fields["document_ids"])
    if "question" not in fields:
        raise ValueError("no 'question'")
    return QuestionLine.model_validate(fields)


def _problem(exc: ValueError) -> str:
    """A validation error in a sentence: each field with what is wrong with it."""
    if not isinstance(exc, ValidationError):
        return str(exc)
    parts = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "the line"
        parts.append(f"{where}: {error['msg'].removeprefix('Value error, ')}")
    return "; ".join(parts)


def _repeated_ids(lines: Sequence[tuple[int, QuestionLine]]) -> list[str]:
    """A problem for each line whose id (given, or the content hash) an earlier line already has."""
    first: dict[str, int] = {}
    problems = []
    for number, line in lines:
        key = line_id(line)
        if key in first:
            what = f"repeats the id {key!r} of" if line.id else "asks the same question in the same scope as"
            problems.append(f"line {number}: {what} line {first[key]} (give each line its own id)")
        else:
            first[key] = number
    return problems


def line_id(line: QuestionLine) -> str:
    """The id a line's answer is written under: its own, else the content hash of its question and scope."""
    return line.id or question_id(line.question, line.property, line.document_ids)


def resolve_lines(source: Store, path: Path, questions: QuestionFile) -> list[Asked]:
    """Each line with its scope checked against the catalog (documents by id or corpus path, the property by
    name, slug, alias or id); QuestionFileError names every line whose scope is unknown."""
    asked, problems = [], []
    for number, line in questions.lines:
        try:
            ids = source.document_ids_for(list(line.document_ids)) if line.document_ids else None
            scope = resolve_scope(source, document_ids=ids, property_ref=line.property)
        except ScopeRagError as exc:
            problems.append(f"line {number}: {exc}")
            continue
        asked.append(Asked(line_id(line), number, line.question, scope))
    if problems:
        raise QuestionFileError(path, problems, "name documents and entities as `scoperag ask` takes them")
    return asked
