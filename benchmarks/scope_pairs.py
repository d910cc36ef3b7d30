"""Generated (question, scope) pairs through intake and retrieval, the program's way, counting exceptions.

Questions are built from the catalog's own entity names as people write them (whole, first word,
initials, without or with another legal form, possessive, lower case, repeated, several at once),
from the corpus's words, look-alike letters, invisible characters, quotes, periods and noise, from one
character to past the question limit; scopes are none, an entity's property scope, or a chip of one to
four documents (with or without a property). Each pair is sanitised, planned, derives its documents
and runs the retrieval rounds of its goal, and its scope note is computed: what `ask` does before the
LM. No LM.

    .venv/bin/python benchmarks/scope_pairs.py --index .scoperag/sec-10q --pairs 10000 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import traceback
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.execution.rounds import QuestionRetrieval
from pipeline.guards.sanitise import sanitise_question
from pipeline.intake.planner import plan_in_scope, plan_scope_note
from pipeline.intake.scope import NO_SCOPE, Scope
from pipeline.store import Store, open_store

_LEGAL = ("Inc.", "LLC", "Ltd", "Co., Ltd.", "Corporation", "Limited", "GmbH", "L.L.C.", "plc", "S.A.")
_NOISE = ("\u200b", "\u202e", "а", "ο", "’s", "'s", "…", "“", "”", "\t", "\n", "?", "!", "%", "$", "🙂", "\x07")
_ASKS = (
    "What was {n}'s total revenue?",
    "Compare {n} and {m}.",
    "Who signed the agreement between {n} and {m}?",
    "How long does the {n} agreement remain in force?",
    "What did {n} report for Q2 2023 and FY2022?",
    "{n}",
    "Is {n} the same as {m}? And what about {o}?",
    'Which clause of "{n}" covers termination?',
)


def _spoken(rng: random.Random, name: str) -> str:
    """A name as someone might write it."""
    words = name.replace(",", " ").split() or [name]
    forms = [
        name,
        words[0],
        "".join(w[0] for w in words if w[:1].isalpha()).upper(),
        " ".join(words[:-1]) or name,
        f"{' '.join(words[:-1]) or name} {rng.choice(_LEGAL)}",
        name.lower(),
        name.upper(),
        f"{name}'s",
        " ".join(words[1:3]) or name,
        (name + " ") * rng.randint(2, 40),
    ]
    return rng.choice(forms)


def _words(store: Store, rng: random.Random, count: int) -> str:
    summaries = [d.summary for d in store.catalog.documents.values()] or ["nothing"]
    pool = " ".join(rng.sample(summaries, min(3, len(summaries)))).split() or ["word"]
    return " ".join(rng.choice(pool) for _ in range(count))


def generated_pairs(store: Store, count: int, seed: int = 0) -> Iterator[tuple[str, Scope]]:
    """`count` (question, scope) pairs, the same ones for the same store and seed."""
    rng = random.Random(seed)
    entities = list(store.catalog.entities.values())
    names = [n for e in entities for n in e.names] or ["Nobody"]
    documents = list(store.catalog.documents)
    for _ in range(count):
        n, m, o = (_spoken(rng, rng.choice(names)) for _ in range(3))
        question = rng.choice(_ASKS).format(n=n, m=m, o=o)
        if rng.random() < 0.3:
            question = f"{_words(store, rng, rng.randint(1, 60))} {question}"
        if rng.random() < 0.2:
            question = "".join(c + (rng.choice(_NOISE) if rng.random() < 0.1 else "") for c in question)
        if rng.random() < 0.05:
            question = question * rng.randint(10, 200)  # past the question limit
        if rng.random() < 0.03:
            question = rng.choice(["", " ", "?", "\u200b", "a"])
        roll = rng.random()
        if roll < 0.4 or not entities:
            scope = NO_SCOPE
        elif roll < 0.7:
            scope = Scope(kind="property", entity_id=rng.choice(entities).entity_id)
        else:
            chosen = tuple(dict.fromkeys(rng.sample(documents, min(len(documents), rng.randint(1, 4)))))
            entity = rng.choice(entities).entity_id if rng.random() < 0.5 else None
            scope = Scope(kind="chip", document_ids=chosen, entity_id=entity)
        yield question, scope


def run_pair(store: Store, question: str, scope: Scope) -> int:
    """Intake and retrieval of one pair as `ask` runs them before the LM; the number of chunks found."""
    clean = sanitise_question(question)
    if not clean.text.strip():
        return 0  # the program refuses an empty question before planning
    doc_types = frozenset(d.doc_type for d in store.catalog.documents.values())
    _, plan, scoped = plan_in_scope(clean.text, scope, store, doc_types)
    plan_scope_note(plan, scoped, store)
    if not plan.retrieval_rounds:
        return 0
    return len(QuestionRetrieval(store, scoped, plan).retrieve(plan.goal).chunks)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, action="append", required=True)
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    load = os.getloadavg()
    rows = []
    for index in args.index:
        store = open_store(index)
        started = time.perf_counter()
        failures: list[str] = []
        answered = 0
        for question, scope in generated_pairs(store, args.pairs, args.seed):
            try:
                answered += run_pair(store, question, scope) > 0
            except Exception:
                failures.append(f"{scope.kind} {question[:120]!r}: {traceback.format_exc(limit=3)}")
        seconds = time.perf_counter() - started
        rows.append(
            {
                "index": str(index),
                "pairs": args.pairs,
                "exceptions": len(failures),
                "with_chunks": answered,
                "seconds": round(seconds, 1),
                "first_failures": failures[:5],
            }
        )
        print(f"{index}: {args.pairs} pairs, {len(failures)} exceptions, {answered} found chunks, {seconds:.1f} s")
        for failure in failures[:5]:
            print(failure)
    print(f"load average at start {load[0]:.1f}, at end {os.getloadavg()[0]:.1f}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"load": load, "rows": rows}, indent=2) + "\n")
    return 1 if any(r["exceptions"] for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
