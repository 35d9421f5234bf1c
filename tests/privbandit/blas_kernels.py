"""OpenBLAS kernels ("core types") to run the golden set under besides the machine's own.

An OpenBLAS built with DYNAMIC_ARCH (NumPy's wheels) picks its kernels for
the CPU and takes another when `OPENBLAS_CORETYPE` names one; another kernel
sums in another order, as another CPU would.  `other_kernel(order)` is the
first kernel of `order` that differs from the machine's default, that this
CPU can execute, and that really changes the kernels of a fresh interpreter
(threadpoolctl then reports another architecture: for Prescott, Katmai);
None if there is none (not x86-64, not OpenBLAS, no DYNAMIC_ARCH).  Run as
a script, it prints the kernel the CI's second golden pass uses (nothing if
none).
"""
from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

# core type -> /proc/cpuinfo flags it needs (pni is SSE3)
NEEDS = {"Haswell": {"avx2", "fma"}, "Sandybridge": {"avx"}, "Prescott": {"pni"}}
TEST_ORDER = ("Prescott", "Sandybridge", "Haswell")  # the test suite's subprocess
CI_ORDER = ("Haswell", "Sandybridge", "Prescott")  # the CI's second pass: another one
REPORT = ("import numpy, threadpoolctl; print(next((i.get('architecture') or '' for i in "
          "threadpoolctl.threadpool_info() if i.get('internal_api') == 'openblas'), ''))")


def kernel_of(environ: dict[str, str]) -> str:
    """The OpenBLAS kernel a fresh interpreter runs with `environ` ('' if no OpenBLAS)."""
    done = subprocess.run([sys.executable, "-c", REPORT], env=environ, capture_output=True,
                          text=True, timeout=120, check=False)
    return done.stdout.strip()


def cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return set()
    return {flag for line in text.splitlines() if line.startswith("flags")
            for flag in line.split(":", 1)[1].split()}


def other_kernel(order: tuple[str, ...]) -> str | None:
    """The first kernel of `order` this machine runs besides its default (see above)."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return None
    environ = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    default = kernel_of(environ).lower()
    if not default:
        return None
    flags = cpu_flags()
    for kernel in order:
        if kernel.lower() != default and NEEDS[kernel] <= flags:
            if kernel_of({**environ, "OPENBLAS_CORETYPE": kernel}).lower() not in ("", default):
                return kernel
    return None


if __name__ == "__main__":
    print(other_kernel(CI_ORDER) or "")
