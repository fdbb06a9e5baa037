"""Every ```python block of the course runs, in order, one namespace per chapter."""

import pathlib
import re

import pytest

from minitorch import config

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"
CHAPTERS = sorted(DOCS.glob("[0-9]*.md"))


@pytest.mark.extras(*config.EXTRAS)  # the course shows the default configuration
@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_chapter_runs(chapter, capsys):
    blocks = re.findall(r"```python\n(.*?)```", chapter.read_text(), flags=re.S)
    namespace: dict = {"__name__": f"docs_{chapter.stem}"}
    for n, block in enumerate(blocks):
        code = compile(block, f"{chapter.name} block {n + 1}", "exec")
        exec(code, namespace)  # noqa: S102


def test_there_are_chapters():
    assert len(CHAPTERS) >= 5


def test_the_primitive_set_document_lists_exactly_the_primitives():
    from minitorch.ops import OPS

    text = (DOCS / "primitives.md").read_text()
    rows = [
        line.split("|")[2]
        for line in text.splitlines()
        if line.startswith("| ") and line.count("|") == 4 and "`" in line.split("|")[2]
    ]
    documented = {name for row in rows for name in re.findall(r"`(\w+)`", row)}
    composites_text = text[text.index("Composites") :]
    composites = set(re.search(r"`([a-z_0-9 \n]+)`", composites_text).group(1).split())
    assert documented == {n for n, op in OPS.items() if op.is_primitive}
    assert composites == {n for n, op in OPS.items() if not op.is_primitive}
