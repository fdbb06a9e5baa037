"""scripts/size.py: every file of the four packages has one place, and the core is in budget."""

from __future__ import annotations

import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _size_module():
    spec = importlib.util.spec_from_file_location("size", ROOT / "scripts" / "size.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_file_has_one_place():
    size = _size_module()
    placed = [f for parts in size.classify().values() for files in parts.values() for f in files]
    every = sorted(
        p.relative_to(ROOT).as_posix()
        for package in size.PACKAGES
        for p in (ROOT / package).rglob("*.py")
    )
    assert sorted(placed) == every


def test_the_core_of_each_stage_is_within_its_budget(capsys):
    size = _size_module()
    assert size.main(check=True) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert any(line.startswith("core ") for line in out.splitlines())


def test_a_stage_over_budget_fails_the_check(monkeypatch, capsys):
    size = _size_module()
    monkeypatch.setitem(size.BUDGET, "AOT autograd", 10)
    assert size.main(check=True) == 1
    assert "AOT autograd: core" in capsys.readouterr().out
