"""Which TCP sockets a process tree listens on, read from Linux's /proc (no third-party package)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
_LISTEN = "0A"


@dataclass(frozen=True)
class Listener:
    """A listening TCP socket: the process holding it, its command name, and the local address and port."""

    pid: int
    command: str
    address: ipaddress.IPv4Address | ipaddress.IPv6Address
    port: int

    @property
    def loopback_only(self) -> bool:
        mapped = getattr(self.address, "ipv4_mapped", None)
        return (mapped or self.address).is_loopback


def _address(hex_address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    raw = bytes.fromhex(hex_address)
    if len(raw) == 4:
        return ipaddress.IPv4Address(raw[::-1])
    # /proc writes an IPv6 address as four 32-bit words, each in host (little-endian) order
    return ipaddress.IPv6Address(b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4)))


def _listening_inodes() -> dict[str, tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]]:
    found = {}
    for table in ("tcp", "tcp6"):
        path = PROC / "net" / table
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == _LISTEN:
                address, port = fields[1].split(":")
                found[fields[9]] = (_address(address), int(port, 16))
    return found


def process_tree(root: int) -> list[int]:
    """`root` and every process descended from it that is still running."""
    children: dict[int, list[int]] = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry.name))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, []))
    return tree


def command(pid: int) -> str:
    try:
        return (PROC / str(pid) / "comm").read_text().strip()
    except OSError:
        return ""


def listeners(pids: list[int]) -> list[Listener]:
    """Every listening TCP socket held by one of `pids`."""
    inodes = _listening_inodes()
    found = []
    for pid in pids:
        try:
            descriptors = list((PROC / str(pid) / "fd").iterdir())
        except OSError:
            continue
        for descriptor in descriptors:
            try:
                target = str(descriptor.readlink())
            except OSError:
                continue
            inode = target[len("socket:[") : -1] if target.startswith("socket:[") else None
            if inode in inodes:
                address, port = inodes[inode]
                found.append(Listener(pid, command(pid), address, port))
    return found
