"""The commands of the README's bash blocks, as a reader would type them: continuation lines joined, comments
removed, `a && b` split in two, each with the line it starts on."""

from __future__ import annotations

import re
from dataclasses import dataclass

BLOCK = re.compile(r"^```bash\n(.*?)^```", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Command:
    """One command of a README bash block: its text, the README line it starts on, and its block's text."""

    text: str
    line: int
    block: str

    def where(self) -> str:
        return f"README.md line {self.line}: {self.text}"


def readme_commands(readme: str) -> list[Command]:
    """Every command of every ```bash block, in README order."""
    commands = []
    for block in BLOCK.finditer(readme):
        first_line = readme.count("\n", 0, block.start(1)) + 1
        lines = block.group(1).split("\n")
        pending = ""
        start = 0
        for offset, raw in enumerate(lines):
            if not pending:
                start = first_line + offset
            text = _without_comment(raw).rstrip()
            if text.endswith("\\"):
                pending += text[:-1].rstrip() + " "
                continue
            whole = (pending + text.strip()).strip()
            pending = ""
            for part in _split_and(whole):
                if part:
                    commands.append(Command(part, start, block.group(1)))
    return commands


def _without_comment(line: str) -> str:
    """`line` up to a `#` that starts a shell comment (at the start or after a space, outside quotes)."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def _split_and(command: str) -> list[str]:
    """`a && b` as [a, b] (outside quotes)."""
    parts, quote, current = [], "", ""
    i = 0
    while i < len(command):
        char = command[i]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif command.startswith(" && ", i):
            parts.append(current.strip())
            current, i = "", i + 4
            continue
        current += char
        i += 1
    parts.append(current.strip())
    return parts


def expand(text: str, environ: dict[str, str]) -> str:
    """Shell parameter expansion of `${NAME:-default}` and `$NAME` from `environ`."""

    def default(match: re.Match[str]) -> str:
        return environ.get(match.group(1)) or match.group(2)

    text = re.sub(r"\$\{([A-Z_][A-Z0-9_]*):-([^}]*)\}", default, text)
    return re.sub(r"\$([A-Z_][A-Z0-9_]*)", lambda m: environ.get(m.group(1), ""), text)
