"""Every ```python block of the course runs, in order, one namespace per chapter, and prints what
the chapter shows it printing.

[Note: output blocks]
A ```text block is the output of the ```python block before it when only prose lies between
them (no heading, no other fenced block). Each chapter's python blocks run once, in order, in
one namespace; what each one prints is captured and compared with its output block:

- exact, by default: the block is the printed text, line for line (trailing spaces and
  trailing blank lines aside);
- abridged, when the line before the block is `<!-- output: abridged -->` (an HTML comment:
  nothing shows once rendered). Each line of the block must match one printed line, in order,
  and printed lines may be left out anywhere. In a line, `...` matches any text (an address, a
  timing, a number that depends on the machine); a line that is only `...` (a `# comment` may
  follow) marks lines left out, for the reader, and matches nothing.

A text block in that place that is not an output (pseudo-code, a diagram) says so with
`<!-- not an output -->` on the line before it; shell commands are ```sh blocks. A mismatch
fails with the chapter, the output block's line and a diff.
"""

import contextlib
import dataclasses
import difflib
import io
import pathlib
import re
import sys

import pytest

from minitorch import config

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"
CHAPTERS = sorted(DOCS.glob("[0-9]*.md"))
ABRIDGED = "<!-- output: abridged -->"
NOT_AN_OUTPUT = "<!-- not an output -->"


@dataclasses.dataclass(frozen=True)
class Block:
    """One fenced block of a chapter."""

    language: str  # what follows the opening ```: "python", "text", "sh", ""
    line: int  # the line of the opening fence, counting from 1
    body: str  # the lines inside the fences, each ending with "\n"
    before: tuple[str, ...]  # the lines between the previous fenced block and this one


def fenced_blocks(markdown: str) -> list[Block]:
    """The chapter's fenced blocks, in order: a fence opens on a line starting with ``` and
    closes on the next line that is ``` alone."""
    lines = markdown.splitlines()
    blocks, before, i = [], [], 0
    while i < len(lines):
        if not lines[i].startswith("```"):
            before.append(lines[i])
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].rstrip() == "```")
        body = "".join(line + "\n" for line in lines[i + 1 : end])
        blocks.append(Block(lines[i][3:].strip(), i + 1, body, tuple(before)))
        before, i = [], end + 1
    return blocks


def marker(block: Block) -> str | None:
    """The HTML comment on the last non-blank line before the block, if there is one."""
    prose = [line.strip() for line in block.before if line.strip()]
    return prose[-1] if prose and prose[-1].startswith("<!--") else None


def output_blocks(blocks: list[Block]) -> dict[int, Block]:
    """Which blocks show a python block's output: {index of the python block: its output}."""
    outputs = {}
    for n, block in enumerate(blocks):
        follows_code = n > 0 and blocks[n - 1].language == "python"
        heading = any(line.startswith("#") for line in block.before)
        is_output = block.language == "text" and follows_code and not heading
        if marker(block) not in (None, ABRIDGED, NOT_AN_OUTPUT):
            raise ValueError(f"line {block.line}: unknown marker {marker(block)}")
        if marker(block) is not None and not is_output:
            raise ValueError(f"line {block.line}: {marker(block)} on a block no code prints")
        if is_output and marker(block) != NOT_AN_OUTPUT:
            outputs[n - 1] = block
    return outputs


def printed_lines(text: str) -> list[str]:
    """The lines of a printed text, without trailing spaces or trailing blank lines."""
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def first_line_not_printed(shown: list[str], printed: list[str]) -> str | None:
    """An abridged block's first line that no printed line matches in order, or None."""
    position = 0
    for line in shown:
        if line.split("#")[0].strip() == "...":
            continue
        pattern = re.compile(".*".join(re.escape(part) for part in line.split("...")))
        while position < len(printed) and not pattern.fullmatch(printed[position]):
            position += 1
        if position == len(printed):
            return line
        position += 1
    return None


def mismatch(chapter: str, output: Block, printed: str) -> str | None:
    """Why `output` is not what its code printed, or None when it is."""
    shown, got = printed_lines(output.body), printed_lines(printed)
    where = f"{chapter}:{output.line}"
    if marker(output) == ABRIDGED:
        missing = first_line_not_printed(shown, got)
        if missing is None:
            return None
        printed_text = "\n".join(got) or "(nothing)"
        return (
            f"{where}: abridged output line {missing!r} is not printed, in order:\n{printed_text}"
        )
    if shown == got:
        return None
    diff = difflib.unified_diff(shown, got, f"{where} (shown)", "printed", lineterm="")
    return f"{where}: the output block differs from what the code prints:\n" + "\n".join(diff)


def run_chapter(chapter: pathlib.Path) -> list[str]:
    """Runs the chapter's python blocks in order, in one namespace, printing nothing; returns a
    message for each output block that is not what its code printed."""
    blocks = fenced_blocks(chapter.read_text())
    outputs = output_blocks(blocks)
    namespace: dict = {"__name__": f"docs_{chapter.stem}"}
    failures = []
    for n, block in enumerate(blocks):
        if block.language != "python":
            continue
        code = compile(block.body, f"{chapter.name} line {block.line}", "exec")
        captured = io.StringIO()
        try:
            with contextlib.redirect_stdout(captured):
                exec(code, namespace)  # noqa: S102
        except BaseException:
            sys.stdout.write(captured.getvalue())  # what it printed before failing
            raise
        if n in outputs and (why := mismatch(chapter.name, outputs[n], captured.getvalue())):
            failures.append(why)
    return failures


@pytest.mark.extras(*config.EXTRAS)  # the course shows the default configuration
@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_chapter_runs_and_prints_what_it_shows(chapter):
    failures = run_chapter(chapter)
    if failures:
        pytest.fail("\n\n".join(failures), pytrace=False)


def test_there_are_chapters():
    assert len(CHAPTERS) >= 5


FAKE_CHAPTER = """# A chapter

```python
print("one")
print(1 + 1)
```

```text
one
3
```

```python
print("two at 0x7f00")
print("three")
```

Prose may lie between a block and its output.

<!-- output: abridged -->
```text
two at ...
...
```

## After a heading, a text block is no output

```text
anything
```
"""


def test_a_wrong_output_fails_with_the_chapter_its_line_and_a_diff(tmp_path):
    chapter = tmp_path / "99-fake.md"
    chapter.write_text(FAKE_CHAPTER)
    (failure,) = run_chapter(chapter)
    assert failure.startswith("99-fake.md:8: the output block differs from what the code prints")
    assert "\n-3\n+2" in failure
    chapter.write_text(FAKE_CHAPTER.replace("one\n3", "one\n2"))
    assert run_chapter(chapter) == []
    chapter.write_text(FAKE_CHAPTER.replace("one\n3", "one\n2").replace("at ...", "at 0x0"))
    (failure,) = run_chapter(chapter)
    assert failure.startswith("99-fake.md:21: abridged output line 'two at 0x0' is not printed")


def test_an_abridged_output_matches_lines_in_order_with_wildcards():
    printed = ["x = 1", "address 0x7f00", "took 12 ms", "done"]
    assert first_line_not_printed(["x = 1", "...", "took ... ms", "done"], printed) is None
    assert first_line_not_printed(["    ...  # the rest", "done"], printed) is None
    assert first_line_not_printed(["done", "x = 1"], printed) == "x = 1"  # out of order
    assert first_line_not_printed(["took 13 ms"], printed) == "took 13 ms"
    assert first_line_not_printed(["took"], printed) == "took"  # a line matches a whole line


def test_a_marker_on_a_block_no_code_prints_is_an_error():
    markdown = FAKE_CHAPTER.replace("```text\nanything", f"{NOT_AN_OUTPUT}\n```text\nanything")
    with pytest.raises(ValueError, match="line 29: <!-- not an output --> on a block no code"):
        output_blocks(fenced_blocks(markdown))


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
