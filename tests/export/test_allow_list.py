"""Export and profile loading accept only the keys their schemas know, at any depth, and only numbers inside
each number's bounds. The inputs are those an outside probe found accepted by the old deny-list."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from experiments.config import config_hash, load_config
from pipeline.errors import ExportError
from pipeline.export import MANIFEST, PROGRAM, PROMPTS, canonical_json
from pipeline.export.demos import MAX_DEMO_NUMBER
from pipeline.export.jsonio import sha256_hex
from pipeline.export.profiles import ProfilePaths, add_profile, export_profile, import_profile, list_profiles
from pipeline.export.record import ExperimentRecord
from pipeline.export.validate import validate_manifest, validate_program
from pipeline.store import Store
from tests.support.exports import save_demo_export

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "pipeline" / "export" / "shipped"
# Keys the deny-list let through at any depth, homoglyph spellings (a Cyrillic "а", the Kelvin sign), URLs.
PROBED_KEYS = (
    "extra_headers",
    "custom_llm_provider",
    "deployment_id",
    "token",
    "model_name",
    "litellm_params",
    "http_client",
    "client",
    "api_version",
    "organization",
    "vertex_project",
    "aws_region_name",
    "key",
    "\u0430pi_base",
    "\u212aey",
    "http://evil.example/v1",
    "https://evil.example",
)


# End-to-end scores per case, as a job with an end-to-end sample writes them (the shipped job has none).
SCORES = {
    case: {f"{phase}.{name}": 0.5 for phase in ("baseline", "result") for name in ("composite", "fact_recall", "n")}
    for case in ("all", "chip", "no_scope", "property", "wrong_property")
}


def _manifest() -> dict[str, Any]:
    """The shipped manifest, with end-to-end scores when it has none (every part of it is checked below)."""
    manifest: dict[str, Any] = json.loads((SHIPPED / MANIFEST).read_bytes())
    manifest["scores"] = manifest["scores"] or copy.deepcopy(SCORES)
    validate_manifest(manifest, MANIFEST)
    return manifest


def _program() -> dict[str, Any]:
    """The shipped program's state with a demo on every predictor that can hold nested values."""
    state = json.loads((SHIPPED / PROGRAM).read_bytes())
    state["answer"]["demos"] = [
        {
            "augmented": True,
            "sections_context": [
                {
                    "sub_question_index": 0,
                    "sub_question": "Rent?",
                    "sentences": [{"sentence_id": 0, "source": "[a.md, page 1]", "text": "Rent is KSH 5."}],
                }
            ],
            "answers": [{"sub_question_index": 0, "sentence_ids": [0], "answer": "KSH 5"}],
        }
    ]
    state["decompose"]["demos"] = [{"question": "Rent?", "sub_questions": ["Rent?"]}]
    state["score"]["demos"] = [
        {
            "augmented": True,
            "groups": [
                {
                    "sub_question_index": 0,
                    "sub_question": "Rent?",
                    "chunks": [
                        {"chunk_index": 0, "source": "[a.md, page 1]", "text": "Rent is KSH 5."},
                        {"chunk_index": 1, "source": "[a.md, page 2]", "text": "Signed."},
                    ],
                }
            ],
            "scores": [{"sub_question_index": 0, "scores": [9.0, 1.0]}],
        }
    ]
    validate_program(state, PROGRAM)  # valid as it stands: each test below changes one thing
    return state


def _objects(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every JSON object inside `value`, the top level included."""
    if isinstance(value, dict):
        yield path
        for key, item in value.items():
            yield from _objects(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _objects(item, (*path, index))


def _numbers(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every number (not a boolean) inside `value`."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _numbers(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _numbers(item, (*path, index))
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield path


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def _shown(path: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in path)


# ---- unknown keys, at any depth --------------------------------------------------------------------


@pytest.mark.parametrize("key", PROBED_KEYS)
def test_a_key_no_schema_knows_is_refused_in_every_object_of_the_manifest(key: str) -> None:
    manifest = _manifest()
    places = list(_objects(manifest))
    assert len(places) >= 20  # the top level, versions, config and each section, scores and each case, files
    for place in places:
        edited = copy.deepcopy(manifest)
        _at(edited, place)[key] = "http://127.0.0.1:9/v1"
        with pytest.raises(ExportError) as caught:
            validate_manifest(edited, MANIFEST)
        # refused as an unknown key, or (in a map of names to numbers: scores, metric weights) for not
        # carrying a number
        assert key in caught.value.key_path, (place, caught.value.key_path)


@pytest.mark.parametrize("key", ["\u0430pi_base", "\u212aey", "http://evil.example/v1", "https://evil.example", ""])
@pytest.mark.parametrize(
    "place", [("scores",), ("scores", "all"), ("config", "experiment", "metric", "weights")], ids=_shown
)
def test_names_of_scores_and_weights_are_names(key: str, place: tuple[str, ...]) -> None:
    manifest = _manifest()
    _at(manifest, place)[key] = {"composite": 0.5} if place == ("scores",) else 0.5
    with pytest.raises(ExportError, match="should match pattern") as caught:
        validate_manifest(manifest, MANIFEST)
    assert caught.value.key_path.startswith(_shown(place))


@pytest.mark.parametrize("key", PROBED_KEYS)
def test_a_key_no_schema_knows_is_refused_in_every_object_of_the_program(key: str) -> None:
    state = _program()
    places = [p for p in _objects(state) if p]  # the top level holds predictors, refused by name already
    assert len(places) >= 30  # each predictor, its signature and fields, metadata, demos and their parts
    for place in places:
        edited = copy.deepcopy(state)
        _at(edited, place)[key] = "http://127.0.0.1:9/v1"
        with pytest.raises(ExportError) as caught:
            validate_program(edited, PROGRAM)
        assert "unknown key" in caught.value.problem or "unknown predictor" in caught.value.problem
        assert key in caught.value.key_path, (place, caught.value.key_path)


def test_a_key_that_looks_like_an_endpoint_says_so() -> None:
    manifest = _manifest()
    manifest["config"]["experiment"]["lm"]["api_base"] = "http://127.0.0.1:9/v1"
    with pytest.raises(ExportError, match=r"'config\.experiment\.lm\.api_base' names an LM, model, endpoint"):
        validate_manifest(manifest, MANIFEST)


def test_a_profile_carrying_a_probed_key_is_refused_and_nothing_is_written(demo_store: Store, tmp_path: Path) -> None:
    paths = ProfilePaths(registry=tmp_path / "profiles.json", root=tmp_path / "programs")
    add_profile(paths, "alpha", save_demo_export(demo_store, tmp_path / "export"))
    payload = export_profile(paths, "alpha")
    program = payload["export"]["program"]
    program["decompose"]["demos"][0]["custom_llm_provider"] = "openai"
    data = canonical_json(program)  # the manifest vouches for the edited program: the schema is what refuses it
    payload["export"]["manifest"]["files"][PROGRAM] = {"sha256": sha256_hex(data), "size": len(data)}
    with pytest.raises(ExportError, match="unknown key") as caught:
        import_profile(paths, canonical_json(payload), "beta", confirm_overwrite=False)
    assert caught.value.key_path == "decompose.demos[0].custom_llm_provider"
    assert [p.name for p in list_profiles(paths)] == ["alpha"] and not (paths.root / "beta").exists()


# ---- every number is bounded -----------------------------------------------------------------------


@pytest.mark.parametrize("value", [-1, 0, 10**12])
def test_an_output_budget_out_of_range_is_refused(value: int) -> None:
    manifest = _manifest()
    manifest["config"]["program"]["max_tokens"]["answer"] = value
    with pytest.raises(ExportError) as caught:
        validate_manifest(manifest, MANIFEST)
    assert caught.value.key_path == "config.program.max_tokens.answer"


def test_output_budgets_for_steps_that_do_not_exist_are_refused() -> None:
    manifest = _manifest()
    manifest["config"]["program"]["max_tokens"].update({f"step{i}": 100 for i in range(20_000)})
    with pytest.raises(ExportError, match="no LM step is called 'step0'") as caught:
        validate_manifest(manifest, MANIFEST)
    assert caught.value.key_path == "config.program.max_tokens"


def test_every_number_of_the_manifest_has_bounds() -> None:
    manifest = _manifest()
    places = list(_numbers(manifest))
    assert len(places) >= 80  # settings, program settings, the experiment record, scores, file sizes
    for place in places:
        for outside in (-(10**15), 10**15):
            edited = copy.deepcopy(manifest)
            parent, key = _at(edited, place[:-1]), place[-1]
            parent[key] = outside
            with pytest.raises(ExportError) as caught:
                validate_manifest(edited, MANIFEST)
            assert caught.value.key_path.startswith(_shown(place[:-1])), (place, caught.value.key_path)


def test_every_number_of_the_program_has_bounds() -> None:
    state = _program()
    state["score"]["demos"][0]["scores"][0]["scores"] = [8.0, 2.5]
    places = list(_numbers(state))
    assert len(places) >= 8  # indexes, pages and scores inside demos
    for place in places:
        edited = copy.deepcopy(state)
        _at(edited, place[:-1])[place[-1]] = MAX_DEMO_NUMBER * 10
        with pytest.raises(ExportError, match="out of range"):
            validate_program(edited, PROGRAM)


# ---- what is written is what is accepted -------------------------------------------------------------


@pytest.mark.parametrize("config", sorted((ROOT / "experiments").glob("*.toml")), ids=lambda p: p.name)
def test_every_shipped_experiment_config_records_within_the_schema(config: Path) -> None:
    """The job records its config with three more keys (experiments/job.py); a field added to the config but
    not to ExperimentRecord fails here, not at the end of a long job."""
    loaded = load_config(config)
    record = {**loaded.model_dump(mode="json"), "config_hash": config_hash(loaded), "selected": False}
    record["program"] = "baseline (candidate rejected: see the run's rejection tag)"
    ExperimentRecord.model_validate(record)


def test_the_shipped_export_loads_under_the_allow_list() -> None:
    manifest, program, prompts = ((SHIPPED / name).read_bytes() for name in (MANIFEST, PROGRAM, PROMPTS))
    validate_manifest(json.loads(manifest), MANIFEST)
    validate_program(json.loads(program), PROGRAM)
    assert sha256_hex(prompts) == json.loads(manifest)["files"][PROMPTS]["sha256"]
