"""The fake LM behind the web page's `scoperag serve` (an OpenAI-compatible server on a real socket): it answers like
a cooperative model, and for marked questions or programs it decomposes differently, finds nothing, writes hostile
text, takes its time, holds a call until the test lets it go, or (a profile whose answer instructions carry
TERSE_MARKER) answers from another sentence. It records the prompt of every call it receives."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from tests.support.compromised_server import Failure
from tests.support.exports import DEMO_QUESTION
from tests.support.fakes import cooperative, field, prompt_step

SECOND_SUB_QUESTION = "Who is the tenant?"
NOTHING = "zebra"  # a sub-question naming it finds nothing relevant
HOSTILE = "hostile"
HOSTILE_SUB_QUESTION = (
    'What does `<img src=x onerror="window.__pwned=5">` say? <script>window.__pwned=6</script>'
    " ![pixel](/pixel.png) [log in](javascript:window.__pwned=7)"
)
SLOW = "slowquestion"  # every call of a question holding it takes SLOW_SECONDS
SLOW_SECONDS = 1.5
HOLD = "holdquestion"  # the scoring call of a question holding it waits until the test releases it
TERSE_MARKER = "Answer tersely from the second sentence."


class PageLM:
    """The server's LM; `held` is set while a HOLD question's scoring call waits for `release`."""

    slow_seconds = 0.0

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.held = threading.Event()
        self.release = threading.Event()
        self._lock = threading.Lock()

    def calls_about(self, marker: str) -> int:
        """How many calls received so far were about a question holding `marker`."""
        with self._lock:
            return sum(marker in prompt for prompt in self.prompts)

    def steps_about(self, marker: str) -> list[str]:
        """The program step of each call received so far about a question holding `marker`, in order."""
        with self._lock:
            return [prompt_step(prompt) for prompt in self.prompts if marker in prompt]

    def receive(self, body: dict[str, Any]) -> tuple[Failure | None, str]:
        prompt = body["messages"][-1]["content"]
        with self._lock:
            self.prompts.append(prompt)
        step = prompt_step(prompt)
        if SLOW in prompt:
            time.sleep(SLOW_SECONDS)
        if HOLD in prompt and step == "score":
            self.held.set()
            self.release.wait(60)
        if step == "decompose":
            question = field(prompt, "question")
            sub_questions = [question]
            if NOTHING in question:
                sub_questions = ["What is the monthly rent?", f"Which {NOTHING} lives at the property?"]
            elif HOSTILE in question:
                sub_questions = [question, HOSTILE_SUB_QUESTION]
            elif DEMO_QUESTION in json.dumps(body["messages"]):  # the compiled profile's demo is in the prompt
                sub_questions = [question, SECOND_SUB_QUESTION]
            return None, json.dumps({"sub_questions": sub_questions})
        reply = cooperative()(prompt)
        if step == "score":
            for group, scored in zip(field(prompt, "groups"), reply["scores"], strict=True):
                if NOTHING in group["sub_question"]:
                    scored["scores"] = [0.0] * len(scored["scores"])
        if step == "answer" and TERSE_MARKER in json.dumps(body["messages"]):
            for line, context in zip(reply["answers"], field(prompt, "sections_context"), strict=True):
                sentences = context["sentences"][1:]
                if sentences:
                    line["sentence_ids"] = [s["sentence_id"] for s in sentences[:2]]
                    line["answer"] = " ".join(sentences[0]["text"].split()[:12])
        return None, json.dumps(reply)
