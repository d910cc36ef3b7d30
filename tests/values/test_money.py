"""Currencies and table scales as reports write them (pipeline.values.money)."""

from __future__ import annotations

import pytest

from pipeline.values.money import currency_of, table_units


@pytest.mark.parametrize(
    ("note", "expected"),
    [
        (
            "(In millions, except number of shares which are reflected in thousands and per share amounts)",
            ("million", None),
        ),
        ("(in thousands of euros)", ("thousand", "EUR")),
        ("€m", ("million", "EUR")),
        ("£'000", ("thousand", "GBP")),
        ("US$ million", ("million", "USD")),
        ("RMB'000", ("thousand", "CNY")),
        ("($ in millions)", ("million", "USD")),
        ("(Dollars in thousands, except per share data)", ("thousand", "USD")),
        ("in millions of U.S. dollars", ("million", "USD")),
        ("HK$'000", ("thousand", "HKD")),
        ("TEUR", ("thousand", "EUR")),
        ("EUR k", ("thousand", "EUR")),
        ("Amounts in EUR", (None, "EUR")),
        ("Year ended 31 December 2023 $m", ("million", "USD")),
        ("EURm", ("million", "EUR")),
        ("(USDm)", ("million", "USD")),
        ("SEKbn", ("billion", "SEK")),
    ],
)
def test_table_units_reads_the_notes_reports_write(note: str, expected: tuple[str | None, str | None]) -> None:
    assert table_units(note) == expected


@pytest.mark.parametrize(
    "text", ["Net sales $81,797 million", "Revenue 1,234 m", "Section 12(b) of the Act", "EURO STOXX", "USDA grants"]
)
def test_a_figure_is_no_table_note(text: str) -> None:
    assert table_units(text) == (None, None)


def test_currency_of_signs_codes_and_words() -> None:
    assert currency_of("(1.2) €") == "EUR"
    assert currency_of("in euros") == "EUR"
    assert currency_of("HK$ 5") == "HKD"
    assert currency_of("no money here") is None
