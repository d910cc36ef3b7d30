"""Labels made over HTTP (the same LabelledExample `scoperag label` writes, to the file `serve` was started with),
and the profile endpoints the page reads: check before import, detail with prompts, diff, remove."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from pipeline.evaluation.examples import load_examples
from pipeline.export.profiles import ProfilePaths, activate, add_profile, list_profiles
from pipeline.program.module import ScopedQA
from pipeline.settings import Settings
from pipeline.store import Store
from tests.support.app_server import Server, Start, query
from tests.support.exports import DEMO_QUESTION, save_demo_export

RENT = "What is the monthly rent at Banda Lane?"
EVIL = {"origin": "https://evil.example"}


def entity_documents(store: Store, name: str) -> set[str]:
    return set(store.entity_document_ids(store.resolve_entity(name).entity_id))


def label(server: Server, history_id: str, body: dict[str, Any], dry_run: bool = False) -> httpx.Response:
    suffix = "?dry_run=true" if dry_run else ""
    return httpx.post(f"{server.url}/v1/history/{history_id}/label{suffix}", json=body, timeout=30)


def asked(server: Server, question: str = RENT, **scope: Any) -> dict[str, Any]:
    done: dict[str, Any] = query(server, question=question, **scope).last
    assert done["history_id"], done
    return done


def test_a_label_is_previewed_then_appended_as_the_clis_example(start: Start, tmp_path: Path) -> None:
    traces = tmp_path / "traces" / "train.jsonl"
    server = start(history=tmp_path / "history.sqlite", label_to=traces)
    assert server.health()["labels"] is True
    done = asked(server, property="banda-lane")
    [section] = done["sections"]
    body: dict[str, Any] = {"verdict": "right", "facts": [section["answer"]], "split": "train"}
    preview = label(server, done["history_id"], body, dry_run=True)
    assert preview.status_code == 200, preview.text
    shown = preview.json()
    assert shown["saved"] is False and shown["line"] is None and shown["file"] == str(traces)
    assert not traces.exists()  # a preview writes nothing
    example = shown["example"]
    assert shown["case"] == "property" and example["case"] == "property"
    assert example["scope"] == {"property": "banda-lane"} and example["question"] == RENT
    assert example["answer_facts"] == [section["answer"]] and example["split"] == "train"
    cited = {server.store.catalog.documents[s["document_id"]].relpath for s in section["sources"]}
    assert set(example["gold_documents"]) == cited and example["gold_pages"]
    assert example["tags"] == ["from_page", "judged_right", "from_history"]

    assert label(server, done["history_id"], body).status_code == 422  # not shown first: not saved
    changed = {**body, "confirm": {**example, "answer_facts": ["something else"]}}
    assert label(server, done["history_id"], changed).status_code == 409
    saved = label(server, done["history_id"], {**body, "confirm": example})
    assert saved.status_code == 200, saved.text
    assert saved.json()["saved"] is True and saved.json()["line"] == 1
    [loaded] = load_examples(traces)
    assert loaded.model_dump(mode="json", exclude_defaults=True) == example
    again = label(server, done["history_id"], {**body, "confirm": example})
    assert again.status_code == 409 and "already labelled" in again.json()["detail"]
    assert (
        httpx.post(
            f"{server.url}/v1/history/{done['history_id']}/label", json=body, headers=EVIL, timeout=10
        ).status_code
        == 403
    )


def test_gold_pages_named_on_the_page_and_the_other_verdicts(start: Start, tmp_path: Path) -> None:
    server = start(history=tmp_path / "history.sqlite", label_to=tmp_path / "labels.jsonl")
    done = asked(server, question="What is the deposit at Banda Lane?", property="banda-lane")
    history_id = done["history_id"]
    lane = sorted(entity_documents(server.store, "Banda Lane"))
    inside = next(d for d in lane if server.store.catalog.documents[d].page_count >= 1)
    relpath = server.store.catalog.documents[inside].relpath
    wrong = label(
        server,
        history_id,
        {"verdict": "wrong", "facts": ["KSH 570,000"], "gold": [{"document_id": inside, "page": 1}]},
        True,
    ).json()["example"]
    assert wrong["gold_documents"] == [relpath] and wrong["gold_pages"] == [{"document": relpath, "page": 1}]
    assert wrong["tags"][:2] == ["from_page", "judged_wrong"]
    # a wrong answer's citations are not taken for gold
    unnamed = label(server, history_id, {"verdict": "wrong", "facts": ["KSH 570,000"]}, True).json()["example"]
    assert "gold_documents" not in unnamed and "gold_pages" not in unnamed
    not_found = label(server, history_id, {"verdict": "not_found"}, True).json()["example"]
    assert not_found["expect_not_found"] is True and "answer_facts" not in not_found

    road = sorted(entity_documents(server.store, "Banda Road"))[0]
    outside = label(
        server, history_id, {"verdict": "wrong", "facts": ["x"], "gold": [{"document_id": road, "page": 1}]}
    )
    assert outside.status_code == 422 and road in outside.json()["detail"]
    beyond = label(
        server, history_id, {"verdict": "wrong", "facts": ["x"], "gold": [{"document_id": inside, "page": 999}]}
    )
    assert beyond.status_code == 422 and "not pages of their documents" in beyond.json()["detail"]
    assert label(server, history_id, {"verdict": "not_found", "facts": ["x"]}, True).status_code == 422
    assert label(server, history_id, {"verdict": "right", "facts": []}, True).status_code == 422
    assert (
        label(server, history_id, {"verdict": "right", "facts": ["x"], "path": "/etc/passwd"}, True).status_code == 422
    )
    assert label(server, "0" * 8, {"verdict": "not_found"}, True).status_code == 404

    chip = next(iter(lane))
    chipped = asked(server, question="What does this document say?", document_ids=[chip])
    example = label(server, chipped["history_id"], {"verdict": "not_found"}, True).json()
    assert example["case"] == "chip" and example["example"]["scope"]["document_ids"] == [
        server.store.catalog.documents[chip].relpath
    ]


def test_without_label_to_nothing_is_saved(start: Start, tmp_path: Path) -> None:
    server = start(history=tmp_path / "history.sqlite")
    assert server.health()["labels"] is False
    done = asked(server)
    refused = label(server, done["history_id"], {"verdict": "not_found"}, True)
    assert refused.status_code == 404 and "--label-to" in refused.json()["detail"]


# -- profiles -----------------------------------------------------------------------------------------


def registry(tmp_path: Path, store: Store) -> ProfilePaths:
    """Profiles `alpha` (one decompose demo, active) and `plain` (no demo) registered under tmp_path."""
    paths = ProfilePaths(registry=tmp_path / "profiles" / "profiles.json", root=tmp_path / "profiles" / "programs")
    add_profile(paths, "alpha", save_demo_export(store, tmp_path / "alpha-export"))
    from pipeline.export import save_export

    save_export(
        ScopedQA(store),
        tmp_path / "plain-export",
        settings=Settings(),
        experiment_config={"optimizer": "none"},
        trainset_hash="sha256:" + "3" * 64,
        scores={},
        lm_name="fake",
    )
    add_profile(paths, "plain", tmp_path / "plain-export")
    activate(paths, "alpha")
    return paths


def test_a_profile_document_is_checked_before_import_and_nothing_is_written(start: Start, tmp_path: Path) -> None:
    server = start(profiles=registry(tmp_path, open_store_of(start)))
    base = f"{server.url}/v1/profiles"
    payload = httpx.get(f"{base}/alpha/export").content
    checked = httpx.post(f"{base}/check", content=payload)
    assert checked.status_code == 200, checked.text
    assert checked.json()["name"] == "alpha" and {"name": "decompose", "demos": 1} in checked.json()["modules"]
    for bad, words in (
        (b'{"format": "nope"}', "this is not a scoperag profile"),
        (b"[1, 2]", "not a scoperag profile"),
        (json.dumps({**json.loads(payload), "export": {}}).encode(), "the file"),
    ):
        refused = httpx.post(f"{base}/check", content=bad)
        assert refused.status_code == 422 and words in refused.json()["detail"], refused.text
    assert [p.name for p in list_profiles(server.state.profiles)] == ["alpha", "plain"]  # type: ignore[arg-type]


def test_a_profiles_prompts_the_diff_of_two_and_removing_one(start: Start, tmp_path: Path) -> None:
    paths = registry(tmp_path, open_store_of(start))
    server = start(profiles=paths)
    base = f"{server.url}/v1/profiles"
    detail = httpx.get(f"{base}/alpha").json()
    assert detail["profile"]["active"] is True and detail["lm"] == "fake"
    assert DEMO_QUESTION in detail["prompts_md"] and {"name": "decompose", "demos": 1} in detail["modules"]
    assert httpx.get(f"{base}/nobody").status_code == 404

    diff = httpx.get(f"{base}/diff", params={"a": "plain", "b": "alpha"}).json()
    decompose = next(m for m in diff["modules"] if m["name"] == "decompose")
    assert decompose == {"name": "decompose", "instructions_changed": False, "demos_a": 0, "demos_b": 1}
    added = [line["text"] for line in diff["lines"] if line["kind"] == "+"]
    assert any(DEMO_QUESTION in text for text in added) and diff["lines"][0]["kind"] == "@"
    assert httpx.get(f"{base}/diff", params={"a": "alpha", "b": "alpha"}).json()["lines"] == []

    active = httpx.delete(f"{base}/alpha")
    assert active.status_code == 422 and "active profile" in active.json()["detail"]
    assert httpx.delete(f"{base}/plain", headers=EVIL).status_code == 403
    removed = httpx.delete(f"{base}/plain")
    assert removed.status_code == 200 and removed.json()["name"] == "plain"
    assert [p["name"] for p in httpx.get(base).json()["profiles"]] == ["alpha"]
    assert (tmp_path / "plain-export").is_dir()  # registered from elsewhere: its directory is not ours to delete
    assert httpx.delete(f"{base}/plain").status_code == 404
    # an imported profile's export lives under the profiles root: removing the profile removes it
    payload = httpx.get(f"{base}/alpha/export").content
    assert httpx.post(f"{base}/copy/import", content=payload).status_code == 200
    assert (paths.root / "copy").is_dir()
    assert httpx.delete(f"{base}/copy").status_code == 200 and not (paths.root / "copy").exists()


def open_store_of(start: Start) -> Store:
    """The store a started server answers from (a throwaway server's)."""
    return start().store


def test_a_label_on_a_full_or_read_only_disk_is_a_507_or_409_naming_the_file(
    start: Start, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    traces = tmp_path / "labels.jsonl"
    server = start(history=tmp_path / "history.sqlite", label_to=traces)
    done = asked(server, property="banda-lane")
    body: dict[str, Any] = {"verdict": "right", "facts": [done["sections"][0]["answer"]]}
    example = label(server, done["history_id"], body, dry_run=True).json()["example"]
    real_write, real_open = os.write, os.open

    def disk_full(fd: int, data: Any) -> int:
        real_write(fd, bytes(data)[:5])
        raise OSError(errno.ENOSPC, "No space left on device")

    def read_only(path: Any, flags: int, *args: Any) -> int:
        if str(path) == str(traces) and flags & (os.O_WRONLY | os.O_RDWR):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real_open(path, flags, *args)

    for fault, target, status, why in (
        ("write", disk_full, 507, "the disk is full"),
        ("open", read_only, 409, "the file system is read-only"),
    ):
        traces.write_text("")
        monkeypatch.setattr(os, fault, target)
        try:
            refused = label(server, done["history_id"], {**body, "confirm": example})
        finally:
            monkeypatch.undo()
        assert refused.status_code == status, refused.text
        detail = refused.json()["detail"]
        assert detail.startswith(f"the label was not saved: cannot write {traces}: {why}")
        assert detail.endswith("(the file is as it was)") and traces.read_text() == ""
    assert label(server, done["history_id"], {**body, "confirm": example}).status_code == 200  # room again
