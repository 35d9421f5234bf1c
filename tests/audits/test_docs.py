"""The Python examples of docs/audits.md run as written."""
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "audits.md"


def python_blocks() -> list[str]:
    parts = DOC.read_text(encoding="utf-8").split("```python")[1:]
    return [p.split("```", 1)[0] for p in parts]


def test_the_doc_has_examples():
    assert len(python_blocks()) >= 3


@pytest.mark.parametrize("index", range(len(python_blocks())))
def test_example_runs(index, capsys):
    exec(compile(python_blocks()[index], f"docs/audits.md[{index}]", "exec"), {})
