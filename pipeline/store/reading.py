"""Source readers: a file becomes pages of text plus the metadata it carries itself."""

from __future__ import annotations

import dataclasses
import logging
import multiprocessing
import re
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.errors import InputFileError, ManifestError
from pipeline.store.corpus import FrontMatter, split_front_matter
from pipeline.store.html import read_html
from pipeline.store.pdf import read_pdf
from pipeline.store.xbrl import PageFact
from pipeline.text import strip_hidden
from pipeline.types import RowCell, TableRow

log = logging.getLogger(__name__)

SUPPORTED_SUFFIXES = (".md", ".markdown", ".txt", ".pdf", ".html", ".htm", ".xhtml")
HTML_SUFFIXES = (".html", ".htm", ".xhtml")
# Page breaks inside text and Markdown files: a form feed or an HTML comment on its own line.
# Files each reading process may have read ahead of the build writing them.
READ_AHEAD = 2
_PAGE_BREAK = re.compile(r"\f|^\s*<!--\s*page\s*break\s*-->\s*$", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class SourceFile:
    """The pages of one file (page 1 first), the metadata found inside it, hidden characters removed."""

    relpath: str
    pages: tuple[str, ...]
    own: FrontMatter = field(default_factory=FrontMatter)
    # kind -> count of the hidden characters (zero-width, bidi, tag, ...) removed from pages and metadata
    hidden: dict[str, int] = field(default_factory=dict)
    # Figures the file tags on its pages (inline XBRL), each with its page.
    facts: tuple[PageFact, ...] = ()
    # The table rows the reader found on its pages (labels, figure cells with their headers, scale, currency).
    rows: tuple[TableRow, ...] = ()
    # How the pages were cut: "file" (its own pages: PDF pages, form feeds), "page breaks" (HTML print
    # styles) or "screen" (an HTML file that marks no page: screenfuls of text).
    paged_by: str = "file"
    # What reading left out of the file (inline XBRL facts dropped, tags read as text): warnings for the build.
    notes: tuple[str, ...] = ()


def read_source(path: Path, relpath: str) -> SourceFile:
    """Pages and metadata of `path`; InputFileError names the file when it cannot be used."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise InputFileError(relpath, f"unsupported file type '{suffix or '(none)'}'")
    if path.stat().st_size == 0:
        raise InputFileError(relpath, "file is empty")
    if suffix == ".pdf":
        read = _read_pdf(path, relpath)
    elif suffix in HTML_SUFFIXES:
        read = _read_html(path, relpath)
    else:
        read = _read_text(path, relpath)
    source = _without_hidden(read)
    if not any(page.strip() for page in source.pages):
        raise InputFileError(relpath, "no extractable text (scanned image or empty pages?)")
    return source


def _without_hidden(source: SourceFile) -> SourceFile:
    """`source` with hidden characters stripped from its pages, title and summary, and counted.

    Nothing indexed, searched or shown to an LM can then carry invisible instructions or split a
    property name; the build report lists every file that had any.
    """
    found: dict[str, int] = {}

    def clean(text: str) -> str:
        cleaned, kinds = strip_hidden(text)
        for kind, count in kinds.items():
            found[kind] = found.get(kind, 0) + count
        return cleaned

    pages = tuple(clean(page) for page in source.pages)
    rows = tuple(
        dataclasses.replace(
            row,
            label=clean(row.label),
            cells=tuple(RowCell(clean(c.text), clean(c.header)) for c in row.cells),
            parents=tuple(clean(p) for p in row.parents),
            title=clean(row.title),
        )
        for row in source.rows
    )
    own = source.own.model_copy(
        update={
            "title": clean(source.own.title) if source.own.title else source.own.title,
            "summary": clean(source.own.summary) if source.own.summary else source.own.summary,
        }
    )
    if not found:
        return source
    return dataclasses.replace(source, pages=pages, rows=rows, own=own, hidden=found)


def _read_text(path: Path, relpath: str) -> SourceFile:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputFileError(relpath, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    own = FrontMatter()
    if path.suffix.lower() in (".md", ".markdown"):
        try:
            own, text = split_front_matter(text, relpath)
        except ManifestError as exc:
            raise InputFileError(relpath, str(exc)) from exc
    pages = tuple(p.strip() for p in _PAGE_BREAK.split(text))
    return SourceFile(relpath=relpath, pages=pages, own=own)


def _read_pdf(path: Path, relpath: str) -> SourceFile:
    read = read_pdf(path, relpath)
    own = FrontMatter(title=read.title, summary=read.subject)
    return SourceFile(relpath=relpath, pages=read.pages, own=own, rows=read.rows)


def _read_html(path: Path, relpath: str) -> SourceFile:
    document = read_html(path, relpath)
    own = FrontMatter(
        title=document.title, type=document.cover.form, summary=document.summary, attributes=document.attributes
    )
    return SourceFile(
        relpath,
        document.pages,
        own,
        facts=document.facts,
        rows=document.rows,
        paged_by=document.paged_by,
        notes=document.notes,
    )


# (files as (path, relpath), workers) -> each file's SourceFile or InputFileError, in the order given
SourceReader = Callable[[Sequence[tuple[Path, str]], int], Iterator["SourceFile | InputFileError"]]


def read_sources(files: Sequence[tuple[Path, str]], workers: int) -> Iterator[SourceFile | InputFileError]:
    """`read_source` of every (path, relpath), in the order given, by `workers` processes.

    A file that cannot be used yields its InputFileError in its place. PDFium is not
    thread-safe, so parallel reading takes processes; they start by spawn (a fork would copy
    the caller's threads and locks, e.g. an embedder's), and one worker reads in this process.
    """
    if workers <= 1 or len(files) <= 1:
        yield from (read_or_error(path, rel) for path, rel in files)
        return
    context = multiprocessing.get_context("spawn")
    workers = min(workers, len(files))
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)
    # At most READ_AHEAD files per process are read ahead of the caller: what waits to be written is a few
    # files' pages, whatever the corpus's size (Executor.map would read every file ahead and hold them all).
    ahead: deque[Future[SourceFile | InputFileError]] = deque()
    try:
        for path, rel in files:
            ahead.append(pool.submit(read_or_error, path, rel))
            if len(ahead) >= workers * READ_AHEAD:
                yield ahead.popleft().result()
        while ahead:
            yield ahead.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # a caller that stops early reads no further


def read_or_error(path: Path, relpath: str) -> SourceFile | InputFileError:
    """`read_source`, with the InputFileError of an unusable file returned in its place: a file a reader fails
    on in a way no reader foresaw (a parser's own error on a hostile file) is skipped and named the same way,
    so one bad file never stops a build."""
    try:
        return read_source(path, relpath)
    except InputFileError as exc:
        return exc
    except (ValueError, ArithmeticError, LookupError, TypeError, RecursionError, MemoryError) as exc:
        log.debug("reading %s failed", relpath, exc_info=True)
        return InputFileError(relpath, f"could not be read ({type(exc).__name__}: {str(exc)[:200]})")
