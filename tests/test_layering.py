"""One direction of imports: minitorch -> tracer.fx -> tracer -> ir -> codegen.

`lint-imports` checks the import statements ([Note: one direction of imports] in pyproject.toml);
these tests check what a fresh interpreter actually loads when it imports every module of one
stage, so they also catch a facade that imports a later stage eagerly ([Note: lazy facades] in
minitorch/__init__.py). One interpreter per stage; a failure names each module that should not
have loaded and the module of the stage whose import loaded it first.
"""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The ways up from the eager core into the later stages; minitorch.compile is the driver above all.
FACADES = (
    "minitorch.fx",
    "minitorch.compile",
    "minitorch.course",
    "minitorch.export",
    "minitorch.jit",
    "minitorch._dynamo",
)

# Runs in the fresh interpreter: `python -c IMPORT_ALL package (all|alone) [skip ...]`. Finds the
# modules on disk, because pkgutil.walk_packages imports every package it walks, skipped ones
# too; leaves out `__main__` modules (they run a program), modules that need a GPU and the
# subpackages or modules named in `skip`. Prints {module loaded: the import that loaded it}.
IMPORT_ALL = """
import importlib, importlib.util, json, os, pkgutil, sys

def walk(name, path, skip):
    for info in pkgutil.iter_modules([path]):
        full = name + "." + info.name
        if info.name == "__main__" or "cuda" in info.name or full in skip:
            continue
        yield full
        if info.ispkg:
            yield from walk(full, os.path.join(path, info.name), skip)

package, which, *skip = sys.argv[1:]
names = [package]
if which == "all":
    names += walk(package, importlib.util.find_spec(package).submodule_search_locations[0], skip)
loaded_by = {}
for name in names:
    before = set(sys.modules)
    importlib.import_module(name)
    loaded_by.update(dict.fromkeys(set(sys.modules) - before, name))
print(json.dumps(loaded_by))
"""


def loaded_by_importing(
    package: str, *, submodules: bool = True, skip: tuple[str, ...] = ()
) -> dict[str, str]:
    """{module: the module of `package` whose import loaded it}, in a fresh interpreter."""
    which = "all" if submodules else "alone"
    result = subprocess.run(
        [sys.executable, "-c", IMPORT_ALL, package, which, *skip],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def in_package(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def describe(loaded: dict[str, str], offenders: list[str]) -> str:
    return ", ".join(f"{m} (via {loaded[m]})" for m in sorted(offenders))


def test_import_minitorch_loads_no_later_stage():
    loaded = loaded_by_importing("minitorch", submodules=False)
    offenders = [m for m in loaded if m.split(".")[0] in ("tracer", "ir", "codegen")]
    assert not offenders, f"import minitorch loads {describe(loaded, offenders)}"


def test_eager_core_loads_no_later_stage():
    loaded = loaded_by_importing("minitorch", skip=FACADES)
    offenders = [m for m in loaded if m.split(".")[0] in ("tracer", "ir", "codegen")]
    assert not offenders, f"the eager core loads {describe(loaded, offenders)}"


def test_ir_loads_only_tracer_fx_of_the_earlier_stages():
    loaded = loaded_by_importing("ir")
    offenders = [
        m
        for m in loaded
        if in_package(m, "codegen")
        or in_package(m, "tracer")
        and m != "tracer"
        and not in_package(m, "tracer.fx")
    ]
    assert not offenders, f"ir loads {describe(loaded, offenders)}"


def test_codegen_loads_no_tracer():
    loaded = loaded_by_importing("codegen")
    offenders = [m for m in loaded if in_package(m, "tracer")]
    assert not offenders, f"codegen loads {describe(loaded, offenders)}"
