"""Every command of the README's bash blocks, run in README order against a scratch copy of the repository (its
tracked files: a fresh clone), so the README cannot drift from what the commands do.

The commands come from the README itself (tests/support/readme_commands.py). RULES, first match wins, say how
each runs: as written with its placeholders filled in (`<uuid>`, `RUN_ID`, `HISTORY_ID`, ...: PLACEHOLDERS),
with a faster variant and the reason, only in the slow run (`make slow`), or not at all with the reason. A
command no rule expects fails the test: a new README command is run, or listed here with why it is not.
Commands that need an LM get the project's test LM server (an OpenAI-compatible endpoint on 127.0.0.1 answering
as the cooperative script does) through `SCOPERAG_LM`, or in place of the LM they name.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.support.compromised_server import CooperativeLM, openai_compatible_server
from tests.support.paths import ROOT
from tests.support.readme_commands import Command, expand, fence_problems, readme_commands, readme_files
from tests.support.serve_process import free_port, scoperag_command, stop_process, wait_until_healthy
from tests.support.sockets import listeners, process_tree

log = logging.getLogger(__name__)


def make_demo_index() -> list[str]:
    """The index `make demo` builds (its first step, read from the Makefile), which later commands use."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    index = re.search(r"^INDEX := (\S+)$", makefile, re.MULTILINE)
    step = re.search(r"^demo:.*\n\t\$\(BIN\)/scoperag (index .*)$", makefile, re.MULTILINE)
    assert index is not None and step is not None, "make demo builds the demo index first"
    return shlex.split(step.group(1).replace("$(INDEX)", index.group(1)))


DATA = Path(os.environ.get("SCOPERAG_DATA") or ROOT.parent / "shared" / "data")


@dataclass(frozen=True)
class Rule:
    """How README commands matching `pattern` (and whose block matches `block`) are run."""

    pattern: str
    action: str = "run"  # run (in this process) | process (its own) | serve (in the background) | shell | skip
    reason: str = ""
    slow: bool = False
    extra: tuple[str, ...] = ()
    replace: tuple[tuple[str, str], ...] = ()
    block: str | None = None

    def matches(self, command: Command) -> bool:
        return re.search(self.pattern, command.text) is not None and (
            self.block is None or re.search(self.block, command.block) is not None
        )


LM = "{LM}"  # the test LM server's base URL
RULES = [
    Rule(
        r"^make (demo|test)$",
        "skip",
        "`make demo` installs the environment and asks the embedded model (minutes); its steps (index, search, "
        "ask) are the commands below. `make test` runs this suite",
    ),
    Rule(
        r".",
        "skip",
        "a team's PostgreSQL-backed tracking server: tests/experiments/test_team_server.py runs this setup against "
        "a real PostgreSQL and mlflow server",
        block=r"createuser",
    ),
    Rule(
        r"lm-serve|SCOPERAG_LM_KEY=",
        "skip",
        "loads the embedded model: tests/program/test_lm_serve.py runs this pair (pytest -m live_lm)",
    ),
    Rule(r"--ray auto", "skip", "needs a Ray cluster and a vLLM server"),
    Rule(
        r"scoperag sweep ",
        "skip",
        "runs whole jobs on the embedded model; tests/experiments/test_fanout_jobs.py runs a sweep with the "
        "scripted LM",
    ),
    Rule(
        r"scoperag ui\b",
        "skip",
        "a long-running server: tests/experiments/test_ui.py starts it as written and opens the runs list it prints",
    ),
    Rule(
        r"scoperag optimize ",
        reason="a job on the embedded model takes minutes to hours: its plan is made and printed (--dry-run); "
        "tests/experiments run whole jobs with the scripted LM",
        extra=("--dry-run",),
    ),
    Rule(
        r"sec-10q.*--ray",
        "process",
        "the SEC filings (1,037 PDF pages) read and embedded on a local Ray (a process of its own: Ray started "
        "twice in one process crashes it)",
        slow=True,
    ),
    Rule(r"scoperag index .*sec-10q", reason="the SEC filings: 1,037 PDF pages (10-60 s on 2 cores)", slow=True),
    Rule(r"^mkdir -p \.scoperag/edgar", "shell", "the folder the EDGAR filings are unpacked into", slow=True),
    Rule(r"tar -xJf .*edgar", "shell", "unpacks the 113 EDGAR filings (274 MB)", slow=True),
    Rule(r"scoperag index .*edgar", reason="the 113 EDGAR filings: 8,415 pages (about 2 min on 2 cores)", slow=True),
    Rule(r"--property ko\b", reason="searches and asks the EDGAR index built above", slow=True),
    Rule(r"scoperag ask .*--index \.scoperag/sec-10q", reason="asks the SEC index built above", slow=True),
    Rule(
        r"scoperag evaluate .*sec-10q",
        reason="needs the SEC index; a sample of 4 examples",
        slow=True,
        extra=("--limit", "4"),
    ),
    Rule(r"--ray", "process", "starts a local Ray (10 s and more), in a process of its own", slow=True),
    Rule(
        r"scoperag serve ",
        "serve",
        "each on the scratch port, one at a time: a test never listens beyond 127.0.0.1",
        replace=((r"--host 0\.0\.0\.0", "--host 127.0.0.1"),),
    ),
    Rule(
        r"benchmarks/(?:scoreboard|paraphrases)\.py",
        "skip",
        "answers every set's held-out split (5-15 minutes on 2 cores); its parts are tested in tests/benchmarks",
    ),
    Rule(r"^curl ", "shell"),
    Rule(r"scoperag evaluate .*--limit", reason="a sample of 4 examples", replace=((r"--limit \d+", "--limit 4"),)),
    Rule(r"scoperag evaluate ", reason="a sample of 4 examples", extra=("--limit", "4")),
    Rule(r"scoperag label ", reason="off a terminal --yes is required, as the README says", extra=("--yes",)),
    Rule(
        r"scoperag ask .*--lm (openai/|http|embedded:)",
        reason="the test LM server stands in for the LM named (a test loads no model)",
        replace=((r"--lm \S+", f"--lm {LM}"),),
    ),
    Rule(r"^\.venv/bin/scoperag "),
]


def rule_for(command: Command) -> Rule:
    found = next((r for r in RULES if r.matches(command)), None)
    if found is None:
        pytest.fail(f"no rule says how to run {command.where()}: add one to tests/test_readme.py (run or skip, why)")
    return found


@dataclass
class Scratch:
    """The scratch clone and what earlier commands left for later ones (their ids, a server)."""

    root: Path
    lm: str
    uuids: list[str] = field(default_factory=list)
    history: dict[str, str] = field(default_factory=dict)  # "property" / "last" -> history id
    runs: dict[str, str] = field(default_factory=dict)
    selected: bool = False
    server: subprocess.Popen[bytes] | None = None
    port: int = 0


# What a README placeholder stands for: (pattern, a function of the scratch state giving its value).
PLACEHOLDERS = (
    (r'"\.\.\."', lambda s: '"What is the monthly rent?"'),
    (r"HISTORY_ID", lambda s: s.history["property"]),
    (r"(?<![A-Z_])ID\b", lambda s: s.history["last"]),
    (r"RUN_ID", lambda s: s.runs["one"]),
    (r"RUN_A", lambda s: s.runs["a"]),
    (r"RUN_B", lambda s: s.runs["b"]),
    (r"path/to/export", lambda s: "exports/bootstrap"),
    (r"\[--yes\]", lambda s: "--yes"),
    (r"localhost:8000", lambda s: f"127.0.0.1:{s.port}"),
    (r"--port 8000", lambda s: f"--port {s.port}"),
)


def fill(text: str, scratch: Scratch) -> str:
    """The command with its placeholders filled in (each `<uuid>` a document of Banda Lane)."""
    for pattern, value in PLACEHOLDERS:
        if re.search(pattern, text):
            text = re.sub(pattern, lambda m, v=value: v(scratch), text)  # type: ignore[misc]
    uuids = iter(scratch.uuids)
    return re.sub(r"<uuid>", lambda m: next(uuids), text)


def clone_into(where: Path) -> Path:
    """The repository's tracked files (what a clone holds), copied to `where`."""
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, tracked.decode().split("\0")):
        if (ROOT / name).is_file():
            (where / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / name, where / name)
    return where


@contextlib.contextmanager
def scratch_clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Scratch]:
    root = clone_into(tmp_path / "clone")
    # the files the README shows for its commands (a reader saves them as it says)
    for name, text in readme_files((ROOT / "README.md").read_text(encoding="utf-8")).items():
        (root / name).write_text(text, encoding="utf-8")
    with openai_compatible_server(CooperativeLM(), "readme-lm") as url:
        monkeypatch.chdir(root)
        monkeypatch.setenv("SCOPERAG_LM", url)
        monkeypatch.setenv("SCOPERAG_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.setenv("DSPY_CACHEDIR", str(tmp_path / "dspy"))
        monkeypatch.setenv("SCOPERAG_DATA", str(DATA))
        monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
        monkeypatch.delenv("SCOPERAG_LM_KEY", raising=False)
        scratch = Scratch(root, url, port=free_port())
        # What `make demo` (skipped: it installs and asks the embedded model) leaves for the commands after it.
        code, _, err = run_in_process(make_demo_index())
        assert code == 0, err
        _remember(make_demo_index(), "", scratch)
        try:
            yield scratch
        finally:
            if scratch.server is not None:
                stop_process(scratch.server, 30)


def run_in_process(argv: list[str]) -> tuple[int, str, str]:
    """`scoperag ARGV` in this process: exit code, stdout, stderr."""
    from pipeline.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def run_command(command: Command, rule: Rule, scratch: Scratch) -> None:
    text = expand(fill(command.text, scratch), dict(os.environ))
    for pattern, value in rule.replace:
        text = re.sub(pattern, value.replace(LM, scratch.lm), text)
    if rule.action == "shell":
        done = subprocess.run(["bash", "-c", text], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{command.where()}\n{done.stderr[-2000:]}"
        assert '"completed"' in done.stdout or "completed" in done.stdout, f"{command.where()}\n{done.stdout[-2000:]}"
        return
    argv = shlex.split(text)[1:] + list(rule.extra)
    if rule.action == "serve":
        if scratch.server is not None:  # the one before is stopped: the health check below must reach this one
            stop_process(scratch.server, 30)
            scratch.server = None
        if "--port" not in argv:
            argv += ["--port", str(scratch.port)]
        host = argv[argv.index("--host") + 1] if "--host" in argv else "127.0.0.1"
        assert host == "127.0.0.1", f"{command.where()}: a test listens on 127.0.0.1 only, not {host}"
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        log = (scratch.root / "serve.log").open("wb")
        scratch.server = subprocess.Popen(
            [*scoperag_command(), *argv], cwd=scratch.root, env=env, stdout=log, stderr=log
        )
        wait_until_healthy(
            scratch.server,
            f"http://127.0.0.1:{scratch.port}/v1/health",
            120,
            lambda: (scratch.root / "serve.log").read_text(errors="replace")[-2000:],
            "scoperag serve",
        )
        held = listeners(process_tree(scratch.server.pid))  # this server answered, and on the loopback only
        assert held and all(h.loopback_only for h in held), f"{command.where()}: {held}"
        return
    if rule.action == "process":
        done = subprocess.run([*scoperag_command(), *argv], capture_output=True, text=True, timeout=1800)
        assert done.returncode == 0, f"{command.where()} exited {done.returncode}\n{done.stderr[-3000:]}"
        return
    expected = 0
    if argv[0] == "export" and not scratch.selected:
        argv.append("--baseline")  # the reference runs shipped were rejected: their export is the baseline
    if argv[0] == "champion" and not scratch.selected:
        expected = 2  # a rejected run cannot be champion, and says so
    code, out, err = run_in_process(argv)
    said = " ".join(err.split())
    assert code == expected, f"{command.where()} exited {code}\n{err[-3000:]}\n{out[-1000:]}"
    if expected == 2:
        assert "cannot be champion" in said
    _remember(argv, out, scratch)


def _remember(argv: list[str], out: str, scratch: Scratch) -> None:
    """What later commands need from this one: document ids once the index exists, history ids, run ids."""
    if argv[0] == "index" and not scratch.uuids:
        from pipeline.store import open_store

        store = open_store(scratch.root / ".scoperag" / "index")
        scratch.uuids = sorted(store.document_ids_for(["banda-lane/lease.pdf", "banda-lane/offer-letter.pdf"]))
    if argv[0] == "ask":
        from pipeline.evaluation.history import History

        newest = History(scratch.root / ".scoperag" / "history.sqlite").recent(1)[0].history_id
        scratch.history["last"] = newest
        if "--property" in argv:
            scratch.history.setdefault("property", newest)
    if argv[0] == "runs" and len(argv) == 1 and not scratch.runs:
        _choose_runs(scratch)


def _choose_runs(scratch: Scratch) -> None:
    """RUN_ID: a selected reference run when there is one; RUN_A and RUN_B: two reference runs that measured the
    same thing (one stage, one set of labelled examples), which a fresh clone must hold."""
    code, out, _ = run_in_process(["runs", "--json"])
    assert code == 0
    rows = json.loads(out)
    assert rows, "a fresh clone lists the reference runs (mlruns/reference/)"
    selected = [r for r in rows if r["selected"] == "true"]
    scratch.selected = bool(selected)
    one = (selected or rows)[0]
    scratch.runs["one"] = one["run_id"][:8]
    by_measure: dict[Any, list[str]] = {}
    for row in rows:
        by_measure.setdefault((row["stage"], row["traces"]), []).append(row["run_id"][:8])
    pair = next((ids for ids in by_measure.values() if len(ids) >= 2), None)
    assert pair is not None, "the reference runs hold a comparable pair (the same stage on the same examples)"
    scratch.runs["a"], scratch.runs["b"] = pair[0], pair[1]


def test_readme_commands_run_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    commands = readme_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(commands) >= 30
    ran = []
    with scratch_clone(tmp_path, monkeypatch) as scratch:
        for command in commands:
            rule = rule_for(command)
            if rule.action == "skip" or rule.slow:
                continue
            started = time.monotonic()
            run_command(command, rule, scratch)
            ran.append(command.text)
            log.info("%6.1f s  %s", time.monotonic() - started, command.where())  # where the time goes
    assert any("scoperag runs --compare" in c for c in ran) and any("scoperag export" in c for c in ran)


@pytest.mark.slow
@pytest.mark.skipif(not (DATA / "sec-10q" / "docs").is_dir(), reason=f"no SEC filings at {DATA} (SCOPERAG_DATA)")
def test_readme_commands_that_take_long_run_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    commands = [c for c in readme_commands((ROOT / "README.md").read_text(encoding="utf-8")) if rule_for(c).slow]
    assert commands
    with scratch_clone(tmp_path, monkeypatch) as scratch:
        for command in commands:
            run_command(command, rule_for(command), scratch)


def test_every_readme_command_is_run_or_skipped_for_a_reason() -> None:
    for command in readme_commands((ROOT / "README.md").read_text(encoding="utf-8")):
        rule = rule_for(command)
        assert rule.action != "skip" or rule.reason, command.where()


def test_the_readme_renders_with_every_fence_closed() -> None:
    """The README as its Markdown parser renders it: every fence closed, no heading or fence swallowed by a code
    block, and the bash blocks the commands are read from are the ones a reader sees."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert fence_problems(readme) == []
    assert "my-settings.toml" in readme_files(readme), "the settings file the README's commands read is shown"


def test_a_fence_closed_mid_line_is_found() -> None:
    """What the README once held: "``` It is the default" closes nothing, so the next heading and its commands
    rendered inside the block above."""
    broken = "## A\n\n```bash\necho a\n``` It is the default.\n\n### B\n\n```bash\necho b\n```\n"
    problems = fence_problems(broken)
    assert any("line 3" in p and "never closed" not in p for p in problems), problems
    assert any("heading at line 7 renders as code" in p for p in problems), problems
    assert any("opens a fence inside this block" in p for p in problems), problems
    unclosed = fence_problems("## A\n\n```bash\necho a\n")
    assert unclosed and "never closed" in unclosed[0]
    assert fence_problems("## A\n\n```bash\necho a\n```\n") == []


def test_the_readme_and_docs_link_to_pages_and_headings_that_exist() -> None:
    """Every relative link of the README and docs/ names a file that exists and, with `#anchor`, one of its
    headings (as GitHub makes anchors: lower case, punctuation dropped, spaces as hyphens)."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif anchor and anchor not in _anchors(linked):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert broken == []


def _anchors(page: Path) -> set[str]:
    headings = re.findall(r"^#{1,6} (.+)$", page.read_text(encoding="utf-8"), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_a_repository_file_the_readme_shows_is_shown_whole() -> None:
    """A block whose first line names a file in a folder of the repository ("# experiments/settings/lm-steps.toml")
    shows that file as it is, so the command that reads it runs what the reader sees."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = re.findall(r"^```[a-z]+\n(# ([\w.-]+/[\w./-]+)\n.*?)^```", readme, re.MULTILINE | re.DOTALL)
    assert "experiments/settings/lm-steps.toml" in [name for _, name in shown]
    for text, name in shown:
        assert (ROOT / name).read_text(encoding="utf-8") == text, f"the README's {name} is not the file"
