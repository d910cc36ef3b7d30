"""The corpus manifest (`corpus.toml`) and Markdown front matter, validated by pydantic."""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, ValidationError, model_validator

from pipeline.errors import ManifestError
from pipeline.files import read_toml_model
from pipeline.types import Strict
from pipeline.vocabulary import Vocabulary

MANIFEST_FORMAT = "scoperag-corpus/v1"
# What a document no entity owns is: outside every entity's scope, or shared by every entity.
UnownedRule = Literal["outside", "shared"]
# Who decides whose a document with declared owners is: the catalog alone, or the entity gate's text
# rules too (summary, opening, patterns, chunk backstop), for owners assigned roughly (by folder).
OwnershipRule = Literal["catalog", "text"]


def path_matches(pattern: str, relpath: str) -> bool:
    """True when `relpath` is `pattern` or matches it as a glob (case-sensitive)."""
    return pattern == relpath or fnmatch.fnmatchcase(relpath, pattern)


class EntitySpec(Strict):
    """An owning entity: `slug` is how documents refer to it."""

    slug: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    name: str = Field(min_length=1)
    aliases: list[str] = Field(default_factory=list)


class DocumentSpec(Strict):
    """Metadata for the files matched by `path` (a relative path or a glob)."""

    path: str = Field(min_length=1)
    title: str | None = None
    type: str | None = None
    summary: str | None = None
    entities: list[str] = Field(default_factory=list)
    attributes: dict[str, str] = Field(default_factory=dict)
    # For a document no entity owns: "outside" every entity's scope, or "shared" by every entity.
    unowned: UnownedRule | None = None
    # For a document with owners: the catalog decides whose it is, or the gate's text rules judge it too.
    ownership: OwnershipRule | None = None
    # The relative path of the document this one amends: read with it, owned by its owners unless given.
    amends: str | None = None


class CorpusManifest(Strict):
    """A corpus: its name, its entities, metadata rules for its documents, and its vocabulary."""

    format: Literal["scoperag-corpus/v1"]
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    entity_kind: str = "entity"
    entities: list[EntitySpec] = Field(default_factory=list)
    documents: list[DocumentSpec] = Field(default_factory=list)
    # Globs (relative to the corpus directory) of files that are not documents, e.g. a card.
    exclude: list[str] = Field(default_factory=list)
    # The corpus's own words and patterns; stored with the index, read by the guards and intake.
    vocabulary: Vocabulary = Vocabulary()
    # What a document no entity owns is by default: outside every entity's scope (a blank form, a
    # template), so a question about an entity never reads it unless its scope selects it; or shared
    # by every entity (a common annex). A document rule's `unowned` overrides this.
    unowned: UnownedRule = "outside"
    # Whose a document with declared owners is: what the catalog says ("catalog", the default), or also
    # what the entity gate's text rules read in it ("text"). A document rule's `ownership` overrides this.
    ownership: OwnershipRule = "catalog"

    @model_validator(mode="after")
    def _references_resolve(self) -> CorpusManifest:
        slugs = [e.slug for e in self.entities]
        duplicates = sorted({s for s in slugs if slugs.count(s) > 1})
        if duplicates:
            raise ValueError(f"duplicate entity slugs: {', '.join(duplicates)}")
        unknown = sorted({s for d in self.documents for s in d.entities} - set(slugs))
        if unknown:
            raise ValueError(f"documents refer to undeclared entities: {', '.join(unknown)}")
        return self

    def metadata_for(self, relpath: str) -> DocumentSpec | None:
        """The merged spec of every rule matching `relpath`; later rules win per field, attributes merge."""
        matches = [d for d in self.documents if path_matches(d.path, relpath)]
        if not matches:
            return None
        merged: dict[str, Any] = {"path": relpath}
        for spec in matches:
            for key, value in spec.model_dump(exclude={"path"}, exclude_defaults=True).items():
                merged[key] = {**merged.get(key, {}), **value} if key == "attributes" else value
        return DocumentSpec(**merged)

    def shared(self, spec: DocumentSpec | None) -> bool:
        """Whether a document with these rules, if no entity owns it, is served for every entity."""
        rule = spec.unowned if spec is not None and spec.unowned is not None else self.unowned
        return rule == "shared"

    def text_rules(self, spec: DocumentSpec | None) -> bool:
        """Whether the entity gate's text rules judge a document with these rules that has owners."""
        rule = spec.ownership if spec is not None and spec.ownership is not None else self.ownership
        return rule == "text"


class FrontMatter(Strict):
    """Metadata a Markdown file may carry between `---` lines at its top."""

    title: str | None = None
    type: str | None = None
    summary: str | None = None
    entities: list[str] = Field(default_factory=list)
    attributes: dict[str, str] = Field(default_factory=dict)


def load_manifest(path: Path) -> CorpusManifest:
    """The validated manifest at `path`; ManifestError names the file and the problem."""
    return read_toml_model(path, CorpusManifest, "corpus manifest", ManifestError)


def split_front_matter(text: str, source: str) -> tuple[FrontMatter, str]:
    """(front matter, body) of a Markdown text; an empty FrontMatter when there is none."""
    if not text.startswith("---\n"):
        return FrontMatter(), text
    end = text.find("\n---\n", 4)
    if end < 0:
        raise ManifestError(f"{source}: front matter opened with '---' but never closed")
    try:
        raw = yaml.safe_load(text[4:end]) or {}
        if not isinstance(raw, dict):
            raise ManifestError(f"{source}: front matter must be a mapping")
        return FrontMatter.model_validate(raw), text[end + 5 :]
    except (yaml.YAMLError, ValidationError) as exc:
        raise ManifestError(f"{source}: invalid front matter: {exc}") from exc
