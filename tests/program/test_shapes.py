"""Per-call output shapes: strict JSON schema for the grammar, lenient validation."""

from __future__ import annotations

from pydantic import TypeAdapter

from signatures.models import AnswerSection, GroupScores
from signatures.shapes import exact_scores_type, exact_sections_type


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


def test_sections_schema_only_allows_shown_pages() -> None:
    schema = TypeAdapter(
        exact_sections_type([(0, [("lease.pdf", 1), ("lease.pdf", 3)]), (2, [("val.md", 2)])])
    ).json_schema()
    first, second = schema["prefixItems"]
    citation = first["properties"]["bullets"]["items"]["properties"]["citations"]["items"]["properties"]
    assert citation["filename"]["enum"] == ["lease.pdf"] and citation["page"]["enum"] == [1, 3]
    assert second["properties"]["sub_question_index"]["const"] == 2
    assert first["properties"]["bullets"]["maxItems"] == 5
    parsed = TypeAdapter(exact_sections_type([(0, [("a.md", 1)])])).validate_python(
        [{"sub_question_index": 0, "bullets": [{"text": "x", "citations": [{"filename": "other.md", "page": 9}]}]}]
    )
    assert isinstance(parsed[0], AnswerSection)  # the citation check, not the parser, removes other.md
