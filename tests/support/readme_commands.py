"""The commands of the README's bash blocks, as a reader would type them: continuation lines joined, comments
removed, `a && b` split in two, each with the line it starts on; the files its other blocks show (a block whose
first line is `# NAME`); and the README's fences as its Markdown parser renders them."""

from __future__ import annotations

import re
from dataclasses import dataclass

BLOCK = re.compile(r"^```bash\n(.*?)^```", re.MULTILINE | re.DOTALL)
# A block that shows a file the commands read: its first line names it ("# my-settings.toml").
FILE_BLOCK = re.compile(r"^```[a-z]+\n# ([\w.-]+)\n(.*?)^```", re.MULTILINE | re.DOTALL)


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


def readme_files(readme: str) -> dict[str, str]:
    """The files the README shows for its commands to read: name -> text (the block without its name line)."""
    return {match.group(1): match.group(2) for match in FILE_BLOCK.finditer(readme)}


@dataclass(frozen=True)
class Fence:
    """A fenced code block as the Markdown parser reads it: its info string, its lines (1-based, closing fence
    included when there is one), whether a closing fence ends it, and its text."""

    info: str
    first: int
    last: int
    closed: bool
    text: str


def rendered_fences(readme: str) -> list[Fence]:
    """Every fenced block of `readme` as the project's Markdown parser (markdown-it, CommonMark) renders it. A
    fence whose closing line is missing or carries text ("``` It is ...") is not closed: CommonMark then runs the
    block on to the next bare fence, or to the end of the file."""
    from markdown_it import MarkdownIt

    lines = readme.split("\n")
    fences = []
    for token in MarkdownIt("commonmark").parse(readme):
        if token.type != "fence" or token.map is None:
            continue
        first, end = token.map
        closing = lines[end - 1].strip() if end - 1 > first else ""
        closed = end - 1 > first and set(closing) == {token.markup[0]} and len(closing) >= len(token.markup)
        fences.append(Fence(token.info.strip(), first + 1, end, closed, token.content))
    return fences


def fence_problems(readme: str) -> list[str]:
    """What is wrong with the README's fences, each naming its line: a fence never closed, a block holding a line
    that opens a fence (a fence closed mid-line upstream swallowed what follows), a heading rendered inside a
    block, and a bash block the command reader sees that the renderer does not (or the other way round)."""
    problems = []
    fences = rendered_fences(readme)
    for fence in fences:
        where = f"README.md line {fence.first}"
        if not fence.closed:
            problems.append(f"{where}: the ```{fence.info} block is never closed (a closing fence stands alone)")
        for offset, line in enumerate(fence.text.split("\n")):
            if line.startswith("```"):
                problems.append(f"{where}: line {fence.first + 1 + offset} opens a fence inside this block")
            elif re.match(r"#{2,6} \S", line):  # a Markdown heading ("# " alone is a shell comment)
                problems.append(f"{where}: the heading at line {fence.first + 1 + offset} renders as code")
    rendered = [f.text for f in fences if f.info == "bash"]
    read = [m.group(1) for m in BLOCK.finditer(readme)]
    if rendered != read:
        problems.append(
            f"the command reader finds {len(read)} bash blocks and the renderer {len(rendered)}, or their texts "
            "differ: a fence is malformed"
        )
    return problems
