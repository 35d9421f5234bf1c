"""docs/fclub.md's python block runs as written (so it never drifts)."""
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "fclub.md"


def test_the_docs_example_runs():
    text = DOC.read_text(encoding="utf-8")
    block = text.split("```python", 1)[1].split("```", 1)[0]
    namespace: dict = {}
    exec(compile(block, str(DOC), "exec"), namespace)
    assert "-CDP" in namespace["policy"].privacy().summary
