"""Building an index generation from a source directory (read, chunk, catalog, index, publish)."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from pipeline.entities import shared_names
from pipeline.errors import InputFileError, ManifestError
from pipeline.files import sha256_file
from pipeline.guards.sanitise import sanitised_text
from pipeline.retrieval.bm25 import BM25Builder, BM25Index
from pipeline.retrieval.dense import DenseIndex, DenseKind
from pipeline.settings import BuildSettings
from pipeline.store.catalog import SKIPPED_KEY, VOCABULARY_KEY, CatalogWriter, document_id, entity_id
from pipeline.store.chunking import extractive_summary
from pipeline.store.corpus import CorpusManifest, DocumentSpec, load_manifest, path_matches
from pipeline.store.document_cache import CACHE_NAME as DOCUMENT_CACHE_NAME
from pipeline.store.document_cache import DocumentCache, derivation_key, derive
from pipeline.store.embedders import Embedder
from pipeline.store.embedding import IncrementalEmbedding
from pipeline.store.generations import IndexManifest, build_lock, new_scratch_dir, publish_generation
from pipeline.store.index import document_search_text
from pipeline.store.name_words import NameWordCounter
from pipeline.store.pages import PageTexts
from pipeline.store.profile import DocumentProfile, is_title, profile_document
from pipeline.store.reading import HTML_SUFFIXES, SourceFile, SourceReader, read_or_error, read_sources
from pipeline.store.vector_cache import CACHE_NAME, VectorCache
from pipeline.types import Chunk, Document, Entity
from pipeline.vocabulary import dump_vocabulary

log = logging.getLogger(__name__)

MANIFEST_FILENAME = "corpus.toml"
# Below this many bytes of PDF (or of HTML, which reads ~10x faster per byte), starting reading
# processes costs more than it saves.
PARALLEL_READ_MIN_PDF_BYTES = 2_000_000
PARALLEL_READ_MIN_HTML_BYTES = 20_000_000


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
    # (a name, the entities that all go by it): a question using it is asked which one it means
    shared_names: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # files that mark no page (HTML without page breaks): paged by screenfuls of text
    screen_paged: tuple[str, ...] = ()
    # files not read again: their pages, chunks and terms came from the document cache
    reused: int = 0
    # (word, entity name) of one-word names other organisations' documents also write: they name their entity
    # alone only when written in capitals ("MGM"), else with more of the name
    too_common: tuple[tuple[str, str], ...] = ()


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
    named = [Entity(entity_id(corpus.name, e.slug), e.slug, e.name, tuple(e.aliases)) for e in corpus.entities]
    shared = tuple(shared_names(named))
    for phrase, holders in shared:
        log.warning("the name %r is given to %s: a question using it is asked which one", phrase, " and ".join(holders))
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
        derived = DocumentCache(out_dir / DOCUMENT_CACHE_NAME)
        try:
            with IncrementalEmbedding(embedder, cache, settings.embed_batch, _embed_progress(progress)) as chunks:
                read = _write_catalog(
                    scratch / "catalog.sqlite", corpus, files, settings, progress, strict, chunks, reader, derived
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
                read.chunk_terms,
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
                        "chunks": read.chunks,
                        "skipped": len(read.skipped),
                        "hidden_characters_removed": sum(sum(kinds.values()) for _, kinds in read.hidden),
                    },
                    "settings": {"chunk_words": settings.chunk_words, "chunk_overlap": settings.chunk_overlap},
                },
                dense_kind=settings.dense_kind,
                progress=progress,
                pages=read.page_texts,
            )
            # Published: the caches keep what this generation holds and nothing older.
            cache.keep_only([*chunks.keys, *documents.keys])
            derived.keep_only(read.cache_keys)
        finally:
            cache.close()
            derived.close()
    return BuildReport(
        manifest,
        len(read.document_texts),
        read.chunks,
        tuple(read.skipped),
        unmatched,
        tuple(read.hidden),
        pages=read.pages,
        embedded=chunks.embedded + documents.embedded,
        shared_names=shared,
        screen_paged=tuple(read.screen_paged),
        reused=read.reused,
        too_common=tuple(read.too_common),
    )


def _embed_progress(progress: Progress | None) -> Callable[[int, int], None] | None:
    if progress is None:
        return None
    report = progress
    return lambda done, total: report("embed", done, total, "chunks", rate_of=(done, "chunks"))


def read_workers(files: list[tuple[Path, str]], settings: BuildSettings) -> int:
    """How many processes read `files`: every core (or `settings.read_workers`) once PDFs make it worth it."""
    pdf_bytes = sum(p.stat().st_size for p, r in files if r.lower().endswith(".pdf"))
    html_bytes = sum(p.stat().st_size for p, r in files if r.lower().endswith(HTML_SUFFIXES))
    if pdf_bytes / PARALLEL_READ_MIN_PDF_BYTES + html_bytes / PARALLEL_READ_MIN_HTML_BYTES < 1:
        return 1
    return settings.read_workers or len(os.sched_getaffinity(0))


@dataclass
class _Read:
    """What reading the files gave: what to index (the chunks' and pages' index terms as BM25 rows, streamed in
    file by file; the chunk texts went to the catalog and the embedder), and the files skipped or cleaned."""

    chunks: int = 0
    chunk_terms: BM25Builder = field(default_factory=BM25Builder)
    document_texts: list[str] = field(default_factory=list)
    page_texts: PageTexts = field(default_factory=PageTexts)
    skipped: list[InputFileError] = field(default_factory=list)
    # relative path -> why it was skipped (what the catalog keeps)
    skipped_paths: dict[str, str] = field(default_factory=dict)
    hidden: list[tuple[str, dict[str, int]]] = field(default_factory=list)
    pages: int = 0
    screen_paged: list[str] = field(default_factory=list)
    # document-cache keys of the files read (what the cache keeps after publishing)
    cache_keys: list[str] = field(default_factory=list)
    # files whose derivation came from the document cache
    reused: int = 0
    # (word, entity name) of one-word names other organisations' documents also write
    too_common: list[tuple[str, str]] = field(default_factory=list)


def _write_catalog(
    path: Path,
    corpus: CorpusManifest,
    files: list[tuple[Path, str]],
    settings: BuildSettings,
    progress: Progress | None,
    strict: bool,
    embedding: IncrementalEmbedding,
    reader: SourceReader,
    cache: DocumentCache,
) -> _Read:
    """Read every file into a new catalog at `path` (documents, entities, chunks), queueing chunks to embed.

    A file whose derivation the document cache holds (same bytes, settings, entity names and owners) is
    not read again; the others are read by `reader`, ahead of this process, which writes the catalog.
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
    digests = [sha256_file(p) for p, _ in files]
    names_digest, words, overlap = name_words.digest, settings.chunk_words, settings.chunk_overlap
    keys = []
    for (_, rel), digest in zip(files, digests, strict=True):
        # the owners the manifest gives (a file's own front matter is in its digest)
        owners = [entities[s].entity_id for s in _manifest_owners(corpus, corpus.metadata_for(rel)) if s in entities]
        keys.append(derivation_key(digest, rel, words, overlap, names_digest, owners))
    stored = cache.present(keys)
    sources = reader(
        missing := [f for f, k in zip(files, keys, strict=True) if k not in stored], read_workers(missing, settings)
    )
    for done, ((source_path, rel), digest, key) in enumerate(zip(files, digests, keys, strict=True), start=1):
        derived = cache.get(key) if key in stored else None
        if derived is not None:
            source: SourceFile | InputFileError = derived.source
            read.reused += 1
        else:
            source = next(sources) if key not in stored else read_or_error(source_path, rel)
        read.pages += 0 if isinstance(source, InputFileError) else len(source.pages)
        if progress:
            progress("read", done, len(files), f"{read.pages} pages", rate_of=(read.pages, "pages"))
        if isinstance(source, InputFileError):
            if strict:
                raise source
            log.warning("skipped %s", source)
            read.skipped.append(source)
            read.skipped_paths[rel] = source.reason
            continue
        for note in source.notes:
            log.warning("%s: %s", rel, note)
        if source.hidden:
            log.warning("%s: removed hidden characters %s", rel, source.hidden)
            read.hidden.append((rel, source.hidden))
        spec = corpus.metadata_for(rel)
        profile = profile_document(source.pages)
        document = _document(corpus, spec, entities, source, profile)
        if derived is None:
            derived = derive(source, words, overlap, name_words, document.entity_ids)
            cache.put(key, derived)
        read.cache_keys.append(key)
        row_start = read.chunks
        chunks = [
            Chunk(row_start + i, document.document_id, p.page, p.ordinal, p.text) for i, p in enumerate(derived.chunks)
        ]
        summary_source = "metadata" if _summary_of(spec, source) else "profile" if profile.description else "extractive"
        writer.add_document(document, summary_source, digest, row_start, len(read.document_texts))
        writer.add_chunks(chunks)
        writer.add_facts(document.document_id, source.facts)
        writer.add_rows(document.document_id, source.rows)
        if source.paged_by == "screen":
            read.screen_paged.append(rel)
        name_words.record(derived.ordinary, derived.foreign)
        read.chunks += len(chunks)
        for terms in derived.chunk_terms:
            read.chunk_terms.add(terms.split())
        read.page_texts.add_known([(p, terms.split(), share) for p, terms, share in derived.page_terms], chunks)
        embedding.add([c.text for c in chunks])
        read.document_texts.append(document_search_text(document.filename, document.title, document.summary))
    # A labelled example or a question naming a skipped file is told why it is not in the index.
    writer.set_meta(SKIPPED_KEY, json.dumps(read.skipped_paths, sort_keys=True))
    # The stored vocabulary adds what the corpus text says about its entities' name words.
    writer.set_meta(VOCABULARY_KEY, dump_vocabulary(name_words.vocabulary(corpus.vocabulary)))
    read.too_common = name_words.too_common(entities.values())
    for word, name in read.too_common:
        log.info("the name %r of %s is written in other organisations' documents too", word, name)
    for key, value in (("corpus", corpus.name), ("entity_kind", corpus.entity_kind)):
        writer.set_meta(key, value)
    writer.close()
    return read


def finish_generation(
    out_dir: Path,
    scratch: Path,
    chunks: BM25Builder | Sequence[str],
    document_texts: list[str],
    chunk_vectors: np.ndarray,
    document_vectors: np.ndarray,
    fields: dict[str, object],
    dense_kind: DenseKind | None = None,
    progress: Progress | None = None,
    pages: PageTexts | None = None,
) -> IndexManifest:
    """Write the dense and BM25 indexes (and the page index when `pages` are given) beside a
    finished catalog in `scratch`, then publish. `chunks` are the chunks' BM25 rows as a build streamed them
    in, or their texts (tokenised here)."""
    names = [
        f"dense index of {len(chunk_vectors):,} chunks",
        "dense index of documents",
        f"BM25 of {len(chunk_vectors):,} chunks",
        "BM25 of documents",
        *([f"page index of {len(pages.first_rows):,} pages"] if pages is not None else []),
        "publish",
    ]
    steps = iter(range(len(names)))

    def next_step() -> None:
        if progress:
            done = next(steps)
            progress("index", done, len(names), names[done])

    next_step()

    def added(done: int, total: int) -> None:
        if progress:
            progress("index", 0, len(names), f"{names[0]} ({done:,} of {total:,} added)")

    dense = DenseIndex.build(chunk_vectors, dense_kind, added)
    dense.save(scratch / "chunks_dense")
    next_step()
    DenseIndex.build(document_vectors, "flat").save(scratch / "documents_dense")
    next_step()
    chunk_bm25 = chunks.build() if isinstance(chunks, BM25Builder) else BM25Index.build(chunks)
    chunk_bm25.save(scratch / "chunks_bm25")
    next_step()
    BM25Index.build(document_texts).save(scratch / "documents_bm25")
    if pages is not None:
        next_step()
        pages.save(scratch)
    next_step()
    published = publish_generation(out_dir, scratch, {**fields, "dense_kind": dense.kind})
    if progress:
        progress("index", len(names), len(names), "published")
    return published


def _is_excluded(relpath: str, patterns: set[str]) -> bool:
    return any(path_matches(p, relpath) for p in patterns)


# The attribute a document's period end is kept under when its first pages state one and neither
# the manifest nor the file sets it.
PERIOD_END_ATTRIBUTE = "period_end"
SUMMARY_CHARS = 360
# A title and a summary are display text from the moment they are read (a PDF's /Title, front matter, the
# manifest): sanitised once here, so the catalog, search, the API and every screen hold the same safe text.
MAX_TITLE_CHARS = 300
MAX_SUMMARY_CHARS = 2000


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


def _manifest_owners(corpus: CorpusManifest, spec: DocumentSpec | None) -> list[str]:
    """The entity slugs the manifest gives a document: its own rules', else (an amendment) those of the
    document it amends."""
    if spec is None:
        return []
    if spec.entities:
        return list(spec.entities)
    base = corpus.metadata_for(spec.amends) if spec.amends else None
    return list(base.entities) if base else []


def _document(
    corpus: CorpusManifest,
    spec: DocumentSpec | None,
    entities: dict[str, Entity],
    source: SourceFile,
    profile: DocumentProfile,
) -> Document:
    """Catalog record of a source (`spec`: its manifest rules, which win over the file's own metadata;
    metadata that is no title, such as an accession number or a form code alone, gives way to what
    the first pages say: `profile`). An amendment no rule gives owners is owned by the owners of the
    document it amends."""
    own = source.own
    declared = _manifest_owners(corpus, spec)
    slugs = (spec.entities if spec and spec.entities else None) or own.entities or declared
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
        document_id=document_id(corpus.name, source.relpath),
        filename=Path(source.relpath).name,
        relpath=source.relpath,
        title=sanitised_text(title, MAX_TITLE_CHARS) or Path(source.relpath).stem,
        summary=sanitised_text(_summary_of(spec, source) or _made_summary(profile, source.pages), MAX_SUMMARY_CHARS),
        doc_type=(spec.type if spec and spec.type else None) or own.type or "document",
        page_count=len(source.pages),
        entity_ids=tuple(entities[s].entity_id for s in slugs),
        attributes=tuple(sorted(attributes.items())),
        opening=profile.opening,
        outside=not slugs and not corpus.shared(spec),
        text_rules=bool(slugs) and corpus.text_rules(spec),
        amends=document_id(corpus.name, spec.amends) if spec and spec.amends else None,
    )
