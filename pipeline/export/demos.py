"""What a predictor's saved demos may hold: its signature's fields (and DSPy's `augmented` flag), each value
shaped as the field's type at every depth, every number bounded. Pure: looks only at values."""

from __future__ import annotations

import types
from collections.abc import Iterator, Mapping
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import dspy
from pydantic import BaseModel

# DSPy marks a demo its bootstrapping produced.
AUGMENTED = "augmented"
# No number an LM is shown in a demo (an index, a page, a score) comes near this.
MAX_DEMO_NUMBER = 1_000_000


def demo_problems(demo: Any, signature: type[dspy.Signature], path: str) -> Iterator[tuple[str, str]]:
    """(key path, problem) for everything in `demo` (one saved demo) that `signature` does not describe."""
    if not isinstance(demo, dict):
        yield path, "must be an object"
        return
    for key, value in demo.items():
        here = f"{path}.{key}"
        if key == AUGMENTED:
            if not isinstance(value, bool):
                yield here, "must be true or false"
        elif key in signature.fields:
            yield from value_problems(value, signature.fields[key].annotation, here)
        else:
            yield here, "unknown key"


def value_problems(value: Any, annotation: Any, path: str) -> Iterator[tuple[str, str]]:
    """(key path, problem) for each place where `value` is not shaped as `annotation`: a key its model does not
    have, an object or a list where the type has none, or a number beyond MAX_DEMO_NUMBER."""
    origin = get_origin(annotation)
    if origin is Annotated:
        yield from value_problems(value, get_args(annotation)[0], path)
    elif origin in (Union, types.UnionType):
        yield from _first_fit(value, [a for a in get_args(annotation) if a is not type(None)], path)
    elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield from _model_problems(value, annotation, path)
    elif origin in (list, tuple, set, frozenset):
        if not isinstance(value, list):
            yield path, "must be a list"
            return
        arguments = [a for a in get_args(annotation) if a is not Ellipsis] or [Any]
        for index, item in enumerate(value):
            yield from value_problems(item, arguments[min(index, len(arguments) - 1)], f"{path}[{index}]")
    elif origin in (dict, Mapping):
        if not isinstance(value, dict):
            yield path, "must be an object"
            return
        inner = get_args(annotation)[1] if get_args(annotation) else Any
        for key, item in value.items():
            yield from value_problems(item, inner, f"{path}.{key}")
    elif isinstance(value, dict | list):
        yield path, f"must be {_scalar(annotation)}, not {'an object' if isinstance(value, dict) else 'a list'}"
    elif isinstance(value, int | float) and not isinstance(value, bool) and abs(value) > MAX_DEMO_NUMBER:
        yield path, f"{value!r} is out of range (at most {MAX_DEMO_NUMBER} either way)"


def _model_problems(value: Any, model: type[BaseModel], path: str) -> Iterator[tuple[str, str]]:
    if not isinstance(value, dict):
        yield path, "must be an object"
        return
    for key, item in value.items():
        here = f"{path}.{key}"
        field = model.model_fields.get(key)
        if field is None:
            yield here, "unknown key"
        else:
            yield from value_problems(item, field.annotation, here)


def _first_fit(value: Any, options: list[Any], path: str) -> Iterator[tuple[str, str]]:
    """The problems of the union member `value` fits best (none if it fits one; else those of the first)."""
    found = [list(value_problems(value, option, path)) for option in options]
    yield from min(found, key=len) if found else []


def _scalar(annotation: Any) -> str:
    if get_origin(annotation) is Literal:
        return "one of " + ", ".join(map(repr, get_args(annotation)))
    return {str: "text", int: "a number", float: "a number", bool: "true or false"}.get(annotation, "a value")
