"""Every ```python block of the course runs, in order, one namespace per chapter."""

import pathlib
import re

import pytest

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"
CHAPTERS = sorted(DOCS.glob("[0-9]*.md"))


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_chapter_runs(chapter, capsys):
    blocks = re.findall(r"```python\n(.*?)```", chapter.read_text(), flags=re.S)
    namespace: dict = {"__name__": f"docs_{chapter.stem}"}
    for n, block in enumerate(blocks):
        code = compile(block, f"{chapter.name} block {n + 1}", "exec")
        exec(code, namespace)  # noqa: S102


def test_there_are_chapters():
    assert len(CHAPTERS) >= 5
