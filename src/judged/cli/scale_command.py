"""``judged scale``: show or check a grade scale (the TOML the judging app also reads)."""

from __future__ import annotations

import sys

from . import Formatter
from .common import format_help, print_json

HELP = """Show a grade scale, check it, and optionally check a qrels file against it.
With no FILE, print the default scale's TOML (0 not relevant, 1 useful background,
2 direct support, 3 complete answer) to copy beside your qrels and edit.

examples:
  judged scale > scale.toml
  judged scale scale.toml --qrels qrels.txt
"""


def register(sub) -> None:
    p = sub.add_parser("scale", help="show or check a grade scale", description=HELP,
                       formatter_class=Formatter)
    p.add_argument("file", nargs="?", help="grade scale TOML (default: print the default scale)")
    p.add_argument("--qrels", help="check that every grade in these qrels is on the scale")
    p.add_argument("--format", choices=["toml", "json"], default="toml", help=format_help(["toml", "json"]))
    p.set_defaults(func=run)


def run(args) -> int:
    from ..core.io import read_qrels
    from ..core.checks.scale import default_scale_text, read_scale

    scale = read_scale(args.file)
    if args.qrels:
        scale.check_qrels(read_qrels(args.qrels))
    if args.format == "json":
        print_json(scale.to_dict())
    elif args.file is None:
        sys.stdout.write(default_scale_text())
    else:
        with open(args.file, encoding="utf-8") as fh:
            sys.stdout.write(fh.read())
    if args.qrels:
        print(f"# every grade in {args.qrels} is on the scale", file=sys.stderr)
    return 0
