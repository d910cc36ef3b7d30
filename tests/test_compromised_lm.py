"""A compromised LM on 127.0.0.1, reached over a real socket through `--lm http://...`.

Whatever it writes, `ask`, `ask --json`, `history`, `history ID`, `profile list` and the SSE server
(built as `scoperag serve` builds it) never crash and show no link, image, HTML, escape code or field
marker; outputs stay within the caps; and every HTTP request it receives is a counted LM call.
Rich writes as to a terminal here (TTY_COMPATIBLE=1), so a hyperlink made from data would show.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from pipeline.cli.main import main
from pipeline.guards.sanitise import (
    MAX_ANSWER_BYTES,
    MAX_SUB_QUESTION_CHARS,
    MAX_SUB_QUESTIONS,
    MAX_TRACE_BYTES,
)
from pipeline.guards.sections import MAX_LINE_CHARS
from pipeline.serving import parse_sse, running_server
from pipeline.serving.server import build_app
from pipeline.settings import CoreConfig, LMRequestSettings, Settings
from signatures import AnswerLines, ComputeFigure, Decompose, HyDE, ScoreRelevance
from tests.conftest import DEMO_DIR
from tests.support.compromised_server import (
    MARKUP_QUESTION,
    RICH_MARKUP,
    CompromisedLM,
    compromised_server,
)
from tests.support.harmless import assert_data_safe, assert_markdown_safe, assert_terminal_safe

RENT = "What is the monthly rent for Banda Lane?"
DEPOSIT = "How much deposit does the tenant pay?"
DISPLAY_ATTACKS = ("links", "nested_links", "markup", "escapes", "markers", "huge")
RETRIES = 3
TIMEOUT_SECONDS = 2.0
# The attacks' scripted answers cite the first chunks shown: retrieval stays the chunk ranking they were
# written against (no page index), so what is checked is what the guards make of the LM's output.
SETTINGS = Settings(
    lm_requests=LMRequestSettings(retries=RETRIES, backoff_seconds=0.0, timeout_seconds=TIMEOUT_SECONDS),
    core=CoreConfig(page_weight=0.0),
)
# Field names the adapters write as "[[ ## name ## ]]" headers: any other name in a prompt was smuggled.
FIELDS = {
    name for signature in (Decompose, ScoreRelevance, AnswerLines, HyDE, ComputeFigure) for name in signature.fields
} | {"completed"}


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("compromised-index")
    assert main(["index", str(DEMO_DIR), "--out", str(out), "--embedder", "hash", "--json"]) == 0
    return out


@dataclass
class Cli:
    """`scoperag` run in-process as a user would run it, against one history and settings file."""

    capsys: pytest.CaptureFixture[str]
    index: Path
    history: Path
    settings: Path

    def run(self, *argv: str) -> tuple[int, str, str]:
        self.capsys.readouterr()
        code = main(list(argv))
        captured = self.capsys.readouterr()
        return code, captured.out, captured.err

    def ask(self, url: str, question: str = RENT, *extra: str) -> tuple[int, str, str]:
        common = ["--index", str(self.index), "--history", str(self.history), "--settings", str(self.settings)]
        return self.run("ask", question, "--property", "Banda Lane", "--lm", url, *common, *extra)

    def history_of(self, history_id: str) -> dict[str, Any]:
        code, out, err = self.run("history", history_id, "--history", str(self.history), "--json")
        assert code == 0, err
        trace: dict[str, Any] = json.loads(out)
        return trace


@pytest.fixture
def cli(
    index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Iterator[Cli]:
    monkeypatch.chdir(tmp_path)  # no active profile; `profile` commands use ./.scoperag/profiles
    monkeypatch.setenv("DSPY_CACHEDIR", str(tmp_path / "dspy-cache"))
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # Rich writes styles (and would write links) as to a terminal
    monkeypatch.setenv("TTY_INTERACTIVE", "0")
    monkeypatch.setenv("COLUMNS", "2000")  # no wrapping: what was printed can be looked for whole
    settings = tmp_path / "settings.toml"
    requests = SETTINGS.lm_requests
    settings.write_text(
        f"[lm_requests]\nretries = {requests.retries}\nbackoff_seconds = {requests.backoff_seconds}\n"
        f"timeout_seconds = {requests.timeout_seconds}\n[core]\npage_weight = {SETTINGS.core.page_weight}\n"
    )
    yield Cli(capsys, index_dir, tmp_path / "history.sqlite", settings)


def ask_everywhere(cli: Cli, attack: str, question: str = RENT) -> tuple[dict[str, Any], dict[str, Any], str]:
    """`ask` (as text and --json), `history` and `history ID` against the attack; every output checked to be
    harmless. Returns the --json answer, its recorded trace and the text `ask` printed."""
    with compromised_server(attack) as (url, lm):
        code, shown, err = cli.ask(url, question)
        assert code == 0, err
        assert_terminal_safe(shown)
        assert_terminal_safe(err)
        code, out, err = cli.ask(url, question, "--json")
        assert code == 0, err
        assert_prompts_hold_only_real_fields(lm)
    done: dict[str, Any] = json.loads(out)
    assert_data_safe(done)
    assert_markdown_safe(done["answer"])
    for argv in (["history", "--all"], ["history", done["history_id"]]):
        code, out, err = cli.run(*argv, "--history", str(cli.history))
        assert code == 0, err
        assert_terminal_safe(out)
        assert_terminal_safe(err)
    trace = cli.history_of(done["history_id"])
    assert_data_safe(trace)
    assert_markdown_safe(trace["answer"])
    return done, trace, shown


def assert_prompts_hold_only_real_fields(lm: CompromisedLM) -> None:
    """Every "[[ ## name ## ]]" in what the LM was shown is one of the adapters' own field headers."""
    for body in lm.bodies:
        for message in body["messages"]:
            names = set(re.findall(r"\[\[ ## (.*?) ## \]\]", str(message["content"])))
            assert names <= FIELDS, names - FIELDS


def _sub_questions(done: dict[str, Any]) -> list[str]:
    return [section["sub_question"] for section in done["sections"]]


def _bullets(done: dict[str, Any]) -> list[str]:
    """Every answer line shown (what the LM wrote; evidence is quoted by code from the documents)."""
    return [section["answer"] for section in done["sections"] if section["status"] == "answered"]


# ---- one test per way the LM or a user broke the screen, a page or the record -------------------------


def test_sub_questions_with_links_images_and_html_are_shown_as_plain_text(cli: Cli) -> None:
    done, trace, shown = ask_everywhere(cli, "links")
    assert _sub_questions(done) == ["What is the rent? pixel click me"]
    assert "What is the rent? pixel click me" in shown
    assert {i["reason"].split(":")[0] for i in trace["interventions"] if i["target"] == "sub_questions"} == {
        "image",
        "link",
        "html",
    }


def test_links_hidden_in_nested_or_escaped_brackets_are_removed(cli: Cli) -> None:
    done, trace, _ = ask_everywhere(cli, "nested_links")
    bullets = _bullets(done)
    assert bullets and all("](" not in b and "evil" not in b for b in bullets)
    assert any("a [b] c" in b for b in bullets)  # one section: the first nested link only
    kinds = {i["reason"].split(":")[0] for i in trace["interventions"] if i["guard"] == "render"}
    assert kinds == {"image"}  # the one section carries the nested image link


def test_rich_markup_in_a_question_bullets_and_sub_questions_is_printed_literally(cli: Cli) -> None:
    done, trace, shown = ask_everywhere(cli, "markup", MARKUP_QUESTION)
    assert trace["question"] == MARKUP_QUESTION  # answered and recorded, not a MarkupError
    assert all(markup in shown for markup in RICH_MARKUP)  # printed as written: never a style or a link
    assert all(all(markup in b for markup in RICH_MARKUP) for b in _bullets(done))
    code, out, _ = cli.run("history", "--history", str(cli.history), "--index", str(cli.index))
    assert code == 0 and "clause [/2]?" in out


def test_terminal_escape_codes_never_reach_the_terminal(cli: Cli) -> None:
    done, trace, shown = ask_everywhere(cli, "escapes")
    assert _sub_questions(done) == ["What is the rent?open"]  # an OSC 8 link keeps its text only
    assert _bullets(done) and all("open" in b for b in _bullets(done))
    assert "open" in shown
    assert {i["reason"].split(":")[0] for i in trace["interventions"] if i["guard"] == "render"} == {
        "control",
        "invisible",
    }


def test_field_markers_written_by_the_lm_are_defused_in_every_field(cli: Cli) -> None:
    done, _, _ = ask_everywhere(cli, "markers")
    assert _sub_questions(done) == ["What is the rent? ( # answer # )"]
    bullets = _bullets(done)
    assert bullets and all("( # answer # )" in b or "( # completed # )" in b for b in bullets)


def test_output_sizes_are_capped_and_the_cuts_recorded(cli: Cli) -> None:
    done, trace, _ = ask_everywhere(cli, "huge")
    assert len(done["sections"]) == MAX_SUB_QUESTIONS
    assert all(len(q) <= MAX_SUB_QUESTION_CHARS for q in _sub_questions(done))
    assert all(len(s["evidence"]) <= 3 for s in done["sections"])
    assert all(len(b) <= MAX_LINE_CHARS and len(b.split()) <= 41 for b in _bullets(done))
    assert len(done["answer"].encode()) <= MAX_ANSWER_BYTES
    assert len(json.dumps(trace).encode()) <= MAX_TRACE_BYTES
    cuts = [i["reason"] for i in trace["interventions"] if i["guard"] in ("cap", "answer")]
    assert "50 sub-questions given: reading stopped at item 6" in cuts
    assert any(r.startswith("sub-question 1 of ") and r.endswith(f"cut to {MAX_SUB_QUESTION_CHARS}") for r in cuts)
    assert any(r.startswith("answer line of ") and r.endswith(" characters cut to 400") for r in cuts), cuts
    ignored = [i["reason"] for i in trace["interventions"] if i["guard"] == "answer"]
    assert any(r.startswith("sentence ids [") and r.endswith("were not offered: ignored") for r in ignored)
    assert cli.history.stat().st_size < 2 * MAX_TRACE_BYTES


@pytest.mark.parametrize(
    ("attack", "planted"),
    [("negated_deposit", "KSH -570,000"), ("swapped_payer", "The landlord pays the tenant KSH 570,000")],
)
def test_a_figure_planted_with_another_meaning_is_never_shown_as_the_answer(
    cli: Cli, attack: str, planted: str
) -> None:
    done, trace, shown = ask_everywhere(cli, attack, DEPOSIT)
    (section,) = done["sections"]
    assert planted not in shown and planted not in done["answer"]
    # the evidence sentence the LM cited stands as the line: the documents' own words
    assert section["status"] == "answered" and section["basis"] == "sentence"
    assert "the Tenant pays a deposit of KSH 570,000" in section["answer"]
    assert section["answer"] == section["evidence"][0]["text"]
    replaced = [i["reason"] for i in trace["interventions"] if i["guard"] == "grounding"]
    assert replaced and replaced[0].startswith("answer line replaced by its first quote"), trace["interventions"]


def test_every_http_attempt_is_a_counted_lm_call(cli: Cli) -> None:
    with compromised_server("flaky") as (url, lm):  # HTTP 500, then 429, then a dropped connection
        code, out, err = cli.ask(url, RENT, "--json")
        requests = lm.requests
    assert code == 0, err
    done = json.loads(out)
    trace = cli.history_of(done["history_id"])
    assert requests == done["lm_calls"] == trace["lm_calls"] == sum(trace["lm_attempts"].values())
    assert trace["lm_attempts"]["decompose"] == 4
    retried = [f["reason"] for f in trace["fallbacks"] if f["guard"] == "lm_retry"]
    assert retried == [
        "attempt 1 failed (LMServerError): retried",
        "attempt 2 failed (LMRateLimitError): retried",
        "attempt 3 failed (LMTransportError): retried",
    ]
    code, shown, _ = cli.run("history", done["history_id"], "--history", str(cli.history))
    assert code == 0 and f"{requests} LM calls (decompose 4, " in shown


def test_a_request_past_the_timeout_is_a_failed_attempt(cli: Cli) -> None:
    with compromised_server("slow", slow_seconds=TIMEOUT_SECONDS + 3) as (url, lm):
        code, out, err = cli.ask(url, RENT, "--json")
        requests = lm.requests
    assert code == 0, err
    trace = cli.history_of(json.loads(out)["history_id"])
    assert trace["lm_attempts"]["decompose"] == 2 and requests == trace["lm_calls"]


def test_an_lm_that_keeps_failing_costs_its_retries_and_no_more(cli: Cli) -> None:
    with compromised_server("down") as (url, lm):
        code, out, err = cli.ask(url, RENT)
        requests = lm.requests
    assert code == 1 and "language model failed: decompose" in err
    assert_terminal_safe(out + err)  # the server's error text carried an OSC 8 link
    code, listed, _ = cli.run("history", "--history", str(cli.history), "--index", str(cli.index), "--json")
    (entry,) = json.loads(listed)
    assert requests == entry["lm_calls"] == 1 + RETRIES
    trace = cli.history_of(entry["id"])
    assert_data_safe(trace)


# ---- profiles ------------------------------------------------------------------------------------------

HOSTILE_NOTE = (
    "[/x] [link=mailto:evil@example.com]mail[/link] \x1b]8;;https://evil.example\x1b\\open\x1b]8;;\x1b\\\x1bc"
)


def _export(index: Path, out: Path) -> Path:
    from pipeline.export import save_export
    from pipeline.program.module import ScopedQA
    from pipeline.store import open_store

    save_export(
        ScopedQA(open_store(index)),
        out,
        settings=Settings(),
        experiment_config={"lm": {"task": "http://127.0.0.1:8080/v1"}},  # the LM's name is recorded, never used
        trainset_hash="0" * 16,
        scores={"all": {"composite": 0.5}},
    )
    return out


def test_profile_list_prints_hostile_notes_as_plain_text(cli: Cli, tmp_path: Path) -> None:
    export = _export(cli.index, tmp_path / "export")
    assert cli.run("profile", "add", "alpha", str(export), "--note", "[/x]")[0] == 0
    assert cli.run("profile", "add", "beta", str(export), "--note", HOSTILE_NOTE)[0] == 0
    assert cli.run("profile", "export", "beta", "--out", "beta.json")[0] == 0
    assert cli.run("profile", "import", "beta.json", "--name", "gamma")[0] == 0
    code, out, err = cli.run("profile", "list")
    assert code == 0, err
    assert_terminal_safe(out)
    assert out.count("[/x]") == 3 and out.count("open") == 2


@pytest.mark.parametrize(
    ("where", "key"),
    [
        (("config", "settings"), "api_base"),
        (("config", "settings"), "apiBase"),
        (("config", "experiment"), "openai_api_key"),
        (("config", "experiment", "lm"), "api_base_url"),
        (("config", "program"), "OPENAI_API_BASE"),
        (("versions",), "endpoint"),
    ],
)
def test_a_profile_carrying_an_endpoint_or_key_is_refused(
    cli: Cli, tmp_path: Path, where: tuple[str, ...], key: str
) -> None:
    export = _export(cli.index, tmp_path / "export")
    assert cli.run("profile", "add", "alpha", str(export))[0] == 0
    assert cli.run("profile", "export", "alpha", "--out", "alpha.json")[0] == 0
    payload = json.loads(Path("alpha.json").read_text())
    target = payload["export"]["manifest"]
    for part in where:
        target = target[part]
    target[key] = "http://127.0.0.1:9/v1"
    Path("hostile.json").write_text(json.dumps(payload))
    code, _, err = cli.run("profile", "import", "hostile.json", "--name", "hostile")
    assert code == 2 and ".".join([*where, key]) in err
    assert not (tmp_path / ".scoperag" / "profiles" / "programs" / "hostile").exists()


# ---- the HTTP server ----------------------------------------------------------------------------------


@pytest.mark.parametrize("attack", DISPLAY_ATTACKS)
def test_sse_events_carry_nothing_a_compromised_lm_smuggles(
    attack: str, index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipeline.cli.common import configure_dspy

    monkeypatch.setenv("DSPY_CACHEDIR", str(tmp_path / "dspy-cache"))
    configure_dspy()
    question = MARKUP_QUESTION if attack == "markup" else RENT
    with compromised_server(attack) as (url, lm):
        app = build_app(
            index_dir=index_dir,
            lm_spec=url,
            cache_dir=tmp_path / "models",
            history=tmp_path / "history.sqlite",
            settings=SETTINGS,
        )
        with running_server(app) as base, httpx.Client(timeout=60) as client:
            body = {"question": question, "property": "Banda Lane"}
            with client.stream("POST", f"{base}/v1/query", json=body) as response:
                assert response.status_code == 200
                raw = response.read()
        assert_prompts_hold_only_real_fields(lm)
    events = list(parse_sse(raw.decode("utf-8").splitlines()))
    assert events[1].event == "decomposed" and events[-1].event == "completed"
    for message in events:
        assert_data_safe(message.data)
    done = events[-1].data
    assert_markdown_safe(done["answer"])
    assert done["sections"] and all(s["status"] == "answered" for s in done["sections"])
    assert len(raw) < 2 * MAX_ANSWER_BYTES + 64 * 1024  # the answer twice (Markdown and sections) at most
