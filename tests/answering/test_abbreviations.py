"""Line items' abbreviations written out, and lists of line items split between items, never inside one."""

from __future__ import annotations

import pytest

from pipeline.answering.abbreviations import expand_abbreviations, line_items


def test_abbreviations_are_written_out_as_whole_words_only() -> None:
    assert expand_abbreviations("Intel's R&D and SG&A, and capex") == (
        "Intel's research and development and selling, general and administrative, and capital expenditures"
    )
    # not inside another word or another abbreviation
    assert expand_abbreviations("AR&D and PP&E") == "AR&D and property, plant and equipment"


@pytest.mark.parametrize(
    ("phrase", "items"),
    [
        (
            "research and development and selling, general and administrative expenses",
            ["research and development", "selling, general and administrative"],
        ),
        (
            "research and development, sales and marketing, and general and administrative expenses",
            ["research and development", "sales and marketing", "general and administrative"],
        ),
        (
            "research and development and marketing, general, and administrative expenses",
            ["research and development", "marketing, general and administrative"],
        ),
        ("net product sales and net service sales", ["net product sales", "net service sales"]),
        ("revenue", ["revenue"]),
    ],
)
def test_a_list_is_split_between_its_line_items(phrase: str, items: list[str]) -> None:
    assert line_items(phrase) == items
