"""benchmarks/word_rules.py counts regular-expression calls, their alternatives and module-level phrase lists."""

from __future__ import annotations

from tests.support.scripts import load_benchmark

word_rules = load_benchmark("word_rules")

SOURCE = """
import re
_A = re.compile(r"\\b(?:cap|limit|ceiling)\\b")
WORDS = frozenset({"alpha", "beta", "gamma"})
SPLIT = frozenset("one two three four".split())
PAIR = ("x", "y")

def f(text):
    return re.sub(r"a|b", "", text) if re.search("c", text) else text
"""


def test_calls_alternatives_and_lists_of_three_or_more_strings_are_counted() -> None:
    counts = word_rules.count_source(SOURCE)
    assert counts.regex_calls == 3
    assert counts.alternatives == 3
    assert counts.phrase_lists == 2 and counts.list_entries == 7


def test_the_working_tree_is_counted_per_folder_and_in_all() -> None:
    counted = word_rules.count(None)
    assert counted["all"].regex_calls == sum(counted[f].regex_calls for f in word_rules.FOLDERS) > 0
