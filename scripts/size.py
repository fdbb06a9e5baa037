"""Print the project's size budget: code lines per package, and the op table's primitives.

    python scripts/size.py

Explanation is free, code is not: comment, docstring and blank lines are counted
apart from code lines, so growth is seen where it costs.
"""

from __future__ import annotations

import io
import pathlib
import sys
import tokenize

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = ("minitorch", "tracer", "ir", "codegen")


def count(path: pathlib.Path) -> tuple[int, int]:
    """(code lines, other lines) of a Python file; docstrings count as explanation."""
    source = path.read_text()
    explained: set[int] = set()
    previous = tokenize.OP
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            explained.add(tok.start[0])
        elif tok.type == tokenize.STRING and previous in (
            tokenize.INDENT,
            tokenize.NEWLINE,
            tokenize.DEDENT,
            tokenize.NL,
        ):
            explained.update(range(tok.start[0], tok.end[0] + 1))  # a docstring
        if tok.type not in (tokenize.NL, tokenize.COMMENT):
            previous = tok.type
    lines = source.splitlines()
    code = sum(
        1
        for i, line in enumerate(lines, 1)
        if line.strip() and i not in explained and not line.strip().startswith("#")
    )
    return code, len(lines) - code


def main() -> None:
    sys.path.insert(0, str(ROOT))
    print(f"{'package':<12}{'files':>6}{'code':>8}{'explained':>11}")
    total = 0
    for package in PACKAGES:
        files = sorted((ROOT / package).rglob("*.py"))
        code = explained = 0
        for f in files:
            c, e = count(f)
            code, explained = code + c, explained + e
        total += code
        print(f"{package:<12}{len(files):>6}{code:>8}{explained:>11}")
    print(f"{'total':<12}{'':>6}{total:>8}")

    from minitorch.ops import OPS

    primitives = sorted(name for name, op in OPS.items() if op.is_primitive)
    composites = sorted(name for name, op in OPS.items() if not op.is_primitive)
    print(f"\nop table: {len(OPS)} ops, {len(primitives)} primitives, {len(composites)} composites")
    print("primitives:", " ".join(primitives))
    print("composites:", " ".join(composites))


if __name__ == "__main__":
    main()
