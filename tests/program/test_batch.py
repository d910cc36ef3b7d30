"""Many questions through one program: the question file read and checked line by line (JSONL and CSV), the
answer file resumed after the whole lines it holds (a line cut by a stop is written again), and one answer line
holding exactly what `ask --json` prints, typed values included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.intake.scope import NO_SCOPE
from pipeline.program.answer_file import AnswerFile, AnswerFileError, AnswerWriter, read_answer_file
from pipeline.program.batch import answer_record, ask_each
from pipeline.program.events import Completed, Failed, Section
from pipeline.program.question_file import (
    Asked,
    QuestionFileError,
    line_id,
    question_id,
    read_question_file,
    resolve_lines,
)
from pipeline.store import Store
from pipeline.types import SourceRef
from pipeline.values.typed import TypedValue


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# -- the question file ----------------------------------------------------------------------------------------


def test_jsonl_lines_give_ids_scopes_and_name_the_fields_not_read(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "q.jsonl",
        '{"id": "rent", "question": "What is the rent?", "property": "Banda Lane"}\n'
        "\n"
        '{"question": "Who is the tenant?", "entity": "Banda Lane", "expected": "Peter"}\n'
        '{"id": 7, "question": "Which firm valued it?", "document_ids": ["banda-lane/valuation.md"]}\n',
    )
    read = read_question_file(path)
    assert [number for number, _ in read.lines] == [1, 3, 4]
    first, second, third = (line for _, line in read.lines)
    assert (first.id, first.property) == ("rent", "Banda Lane")
    assert (second.id, second.property) == (None, "Banda Lane")  # "entity" is another name for "property"
    assert line_id(second) == question_id("Who is the tenant?", "Banda Lane", ())
    assert (third.id, third.document_ids) == ("7", ("banda-lane/valuation.md",))
    assert read.ignored_fields == ("expected",)


def test_csv_reads_a_header_quoted_cells_a_byte_order_mark_and_document_ids_split_on_semicolons(
    tmp_path: Path,
) -> None:
    path = tmp_path / "q.csv"
    path.write_bytes(
        "\ufeffid,question,property,document_ids\n"
        'a,"What is the rent, per month?",Banda Lane,\n'
        'b,Who signed?,,"banda-lane/lease.pdf; banda-lane/offer-letter.pdf"\n'.encode()
    )
    lines = [line for _, line in read_question_file(path).lines]
    assert [(x.id, x.question, x.property) for x in lines] == [
        ("a", "What is the rent, per month?", "Banda Lane"),
        ("b", "Who signed?", None),
    ]
    assert lines[1].document_ids == ("banda-lane/lease.pdf", "banda-lane/offer-letter.pdf")


def test_a_content_hash_id_ignores_spacing_and_the_order_of_documents() -> None:
    one = question_id("What is  the rent?", "banda", ["b", "a"])
    assert one == question_id(" What is the rent? ", "banda", ["a", "b"])
    assert one != question_id("What is the rent?", None, ["a", "b"])
    assert len(one) == 16


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('{"question": "ok"}\n{"question": "x"\n', "line 2: not JSON"),
        ('{"question": "ok"}\n["a list"]\n', "line 2: a JSON list, not an object"),
        ('{"question": "ok"}\n{"id": "b"}\n', "line 2: no 'question'"),
        ('{"question": "   "}\n', "line 1: question: the question is blank"),
        ('{"question": "ok", "property": 3}\n', "line 1: property: Input should be a valid string"),
        ('{"question": "ok", "document_ids": "a;b"}\n', "line 1: document_ids: Input should be a valid tuple"),
        ('{"question": "ok", "property": "A", "entity": "B"}\n', "line 1: 'property' and 'entity' name different"),
        ('{"id": "q", "question": "a"}\n{"id": "q", "question": "b"}\n', "line 2: repeats the id 'q' of line 1"),
        ('{"question": "a"}\n{"question": " a"}\n', "line 2: asks the same question in the same scope as line 1"),
        ("\n\n", "no question in it"),
    ],
)
def test_a_bad_line_is_named_by_its_number_with_what_is_wrong_and_the_way_out(
    tmp_path: Path, text: str, named: str
) -> None:
    path = _write(tmp_path / "q.jsonl", text)
    with pytest.raises(QuestionFileError) as caught:
        read_question_file(path)
    assert named in str(caught.value)
    assert "Nothing was asked" in str(caught.value) and '"question"' in str(caught.value)


def test_every_bad_line_is_named_at_once(tmp_path: Path) -> None:
    path = _write(tmp_path / "q.jsonl", "".join(f"line {n}\n" for n in range(30)))
    with pytest.raises(QuestionFileError) as caught:
        read_question_file(path)
    assert len(caught.value.problems) == 30
    assert "line 20: not JSON" in str(caught.value) and "and 10 more" in str(caught.value)


def test_a_csv_without_a_question_column_and_a_file_that_is_no_utf8_are_refused(tmp_path: Path) -> None:
    with pytest.raises(QuestionFileError, match="names no 'question' column"):
        read_question_file(_write(tmp_path / "q.csv", "id,text\n1,hello\n"))
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes('{"question": "caf\xe9"}\n'.encode("latin-1"))
    with pytest.raises(QuestionFileError, match=r"not UTF-8.*save it as UTF-8"):
        read_question_file(latin)
    with pytest.raises(QuestionFileError, match="no such file"):
        read_question_file(tmp_path / "missing.jsonl")


def test_scopes_resolve_against_the_catalog_and_unknown_ones_are_named_by_line(
    tmp_path: Path, demo_store: Store
) -> None:
    good = _write(
        tmp_path / "q.jsonl",
        '{"question": "What is the rent?", "property": "Banda Lane"}\n'
        '{"question": "Who valued it?", "document_ids": ["banda-lane/valuation.md"]}\n'
        '{"question": "Anything?"}\n',
    )
    asked = resolve_lines(demo_store, good, read_question_file(good))
    assert [a.scope.kind for a in asked] == ["property", "chip", "no_scope"]
    assert [a.line for a in asked] == [1, 2, 3]
    bad = _write(
        tmp_path / "bad.jsonl",
        '{"question": "a", "property": "Nowhere Lane"}\n{"question": "b", "document_ids": ["nope.pdf"]}\n',
    )
    with pytest.raises(QuestionFileError) as caught:
        resolve_lines(demo_store, bad, read_question_file(bad))
    assert "line 1:" in str(caught.value) and "Nowhere Lane" in str(caught.value)
    assert "line 2:" in str(caught.value) and "nope.pdf" in str(caught.value)


# -- the answer file ------------------------------------------------------------------------------------------


def _record(key: str, phase: str = "completed", question: str = "q") -> dict[str, object]:
    """An answer line as `ask --questions` writes it (answer_record of an event)."""
    asked = Asked(key, 1, question, NO_SCOPE)
    if phase == "error":
        return answer_record(asked, Failed(message="language model failed: answer: Timeout"), None)
    done = Completed(answer="...", sections=(), lm_calls=0, tokens=0, seconds=0.1)
    return answer_record(asked, done, None)


def _line(key: str, phase: str = "completed") -> str:
    return json.dumps(_record(key, phase)) + "\n"


def _writer(path: Path) -> tuple[AnswerFile, AnswerWriter]:
    answers = AnswerFile(path)
    return answers, answers.writer(answers.read())


def test_a_missing_answer_file_holds_nothing_and_whole_lines_are_answers(tmp_path: Path) -> None:
    assert read_answer_file(tmp_path / "none.jsonl").phases == {}
    path = _write(tmp_path / "a.jsonl", _line("a") + _line("b", "error") + _line("c"))
    resumed = read_answer_file(path)
    assert resumed.phases == {"a": "completed", "b": "error", "c": "completed"}
    assert resumed.answered == {"a", "c"}  # a failed question is asked again
    assert resumed.questions == {"a": "q", "b": "q", "c": "q"}
    assert (resumed.cut_line, resumed.keep_bytes) == (None, path.stat().st_size)


def test_a_line_cut_by_a_stop_is_found_and_written_again_from_its_start(tmp_path: Path) -> None:
    whole = _line("a") + _line("b")
    path = _write(tmp_path / "a.jsonl", whole + '{"id": "c", "question": "q", "pha')
    answers = AnswerFile(path)
    resumed = answers.read()
    assert (resumed.cut_line, resumed.keep_bytes, resumed.answered) == (3, len(whole.encode()), {"a", "b"})
    writer = answers.writer(resumed)
    assert writer.write(_record("c"))
    writer.close()
    answers.close()
    assert path.read_text() == whole + _line("c")


def test_a_whole_last_line_without_its_line_end_is_kept_and_ended(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.jsonl", _line("a") + _line("b").rstrip("\n"))
    resumed = read_answer_file(path)
    assert (resumed.cut_line, resumed.answered) == (None, {"a", "b"})
    answers, writer = _writer(path)
    writer.write(_record("c"))
    answers.close()
    assert read_answer_file(path).answered == {"a", "b", "c"}
    assert path.read_text().count("\n") == 3


def test_a_file_of_other_lines_is_left_as_it_is(tmp_path: Path) -> None:
    path = _write(tmp_path / "notes.jsonl", '{"question": "q"}\n' + _line("a"))
    before = path.read_bytes()
    with pytest.raises(AnswerFileError, match=r"line 1 is not an answer.*give another --out"):
        read_answer_file(path)
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "text",
    [
        '{"api_key": "keep-me"}',  # one line of another file, no line end (json.dump, echo -n)
        '{"id": "a", "question": "q", "pha',  # cut like an answer, but no whole answer before it
        _line("a") + '{"api_key": "keep-me"}',  # a whole answer, then a last line that does not start like one
        _line("a") + "plain text",
    ],
)
def test_a_last_line_is_cut_only_when_it_starts_as_an_answer_after_a_whole_answer(tmp_path: Path, text: str) -> None:
    path = _write(tmp_path / "config.json", text)
    with pytest.raises(AnswerFileError, match=r"nor one a stop cut short: it was left as it is"):
        AnswerFile(path).read()
    assert path.read_text() == text


@pytest.mark.parametrize(
    "record",
    [
        {"id": "a", "question": "q", "phase": "completed"},  # no answer, sections or cost: not what a run writes
        {**_record("a"), "sections": "forged"},
        {**_record("a"), "extra": 1},
        {**_record("a", "error"), "history_id": 7},
        {**_record("a"), "id": ""},
    ],
)
def test_a_line_not_shaped_as_an_answer_is_no_answer(tmp_path: Path, record: dict[str, object]) -> None:
    path = _write(tmp_path / "a.jsonl", json.dumps(record) + "\n")
    with pytest.raises(AnswerFileError, match=r"line 1 is not an answer"):
        read_answer_file(path)


def test_one_run_holds_the_answer_file_and_a_second_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    first = AnswerFile(path)
    with pytest.raises(AnswerFileError, match=r"another `scoperag ask --questions` is writing to"):
        AnswerFile(path)
    first.close()
    assert not path.exists()  # created by the first, nothing written: removed
    with AnswerFile(path) as again:
        again.writer(again.read()).write(_record("a"))
    assert read_answer_file(path).answered == {"a"}


def test_a_closed_writer_writes_nothing_more(tmp_path: Path) -> None:
    answers, writer = _writer(tmp_path / "new" / "a.jsonl")
    assert writer.write(_record("a"))
    writer.close()
    assert not writer.write(_record("b"))
    answers.close()
    assert (writer.written, read_answer_file(tmp_path / "new" / "a.jsonl").answered) == (1, {"a"})


# -- one answer line ------------------------------------------------------------------------------------------


def _typed_completed() -> Completed:
    page = SourceRef(document_id="d1", filename="primary-document.html", page=4, title="Acme Inc. 10-Q, quarter")
    value = TypedValue(kind="number", value=406100000, currency="USD", as_written="$406.1 million", pages=(page,))
    section = Section(
        index=0, sub_question="What were net sales?", answer="$406.1 million", answer_sources=(page,), value=value
    )
    return Completed(answer="...", sections=(section,), lm_calls=0, tokens=0, seconds=0.1, value=value, history_id=None)


def test_an_answer_line_is_the_id_the_question_and_exactly_what_ask_json_prints() -> None:
    done = _typed_completed()
    asked = Asked("q1", 1, "What were net sales?", NO_SCOPE)
    record = answer_record(asked, done, "h-1")
    printed = json.loads(done.model_copy(update={"history_id": "h-1"}).model_dump_json(indent=2))
    assert record == {"id": "q1", "question": "What were net sales?", **printed}
    assert record["value"]["value"] == 406100000 and record["value"]["currency"] == "USD"
    assert record["sections"][0]["value"]["pages"][0]["title"] == "Acme Inc. 10-Q, quarter"
    # and it reads back as the event it was
    event = {k: v for k, v in record.items() if k not in ("id", "question")}
    assert Completed.model_validate(event) == done.model_copy(update={"history_id": "h-1"})


def test_a_failed_question_is_an_error_line_and_a_program_error_ends_as_one() -> None:
    asked = Asked("q2", 2, "Who?", NO_SCOPE)
    record = answer_record(asked, Failed(message="language model failed: answer: Timeout"), None)
    assert record == {
        "id": "q2",
        "question": "Who?",
        "phase": "error",
        "message": "language model failed: answer: Timeout",
        "history_id": None,
    }
    from pipeline.errors import ScopeRagError

    class Broken:
        def stream(self, question: str, scope: object) -> object:
            raise ScopeRagError("the index changed under the question")

    got: list[Completed | Failed] = []
    ask_each(Broken(), lambda _, final: got.append(final))(asked)
    assert got == [Failed(message="the index changed under the question")]
