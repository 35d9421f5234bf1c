"""The Python examples of docs/mechanisms.md and docs/accounting.md run as written."""
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
BLOCKS = [(name, part.split("```", 1)[0])
          for name in ("mechanisms.md", "accounting.md")
          for part in (DOCS / name).read_text(encoding="utf-8").split("```python")[1:]]


@pytest.mark.parametrize(("name", "code"), BLOCKS,
                         ids=[f"{name}[{i}]" for i, (name, _) in enumerate(BLOCKS)])
def test_example_runs(name, code):
    exec(compile(code, f"docs/{name}", "exec"), {})
