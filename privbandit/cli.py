"""The `privbandit` command line.

Each subcommand lives in a module exposing `add_parser(subparsers)` (which sets
`func` on its parser), named with a one-line summary in `COMMANDS`.  Modules
are imported lazily: `privbandit --help` imports none of them, and a command
imports only its own module, so heavy imports (the audits, plotting, Dask)
happen only for the command that needs them.  Errors go to stderr as one
line; `--debug` shows the traceback.  Each exit status means one thing:

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

# command -> (the module that registers it, its one-line summary), in help order
COMMANDS = {
    "tradeoff": ("privbandit.studies.command",
                 "run the embedded default budget-vs-regret study"),
    "study": ("privbandit.studies.command", "run or plot a study described in TOML"),
    "account": ("privbandit.studies.command",
                "print the (epsilon, delta) each configuration of a study spends, by ledger"),
    "audit": ("privbandit.auditing.command",
              "empirically audit the privacy claims of the mechanisms (and of OpenDP's and "
              "diffprivlib's)"),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser: `command`'s module registers its subcommands in full, every other
    command is listed by name and summary only (nothing is imported for it)."""
    parser = argparse.ArgumentParser(
        prog="privbandit",
        description="Privacy mechanisms, accounting, audits and private bandit studies.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    full = COMMANDS[command][0] if command in COMMANDS else None
    for name, (module, summary) in COMMANDS.items():
        if module != full:
            sub.add_parser(name, help=summary, add_help=False)
    if full is not None:
        importlib.import_module(full).add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # First the command's name (top-level --help and usage errors stop here), then its
    # module's parser in full.
    command = build_parser().parse_known_args(argv)[0].command
    args = build_parser(command).parse_args(argv)
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
