"""Whether the process that owns a scratch directory or a RUNNING run still lives: one test per branch."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from pipeline.files import host_tag, process_alive, process_start


def _gone_pid() -> int:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    return gone.pid


def test_host_tag_is_safe_in_a_file_name() -> None:
    assert host_tag("build-01.example.org") == "build_01.example.org"
    assert host_tag("") == "host"
    assert host_tag() == host_tag(socket.gethostname()) and "-" not in host_tag()


def test_a_live_process_of_this_host_is_alive() -> None:
    me = socket.gethostname()
    assert process_alive(me, os.getpid())
    assert process_alive(me, os.getpid(), process_start(os.getpid()))


def test_a_finished_process_of_this_host_is_gone() -> None:
    assert not process_alive(socket.gethostname(), _gone_pid())


def test_a_reused_pid_is_gone() -> None:
    assert process_start(os.getpid()) is not None  # Linux /proc
    assert not process_alive(socket.gethostname(), os.getpid(), "1")


def test_the_host_is_compared_as_written_into_file_names() -> None:
    assert not process_alive(host_tag(), _gone_pid())


def test_another_or_unknown_host_cannot_be_checked_so_counts_as_alive() -> None:
    pid = _gone_pid()
    assert process_alive(socket.gethostname() + "-other", pid)
    assert process_alive("", pid)
