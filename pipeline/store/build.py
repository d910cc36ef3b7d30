"""Building an index generation from a source directory (read, chunk, catalog, index, publish)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from pipeline.errors import InputFileError, ManifestError
from pipeline.files import sha256_file
from pipeline.retrieval.bm25 import BM25Index
from pipeline.retrieval.dense import DenseIndex, DenseKind
from pipeline.settings import BuildSettings
from pipeline.store.catalog import VOCABULARY_KEY, CatalogWriter, document_id, entity_id
from pipeline.store.chunking import chunk_pages, extractive_summary
from pipeline.store.corpus import CorpusManifest, DocumentSpec, load_manifest, path_matches
from pipeline.store.embedders import Embedder
from pipeline.store.embedding import IncrementalEmbedding
from pipeline.store.generations import IndexManifest, build_lock, new_scratch_dir, publish_generation
from pipeline.store.index import document_search_text
from pipeline.store.name_words import NameWordCounter
from pipeline.store.pages import PageTexts
from pipeline.store.profile import DocumentProfile, is_title, profile_document
from pipeline.store.reading import SourceFile, SourceReader, read_sources
from pipeline.store.vector_cache import CACHE_NAME, VectorCache
from pipeline.types import Chunk, Document, Entity
from pipeline.vocabulary import dump_vocabulary

log = logging.getLogger(__name__)

MANIFEST_FILENAME = "corpus.toml"
# Below this many bytes of PDF, starting reading processes costs more than it saves.
PARALLEL_READ_MIN_PDF_BYTES = 2_000_000


class Progress(Protocol):
    """(stage, done, total, note, rate_of): stages "read" (files), "embed" (chunks), "index".

    `rate_of` is (count, unit) of the work done so far in the stage, e.g. (pages, "pages"),
    for a display that shows a rate.
    """

    def __call__(
        self, stage: str, done: int, total: int | None, note: str = "", rate_of: tuple[int, str] | None = None
    ) -> None: ...


@dataclass(frozen=True)
class BuildReport:
    """What a build did: the published manifest, counts, skipped files with reasons."""

    manifest: IndexManifest
    documents: int
    chunks: int
    skipped: tuple[InputFileError, ...]
    unmatched_rules: tuple[str, ...]
    # (relpath, {kind: count}) of every file whose hidden characters were removed at reading
    hidden: tuple[tuple[str, dict[str, int]], ...] = ()
    pages: int = 0
    # texts (chunks and document summaries) the embedder computed; the rest came from the vector cache
    embedded: int = 0


def _discover(source_dir: Path, manifest_path: Path | None) -> list[tuple[Path, str]]:
    """(path, relpath) of candidate files, sorted; hidden files, the manifest used and the folder's own
    manifest excluded (a manifest given from elsewhere replaces the folder's, which is no document)."""
    found = []
    manifests = {(source_dir / MANIFEST_FILENAME).resolve()}
    if manifest_path is not None:
        manifests.add(manifest_path.resolve())
    for path in sorted(source_dir.rglob("*")):
        rel = path.relative_to(source_dir).as_posix()
        if not path.is_file() or any(part.startswith(".") for part in Path(rel).parts):
            continue
        if path.resolve() in manifests:
            continue
        found.append((path, rel))
    return found


def _default_manifest(source_dir: Path) -> CorpusManifest:
    return CorpusManifest(format="scoperag-corpus/v1", name=source_dir.resolve().name or "corpus")


def build_index(
    source_dir: Path,
    out_dir: Path,
    embedder: Embedder,
    manifest_path: Path | None = None,
    settings: BuildSettings | None = None,
    progress: Progress | None = None,
    strict: bool = False,
    reader: SourceReader = read_sources,
    allow_unmatched: bool = False,
) -> BuildReport:
    """Index every supported file under `source_dir` into a new generation of `out_dir`.

    A manifest rule that matches no file under `source_dir` (most often: the manifest's folder given
    instead of the documents') is a ManifestError before anything is written, unless `allow_unmatched`.

    Unreadable files are skipped and listed in the report (or raise when `strict`). The
    previous generation stays published until the new one is complete; one build at a time may
    write into `out_dir` (IndexBusyError for a second). `reader` reads the files (default: local
    processes; pipeline.store.fanout reads them on Ray); this process alone writes and publishes.
    """
    settings = settings or BuildSettings()
    if not source_dir.is_dir():
        raise ManifestError(f"source directory {source_dir} does not exist")
    own = source_dir / MANIFEST_FILENAME
    if manifest_path is None and own.is_file():
        manifest_path = own
    elif manifest_path is not None and own.is_file() and manifest_path.resolve() != own.resolve():
        log.info("using the manifest %s; %s is not read", manifest_path, own)
    corpus = load_manifest(manifest_path) if manifest_path else _default_manifest(source_dir)
    excluded = set(corpus.exclude)
    files = [(p, r) for p, r in _discover(source_dir, manifest_path) if not _is_excluded(r, excluded)]
    unmatched = tuple(d.path for d in corpus.documents if not any(path_matches(d.path, r) for _, r in files))
    if not files:
        raise ManifestError(f"no files to index under {source_dir}")
    if unmatched and not allow_unmatched:
        raise ManifestError(
            f"{len(unmatched)} of the {len(corpus.documents)} rules of the manifest {manifest_path} match no file "
            f"under {source_dir} ({', '.join(unmatched[:5])}{', ...' if len(unmatched) > 5 else ''}): is "
            f"{source_dir} the folder holding the documents? Name that folder, or pass --allow-unmatched to "
            "build without them"
        )
    with build_lock(out_dir):
        scratch = new_scratch_dir(out_dir)
        cache = VectorCache(out_dir / CACHE_NAME, embedder.name, embedder.dim)
        try:
            with IncrementalEmbedding(embedder, cache, settings.embed_batch, _embed_progress(progress)) as chunks:
                read = _write_catalog(
                    scratch / "catalog.sqlite", corpus, files, settings, progress, strict, chunks, reader
                )
                if not read.document_texts:
                    raise ManifestError(f"none of the {len(files)} files under {source_dir} could be read")
                chunk_vectors = chunks.finish()
            with IncrementalEmbedding(embedder, cache, settings.embed_batch) as documents:
                documents.add(read.document_texts)
                document_vectors = documents.finish()
            manifest = finish_generation(
                out_dir,
                scratch,
                read.chunk_texts,
                read.document_texts,
                chunk_vectors,
                document_vectors,
                {
                    "corpus": corpus.name,
                    "source": str(source_dir.resolve()),
                    "embedder": embedder.name,
                    "embedding_dim": embedder.dim,
                    "counts": {
                        "documents": len(read.document_texts),
                        "chunks": len(read.chunk_texts),
                        "skipped": len(read.skipped),
                        "hidden_characters_removed": sum(sum(kinds.values()) for _, kinds in read.hidden),
                    },
                    "settings": {"chunk_words": settings.chunk_words, "chunk_overlap": settings.chunk_overlap},
                },
                dense_kind=settings.dense_kind,
                progress=progress,
                pages=read.page_texts,
            )
            # Published: the cache keeps what this generation holds and nothing older.
            cache.keep_only([*chunks.keys, *documents.keys])
        finally:
            cache.close()
    return BuildReport(
        manifest,
        len(read.document_texts),
        len(read.chunk_texts),
        tuple(read.skipped),
        unmatched,
        tuple(read.hidden),
        pages=read.pages,
        embedded=chunks.embedded + documents.embedded,
    )


def _embed_progress(progress: Progress | None) -> Callable[[int, int], None] | None:
    if progress is None:
        return None
    report = progress
    return lambda done, total: report("embed", done, total, "chunks", rate_of=(done, "chunks"))


def read_workers(files: list[tuple[Path, str]], settings: BuildSettings) -> int:
    """How many processes read `files`: every core (or `settings.read_workers`) once PDFs make it worth it."""
    pdf_bytes = sum(p.stat().st_size for p, r in files if r.lower().endswith(".pdf"))
    if pdf_bytes < PARALLEL_READ_MIN_PDF_BYTES:
        return 1
    return settings.read_workers or len(os.sched_getaffinity(0))


@dataclass
class _Read:
    """What reading the files gave: texts to index, and the files skipped or cleaned."""

    chunk_texts: list[str] = field(default_factory=list)
    document_texts: list[str] = field(default_factory=list)
    page_texts: PageTexts = field(default_factory=lambda: PageTexts([], []))
    skipped: list[InputFileError] = field(default_factory=list)
    hidden: list[tuple[str, dict[str, int]]] = field(default_factory=list)
    pages: int = 0


def _write_catalog(
    path: Path,
    corpus: CorpusManifest,
    files: list[tuple[Path, str]],
    settings: BuildSettings,
    progress: Progress | None,
    strict: bool,
    embedding: IncrementalEmbedding,
    reader: SourceReader,
) -> _Read:
    """Read every file into a new catalog at `path` (documents, entities, chunks), queueing chunks to embed.

    Reading processes run ahead while this one writes the catalog and embeds.
    """
    entities = {
        spec.slug: Entity(entity_id(corpus.name, spec.slug), spec.slug, spec.name, tuple(spec.aliases))
        for spec in corpus.entities
    }
    writer = CatalogWriter(path, corpus.vocabulary)
    for entity in entities.values():
        writer.add_entity(entity, corpus.entity_kind)
    name_words = NameWordCounter(entities.values(), corpus.vocabulary)
    read = _Read()
    if progress:
        progress("read", 0, len(files), "0 pages", rate_of=(0, "pages"))
    sources = reader(files, read_workers(files, settings))
    for done, ((source_path, rel), source) in enumerate(zip(files, sources, strict=True), start=1):
        read.pages += 0 if isinstance(source, InputFileError) else len(source.pages)
        if progress:
            progress("read", done, len(files), f"{read.pages} pages", rate_of=(read.pages, "pages"))
        if isinstance(source, InputFileError):
            if strict:
                raise source
            log.warning("skipped %s", source)
            read.skipped.append(source)
            continue
        if source.hidden:
            log.warning("%s: removed hidden characters %s", rel, source.hidden)
            read.hidden.append((rel, source.hidden))
        spec = corpus.metadata_for(rel)
        profile = profile_document(source.pages)
        document = _document(corpus.name, corpus.shared(spec), spec, entities, source, profile)
        pieces = chunk_pages(source.pages, settings.chunk_words, settings.chunk_overlap)
        row_start = len(read.chunk_texts)
        chunks = [Chunk(row_start + i, document.document_id, p.page, p.ordinal, p.text) for i, p in enumerate(pieces)]
        summary_source = "metadata" if _summary_of(spec, source) else "profile" if profile.description else "extractive"
        writer.add_document(document, summary_source, sha256_file(source_path), row_start, len(read.document_texts))
        writer.add_chunks(chunks)
        name_words.add(source.pages, document.entity_ids)
        read.chunk_texts.extend(c.text for c in chunks)
        read.page_texts.add(source.pages, chunks)
        embedding.add([c.text for c in chunks])
        read.document_texts.append(document_search_text(document.filename, document.title, document.summary))
    # The stored vocabulary adds what the corpus text says about its entities' name words.
    writer.set_meta(VOCABULARY_KEY, dump_vocabulary(name_words.vocabulary(corpus.vocabulary)))
    for key, value in (("corpus", corpus.name), ("entity_kind", corpus.entity_kind)):
        writer.set_meta(key, value)
    writer.close()
    return read


def finish_generation(
    out_dir: Path,
    scratch: Path,
    chunk_texts: list[str],
    document_texts: list[str],
    chunk_vectors: np.ndarray,
    document_vectors: np.ndarray,
    fields: dict[str, object],
    dense_kind: DenseKind | None = None,
    progress: Progress | None = None,
    pages: PageTexts | None = None,
) -> IndexManifest:
    """Write the dense and BM25 indexes (and the page index when `pages` are given) beside a
    finished catalog in `scratch`, then publish."""
    if progress:
        progress("index", 0, 1)
    dense = DenseIndex.build(chunk_vectors, dense_kind)
    dense.save(scratch / "chunks_dense")
    DenseIndex.build(document_vectors, "flat").save(scratch / "documents_dense")
    BM25Index.build(chunk_texts).save(scratch / "chunks_bm25")
    BM25Index.build(document_texts).save(scratch / "documents_bm25")
    if pages is not None:
        pages.save(scratch)
    if progress:
        progress("index", 1, 1)
    return publish_generation(out_dir, scratch, {**fields, "dense_kind": dense.kind})


def _is_excluded(relpath: str, patterns: set[str]) -> bool:
    return any(path_matches(p, relpath) for p in patterns)


# The attribute a document's period end is kept under when its first pages state one and neither
# the manifest nor the file sets it.
PERIOD_END_ATTRIBUTE = "period_end"
SUMMARY_CHARS = 360


def _summary_of(spec: DocumentSpec | None, source: SourceFile) -> str | None:
    """The summary the manifest or the file gives when it describes the document, else None (then
    one is made from the first pages)."""
    if spec and spec.summary:
        return spec.summary
    own = source.own.summary
    return own if is_title(own, source.relpath) else None


def _made_summary(profile: DocumentProfile, pages: tuple[str, ...]) -> str:
    """What the first pages say the document is, then its first substantive sentences (capped)."""
    description = profile.description
    if not description:
        return extractive_summary(pages, SUMMARY_CHARS)
    rest = SUMMARY_CHARS - len(description) - 2
    body = extractive_summary(pages, rest) if rest > 40 else ""
    return f"{description}. {body}".strip()


def _document(
    corpus: str,
    corpus_shared: bool,
    spec: DocumentSpec | None,
    entities: dict[str, Entity],
    source: SourceFile,
    profile: DocumentProfile,
) -> Document:
    """Catalog record of a source (`spec`: its manifest rules, which win over the file's own metadata;
    metadata that is no title, such as an accession number or a form code alone, gives way to what
    the first pages say: `profile`)."""
    own = source.own
    slugs = (spec.entities if spec and spec.entities else None) or own.entities
    unknown = [s for s in slugs if s not in entities]
    if unknown:
        raise ManifestError(f"{source.relpath}: unknown entities {', '.join(unknown)} in front matter")
    attributes = {**own.attributes, **(spec.attributes if spec else {})}
    if profile.period_end and PERIOD_END_ATTRIBUTE not in attributes:
        attributes[PERIOD_END_ATTRIBUTE] = profile.period_end
    own_title = own.title if is_title(own.title, source.relpath) else None
    title = (
        (spec.title if spec and spec.title else None) or own_title or profile.description or Path(source.relpath).stem
    )
    return Document(
        document_id=document_id(corpus, source.relpath),
        filename=Path(source.relpath).name,
        relpath=source.relpath,
        title=title,
        summary=_summary_of(spec, source) or _made_summary(profile, source.pages),
        doc_type=(spec.type if spec and spec.type else None) or own.type or "document",
        page_count=len(source.pages),
        entity_ids=tuple(entities[s].entity_id for s in slugs),
        attributes=tuple(sorted(attributes.items())),
        opening=profile.opening,
        outside=not slugs and not corpus_shared,
    )
