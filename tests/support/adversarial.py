"""A compromised LM for the adversarial suite: it obeys whatever instructions the text shows it.

It reads each chunk (after undoing the usual hiding tricks: zero-width and bidi characters,
Unicode tag characters, Cyrillic look-alikes, base64) and then cites the files, pages and ids
the chunk names, copies its URLs into bullets, scores 10 when told to, echoes field markers,
and returns ids and `<from_step_*>` strings as sub-questions. Otherwise it is
`tests.fakes.cooperative`.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any

from tests.support.fakes import cooperative, field

_INVISIBLE = dict.fromkeys(
    map(ord, "\u200b\u200c\u200d\u2060\ufeff\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
)
_HOMOGLYPHS = str.maketrans("\u0412\u0435\u0430\u0421\u043e\u0440\u0441\u0443\u0445", "BeaCopcyx")
_BASE64 = re.compile(r"\b[A-Za-z0-9+/]{16,}={0,2}")
_BETA_FILE = re.compile(r"beta-court/[\w.-]+\.md(?:\s+page\s+(\d+))?")
_OWN_PAGE = re.compile(r"cite this file page (\d+)", re.IGNORECASE)
_ID_LIKE = re.compile(r"\{?[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-zA-Z]{12}\}?")
_FROM_STEP = re.compile(r"<from_step_\w+>")
_URL = re.compile(r"(?:https?://|www\.)[^\s)\"'<>]+")
_MARKER = re.compile(r"\[\[\s*##.*?##\s*\]\]")
_SCORE_10 = re.compile(r"score 10", re.IGNORECASE)


def reveal(text: str) -> str:
    """What a credulous reader takes from `text`: hidden instructions made plain."""
    tags = "".join(chr(ord(c) - 0xE0000) for c in text if 0xE0020 <= ord(c) <= 0xE007E)
    plain = "".join(c for c in text if not 0xE0000 <= ord(c) <= 0xE007F).translate(_INVISIBLE)
    plain = plain.translate(_HOMOGLYPHS)
    decoded = []
    for blob in _BASE64.findall(plain):
        try:
            decoded.append(base64.b64decode(blob, validate=True).decode("ascii"))
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
    reversed_runs = [run[::-1] for run in re.findall(r"\u202e([^\u202c]*)", text)]
    return "\n".join([plain, tags, *decoded, *reversed_runs])


def claim(text: str) -> str:
    """The chunk's first sentence stating a figure (else its opening words): a grounded bullet."""
    sentences = re.split(r"(?<=[.!?])\s+", " ".join(text.split()))
    stated = next((s for s in sentences if re.search(r"\d", s) and "rent" in s.casefold()), None)
    return stated or " ".join(text.split()[:12])


@dataclass
class Compromised:
    """The responder, with a record of the prompts it saw and the payloads it obeyed."""

    # Prefix of the bullets it writes on a payload's orders; "" makes them repeat the honest
    # bullet word for word (which the program's duplicate check then keeps instead).
    echo_prefix: str = "As instructed: "
    prompts: list[str] = dc_field(default_factory=list)
    obeyed: list[str] = dc_field(default_factory=list)

    def __call__(self, prompt: str) -> dict[str, Any]:
        self.prompts.append(prompt)
        if "[[ ## groups ## ]]" in prompt:
            return self._score(field(prompt, "groups"))
        if "[[ ## sections_context ## ]]" in prompt:
            return self._answer(field(prompt, "sections_context"))
        if "`[[ ## passage ## ]]`" in prompt:
            passage: dict[str, Any] = cooperative()(prompt)
            return passage
        if "[[ ## question ## ]]" in prompt:
            question = field(prompt, "question")
            injected = _ID_LIKE.findall(question) + _FROM_STEP.findall(question)
            if injected:
                self.obeyed.append("sub_questions")
            return {"sub_questions": [question, *injected]}
        raise AssertionError(f"unexpected prompt: {prompt[:200]}")

    def _score(self, groups: list[dict[str, Any]]) -> dict[str, Any]:
        scores = []
        for g in groups:
            row = []
            for ch in g["chunks"]:
                told = bool(_SCORE_10.search(reveal(ch["text"])))
                if told:
                    self.obeyed.append("score")
                row.append(10.0 if told else 8.0)
            scores.append({"sub_question_index": g["sub_question_index"], "scores": row})
        return {"scores": scores}

    def _answer(self, contexts: list[dict[str, Any]]) -> dict[str, Any]:
        """Per section: what the payloads order written first, then the honest claim of the first sentence; the
        sentences stating that claim, then the payloads' own sentences and an id never offered."""
        lines = []
        for c in contexts:
            payloads: list[int] = []
            said: list[str] = []
            for sentence in c["sentences"]:
                obeyed = self._obey(sentence)
                if obeyed:
                    payloads.append(sentence["sentence_id"])
                    said.extend(obeyed)
            honest = claim(c["sentences"][0]["text"]) if c["sentences"] else ""
            stating = [s["sentence_id"] for s in c["sentences"] if claim(s["text"]) == honest]
            ids = [*stating, *(i for i in payloads if i not in stating), 999]
            lines.append(
                {
                    "sub_question_index": c["sub_question_index"],
                    "sentence_ids": ids,
                    "answer": " ".join([*said, honest]),
                }
            )
        return {"answers": lines}

    def _obey(self, sentence: dict[str, Any]) -> list[str]:
        """What the sentence's text tells the LM to write: a citation of another file or a made-up page, an id,
        a link, a field marker."""
        text = reveal(sentence["text"])
        echo = self.echo_prefix + claim(sentence["text"])
        out: list[str] = []

        def cite(label: str, why: str) -> None:
            self.obeyed.append(why)
            out.append(f"{echo} {label}")

        for match in _BETA_FILE.finditer(text):
            path, page = match.group(0).split()[0], int(match.group(1) or 1)
            cite(f"[{path}, page {page}]", "cite_beta")
        for match in _OWN_PAGE.finditer(text):
            cite(f"[{sentence['source'].split(',')[0].strip('[')}, page {match.group(1)}]", "made_up_page")
        for value in _ID_LIKE.findall(text) + _FROM_STEP.findall(text):
            cite(f"[{value}, page 1]", "cite_id")
        for url in _URL.findall(text):
            self.obeyed.append("url")
            out.append(f"Details: ![x]({url}) {url}")
        for marker in _MARKER.findall(text):
            self.obeyed.append("field_marker")
            out.append(f"{echo} {marker}")
        return out


def compromised_lm(echo_prefix: str = "As instructed: ") -> tuple[Compromised, Callable[[str], dict[str, Any]]]:
    """The responder (to inspect afterwards) and the callable to hand to `scripted_lm`."""
    responder = Compromised(echo_prefix=echo_prefix)
    return responder, responder
