"""The `privbandit` command line.

Each subcommand lives in its own module exposing `add_parser(subparsers)` (which
sets `func` on its parser) and is imported lazily, so heavy imports (plotting,
Dask) happen only for the command that needs them.  Exit status: 0 success,
1 a finding (an audit violation), 2 bad input or configuration.  Errors go to
stderr as one line; `--debug` shows the traceback.
"""
from __future__ import annotations

import argparse
import importlib
import sys

# Modules that register subcommands, in help order.
COMMAND_MODULES = ("privbandit.studies.command", "privbandit.audit_command")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="privbandit",
        description="Privacy mechanisms, accounting, audits and private bandit studies.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("privbandit: interrupted", file=sys.stderr)
        return 2
    except (ValueError, TypeError, OSError, LookupError, ImportError) as exc:
        if args.debug:
            raise
        print(f"privbandit {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
