"""`scoperag profile list|add|activate|export|import`: named prompt profiles pointing at exported programs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pipeline.cli.common import Commands, output, profile_paths, styled


def register(commands: Commands) -> None:
    """Add `profile` and its actions."""
    p = commands.add_parser("profile", help="named prompt profiles pointing at exported programs")
    actions = p.add_subparsers(dest="action", required=True)
    actions.add_parser("list", help="list profiles (* marks the active one)")
    q = actions.add_parser("add", help="register an exported program under a name")
    q.add_argument("name")
    q.add_argument("export_dir")
    q.add_argument("--note", default="")
    q.add_argument("--yes", action="store_true", help="replace an existing profile of that name")
    q = actions.add_parser("activate", help="make a profile the one ask/evaluate/serve use")
    q.add_argument("name")
    q = actions.add_parser("export", help="one profile (or --all) as versioned JSON")
    q.add_argument("name", nargs="?", help="the profile to export")
    q.add_argument("--all", action="store_true", help="every profile and which one is active")
    q.add_argument("--out", help="file to write (default: stdout)")
    q = actions.add_parser("import", help="import a profile JSON under a name")
    q.add_argument("file")
    q.add_argument("--name", required=True)
    q.add_argument("--yes", action="store_true", help="confirm overwriting an existing profile")
    p.set_defaults(func=cmd_profile)


def cmd_profile(args: argparse.Namespace) -> int:
    from rich.table import Table

    from pipeline.export import profiles
    from pipeline.export.jsonio import read_limited
    from pipeline.files import write_file_atomic

    paths = profile_paths()
    out = output()
    if args.action == "list":
        table = Table(title="prompt profiles")
        for column in ("", "name", "program", "created", "note"):
            table.add_column(column)
        for info in profiles.list_profiles(paths):
            cells = ("*" if info.active else "", info.name, str(info.program), info.created_at, info.note)
            table.add_row(*(styled(cell) for cell in cells))  # a note is data: never markup
        out.print(table)
    elif args.action == "add":
        info = profiles.add_profile(paths, args.name, Path(args.export_dir), note=args.note, confirm_overwrite=args.yes)
        out.print(styled(f"added profile '{info.name}' -> {info.program}"))
    elif args.action == "activate":
        info = profiles.activate(paths, args.name)
        out.print(styled(f"active profile: '{info.name}' ({info.program})"))
    elif args.action == "export":
        if args.all == bool(args.name):
            out.print("give a profile name or --all (not both)")
            return 2
        data = profiles.export_all(paths) if args.all else profiles.export_profile(paths, args.name)
        payload = profiles.profile_json(data)
        if args.out:
            write_file_atomic(Path(args.out), payload)
            out.print(styled(f"wrote {args.out} ({len(payload)} bytes)"))
        else:
            sys.stdout.buffer.write(payload)
    elif args.action == "import":
        document = read_limited(Path(args.file), args.file, profiles.MAX_PROFILE_BYTES)  # regular files, bounded
        info = profiles.import_profile(paths, document, args.name, confirm_overwrite=args.yes)
        out.print(styled(f"imported profile '{info.name}' (active profile unchanged)"))
    return 0
