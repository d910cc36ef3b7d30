"""Nothing a test run starts outlives it, however the run ends (issue 36, D5).

Every process a test session starts carries the session's mark in its environment (SESSION_ENV, "<pytest pid>-<random
hex>"): servers, their workers, a PostgreSQL cluster, a local Ray. Three things act on the mark:

- the reaper, a small process of its own session (so a signal to pytest's process group, as `timeout -s TERM` sends,
  does not reach it) that reads its standard input from pytest: when that pipe closes, because pytest ended in any
  way, SIGKILL included, it kills every process carrying the mark (SIGTERM, then SIGKILL), runs the stop commands and
  removes the folders the session registered;
- the session-end check (tests/conftest.py): once every fixture is torn down, a process of the session still alive
  fails the run, named (the reaper then ends it);
- the session-start sweep: processes and registered folders of an earlier session whose pytest is gone (its reaper
  killed too) are ended and removed.

Run as `python -m tests.support.reaper SESSION` by `start_reaper`; it uses the standard library only.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO

SESSION_ENV = "SCOPERAG_TEST_SESSION"
# A folder a session registers holds this file, naming the session: the sweep removes it once its pytest is gone.
OWNER_FILE = ".scoperag-test-session"
# Folders of test sessions directly under the system temporary directory (PostgreSQL clusters, Ray's sessions).
SWEPT_PREFIXES = ("scoperag-postgres-", "scoperag-ray-")
# Seconds between SIGTERM and SIGKILL, and how long the end waits for the last processes.
GRACE_SECONDS = 5.0
# How often the reaper looks at the session's processes while pytest runs.
TRACK_SECONDS = 1.0
ROOT = Path(__file__).resolve().parents[2]


def session_owner(session: str) -> int | None:
    """The pid of the pytest a session mark names ("1234-ab12..." -> 1234)."""
    head = session.split("-", 1)[0]
    return int(head) if head.isdigit() else None


def marked_processes(session: str | None = None) -> dict[int, str]:
    """{pid: mark} of live processes (zombies left out) carrying a session mark; only `session`'s when given. The
    environment of another user's process is read when this one may (root may read all)."""
    found: dict[int, str] = {}
    needle = f"{SESSION_ENV}=".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if state == "Z":
            continue
        for item in environ.split(b"\0"):
            if item.startswith(needle):
                mark = item[len(needle) :].decode(errors="replace")
                if session is None or mark == session:
                    found[int(entry.name)] = mark
                break
    return found


# Helpers multiprocessing starts for the process that uses it, which end when that process ends.
_OWN_HELPERS = ("multiprocessing.resource_tracker", "multiprocessing.forkserver")


def outliving(session: str) -> list[int]:
    """The processes of `session` that would outlive its pytest: every marked one but the multiprocessing helpers
    of pytest itself (they end with it)."""
    left = []
    for pid in marked_processes(session):
        try:
            command = (Path(f"/proc/{pid}") / "cmdline").read_bytes().decode(errors="replace")
            parent = int((Path(f"/proc/{pid}") / "stat").read_text().rsplit(")", 1)[-1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if parent == os.getpid() and any(helper in command for helper in _OWN_HELPERS):
            continue
        left.append(pid)
    return left


def with_descendants(pids: Sequence[int]) -> list[int]:
    """`pids` and every live process descended from one of them (a process that dropped the mark from its
    environment, as Ray's agents do, is still its marked parent's child)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[-1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(entry.name))
    found, todo = list(dict.fromkeys(pids)), list(pids)
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found and child != os.getpid():
                found.append(child)
                todo.append(child)
    return found


def describe(pid: int) -> str:
    """A process as a reader names it: its pid and command line."""
    try:
        command = (Path(f"/proc/{pid}") / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        command = "?"
    return f"{pid} ({command.strip()[:160]})"


def end_processes(pids: Sequence[int], grace: float = GRACE_SECONDS) -> list[int]:
    """SIGTERM to each of `pids`, SIGKILL to those alive after `grace` seconds; the pids that still live."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [p for p in alive if _alive(p)]
    for pid in alive:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    time.sleep(0.2)
    return [p for p in alive if _alive(p)]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def start_time(pid: int) -> str | None:
    """When process `pid` started (clock ticks since boot), None when it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[19]
    except (OSError, IndexError):
        return None


def track(session: str, known: dict[int, str]) -> None:
    """Add to `known` (pid -> start time) the session's processes now: the marked ones, pytest's, and every one
    descended from them. A process may hide its mark (Ray's agents rewrite their environment when they retitle
    themselves) or outlive its parent: once seen here it is ended all the same."""
    owner = session_owner(session)
    roots = [*marked_processes(session), *([owner] if owner is not None else [])]
    for pid in with_descendants(roots):
        if pid not in (owner, os.getpid()) and pid not in known and (started := start_time(pid)) is not None:
            known[pid] = started


def end_session(
    session: str,
    commands: Sequence[Sequence[str]] = (),
    folders: Sequence[str] = (),
    known: dict[int, str] | None = None,
) -> None:
    """Everything of `session` ended: its stop commands run, every process carrying its mark or seen as one of its
    own (`known`, pid -> start time: the same process, not a later one with its pid) ended with its descendants
    (again while new ones appear, a few rounds), its folders removed."""
    seen = dict(known or {})
    for command in commands:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(list(command), capture_output=True, timeout=30, check=False)
    for _ in range(5):
        still = [pid for pid, started in seen.items() if start_time(pid) == started]
        pids = with_descendants([*marked_processes(session), *still])  # found before any parent ends
        if not pids:
            break
        end_processes(pids)
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


def sweep(temp_root: Path | None = None) -> list[str]:
    """What earlier sessions whose pytest is gone left: their marked processes ended and their registered folders
    under the temporary directory removed. Another live session's are never touched. Returns what was swept."""
    swept: list[str] = []
    gone: dict[str, bool] = {}

    def dead(mark: str) -> bool:
        if mark not in gone:
            owner = session_owner(mark)
            gone[mark] = owner is not None and not _alive(owner)
        return gone[mark]

    leftovers = with_descendants([pid for pid, mark in marked_processes().items() if dead(mark)])
    swept += [describe(pid) for pid in leftovers]
    end_processes(leftovers)
    root = temp_root or Path(tempfile.gettempdir())
    for folder in root.iterdir() if root.is_dir() else ():
        if not folder.name.startswith(SWEPT_PREFIXES):
            continue
        try:
            mark = (folder / OWNER_FILE).read_text().strip()
        except OSError:
            continue
        if dead(mark):
            shutil.rmtree(folder, ignore_errors=True)
            swept.append(str(folder))
    return swept


class Reaper:
    """pytest's end of the pipe to the reaper process: what it registers is ended when pytest ends."""

    def __init__(self, session: str, process: subprocess.Popen[bytes], pipe: IO[bytes]) -> None:
        self.session = session
        self.process = process
        self.pipe = pipe

    def _send(self, **message: object) -> None:
        self.pipe.write((json.dumps(message) + "\n").encode())
        self.pipe.flush()

    def remove_on_end(self, folder: Path) -> None:
        """`folder` is removed when the session ends (it is marked as the session's for the next run's sweep)."""
        (folder / OWNER_FILE).write_text(self.session)
        self._send(folder=str(folder))

    def run_on_end(self, command: Sequence[str]) -> None:
        """`command` is run when the session ends, before its processes are ended (a cluster's own stop)."""
        self._send(command=list(command))

    def close(self) -> None:
        """pytest's end: the reaper ends what is left and exits."""
        with contextlib.suppress(OSError):
            self.pipe.close()


_CURRENT: list[Reaper] = []


def current() -> Reaper | None:
    """The reaper of this test session (None outside one)."""
    return _CURRENT[0] if _CURRENT else None


def start_reaper(session: str) -> Reaper:
    """The reaper process of `session`, in a session of its own and without the mark itself."""
    env = {k: v for k, v in os.environ.items() if k != SESSION_ENV}
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.reaper", session],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )
    if process.stdin is None:  # unreachable: stdin=PIPE
        raise RuntimeError("the reaper has no pipe")
    reaper = Reaper(session, process, process.stdin)
    _CURRENT[:] = [reaper]
    return reaper


@contextlib.contextmanager
def marked_folder(prefix: str) -> Iterator[Path]:
    """A new folder directly under the system temporary directory, removed on leaving and, should the session be
    killed first, by its reaper or the next session's sweep."""
    where = Path(tempfile.mkdtemp(prefix=prefix))
    reaper = current()
    if reaper is not None:
        reaper.remove_on_end(where)
    try:
        yield where
    finally:
        shutil.rmtree(where, ignore_errors=True)


def _serve(session: str) -> None:
    """The reaper's own loop: registrations, and the session's processes seen every TRACK_SECONDS, until the pipe
    closes; then the session's end."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # only the pipe's end ends it
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    commands: list[list[str]] = []
    folders: list[str] = []
    known: dict[int, str] = {}
    pipe = sys.stdin.buffer
    while True:
        readable, _, _ = select.select([pipe], [], [], TRACK_SECONDS)
        if readable:
            raw = pipe.readline()
            if not raw:
                break
            try:
                message = json.loads(raw)
            except ValueError:
                continue
            if "command" in message:
                commands.append([str(part) for part in message["command"]])
            if "folder" in message:
                folders.append(str(message["folder"]))
        track(session, known)
    end_session(session, commands, folders, known)


if __name__ == "__main__":
    _serve(sys.argv[1])
