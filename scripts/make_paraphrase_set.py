"""The paraphrase set (datasets/paraphrases): labelled questions re-worded by hand, to measure whether the same
meaning gets the same answer.

Run from the repository root:

    python scripts/make_paraphrase_set.py            # write the set from datasets/paraphrases/wordings.jsonl
    python scripts/make_paraphrase_set.py --pick     # print the originals the selection rule picks (to author)

`datasets/paraphrases/wordings.jsonl` holds the hand-written paraphrases, one a line: the id of the original
example (`of`), its set (`sec-10q`, `edgar-typed`, `cuad`, `erc-round1`), the paraphrase split (`dev`, `test`),
`n` (1 or 2) and the `question`. For every original named there, the script writes the original (its labels
unchanged; its split the paraphrase split) and its two paraphrases as new examples with the original's labels
(scope, gold documents and pages, facts, spans, expected value, forbidden documents, ...) and the new question;
the id is the content hash of corpus, question and scope (`make_example`). Tags added: `paraphrase_set:<set>`,
`phrasing:original|p1|p2` and `meaning:<original id>` (the group to compare answers over).

Writes `datasets/paraphrases/{train,dev,test}.jsonl` (train empty, so `load_example_set` reads the folder) and
per set `dev-<set>.jsonl`, `test-<set>.jsonl`: each corpus needs its own index. Stops when a wording names an
id the sources do not hold, repeats its original, or when a meaning lacks one of its two paraphrases.

The selection rule (`--pick`): per set and split, the source examples sorted by id and shuffled by
random.Random(SEED); 15 picks (10 for ERC) cycling over scope cases (CASE_CYCLE) and kinds of question (at most
MAX_ABSENT of kind "absent"), each pick the first example of its case and kind whose question text is not picked
yet, preferring one whose category (CUAD's clause, ERC's) is not picked yet. ERC has one split: its 40
questions sorted by id, even positions for dev, odd for test.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pipeline.evaluation.examples import (  # noqa: E402
    LabelledExample,
    load_examples,
    make_example,
    write_example_set,
    write_examples,
)

OUT = ROOT / "datasets" / "paraphrases"
WORDINGS = OUT / "wordings.jsonl"
SEED = 20261205
SETS = ("sec-10q", "edgar-typed", "cuad", "erc-round1")
PARAPHRASE_SPLITS = ("dev", "test")
# The source trace file of each set and paraphrase split (ERC's one file serves both, halved by id).
SOURCES: dict[str, dict[str, Path]] = {
    "sec-10q": {s: ROOT / "datasets" / "sec-10q" / "traces" / f"{s}.jsonl" for s in PARAPHRASE_SPLITS},
    "edgar-typed": {s: ROOT / "datasets" / "edgar" / "typed" / f"{s}.jsonl" for s in PARAPHRASE_SPLITS},
    "cuad": {s: ROOT / "datasets" / "cuad" / "traces" / f"{s}.jsonl" for s in PARAPHRASE_SPLITS},
    "erc-round1": {s: ROOT / "datasets" / "erc-round1" / "traces" / "dev.jsonl" for s in PARAPHRASE_SPLITS},
}
PICKS = {"sec-10q": 15, "edgar-typed": 15, "cuad": 15, "erc-round1": 10}
# Scope cases in pick order: of 15, chip 5, property 4, no scope 3, wrong property 3.
CASE_CYCLE = (
    "chip",
    "property",
    "no_scope",
    "wrong_property",
    "chip",
    "property",
    "no_scope",
    "chip",
    "property",
    "wrong_property",
    "chip",
    "no_scope",
    "property",
    "chip",
    "wrong_property",
)
# At most this many picks of a kind whose answer is "not stated" (most picks should be answerable).
MAX_ABSENT = 2


class WordingError(Exception):
    """A wording the set cannot be made from."""


def source_examples(name: str, split: str) -> list[LabelledExample]:
    """The examples a set's paraphrase split draws its originals from (ERC: its half of the 40 questions)."""
    examples = load_examples(SOURCES[name][split])
    if name != "erc-round1":
        return examples
    ordered = sorted(examples, key=lambda e: e.id)
    return ordered[0::2] if split == "dev" else ordered[1::2]


def kind_of(name: str, example: LabelledExample, facts_by_question: dict[str, int]) -> str:
    """The kind of question, for spreading the picks: figure, computed, yes/no, name, comparison, clause, absent."""
    tags = set(example.tags)
    if name == "sec-10q":
        if "computed" in tags:
            return "computed"
        if "absent_in_scope" in tags:
            return "absent"
        return "figure" if facts_by_question.get(example.question, 0) and "chunk:table" in tags else "text"
    if name == "edgar-typed":
        kind = next((t.split(":", 1)[1] for t in example.tags if t.startswith("kind:")), "other")
        return "computed" if kind == "number" and "margin" in tags else kind
    if name == "cuad":
        if "kind:boolean" in tags:
            return "yes_no"
        if "absent_in_scope" in tags:
            return "absent"
        return "value" if facts_by_question.get(example.question, 0) else "clause"
    return next((t.split(":", 1)[1] for t in example.tags if t.startswith("category:")), "other")


def category_of(example: LabelledExample) -> str | None:
    """The clause category (CUAD) or question category (ERC) an example is tagged with."""
    return next((t.split(":", 1)[1] for t in example.tags if t.startswith("category:")), None)


def pick(name: str, split: str) -> list[LabelledExample]:
    """The originals the selection rule picks for a set and paraphrase split (deterministic)."""
    examples = sorted(source_examples(name, split), key=lambda e: e.id)
    random.Random(SEED).shuffle(examples)
    facts: dict[str, int] = Counter()
    for example in examples:
        facts[example.question] = max(facts[example.question], len(example.answer_facts))
    kinds = sorted({kind_of(name, e, facts) for e in examples})
    picked: list[LabelledExample] = []
    used: set[str] = set()
    taken: Counter[str] = Counter()
    categories: set[str | None] = set()
    for i in range(PICKS[name]):
        case = CASE_CYCLE[i % len(CASE_CYCLE)]
        rotated = kinds[i % len(kinds) :] + kinds[: i % len(kinds)]
        choice = None
        for wanted_case in (case, None):
            for kind, fresh in ((k, f) for k in rotated for f in (True, False)):
                if kind == "absent" and taken[kind] >= MAX_ABSENT:
                    continue
                choice = next(
                    (
                        e
                        for e in examples
                        if e.question not in used
                        and (wanted_case is None or e.case == wanted_case)
                        and kind_of(name, e, facts) == kind
                        and not (fresh and category_of(e) in categories)
                    ),
                    None,
                )
                if choice is not None:
                    break
            if choice is not None:
                break
        if choice is None:
            break
        picked.append(choice)
        used.add(choice.question)
        taken[kind_of(name, choice, facts)] += 1
        categories.add(category_of(choice))
    return picked


def read_wordings(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        row = json.loads(line)
        missing = {"of", "set", "split", "n", "question"} - set(row)
        if missing:
            raise WordingError(f"{path}:{number}: missing {', '.join(sorted(missing))}")
        if row["set"] not in SETS or row["split"] not in PARAPHRASE_SPLITS or row["n"] not in (1, 2):
            raise WordingError(f"{path}:{number}: bad set, split or n: {row['set']!r} {row['split']!r} {row['n']!r}")
        rows.append(row | {"line": f"{path.name}:{number}"})
    return rows


def _same(a: str, b: str) -> bool:
    return " ".join(a.casefold().split()) == " ".join(b.casefold().split())


def build(wordings: list[dict[str, Any]]) -> list[LabelledExample]:
    """The originals and their paraphrases, grouped by meaning, in the order of the wordings."""
    sources: dict[tuple[str, str], dict[str, LabelledExample]] = {}
    groups: dict[tuple[str, str, str], dict[int, dict[str, Any]]] = defaultdict(dict)
    for row in wordings:
        key = (row["set"], row["split"])
        if key not in sources:
            sources[key] = {e.id: e for e in source_examples(*key)}
        if row["of"] not in sources[key]:
            raise WordingError(f"{row['line']}: no example {row['of']!r} in the {row['split']} source of {row['set']}")
        group = groups[(row["set"], row["split"], row["of"])]
        if row["n"] in group:
            raise WordingError(f"{row['line']}: a second paraphrase {row['n']} of {row['of']}")
        group[row["n"]] = row
    out: list[LabelledExample] = []
    seen: dict[str, str] = {}
    for (name, split, of), group in groups.items():
        original = sources[(name, split)][of]
        if set(group) != {1, 2}:
            raise WordingError(f"{of} ({name}, {split}): needs paraphrases 1 and 2, has {sorted(group)}")
        for n, row in group.items():
            if _same(row["question"], original.question):
                raise WordingError(f"{row['line']}: paraphrase {n} of {of} repeats its original")
        if _same(group[1]["question"], group[2]["question"]):
            raise WordingError(f"{group[2]['line']}: the two paraphrases of {of} are the same")
        added = (f"paraphrase_set:{name}", f"meaning:{of}")
        tags = (*original.tags, added[0], "phrasing:original", added[1])
        records = [original.model_copy(update={"tags": tags, "split": split})]
        fields = original.model_dump(exclude={"id", "question", "tags", "split"}, exclude_defaults=True)
        for n in (1, 2):
            records.append(
                make_example(
                    **fields,
                    question=group[n]["question"],
                    tags=(*original.tags, added[0], f"phrasing:p{n}", added[1]),
                    split=split,
                )
            )
        for record in records:
            if record.id in seen:
                raise WordingError(f"{record.id} ({record.question!r}) is already the id of {seen[record.id]!r}")
            seen[record.id] = record.question
        out.extend(records)
    return out


def set_of(example: LabelledExample) -> str:
    return next(t.split(":", 1)[1] for t in example.tags if t.startswith("paraphrase_set:"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wordings", type=Path, default=WORDINGS, help="the hand-written paraphrases (JSONL)")
    parser.add_argument("--out", type=Path, default=OUT, help="folder to write the set to")
    parser.add_argument("--pick", action="store_true", help="print the originals the selection rule picks, and stop")
    args = parser.parse_args()
    if args.pick:
        for name in SETS:
            for split in PARAPHRASE_SPLITS:
                for example in pick(name, split):
                    row = {"of": example.id, "set": name, "split": split, "case": example.case}
                    print(json.dumps(row | {"question": example.question}, ensure_ascii=False))
        return
    try:
        examples = build(read_wordings(args.wordings))
    except WordingError as exc:
        sys.exit(f"make_paraphrase_set: {exc}")
    args.out.mkdir(parents=True, exist_ok=True)
    counts = write_example_set(args.out, examples)
    for name in SETS:
        for split in PARAPHRASE_SPLITS:
            chosen = [e for e in examples if e.split == split and set_of(e) == name]
            write_examples(args.out / f"{split}-{name}.jsonl", chosen)
            print(f"{split}-{name}: {len(chosen)} examples ({len(chosen) // 3} meanings)")
    print(f"examples per split: {counts}")


if __name__ == "__main__":
    main()
