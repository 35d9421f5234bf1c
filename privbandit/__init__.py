"""privbandit: privacy mechanisms, accountants and audits, and the federated and
private bandits built on them.

Subpackages: `privbandit.accounting` (events, accountants, ledgers,
calibration), `privbandit.mechanisms` (randomized releases, masks, anonymous
aggregation), `privbandit.audits` (empirical audits and attacks), and the bandit
runtime below them.  The entry points named here load on first use, so
`import privbandit.accounting` pulls in nothing but NumPy and SciPy.
"""
def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("privbandit")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"


__version__ = _version()

# name -> module that defines it
_ENTRY_POINTS = {
    "RunResult": "privbandit.result",
    "algorithms": "privbandit.registry",
    "get_algorithm": "privbandit.registry",
    "register_algorithm": "privbandit.registry",
    "run": "privbandit.runtime",
    "load_study": "privbandit.studies.spec",
    "run_study": "privbandit.studies.runner",
}

__all__ = ["__version__", *_ENTRY_POINTS]


def __getattr__(name: str):
    module = _ENTRY_POINTS.get(name)
    if module is None:
        raise AttributeError(f"module 'privbandit' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(module), name)


def __dir__() -> list[str]:
    return sorted(__all__)
