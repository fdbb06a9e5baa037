"""A warm start loads only what it runs: what graph breaks need is imported at the first break.

Each test runs a fresh interpreter (the modules are what it loaded, not what other tests did).
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

# Compiles and runs a function captured whole, then one with a graph break; prints which of
# the modules resume functions need were loaded after each.
PROGRAM = """
import sys
import minitorch

def whole(x):
    return minitorch.sin(x) ** 2 + minitorch.cos(x) ** 2

def broken(x):
    y = x.sin()
    print(end="")
    return y.cos()

x = minitorch.randn(8)
needed = ("bytecode", "tracer.dynamo.resume_execution")
minitorch.compile(whole)(x)
print(*[m in sys.modules for m in needed])
minitorch.compile(broken)(x)
print(*[m in sys.modules for m in needed])
"""


def test_resume_functions_load_bytecode_at_the_first_graph_break():
    result = subprocess.run(
        [sys.executable, "-c", PROGRAM], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["False False", "True True"]
