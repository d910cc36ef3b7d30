"""POST /v1/history/{id}/label: an answer labelled where it was read, as the `LabelledExample` `scoperag label` makes,
previewed first and then appended to the traces file the server was started with (`serve --label-to FILE`).

No request names a file: every label goes to that one file. Its case follows from the question's recorded scope
(no scope, selected documents, a property); a gold page must lie inside that scope.
"""

from __future__ import annotations

import errno
import logging

from fastapi import APIRouter, HTTPException, Query
from pydantic import ValidationError

from pipeline.errors import DuplicateExampleError, ExamplesError, LabellingError, ScopeRagError, UnknownScopeError
from pipeline.evaluation.examples import Case, LabelledExample
from pipeline.evaluation.history import HistoryEntry
from pipeline.evaluation.labelling import append_example, example_from_history
from pipeline.files import storage_problem
from pipeline.serving.access import scope_documents
from pipeline.serving.history_routes import history_entry
from pipeline.serving.schemas import ErrorResponse, LabelRequest, LabelResult
from pipeline.serving.state import ServingState

log = logging.getLogger(__name__)

# The case a label takes from the scope the question was asked in.
CASE_OF_SCOPE: dict[str, Case] = {"no_scope": "no_scope", "chip": "chip", "property": "property"}
NOT_ENABLED = "this server saves no labels: start it with `scoperag serve --label-to FILE` (a JSONL traces file)"


def label_router(state: ServingState) -> APIRouter:
    """The label endpoint of one app, bound to its state."""
    router = APIRouter(tags=["labels"])

    @router.post(
        "/v1/history/{history_id}/label",
        responses={
            404: {"model": ErrorResponse, "description": "No such history entry, or labels are not saved here"},
            409: {
                "model": ErrorResponse,
                "description": "Already labelled, the label changed since its preview, or the file cannot be written",
            },
            507: {"model": ErrorResponse, "description": "The disk holding the traces file is full"},
            422: {"model": ErrorResponse, "description": "The label does not fit the question"},
        },
    )
    def label(
        history_id: str,
        body: LabelRequest,
        dry_run: bool = Query(False, description="Only make the example and show it; append nothing"),
    ) -> LabelResult:
        """The example this label makes (`dry_run`), or that example appended to the server's traces file. Saving
        takes the previewed example as `confirm` and appends only while the label still makes exactly it."""
        labels = state.labels
        if labels is None:
            raise HTTPException(404, NOT_ENABLED)
        entry = history_entry(state, history_id)
        case, example = _example(state, entry, body)
        shown = example.model_dump(mode="json", exclude_defaults=True)
        result = LabelResult(example=shown, case=case, file=str(labels.path), saved=False)
        if dry_run:
            return result
        if body.confirm is None:
            raise HTTPException(422, "preview the label first and send the example it showed as `confirm`")
        if body.confirm != shown:
            raise HTTPException(409, "the label makes another example than the one shown: preview it again")
        with labels.lock:
            try:
                line = append_example(labels.path, example)
            except DuplicateExampleError as exc:
                raise HTTPException(
                    409, f"this question is already labelled in {exc.path} (line {exc.line}); edit that line instead"
                ) from exc
            except ExamplesError as exc:
                raise HTTPException(409, f"the traces file cannot take labels: {exc}") from exc
            except (OSError, ScopeRagError) as exc:  # a full or read-only disk: say so, never a 500
                problem = storage_problem(exc)
                if problem is None and not isinstance(exc, ScopeRagError):
                    raise
                why, way_out = problem or (str(exc), "give serve --label-to a regular file")
                status = 507 if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT) else 409
                detail = (
                    f"the label was not saved: cannot write {labels.path}: {why}; {way_out} (the file is as it was)"
                )
                raise HTTPException(status, detail) from exc
        log.info("labelled %s as %s example %s (%s line %d)", history_id, case, example.id, labels.path, line)
        return result.model_copy(update={"saved": True, "line": line})

    return router


def _example(state: ServingState, entry: HistoryEntry, body: LabelRequest) -> tuple[Case, LabelledExample]:
    """The label's case and example; 422 naming what does not fit."""
    catalog = state.store.catalog
    kind = str(entry.trace.scope.get("kind", "no_scope"))
    case = CASE_OF_SCOPE.get(kind)
    if case is None:
        raise HTTPException(422, f"a question asked with a {kind!r} scope cannot be labelled here")
    try:
        allowed = scope_documents(entry.trace, state.store)
    except (ValidationError, UnknownScopeError) as exc:
        raise HTTPException(422, "the question's recorded scope no longer resolves in this index") from exc
    outside = [g.document_id for g in body.gold if allowed is not None and g.document_id not in allowed]
    if outside:
        raise HTTPException(422, f"gold documents {outside} lie outside the question's scope")
    not_found = body.verdict == "not_found"
    if not_found and (body.facts or body.gold):
        raise HTTPException(422, "an answer the documents do not hold has no facts and no gold pages")
    if not not_found and not body.facts:
        raise HTTPException(422, "name at least one fact a correct answer states (the answer line is offered)")
    gold_pages = [(g.document_id, g.page) for g in body.gold] or None
    # a wrong answer's citations are no gold: without pages named, the label names no gold document
    gold_documents: list[str] | None = [] if body.verdict == "wrong" and gold_pages is None else None
    try:
        example = example_from_history(
            entry,
            catalog,
            case=case,
            answer_facts=body.facts,
            gold_documents=gold_documents,
            gold_pages=gold_pages,
            expect_not_found=not_found,
            tags=("from_page", f"judged_{body.verdict}"),
            split=body.split,
        )
    except LabellingError as exc:
        raise HTTPException(422, str(exc)) from exc
    return case, example
