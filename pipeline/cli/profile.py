"""`scoperag profile list|add|activate|deactivate|remove|export|import`: named prompt profiles pointing at exported
programs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.cli.common import Commands, console, output, profile_paths, styled

if TYPE_CHECKING:
    from pipeline.export.profiles import ProfilePaths


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
    actions.add_parser(
        "deactivate", help="no profile active: ask/evaluate/serve use the shipped (or given) program; none is removed"
    )
    q = actions.add_parser("remove", help="unregister a profile (and delete its export when it was imported)")
    q.add_argument("name")
    q.add_argument("--yes", action="store_true", help="remove without asking (required off a terminal)")
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
    elif args.action == "deactivate":
        was = profiles.deactivate(paths)
        said = f"profile '{was.name}' is no longer active" if was is not None else "no profile was active"
        out.print(styled(f"{said}; ask, evaluate and serve use the shipped program unless --program names one"))
    elif args.action == "remove":
        return remove(paths, args.name, args.yes)
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


def remove(paths: ProfilePaths, name: str, yes: bool) -> int:
    """`profile remove NAME`: says what goes (the registration; the export too when it was imported) and asks
    first unless `yes`; off a terminal `yes` is required."""
    from pipeline.errors import ProfileError
    from pipeline.export import profiles

    info = next((p for p in profiles.list_profiles(paths) if p.name == profiles.check_name(name)), None)
    if info is None:
        raise ProfileError(name, "is no profile", "List them with `scoperag profile list`")
    imported = info.program.resolve() == (paths.root / name).resolve()
    goes = f"profile '{name}' and its imported export {info.program}" if imported else f"profile '{name}'"
    kept = "" if imported else f" (its export {info.program} is kept)"
    if not yes:
        notices = console()
        if not sys.stdin.isatty():
            raise ProfileError(name, "was not removed", "Confirm with --yes when not at a terminal")
        notices.print(styled(f"remove {goes}{kept}? [y/N] "), end="")
        if input().strip().lower() not in ("y", "yes"):
            notices.print("nothing was removed")
            return 1
    profiles.remove_profile(paths, name)
    output().print(styled(f"removed {goes}{kept}"))
    return 0
