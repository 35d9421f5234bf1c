"""docs/bandits.md's runnable python blocks (those that import) run as written."""
from pathlib import Path

import numpy as np

DOC = Path(__file__).resolve().parents[3] / "docs" / "bandits.md"


def runnable_blocks() -> list[str]:
    parts = DOC.read_text(encoding="utf-8").split("```python")[1:]
    blocks = [part.split("```", 1)[0] for part in parts]
    return [b for b in blocks if b.lstrip().startswith(("from ", "import "))]


def test_the_quick_example_and_the_prefetch_example_run():
    first, prefetch, lockstep = runnable_blocks()
    namespace: dict = {}
    exec(compile(first, str(DOC), "exec"), namespace)
    assert namespace["result"].cluster_error is not None
    namespace = {}
    exec(compile(prefetch, str(DOC), "exec"), namespace)
    assert namespace["env"].prefetch and np.isfinite(namespace["result"].total_regret)
    namespace = {}
    exec(compile(lockstep, str(DOC), "exec"), namespace)
    assert [r.timings["lockstep_replicates"] for r in namespace["results"]] == [16] * 16
