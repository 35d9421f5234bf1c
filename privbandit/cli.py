"""The `privbandit` command line.

Each subcommand lives in its own module exposing `add_parser(subparsers)` (which
sets `func` on its parser) and is imported lazily, so heavy imports (plotting,
Dask) happen only for the command that needs them.  Errors go to stderr as
one line; `--debug` shows the traceback.  Each exit status means one thing:

- 0: success;
- 1: a finding (`audit`: a violation of the claimed guarantee);
- 2: bad input or configuration (also a usage error from argparse);
- 3: some runs of a study failed (finished runs are kept for the next attempt);
- 4: the results folder is in use by another privbandit process;
- 130: interrupted (Ctrl-C).
"""
from __future__ import annotations

import argparse
import importlib
import sys

EXIT_BAD_INPUT, EXIT_BUSY, EXIT_INTERRUPTED = 2, 4, 130

# Modules that register subcommands, in help order.
COMMAND_MODULES = ("privbandit.studies.command", "privbandit.auditing.command")


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
    from privbandit.accounting.errors import PrivacyError

    from .errors import FolderBusyError

    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("privbandit: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except FolderBusyError as exc:
        print(f"privbandit {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_BUSY
    except (PrivacyError, ValueError, TypeError, OSError, LookupError, ImportError) as exc:
        if args.debug:
            raise
        print(f"privbandit {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
