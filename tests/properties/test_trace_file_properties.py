"""Properties (hypothesis) of trace files (pipeline/evaluation/examples.py): a file loads or names its bad
line, a directory of split files loads each, and written examples read back the same.

Each property is one `check_*` function turned into two tests by `fast_and_slow` (tests/support/properties.py):
`test_*` runs 50 examples in the default run, `test_*_slow` 1,000 under `-m slow`; both derandomized, no
example database.
"""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event
from hypothesis import strategies as st
from pydantic import ValidationError

from pipeline.errors import ExamplesError
from pipeline.evaluation.examples import (
    CASES,
    MAX_LINE_BYTES,
    LabelledExample,
    load_example_set,
    load_examples,
    make_example,
    write_examples,
)
from tests.support.properties import ANY_TEXT, JSON_VALUES, RAW_JSON_TRAPS, fast_and_slow, mutated_json

DOCUMENT_PATHS = st.text(min_size=1, max_size=20)


@st.composite
def labelled_examples(draw: st.DrawFn) -> LabelledExample:
    """A LabelledExample that satisfies every consistency rule, with arbitrary text in every field."""
    case = draw(st.sampled_from(CASES))
    scope: dict[str, Any] = {}
    if case == "chip":
        scope["document_ids"] = draw(st.lists(DOCUMENT_PATHS, min_size=1, max_size=3))
    elif case in ("property", "wrong_property"):
        scope["property"] = draw(st.text(min_size=1, max_size=20))
    documents = draw(st.lists(DOCUMENT_PATHS, min_size=1, max_size=5, unique=True))
    cut = draw(st.integers(0, len(documents) - 1 if case == "wrong_property" else len(documents)))
    gold, forbidden = documents[:cut], documents[cut:]
    not_found = draw(st.booleans())
    return make_example(
        corpus=draw(st.text(max_size=10)),
        case=case,
        question=draw(st.text(min_size=1, max_size=80)),
        scope=scope,
        gold_documents=tuple(gold),
        gold_pages=tuple(
            draw(st.lists(st.builds(dict, document=DOCUMENT_PATHS, page=st.none() | st.integers(1, 10**6)), max_size=2))
        ),
        answer_facts=() if not_found else tuple(draw(st.lists(st.text(max_size=30), max_size=3))),
        forbidden_documents=tuple(forbidden),
        expect_not_found=not_found,
        expected_plan=draw(st.sampled_from([None, "two_step", "one_step"])),
        gold_sub_questions=tuple(draw(st.lists(st.text(max_size=30), max_size=2))),
        tags=tuple(draw(st.lists(st.text(max_size=10), max_size=2))),
        split=draw(st.sampled_from([None, "train", "dev", "test"])),
    )


EXAMPLE_LISTS = st.lists(labelled_examples(), max_size=5, unique_by=lambda e: e.id)


def _line(example: LabelledExample) -> bytes:
    return example.model_dump_json(exclude_defaults=True).encode()


@st.composite
def trace_lines(draw: st.DrawFn) -> bytes:
    """One JSONL line: valid, a valid one mutated, any JSON, any text, blank, binary, or over the size limit."""
    kind = draw(st.integers(0, 15))
    if kind <= 5:
        return _line(draw(labelled_examples()))
    if kind <= 8:
        value = draw(mutated_json(draw(labelled_examples()).model_dump(mode="json")))
        return json.dumps(value, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")
    return [
        lambda: json.dumps(draw(JSON_VALUES)).encode(),
        lambda: draw(ANY_TEXT).encode("utf-8", "surrogatepass"),
        lambda: draw(st.sampled_from([b"", b"   ", b"\t", b"\r", b"\x0c"])),
        lambda: draw(st.binary(max_size=40)),
        lambda: draw(st.sampled_from(RAW_JSON_TRAPS)),
        lambda: _line(draw(labelled_examples())).replace(b"{", b"[", 1),
        lambda: b'{"x": "' + b"y" * MAX_LINE_BYTES + b'"}',
    ][kind - 9]()


@st.composite
def trace_files(draw: st.DrawFn) -> bytes:
    """A JSONL file: lines joined by \\n or \\r\\n, maybe a repeated line, maybe no final newline; or any bytes."""
    if draw(st.integers(0, 9)) == 9:
        return draw(st.binary(max_size=200))
    lines = draw(st.lists(trace_lines(), max_size=6))
    if lines and draw(st.integers(0, 4)) == 4:
        lines.append(draw(st.sampled_from(lines)))
    data = draw(st.sampled_from([b"\n", b"\r\n"])).join(lines)
    return data + b"\n" if draw(st.booleans()) else data


def _expected_load(data: bytes) -> tuple[list[LabelledExample], int | None]:
    """What a trace file holds, read line by line (io.BytesIO splits as a binary file does): the examples,
    and the number of the first bad line (too long, invalid, or a repeated id), or None."""
    examples: list[LabelledExample] = []
    seen: set[str] = set()
    for number, raw in enumerate(io.BytesIO(data).readlines(), start=1):
        if len(raw) > MAX_LINE_BYTES:
            return examples, number
        if not raw.strip():
            continue
        try:
            example = LabelledExample.model_validate_json(raw)
        except ValidationError:
            return examples, number
        if example.id in seen:
            return examples, number
        seen.add(example.id)
        examples.append(example)
    return examples, None


def check_trace_files_load_or_name_the_bad_line(data: bytes) -> None:
    """load_examples on any bytes returns exactly the file's examples or raises ExamplesError (no other exception)
    whose message starts with the file path and the number of the first bad line."""
    expected, bad_line = _expected_load(data)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "traces.jsonl"
        path.write_bytes(data)
        try:
            loaded = load_examples(path)
        except ExamplesError as exc:
            event("trace file: ExamplesError")
            assert bad_line is not None and str(exc).startswith(f"{path}:{bad_line}: "), (bad_line, str(exc)[:300])
            return
    event(f"trace file: loaded {min(len(loaded), 3)}+ examples")
    assert bad_line is None
    assert loaded == expected


test_trace_files_load_or_name_the_bad_line, test_trace_files_load_or_name_the_bad_line_slow = fast_and_slow(
    check_trace_files_load_or_name_the_bad_line, data=trace_files()
)


def check_trace_set_directories_load_each_split_file(files: dict[str, bytes | None], split: str | None) -> None:
    """load_example_set on a directory names every missing split file, and otherwise returns what load_examples
    returns for each needed file in train/dev/test order (or the same ExamplesError)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, data in files.items():
            if data is not None:
                (root / f"{name}.jsonl").write_bytes(data)
        needed = [root / f"{name}.jsonl" for name in ("train", "dev", "test") if split in (None, name)]
        missing = [p for p in needed if not p.is_file()]
        try:
            loaded = load_example_set(root, split=split)  # type: ignore[arg-type]
        except ExamplesError as exc:
            if missing:
                assert all(str(p) in str(exc) for p in missing)
                return
            with pytest.raises(ExamplesError) as again:
                for path in needed:
                    load_examples(path, split)  # type: ignore[arg-type]
            assert str(again.value) == str(exc)
            return
        assert not missing
        assert loaded == [e for path in needed for e in load_examples(path, split)]  # type: ignore[arg-type]


test_trace_set_directories_load_each_split_file, test_trace_set_directories_load_each_split_file_slow = fast_and_slow(
    check_trace_set_directories_load_each_split_file,
    files=st.fixed_dictionaries(
        {
            name: st.none() | EXAMPLE_LISTS.map(lambda es: b"".join(_line(e) + b"\n" for e in es)) | trace_files()
            for name in ("train", "dev", "test")
        }
    ),
    split=st.sampled_from([None, "train", "dev", "test"]),
)


def check_written_traces_round_trip(examples: list[LabelledExample]) -> None:
    """write_examples then load_examples gives back the same examples; writing them again gives the same bytes;
    the split and case filters select exactly the matching examples."""
    with tempfile.TemporaryDirectory() as tmp:
        first, second = Path(tmp) / "a" / "t.jsonl", Path(tmp) / "b" / "t.jsonl"
        assert write_examples(first, examples) == len(examples)
        loaded = load_examples(first)
        assert loaded == examples
        write_examples(second, loaded)
        assert second.read_bytes() == first.read_bytes()
        assert load_examples(first, split="dev") == [e for e in examples if e.split == "dev"]
        assert load_examples(first, cases=["chip", "no_scope"]) == [
            e for e in examples if e.case in ("chip", "no_scope")
        ]


test_written_traces_round_trip, test_written_traces_round_trip_slow = fast_and_slow(
    check_written_traces_round_trip, examples=EXAMPLE_LISTS
)
