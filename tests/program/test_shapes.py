"""Per-call output shapes: strict JSON schema for the grammar, lenient validation."""

from __future__ import annotations

from pydantic import TypeAdapter

from signatures.models import AnswerLine, FigureComputation, GroupScores
from signatures.shapes import exact_computations_type, exact_lines_type, exact_scores_type


def test_scores_schema_is_exact_per_group() -> None:
    schema = TypeAdapter(exact_scores_type([2, 0, 3])).json_schema()
    assert schema["minItems"] == schema["maxItems"] == 3 and "$defs" not in str(schema)
    groups = schema["prefixItems"]
    assert [g["properties"]["sub_question_index"]["const"] for g in groups] == [0, 1, 2]
    assert [g["properties"]["scores"]["maxItems"] for g in groups] == [2, 0, 3]
    assert groups[0]["properties"]["scores"]["items"] == {"type": "integer", "minimum": 0, "maximum": 10}
    assert all(g["additionalProperties"] is False for g in groups)


def test_scores_validation_stays_lenient() -> None:
    adapter = TypeAdapter(exact_scores_type([2, 3]))
    parsed = adapter.validate_python([{"sub_question_index": 0, "scores": [1, 2.5, 9]}])
    assert parsed == [GroupScores(sub_question_index=0, scores=[1.0, 2.5, 9.0])]


def test_lines_schema_names_only_offered_sentences() -> None:
    schema = TypeAdapter(exact_lines_type([(0, 3), (2, 1)])).json_schema()
    first, second = schema["prefixItems"]
    assert first["properties"]["sentence_ids"]["items"]["enum"] == [0, 1, 2]
    assert first["properties"]["sentence_ids"]["maxItems"] == 3 and first["properties"]["answer"]["maxLength"] == 300
    assert second["properties"]["sub_question_index"]["const"] == 2
    assert schema["minItems"] == schema["maxItems"] == 2
    parsed = TypeAdapter(exact_lines_type([(0, 1)])).validate_python(
        [{"sub_question_index": 0, "sentence_ids": [9], "answer": "x"}]
    )
    assert isinstance(parsed[0], AnswerLine)  # the program, not the parser, ignores id 9


def test_computations_schema_quotes_only_written_figures() -> None:
    schema = TypeAdapter(exact_computations_type([(0, 2, ["41,976", "94,836", "41,976"])])).json_schema()
    operand = schema["prefixItems"][0]["properties"]["operands"]["items"]["properties"]
    assert operand["figure"]["enum"] == ["41,976", "94,836"] and operand["sentence_id"]["enum"] == [0, 1]
    assert operand["name"]["enum"] == list("abcdefgh")
    parsed = TypeAdapter(exact_computations_type([(0, 1, ["1"])])).validate_python(
        [{"sub_question_index": 0, "operands": [{"name": "z", "sentence_id": 5, "figure": "7"}], "expression": "z"}]
    )
    assert isinstance(parsed[0], FigureComputation)  # the program checks each operand against its sentence
