"""/v1/profiles: list, activate, export, check, import and remove named prompt profiles (pipeline.export.profiles),
and read a profile's prompts or the difference between two.

Activating a profile loads its export into a fresh program on the same store and swaps it in as a
whole; streams already running keep the program they started with.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from pipeline.errors import ExportError, ProfileError, ProfileExistsError
from pipeline.export import load_export, read_export
from pipeline.export.profiles import (
    PAYLOAD,
    ProfileInfo,
    ProfilePaths,
    activate,
    check_name,
    checked_payload,
    export_all,
    export_profile,
    import_profile,
    list_profiles,
    profile_json,
    remove_profile,
)
from pipeline.guards.sanitise import MAX_NOTE_CHARS, sanitised_text
from pipeline.program.module import ScopedQA
from pipeline.serving.profile_view import diff_lines, module_diffs, modules
from pipeline.serving.schemas import (
    ActivatedResponse,
    ErrorResponse,
    ProfileCheck,
    ProfileDetail,
    ProfileDiff,
    ProfileList,
    ProfileOut,
)
from pipeline.serving.state import ServingProgram, ServingState, program_info

log = logging.getLogger(__name__)

_ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorResponse, "description": "No such profile, or no profile registry on this server"},
    422: {"model": ErrorResponse, "description": "Invalid name, payload or stored export"},
}
_JSON_BODY = {
    "requestBody": {
        "required": True,
        "description": "A `scoperag-profile/v1` document, as GET /v1/profiles/{name}/export returns (at most 1 MiB)",
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
}


def profile_router(state: ServingState) -> APIRouter:
    """The profile endpoints of one app, bound to its state."""
    router = APIRouter(prefix="/v1/profiles", tags=["profiles"], responses=_ERRORS)

    def paths() -> ProfilePaths:
        if state.profiles is None:
            raise HTTPException(404, "this server was started without a profile registry")
        return state.profiles

    @router.get("")
    def list_all() -> ProfileList:
        """Every registered profile and which one is active."""
        with _http_errors():
            infos = list_profiles(paths())
        active = next((i.name for i in infos if i.active), None)
        return ProfileList(active=active, profiles=[_out(i) for i in infos])

    @router.get("/export", response_class=Response, responses={200: {"content": {"application/json": {}}}})
    def export_everything() -> Response:
        """Every profile inlined, and which one is active (`scoperag-profiles-bundle/v1`)."""
        with _http_errors():
            data = profile_json(export_all(paths()))
        return Response(data, media_type="application/json")

    @router.post("/check", openapi_extra=_JSON_BODY)
    async def check(request: Request) -> ProfileCheck:
        """Check a profile document as import checks it (format, size, every rule of loading), writing nothing."""
        data = await request.body()
        try:
            checked = await run_in_threadpool(checked_payload, data)
        except ExportError as exc:
            raise HTTPException(422, _in_words(exc)) from exc
        return ProfileCheck(
            name=checked.name,
            note=sanitised_text(checked.note, MAX_NOTE_CHARS),
            exported_at=checked.contents.manifest.created_at,
            modules=modules(checked.contents.program_state),
        )

    @router.get("/diff")
    def diff(
        a: str = Query(description="The first profile"), b: str = Query(description="The second profile")
    ) -> ProfileDiff:
        """How two profiles' programs differ: per module, instructions and demos; and their prompts.md, line by line."""
        with _http_errors():
            first, second = (read_export(_require(paths(), name).program) for name in (a, b))
        return ProfileDiff(
            a=a,
            b=b,
            modules=module_diffs(first.program_state, second.program_state),
            lines=diff_lines(first.prompts, second.prompts),
        )

    @router.get("/{name}")
    def detail(name: str) -> ProfileDetail:
        """One profile, the program behind it (run, training data, LM, modules and demos) and its prompts.md."""
        with _http_errors():
            info = _require(paths(), name)
            contents = read_export(info.program)
        manifest = contents.manifest
        return ProfileDetail(
            profile=_out(info),
            run_id=manifest.run_id,
            exported_at=manifest.created_at,
            trainset_hash=manifest.trainset_hash,
            lm=manifest.versions.lm,
            modules=modules(contents.program_state),
            prompts_md=contents.prompts,
        )

    @router.delete("/{name}")
    def remove(name: str) -> ProfileOut:
        """Remove a profile that is not active (its imported export goes too)."""
        with _http_errors(), state.profile_lock:
            _require(paths(), name)
            info = remove_profile(paths(), name)
        log.info("profile %s removed", name)
        return _out(info)

    @router.get("/{name}/export", response_class=Response, responses={200: {"content": {"application/json": {}}}})
    def export_one(name: str) -> Response:
        """One profile with its export inlined (`scoperag-profile/v1`), ready for import."""
        with _http_errors():
            _require(paths(), name)
            data = profile_json(export_profile(paths(), name))
        disposition = f'attachment; filename="{name}.scoperag-profile.json"'  # a checked name: no quote or slash
        return Response(data, media_type="application/json", headers={"Content-Disposition": disposition})

    @router.post("/{name}/activate")
    def activate_one(name: str) -> ActivatedResponse:
        """Make `name` the active profile and answer new questions with its program."""
        with _http_errors(), state.profile_lock:
            info = _require(paths(), name)
            # Load before activating: the registry never names a profile this server could not load.
            loaded = load_export(info.program, ScopedQA(state.store, state.current.program.settings))
            info = activate(paths(), name)
            state.current = ServingProgram(loaded.program, loaded.manifest, name)
        log.info("profile %s activated", name)
        return ActivatedResponse(profile=_out(info), program=program_info(loaded.manifest, name))

    @router.post("/{name}/import", openapi_extra=_JSON_BODY)
    async def import_one(
        name: str,
        request: Request,
        confirm: bool = Query(False, description="Replace an existing profile of this name"),
    ) -> ProfileOut:
        """Register a profile document under `name`; 409 if it exists and `confirm` is false.

        Replacing the profile this server is answering with swaps the new program in (as activate does)."""
        data = await request.body()
        profiles = paths()

        def run() -> ProfileInfo:
            with _http_errors(), state.profile_lock:
                info = import_profile(profiles, data, name, confirm_overwrite=confirm)
                if state.current.profile == name:  # replaced the profile being served: serve the new one
                    loaded = load_export(info.program, ScopedQA(state.store, state.current.program.settings))
                    state.current = ServingProgram(loaded.program, loaded.manifest, name)
                return info

        info = await run_in_threadpool(run)
        log.info("profile %s imported", name)
        return _out(info)

    return router


def profile_program(state: ServingState, name: str) -> ScopedQA:
    """The program of registered profile `name` (served or not), loaded strictly; 404 when there is none."""
    if state.profiles is None:
        raise HTTPException(404, "this server was started without a profile registry")
    with _http_errors():
        info = _require(state.profiles, name)
        return load_export(info.program, ScopedQA(state.store, state.current.program.settings)).program


def _require(paths: ProfilePaths, name: str) -> ProfileInfo:
    check_name(name)
    for info in list_profiles(paths):
        if info.name == name:
            return info
    raise HTTPException(404, f"no profile named {name!r}; list them with GET /v1/profiles")


def _out(info: ProfileInfo) -> ProfileOut:
    return ProfileOut(name=info.name, created_at=info.created_at, note=info.note, active=info.active)


def _in_words(exc: ExportError) -> str:
    """A profile document's problem as the page shows it: which part of the file, what is wrong, how to fix it."""
    part = exc.file.removeprefix(PAYLOAD).strip().removeprefix("export").strip("/ ")
    return f"{f'its {part}' if part else 'the file'}: {exc.problem}. {exc.fix}"


@contextmanager
def _http_errors() -> Iterator[None]:
    """Profile and export errors as HTTP errors carrying their message."""
    try:
        yield
    except ProfileExistsError as exc:
        raise HTTPException(409, str(exc)) from exc
    except (ProfileError, ExportError) as exc:
        raise HTTPException(422, str(exc)) from exc
