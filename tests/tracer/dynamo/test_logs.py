"""MINITORCH_LOGS=graph,guards,recompiles,graph_breaks,bytecode: capture events on stderr."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import textwrap

import pytest

import minitorch
from minitorch import _logging, config
from tracer.dynamo import optimize
from tracer.dynamo.compiler import EAGER

pytestmark = pytest.mark.capture

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))


def double_sin(x):
    return x.sin() * 2


def branchy(x):
    if x.sum():  # data-dependent: capture stops here
        return x + 1
    return x - 1


def logged(monkeypatch, capsys, names: str, fn, *calls) -> str:
    """stderr of calling optimize(fn) on each argument tuple, with MINITORCH_LOGS=names."""
    monkeypatch.setattr(config, "logs", config.parse_logs(names))
    compiled = optimize(fn, backend=EAGER)
    capsys.readouterr()
    for args in calls:
        compiled(*args)
    return capsys.readouterr().err


def test_nothing_is_printed_unless_named(monkeypatch, capsys):
    err = logged(monkeypatch, capsys, "", double_sin, (minitorch.randn(3),), (minitorch.randn(4),))
    assert err == ""
    err = logged(monkeypatch, capsys, "joint", branchy, (minitorch.randn(3),))
    assert err == ""


def test_graph_prints_the_captured_graph_only(monkeypatch, capsys):
    err = logged(monkeypatch, capsys, "graph", double_sin, (minitorch.randn(3),))
    assert err.startswith("[minitorch graph] double_sin (test_logs.py:")
    assert "x.sin()" in err and 'x: "f32[3]"' in err
    assert "def guard" not in err and "[minitorch guards]" not in err


def test_guards_prints_the_guard_parts_of_the_new_entry(monkeypatch, capsys):
    err = logged(
        monkeypatch,
        capsys,
        "guards",
        double_sin,
        (minitorch.randn(3),),
        (minitorch.randn(3),),
        (minitorch.randn(2, 2),),
    )
    assert err.count("[minitorch guards]") == 2  # two entries; the cache hit prints nothing
    assert "L['x']) == ___tensor_L_x  # Tensor float32[3]," in err
    assert "L['x']) == ___tensor_L_x  # Tensor float32[2, 2]," in err
    assert "class GraphModule" not in err


def test_recompiles_prints_the_failing_guard_and_the_entry_count(monkeypatch, capsys):
    err = logged(
        monkeypatch,
        capsys,
        "recompiles",
        double_sin,
        (minitorch.randn(3),),
        (minitorch.randn(4),),
        (minitorch.randn(3),),
        (minitorch.randn(5),),
    )
    lines = [line for line in err.splitlines() if line.startswith("recompiling because")]
    # The second size makes dim 0 dynamic (automatic dynamic shapes): 5 needs no recompile.
    assert lines == [
        "recompiling because L['x'].shape == (3,) failed: L['x'].shape was minitorch.Size([4])",
    ]
    assert "now dynamic: L['x'].shape[0] (3 -> 4)" in err
    assert "1 cache entry before this one, of at most 8" in err


def test_recompiles_says_when_the_limit_is_reached(monkeypatch, capsys):
    monkeypatch.setattr(config, "recompile_limit", 1)
    with pytest.warns(UserWarning, match="recompile limit"):  # the one-time warning
        err = logged(
            monkeypatch,
            capsys,
            "recompiles",
            double_sin,
            (minitorch.randn(3),),
            (minitorch.randn(4),),
            (minitorch.randn(5),),
        )
    assert err.count("recompile limit (1) reached") == 1  # said once, not on every miss


def test_graph_breaks_prints_the_reason_and_the_user_line(monkeypatch, capsys):
    err = logged(
        monkeypatch, capsys, "graph_breaks", branchy, (minitorch.randn(3),), (minitorch.randn(3),)
    )
    assert err.count("[minitorch graph_breaks] branchy") == 1  # the cached fallback: once
    _, first = inspect.getsourcelines(branchy)
    line = first + 1
    assert "a branch on a tensor's value" in err
    assert f'File "{__file__}", line {line}, in branchy' in err
    assert "    if x.sum():" in err
    err = logged(monkeypatch, capsys, "graph_breaks", double_sin, (minitorch.randn(3),))
    assert err == ""


def test_bytecode_prints_the_original_and_what_runs_instead(monkeypatch, capsys):
    err = logged(monkeypatch, capsys, "bytecode", double_sin, (minitorch.randn(3),))
    original, transformed = err.split("# runs instead:")
    assert "# original bytecode" in original and "LOAD_FAST" in original
    assert "BINARY_OP" in original  # the `* 2` of the user's code
    assert "def __transformed_double_sin_" in transformed
    assert "'s bytecode" in transformed and "__compiled_fn_double_sin_" in transformed


def in_a_try_block(x):
    try:  # no graph break inside a try block: the frame runs eagerly
        return x.sin()
    except ValueError:
        return x


def test_bytecode_of_a_fallback_says_the_original_runs(monkeypatch, capsys):
    err = logged(monkeypatch, capsys, "bytecode", in_a_try_block, (minitorch.randn(3),))
    assert "# original bytecode" in err
    assert "no transformed code: this entry runs the original bytecode eagerly" in err
    assert "code inside a try or with block" in err


def test_events_interleave_in_the_order_they_happen(monkeypatch, capsys):
    err = logged(
        monkeypatch,
        capsys,
        "graph,guards,recompiles,bytecode",
        double_sin,
        (minitorch.randn(3),),
        (minitorch.randn(4),),
    )
    heads = [
        line.split("]")[0] + "]" for line in err.splitlines() if line.startswith("[minitorch ")
    ]
    once = ["[minitorch graph]", "[minitorch guards]", "[minitorch bytecode]"]
    assert heads == once + ["[minitorch recompiles]"] + once


def test_parse_logs_and_unknown_names():
    assert config.parse_logs(" graph, guards ,,recompiles") == {"graph", "guards", "recompiles"}
    assert config.parse_logs("") == set()
    assert set(_logging.EVENTS) <= _logging.NAMES and set(_logging.STAGES) <= _logging.NAMES
    with pytest.warns(UserWarning, match="unknown name.*grpah"):
        _logging._check_names({"grpah", "graph"})


def test_the_environment_variable_is_read_at_import(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(
        textwrap.dedent("""
        import minitorch

        def f(x):
            return x.cos()

        g = minitorch.compile(f, backend="eager")
        g(minitorch.randn(2))
        g(minitorch.randn(3))
    """)
    )
    env = {**os.environ, "MINITORCH_LOGS": "recompiles,guards", "PYTHONPATH": ROOT}
    result = subprocess.run(
        [sys.executable, str(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert result.stdout == ""
    assert result.stderr.count("[minitorch guards] f (script.py:4)") == 2
    assert "recompiling because L['x'].shape == (2,) failed" in result.stderr
