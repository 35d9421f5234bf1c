"""The command line's start-up: `privbandit --help` against `python -c "import privbandit"`.

Runs each command `--repeats` times, alternating, in fresh processes, and
prints the median wall time of each and their ratio (`help_over_import`; the
target is <= 3: the help imports no command module).  The console script is
the `privbandit` next to this Python (a virtual environment's), else
`python -m privbandit.cli`.

    .venv/bin/python bench/bench_cli.py [--repeats N] [--smoke]
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def wall_time(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--smoke", action="store_true", help="one run of each (the tests)")
    args = parser.parse_args()
    if args.smoke:
        args.repeats = 1
    script = Path(sys.executable).with_name("privbandit")
    if not script.exists():
        found = shutil.which("privbandit")
        script = Path(found) if found else None
    help_command = [str(script), "--help"] if script else [sys.executable, "-m",
                                                           "privbandit.cli", "--help"]
    import_command = [sys.executable, "-c", "import privbandit"]
    times: dict[str, list[float]] = {"help": [], "import": []}
    wall_time(help_command), wall_time(import_command)  # warm the file cache
    for _ in range(args.repeats):
        times["help"].append(wall_time(help_command))
        times["import"].append(wall_time(import_command))
    help_s, import_s = (statistics.median(times[k]) for k in ("help", "import"))
    print(f"help command: {' '.join(help_command)}")
    print(f"help_s: {help_s:.4f}")
    print(f"import_s: {import_s:.4f}")
    print(f"help_over_import: {help_s / import_s:.3f}")


if __name__ == "__main__":
    main()
