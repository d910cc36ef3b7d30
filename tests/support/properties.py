"""Hypothesis pieces shared by tests/properties/, tests/test_scope.py and benchmarks/fuzz_*.py: each property run
fast and slow, JSON traps and any text, JSON and byte mutations, a valid edit of a program's predictor, the sample
export they mutate, and the plan oracle."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, get_args, get_origin

import dspy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from pipeline.export import PREDICTORS, save_export
from pipeline.export.demos import AUGMENTED, MAX_DEMO_NUMBER
from pipeline.program.module import ScopedQA
from pipeline.settings import Settings
from pipeline.store import Store

# -- one body, two runs: FAST in the default run, SLOW under -m slow --------------------------------

_COMMON = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
FAST = settings(_COMMON, max_examples=50)
SLOW = settings(_COMMON, max_examples=1000)

Check = Callable[..., None]


def fast_and_slow(check: Check, **strategies: st.SearchStrategy[Any]) -> tuple[Check, Check]:
    """`check` as a FAST test for the default run and a SLOW one marked `slow` (same body, same strategies)."""
    fast = FAST(given(**strategies)(check))
    slow = pytest.mark.slow(SLOW(given(**strategies)(check)))
    return fast, slow


# Hand-made JSON that strict parsers must refuse and lenient ones accept.
RAW_JSON_TRAPS = (
    b'{"format": "a", "format": "b"}',
    b'{"note": NaN}',
    b'{"note": -Infinity}',
    b'{"note": 1e999}',
    b'{"note": "\\ud800"}',
    b'{"note": ' + b"9" * 5000 + b"}",
    b"[" * 5000 + b"]" * 5000,
    b'{"a":' * 3000 + b"1" + b"}" * 3000,
    b"\xef\xbb\xbf{}",
    b"{}\x00",
    b"",
)
# Characters that show nothing: a disguise for an id or a name.
ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad")
ANY_TEXT = st.text(alphabet=st.one_of(st.characters(), st.sampled_from(["\ud800", "\udfff", "\u200b", "\ufeff"])))

JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12,
)
RETYPED = (None, True, 0, -1, 1.5, "", "x", [], {}, [1], {"a": 1})
HUGE_VALUES = ("x" * 5000, 10**400, -(2**63) - 1, 1e308, [None] * 2000, {"k" * 300: 1}, "\x00" * 20)
ANY_KEY = st.text(max_size=10)


def _mutate_once(
    draw: st.DrawFn, value: Any, huge: Sequence[Any], max_nest: int, add_keys: st.SearchStrategy[str]
) -> Any:
    """`value` (mutated in place where possible) with one node dropped, added to, retyped, replaced, inflated or
    nested."""
    parent, key, node = None, None, value
    while isinstance(node, dict | list) and node and draw(st.booleans()):
        keys = sorted(node) if isinstance(node, dict) else list(range(len(node)))
        parent, key = node, draw(st.sampled_from(keys))
        node = node[key]
    op = draw(st.sampled_from(["drop", "add", "replace", "retype", "huge", "nest"]))
    if op == "drop" and parent is not None:
        del parent[key]
        return value
    if op == "add" and isinstance(node, dict | list):
        extra = draw(JSON_VALUES)
        if isinstance(node, dict):
            node[draw(add_keys)] = extra
        else:
            node.append(extra)
        return value
    if op == "retype":
        new = copy.deepcopy(draw(st.sampled_from([v for v in RETYPED if type(v) is not type(node)])))
    elif op == "huge":
        new = copy.deepcopy(draw(st.sampled_from(huge)))
    elif op == "nest":
        new = node
        for _ in range(draw(st.integers(1, max_nest))):
            new = [new]
    else:
        new = draw(JSON_VALUES)
    if parent is None:
        return new
    parent[key] = new
    return value


@st.composite
def mutated_json(
    draw: st.DrawFn,
    value: Any,
    max_mutations: int = 3,
    *,
    huge: Sequence[Any] = HUGE_VALUES,
    max_nest: int = 50,
    add_keys: st.SearchStrategy[str] = ANY_KEY,
) -> Any:
    """A deep copy of `value` with 1..max_mutations nodes dropped, added (under `add_keys`), retyped, replaced,
    inflated (one of `huge`) or nested (up to `max_nest` lists deep)."""
    value = copy.deepcopy(value)
    for _ in range(draw(st.integers(1, max_mutations))):
        value = _mutate_once(draw, value, huge, max_nest, add_keys)
    return value


@st.composite
def mutated_bytes(draw: st.DrawFn, data: bytes, *, duplicate: bool = False, max_cut: int = 16) -> bytes:
    """`data` truncated, with bytes flipped, inserted, deleted or (with `duplicate`) repeated (1-3 edits of up to
    `max_cut` bytes)."""
    ops = ["truncate", "flip", "insert", "delete", *(["duplicate"] if duplicate else [])]
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(data)))
        op = draw(st.sampled_from(ops))
        if op == "truncate":
            data = data[:at]
        elif op == "flip" and at < len(data):
            data = data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]
        elif op == "insert":
            data = data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]
        elif op == "duplicate":
            piece = data[at : at + draw(st.integers(1, max_cut))]
            data = data[:at] + piece * 2 + data[at + len(piece) :]
        else:
            data = data[:at] + data[at + draw(st.integers(1, max_cut)) :]
    return data


# -- program exports ------------------------------------------------------------------------------


def demo_values(annotation: Any) -> st.SearchStrategy[Any]:
    """Any JSON value shaped as a signature field of type `annotation` (its models' keys only, any subset of
    them, numbers within what a demo holds): what an optimizer could write into a demo."""
    origin = get_origin(annotation)
    if origin in (list, tuple):
        return st.lists(demo_values(get_args(annotation)[0]), max_size=3)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        fields = annotation.model_fields
        return st.fixed_dictionaries({}, optional={k: demo_values(f.annotation) for k, f in fields.items()})
    if annotation is int:
        return st.integers(-MAX_DEMO_NUMBER, MAX_DEMO_NUMBER)
    if annotation is float:
        return st.floats(-MAX_DEMO_NUMBER, MAX_DEMO_NUMBER, allow_nan=False)
    return st.text(max_size=40)


def edit_a_predictor(draw: st.DrawFn, state: dict[str, Any]) -> None:
    """Replace one predictor's instructions and demos in program state `state` by any text and any values its
    signature's fields can hold: what an optimizer could legitimately write."""
    name = draw(st.sampled_from(list(PREDICTORS)))
    predictor = state[name]
    predictor["signature"]["instructions"] = draw(st.text(max_size=200))
    fields = {key: demo_values(field.annotation) for key, field in PREDICTORS[name].fields.items()}
    demo = st.fixed_dictionaries({}, optional={**fields, AUGMENTED: st.booleans()})
    predictor["demos"] = draw(st.lists(demo, max_size=3))


def save_sample_export(store: Store, out: Path) -> None:
    """A real export (save_export of a ScopedQA with a demo on decompose and hyde) written to `out`."""
    program = ScopedQA(store)
    program.decompose.demos = [dspy.Example(question="Rent and tenant?", sub_questions=["Rent?", "Tenant?"])]
    program.hyde.demos = [dspy.Example(question="Rent?", passage="A lease stating the monthly rent.")]
    save_export(
        program,
        out,
        settings=Settings(),
        experiment_config={"optimizer": "none"},
        trainset_hash="sha256:" + "2" * 64,
        scores={"case-1": {"recall": 0.5}},
        lm_name="scripted",
    )
