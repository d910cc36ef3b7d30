"""A real PostgreSQL (initdb/pg_ctl in a temporary directory, as an unprivileged user) and a real `mlflow server`
on 127.0.0.1 with it as backend store and a local directory as the shared artifact root."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support.reaper import current, marked_folder
from tests.support.serve_process import free_port, wait_until_healthy

DB_USER = "scoperag"
DB_NAME = "mlflow"
# The Debian package's own service account: never a login, owns nothing of ours but the temporary cluster.
SERVICE_USER = "postgres"
SERVER_START_SECONDS = 120


@dataclass(frozen=True)
class TeamServer:
    """The tracking server's URI, the PostgreSQL URI behind it and the artifact root it serves."""

    tracking_uri: str
    database_uri: str
    artifact_root: Path


def postgres_bin() -> Path | None:
    """The directory holding initdb and pg_ctl (on PATH, else Debian's /usr/lib/postgresql/<version>/bin)."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    return Path(versions[-1]).parent if versions else None


def why_not() -> str | None:
    """Why this machine cannot run the server test, or None when it can."""
    if postgres_bin() is None:
        return "PostgreSQL is absent (apt-get install postgresql): no initdb/pg_ctl on PATH or in /usr/lib/postgresql"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(SERVICE_USER)
        except KeyError:
            return f"running as root and there is no unprivileged '{SERVICE_USER}' user to run PostgreSQL as"
        if shutil.which("runuser") is None:
            return "running as root and runuser is missing: PostgreSQL refuses to run as root"
    return None


@contextlib.contextmanager
def postgres() -> Iterator[str]:
    """A PostgreSQL cluster in a new temporary directory, listening on 127.0.0.1 only; yields the URI of its
    empty database, and stops it and removes the directory on leaving."""
    binaries = postgres_bin()
    if binaries is None:
        raise RuntimeError(why_not())
    # directly under the system temporary directory (pytest's own are private to root); should the run be killed,
    # the session's reaper stops the cluster and removes the folder
    with marked_folder("scoperag-postgres-") as where:
        yield from _cluster(binaries, where)


def _cluster(binaries: Path, where: Path) -> Iterator[str]:
    data, sockets = where / "data", where / "sockets"
    sockets.mkdir(parents=True)
    as_user: list[str] = []
    if os.geteuid() == 0:  # PostgreSQL refuses root: the cluster's files belong to the service user
        account = pwd.getpwnam(SERVICE_USER)
        os.chown(where, account.pw_uid, account.pw_gid)
        os.chown(sockets, account.pw_uid, account.pw_gid)
        as_user = ["runuser", "-u", SERVICE_USER, "--"]
    port = free_port()
    quiet = {"capture_output": True, "text": True, "check": True}
    stop = [*as_user, str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"]
    session_reaper = current()
    if session_reaper is not None:
        session_reaper.run_on_end(stop)
    subprocess.run(
        [*as_user, str(binaries / "initdb"), "-D", str(data), "-U", DB_USER, "--auth=trust", "-E", "UTF8"], **quiet
    )
    options = f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off"
    start = [*as_user, str(binaries / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(where / "log"), "-w"]
    subprocess.run([*start, "start"], **quiet)
    try:
        import psycopg

        with psycopg.connect(host="127.0.0.1", port=port, user=DB_USER, dbname="postgres", autocommit=True) as db:
            db.execute(f"CREATE DATABASE {DB_NAME}")
        yield f"postgresql://{DB_USER}@127.0.0.1:{port}/{DB_NAME}"
    finally:
        subprocess.run([*as_user, str(binaries / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"], check=False)


@contextlib.contextmanager
def mlflow_server(database_uri: str, artifact_root: Path, log_file: Path) -> Iterator[str]:
    """`mlflow server` on 127.0.0.1 over `database_uri`, serving artifacts from `artifact_root`; yields its URL."""
    port = free_port()
    env = {**os.environ, "MLFLOW_DISABLE_TELEMETRY": "true", "MLFLOW_TRACKING_URI": ""}
    env.pop("MLFLOW_TRACKING_URI")
    command = [
        *(sys.executable, "-m", "mlflow", "server"),
        *("--backend-store-uri", database_uri),
        *("--artifacts-destination", str(artifact_root)),
        *("--host", "127.0.0.1", "--port", str(port), "--workers", "1"),
    ]
    with log_file.open("w") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(
            server, f"{url}/health", SERVER_START_SECONDS, lambda: log_file.read_text()[-2000:], "mlflow server"
        )
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, 15)  # the server and the workers it started, and nothing else
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, 9)
            server.wait()


@contextlib.contextmanager
def team_server(where: Path) -> Iterator[TeamServer]:
    """PostgreSQL and an mlflow server on it, both stopped on leaving."""
    artifacts = where / "artifacts"
    artifacts.mkdir(parents=True)
    with postgres() as database, mlflow_server(database, artifacts, where / "mlflow.log") as url:
        yield TeamServer(url, database, artifacts)
