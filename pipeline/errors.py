"""Project errors: one base class, each subclass carries the offending values."""

from __future__ import annotations

from pathlib import Path


class ScopeRagError(Exception):
    """Base of every error scoperag raises on purpose."""


class SettingsError(ScopeRagError):
    """A settings file is unreadable or invalid; names the file and the field."""


class InputFileError(ScopeRagError):
    """A source file could not be read; carries its path and the reason."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason

    def __reduce__(self) -> tuple[type[InputFileError], tuple[str, str]]:
        return InputFileError, (self.path, self.reason)  # crosses from reading processes intact


class StorageError(ScopeRagError):
    """Something could not be written where it belongs (a full or read-only disk, no permission); names what and
    where, why, and the way out. What was there before is unchanged."""

    def __init__(self, what: str, path: Path | str, reason: str, hint: str, kept: str = "") -> None:
        super().__init__(f"cannot write {what} at {path}: {reason}; {hint}" + (f" ({kept})" if kept else ""))
        self.what = what
        self.path = str(path)
        self.reason = reason
        self.hint = hint


class FactRefused(ScopeRagError):
    """An inline XBRL fact that is not kept (a scale out of range, a value of too many digits); carries why."""

    def __init__(self, concept: str, reason: str) -> None:
        super().__init__(f"{concept}: {reason}")
        self.concept = concept
        self.reason = reason


class ManifestError(ScopeRagError):
    """A corpus manifest (corpus.toml) or front matter is invalid."""


class IndexCorruptError(ScopeRagError):
    """An index directory disagrees with its manifest or is missing files."""

    def __init__(self, index_dir: str, problems: list[str]) -> None:
        joined = "; ".join(problems)
        super().__init__(
            f"index at {index_dir} is not usable: {joined}. "
            f"Rebuild it with `scoperag index SOURCE_DIR --out {index_dir}`."
        )
        self.index_dir = index_dir
        self.problems = problems


class IndexNotFoundError(ScopeRagError):
    """No published index exists at the given directory."""

    def __init__(self, index_dir: str) -> None:
        super().__init__(
            f"no index at {index_dir} (no MANIFEST.json). Build one with `scoperag index SOURCE_DIR --out {index_dir}`."
        )
        self.index_dir = index_dir


class IndexBusyError(ScopeRagError):
    """Another build is writing into the same index directory."""

    def __init__(self, index_dir: str, holder: str) -> None:
        super().__init__(
            f"another `scoperag index` ({holder}) is building into {index_dir}. "
            "Wait for it to finish, or build into another --out directory."
        )
        self.index_dir = index_dir


class IndexSourceError(ScopeRagError):
    """A build would replace an index built from another source folder without confirmation."""

    def __init__(self, index_dir: str, built_from: str, source: str) -> None:
        super().__init__(
            f"{index_dir} holds the index of {built_from}, not of {source}: nothing was built. Choose another "
            "--out for this folder, or confirm the replacement with --yes"
        )
        self.index_dir = index_dir
        self.built_from = built_from
        self.source = source


class UnknownScopeError(ScopeRagError):
    """A requested document id or property does not exist in the catalog."""

    def __init__(self, kind: str, values: list[str]) -> None:
        super().__init__(f"unknown {kind}: {', '.join(values)}")
        self.kind = kind
        self.values = values


class UnknownDocumentError(UnknownScopeError):
    """A document reference that is neither a known document id nor a known relative path."""

    def __init__(
        self, values: list[str], example_id: str | None = None, example_path: str | None = None, where: str = ""
    ) -> None:
        forms = "its document id (a canonical UUID"
        forms += f", e.g. {example_id})" if example_id else ")"
        forms += " or its path relative to the corpus folder"
        forms += f" (e.g. {example_path!r})" if example_path else ""
        super().__init__("document", values)
        place = f" in {where}" if where else ""
        self.args = (f"unknown document{place}: {', '.join(values)}; name a document by {forms}",)


class SkippedDocumentError(UnknownScopeError):
    """A document reference names a file the index build skipped (a corrupt PDF, an empty file)."""

    def __init__(self, skipped: dict[str, str], where: str = "") -> None:
        super().__init__("document", list(skipped))
        place = f" in {where}" if where else ""
        why = "; ".join(f"{path!r}: {reason}" for path, reason in skipped.items())
        self.skipped = dict(skipped)
        self.args = (
            f"document skipped when the index was built{place}: {why}; replace the file and rebuild the index,"
            " or leave the document out",
        )


class EmbedderError(ScopeRagError):
    """The embedding model is missing or does not match its expected hash."""


class ModelError(ScopeRagError):
    """The embedded LM's weights are missing, incomplete, do not match their pinned hash or fail to load."""

    def __init__(self, problem: str, fix: str, path: str | None = None) -> None:
        super().__init__(f"{problem}. {fix}")
        self.problem = problem
        self.fix = fix
        self.path = path


class ScopeViolationError(ScopeRagError):
    """A value that is not a canonical, known, in-scope document id was about to reach the store."""

    def __init__(self, values: list[str]) -> None:
        super().__init__(f"refused to send document ids outside the scope to the store: {', '.join(values)}")
        self.values = values


class RetrievalRateLimitedError(ScopeRagError):
    """A search backend asked us to slow down; the call may be retried."""


class ExportError(ScopeRagError):
    """A program export (or an inlined one) is invalid or cannot be written; names the file, key path and fix."""

    def __init__(self, file: str, problem: str, fix: str, key_path: str = "") -> None:
        where = f"{file} at {key_path}" if key_path else file
        super().__init__(f"{where}: {problem}. {fix}")
        self.file = file
        self.key_path = key_path
        self.problem = problem
        self.fix = fix


class ProfileError(ScopeRagError):
    """A prompt profile is unknown, badly named, or the profile registry is invalid."""

    def __init__(self, name: str | None, problem: str, fix: str) -> None:
        super().__init__(f"profile {name!r}: {problem}. {fix}" if name is not None else f"{problem}. {fix}")
        self.name = name
        self.problem = problem
        self.fix = fix


class ProfileExistsError(ProfileError):
    """An import or add would replace an existing profile without the caller's confirmation."""

    def __init__(self, name: str) -> None:
        super().__init__(
            name,
            "a profile with this name already exists",
            "Confirm the replacement (`--yes` on the command line, Replace on the web page), or choose another name",
        )


class ExperimentConfigError(ScopeRagError):
    """An experiment config (experiments/*.toml) is missing or invalid; names the file, the field and the fix."""

    def __init__(self, file: str, problem: str, field: str = "") -> None:
        where = f"{file}: {field}" if field else file
        super().__init__(f"{where}: {problem}")
        self.file = file
        self.field = field
        self.problem = problem


class JobInterrupted(ScopeRagError):
    """An optimisation job was stopped by the user (Ctrl-C) at an LM-call boundary; says what it kept."""

    def __init__(self, run_id: str, phase: str, calls: int, new_calls: int, cache_dir: str | None) -> None:
        cache = f" in DSPy's cache ({cache_dir})" if cache_dir else " in DSPy's cache"
        super().__init__(
            f"stopped during {phase}: MLflow run {run_id} is marked KILLED with the config, data splits and costs "
            f"logged so far; the {new_calls} LM answers obtained ({calls} calls in all) are kept{cache}, so "
            "running the same config again answers them from there"
        )
        self.run_id = run_id
        self.phase = phase
        self.calls = calls


class WorkStopped(ScopeRagError):
    """Work over many items was stopped by the user (Ctrl-C); carries the results that finished, by position."""

    def __init__(self, finished: dict[int, object], total: int) -> None:
        super().__init__(f"stopped by the user: {len(finished)} of {total} finished")
        self.finished = finished
        self.total = total


class BudgetExceededError(ScopeRagError):
    """An optimisation job reached its LM-call budget and was stopped; carries the limit and the calls made."""

    def __init__(self, limit: int, calls: int, phase: str = "compile") -> None:
        super().__init__(
            f"{phase} stopped: the LM-call budget of {limit} calls was reached ({calls} calls attempted). "
            "Raise budget.max_lm_calls in the experiment config, or shrink train_size/val_size or the optimizer's "
            "parameters; a rerun answers the calls already made from the LM cache"
        )
        self.limit = limit
        self.calls = calls
        self.phase = phase


class TrackingError(ScopeRagError):
    """An MLflow run, experiment or artifact the command needs does not exist or cannot be used."""


class ClusterError(ScopeRagError):
    """Ray is missing, or the cluster named by --ray cannot be reached or lost a task past its retries."""

    def __init__(self, message: str, address: str | None = None) -> None:
        super().__init__(message)
        self.address = address


class ExamplesError(ScopeRagError):
    """A labelled-example file or line is invalid; names the file, line and problem."""


class LabellingError(ExamplesError):
    """A history entry cannot become the requested example; says what and how to fix it."""


class DuplicateExampleError(ExamplesError):
    """The example file already holds an example with this id."""

    def __init__(self, path: Path, example_id: str, line: int) -> None:
        super().__init__(f"{path}:{line}: already holds example {example_id} (same corpus, question and scope)")
        self.path = path
        self.example_id = example_id
        self.line = line


class LMFailure(ScopeRagError):
    """The LM could not be reached or failed outright (not a parse problem); `public` is safe to show.

    `calls` is every attempt made (retries included); `retried` names the error of each attempt that
    failed and was retried before the last one.
    """

    def __init__(self, message: str, public: str | None = None, calls: int = 1, retried: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.public = public or message
        self.calls = calls
        self.retried = retried


class StreamCancelled(ScopeRagError):
    """The stream was cancelled (its client disconnected): no further LM call is made for it."""


class LockHeld(ScopeRagError):
    """A file lock is held by another process; `holder` is what that process wrote into the lock file."""

    def __init__(self, path: Path, holder: str) -> None:
        super().__init__(f"{path} is held by {holder}")
        self.holder = holder


class ArithmeticRefused(ScopeRagError):
    """A direct-answer expression that is not worked out; carries the expression's problem."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"{reason}; ask with numbers, + - * / % ** and parentheses only")
        self.reason = reason
