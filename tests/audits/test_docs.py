"""The Python examples of docs/audits.md and docs/one_run_audits.md run as written."""
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = {"audits.md": 3, "one_run_audits.md": 1}  # page -> examples it must have at least


def python_blocks(page: str) -> list[str]:
    parts = (DOCS / page).read_text(encoding="utf-8").split("```python")[1:]
    return [p.split("```", 1)[0] for p in parts]


@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_doc_has_examples(page):
    assert len(python_blocks(page)) >= PAGES[page]


@pytest.mark.parametrize("page,index", [(p, i) for p in sorted(PAGES)
                                        for i in range(len(python_blocks(p)))])
def test_example_runs(page, index, capsys):
    exec(compile(python_blocks(page)[index], f"docs/{page}[{index}]", "exec"), {})
