"""Per-call output types with the exact shape the program expects, for constrained decoding.

The signatures declare lenient types (list[GroupScores], list[AnswerLine]); for one call
the program knows how many groups, chunks, sections and sentences there are, so it narrows
the output field's JSON SCHEMA to exactly that shape (prefixItems, const, enum,
min/maxItems), which llama.cpp turns into a grammar. Validation stays the
lenient list type: a model without a grammar that misses a section loses that section
only, and the program's own checks still decide what every value means.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any

from pydantic import Field, GetCoreSchemaHandler, GetJsonSchemaHandler, TypeAdapter, WithJsonSchema, create_model
from pydantic_core import core_schema

from signatures.models import AnswerLine, FigureComputation, GroupScores, OperandChoice, Score


def inline_refs(schema: Any, defs: dict[str, Any] | None = None) -> Any:
    """`schema` with every local "$ref" replaced by its definition (no "$defs" left)."""
    if defs is None and isinstance(schema, dict):
        defs = schema.get("$defs", {})
    if isinstance(schema, dict):
        if "$ref" in schema:
            return inline_refs(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)  # type: ignore[index]
        return {k: inline_refs(v, defs) for k, v in schema.items() if k != "$defs"}
    if isinstance(schema, list):
        return [inline_refs(v, defs) for v in schema]
    return schema


def _closed(schema: Any) -> Any:
    """Every object schema with additionalProperties false and all its properties required."""
    if isinstance(schema, dict):
        out = {k: _closed(v) for k, v in schema.items()}
        if out.get("type") == "object" and "properties" in out:
            out["additionalProperties"] = False
            out["required"] = list(out["properties"])
        return out
    if isinstance(schema, list):
        return [_closed(v) for v in schema]
    return schema


def shaped_list(item_type: Any, strict_type: Any, name: str, before: Callable[[Any], Any] | None = None) -> type:
    """A list type that validates as list[item_type] (after `before`) but shows `strict_type`'s JSON schema."""
    schema = _closed(inline_refs(TypeAdapter(strict_type).json_schema()))

    def core(cls: type, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        items = handler.generate_schema(list[item_type])
        return items if before is None else core_schema.no_info_before_validator_function(before, items)

    def json_schema(cls: type, _: core_schema.CoreSchema, handler: GetJsonSchemaHandler) -> dict[str, Any]:
        return dict(schema)

    return type(
        name,
        (list,),
        {
            "__get_pydantic_core_schema__": classmethod(core),
            "__get_pydantic_json_schema__": classmethod(json_schema),
        },
    )


def _const(value: int) -> Any:
    return Annotated[int, WithJsonSchema({"type": "integer", "const": value})]


def _enum(base: type, values: list[Any]) -> Any:
    kind = "integer" if base is int else "string"
    return Annotated[base, WithJsonSchema({"type": kind, "enum": values})]


def _list_of(item: Any) -> Any:
    return list[item]  # type: ignore[valid-type]


def _tuple_of(items: Sequence[Any]) -> Any:
    """tuple[A, B, ...] of exactly these item types (the empty tuple type when none)."""
    return tuple.__class_getitem__(tuple(items)) if items else tuple[()]


def _no_boolean_scores(value: Any) -> Any:
    """`value` unchanged; a ValueError if a score is true/false, which pydantic would read as 1.0/0.0
    (a verdict the LM never gave: `true` would drop the chunk) before the program's check sees it."""
    for entry in value if isinstance(value, list) else []:
        scores = entry.get("scores") if isinstance(entry, dict) else None
        if isinstance(scores, list) and any(isinstance(score, bool) for score in scores):
            raise ValueError("a score is a boolean, not a number from 0 to 10")
    return value


def exact_scores_type(group_sizes: Sequence[int]) -> Any:
    """tuple[Group0, ...]: one entry per group, each with exactly as many scores as chunks."""
    groups = [
        create_model(
            f"ScoresForSubQuestion{index}",
            __base__=GroupScores,
            sub_question_index=(_const(index), ...),
            scores=(list[Score], Field(json_schema_extra={"minItems": size, "maxItems": size})),
        )
        for index, size in enumerate(group_sizes)
    ]
    return shaped_list(GroupScores, _tuple_of(groups), "GroupScoresList", before=_no_boolean_scores)


def exact_lines_type(sections: Sequence[tuple[int, int]], max_words_chars: int = 300) -> Any:
    """tuple[Line...]: one per (sub-question index, number of sentences shown), naming only shown ids."""
    lines = []
    for index, count in sections:
        ids = _enum(int, list(range(count)))
        lines.append(
            create_model(
                f"AnswerForSection{index}",
                __base__=AnswerLine,
                sub_question_index=(_const(index), ...),
                sentence_ids=(_list_of(ids), Field(json_schema_extra={"minItems": 0, "maxItems": 3})),
                answer=(str, Field(json_schema_extra={"maxLength": max_words_chars})),
            )
        )
    return shaped_list(AnswerLine, _tuple_of(lines), "AnswerLineList")


def exact_computations_type(sections: Sequence[tuple[int, int, Sequence[str]]]) -> Any:
    """tuple[Computation...]: one per (sub-question index, sentences shown, figures those sentences write),
    whose operands quote only shown sentences and written figures."""
    computations = []
    for index, count, figures in sections:
        operand = create_model(
            f"OperandForSection{index}",
            __base__=OperandChoice,
            name=(_enum(str, list("abcdefgh")), ...),
            sentence_id=(_enum(int, list(range(count))), ...),
            figure=(_enum(str, list(dict.fromkeys(figures))) if figures else str, ...),
        )
        computations.append(
            create_model(
                f"ComputationForSection{index}",
                __base__=FigureComputation,
                sub_question_index=(_const(index), ...),
                operands=(_list_of(operand), Field(json_schema_extra={"minItems": 0, "maxItems": 8})),
                expression=(str, Field(json_schema_extra={"maxLength": 120})),
            )
        )
    return shaped_list(FigureComputation, _tuple_of(computations), "FigureComputationList")
