"""The walkthrough: run a script and show what the compiler did with each compiled function.

Stages are shown in pipeline order, each with the time it took:

    graph     the graph bytecode capture built, and the guards that protect it   (tracer/dynamo)
    joint     forward and backward traced together at the dispatcher             (tracer/aot)
    forward   the forward half of the partitioned joint graph; its title names the values it
              saves for the backward and their bytes, beside the other partitioner's
    backward  the backward half
    loop_ir   loop-level IR: buffers, fused kernels, `def inner_fn(index)` bodies (ir)
    kernels   each kernel's source, in the code generator's own language: LLVM IR for
              "llvm", Python for "numpy", the loop IR for "interpreter"         (codegen)
    ptx       with --device cuda: the same kernels as the CUDA backend's PTX, one module per
              graph, compiled only: no GPU and no cupy needed       (codegen/cuda)

It compiles with the core alone (`config.core_only()`, [Note: the core and its extras] in
minitorch/config.py): the kernels a learner should read first, without the paths an extra adds
(exact trig's huge-argument branch, sizes as arguments, ...). Its first line says which extras
are on; `--all` turns every one on, as `minitorch.compile` runs by default, and shows them.

Then every compiled function is re-run against eager mode on the inputs of its first call, and
the values and gradients are compared. `--partitioner min_cut` shows what the min-cut partitioner
saves instead of the default one ([Note: partitioning] in tracer/aot/partition.py).

    python -m minitorch.compile examples/sincos.py --device cuda --stage ptx

runs the script on the CPU as usual and prints the PTX of every kernel of every graph it
compiled, forward and backward ([Note: compile-only PTX] in minitorch/compile/ptx.py). A kernel
the CUDA backend cannot generate is listed with the reason; the run still exits 0.

    python -m minitorch.compile examples/sincos.py --html out/

writes the same stages as one HTML page instead, each source line linked to what it became
(minitorch/compile/report/); only the checks and the times are printed.
"""

from __future__ import annotations

import os
import re
import runpy
import sys
import time
import traceback
from dataclasses import dataclass

import numpy as np

from minitorch import _logging, config
from minitorch.compile import hooks

_RULE = "=" * 100


@dataclass
class Check:
    title: str
    max_value_error: float
    max_grad_error: float | None  # None when no input requires grad
    max_abs_grad: float | None
    ok: bool


def run_script(path: str, opt_in: frozenset[str] = frozenset()) -> tuple[_logging.Recorder, float]:
    """Run `path` as __main__ with a recorder installed (recording the `opt_in` stages too,
    _logging.OPT_IN); returns it and the run time."""
    sys.argv = [path]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    with _logging.Recorder(opt_in=opt_in) as recorder:
        start = time.perf_counter()
        runpy.run_path(path, run_name="__main__")
        seconds = time.perf_counter() - start
    return recorder, seconds


def check_against_eager(call: _logging.CompiledCall, rtol=1e-4, atol=1e-5) -> Check:
    """Re-run the compiled function and the original on fresh copies of the first inputs."""
    from minitorch.tensor import Tensor

    def fresh(args):
        return tuple(
            a.detach().clone().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a
            for a in args
        )

    eager_args, compiled_args = fresh(call.args), fresh(call.args)
    eager_out = _tensors(call.original(*eager_args, **call.kwargs))
    compiled_out = _tensors(call.compiled(*compiled_args, **call.kwargs))
    value_error = max((_max_diff(e, c) for e, c in zip(eager_out, compiled_out)), default=0.0)
    ok = len(eager_out) == len(compiled_out) and all(
        np.allclose(_np(e), _np(c), rtol=rtol, atol=atol) for e, c in zip(eager_out, compiled_out)
    )
    grad_error = max_grad = None
    wants_grad = [i for i, a in enumerate(eager_args) if isinstance(a, Tensor) and a.requires_grad]
    if wants_grad:
        for outs in (eager_out, compiled_out):
            total = None
            for o in outs:
                if o.requires_grad:
                    total = o.sum() if total is None else total + o.sum()
            if total is not None:
                total.backward()
        grads = [(eager_args[i].grad, compiled_args[i].grad) for i in wants_grad]
        grad_error = max(_max_diff(e, c) for e, c in grads)
        max_grad = max(float(np.abs(_np(c)).max(initial=0.0)) for _, c in grads)
        ok = ok and all(np.allclose(_np(e), _np(c), rtol=rtol, atol=atol) for e, c in grads)
    return Check(
        getattr(call.original, "__qualname__", "function"), value_error, grad_error, max_grad, ok
    )


def _tensors(out) -> list:
    from minitorch.tensor import Tensor

    items = out if isinstance(out, (tuple, list)) else [out]
    return [o for o in items if isinstance(o, Tensor)]


def _np(t) -> np.ndarray:
    """A tensor's values on the host, in float64 (a GPU tensor's copied over)."""
    from minitorch.device import to_host

    return np.zeros(()) if t is None else to_host(t.detach()._data).astype(np.float64)


def _max_diff(a, b) -> float:
    return float(np.abs(_np(a) - _np(b)).max(initial=0.0))


def report(
    recorder: _logging.Recorder,
    stage: str | None,
    dump_dir: str | None,
    script_seconds: float,
    out=None,
) -> bool:
    """Print the recorded stages and the checks; returns whether every check passed."""
    out = out or sys.stdout
    shown = [a for a in recorder.artifacts if stage is None or a.stage == stage]
    if dump_dir:
        os.makedirs(dump_dir, exist_ok=True)
    for n, item in enumerate(shown):
        took = "" if item.seconds is None else f"  ({item.seconds * 1e3:.1f} ms)"
        print(
            f"{_RULE}\n[{item.stage}] {item.title}{took}\n{_RULE}\n{item.text.rstrip()}\n", file=out
        )
        if dump_dir:
            slug = re.sub(r"[^A-Za-z0-9]+", "_", item.title).strip("_")[:60]
            with open(os.path.join(dump_dir, f"{n:02d}_{item.stage}_{slug}.txt"), "w") as f:
                f.write(item.text)
    if stage not in (None, "check", "time") and not shown:
        print(f"(no '{stage}' artifacts were produced)", file=out)

    all_ok = True
    if stage is None or stage == "check":
        print(f"{_RULE}\n[check] compiled vs eager\n{_RULE}", file=out)
        if not recorder.calls:
            print("no compiled function was called", file=out)
        for call in recorder.calls:
            c = check_against_eager(call)
            all_ok &= c.ok
            line = f"{c.title}: values max |eager - compiled| = {c.max_value_error:.3g}"
            if c.max_grad_error is not None:
                line += (
                    f"; gradients max |eager - compiled| = {c.max_grad_error:.3g}, "
                    f"max |grad| = {c.max_abs_grad:.3g}"
                )
            print(f"{'OK  ' if c.ok else 'FAIL'} {line}", file=out)
        print(file=out)
    if stage is None or stage == "time":
        print(f"{_RULE}\n[time] per stage\n{_RULE}", file=out)
        totals: dict[str, float] = {}
        for item in recorder.artifacts:
            if item.seconds is not None:
                totals[item.stage] = totals.get(item.stage, 0.0) + item.seconds
        for name in _logging.STAGES:
            if name in totals:
                print(f"  {name:<10} {totals[name] * 1e3:9.1f} ms", file=out)
        print(
            f"  {'script':<10} {script_seconds * 1e3:9.1f} ms  (everything, first calls included)",
            file=out,
        )
    return all_ok


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m minitorch.compile",
        description="Run a script and show every stage of each function it compiles.",
    )
    parser.add_argument("script", help="a Python script that calls minitorch.compile")
    parser.add_argument(
        "--backend",
        help="compile with this backend instead: eager, "
        "aot_eager, inductor, or a code generator (llvm, interpreter, numpy, "
        "or one you registered)",
    )
    parser.add_argument(
        "--partitioner",
        help="who chooses what the forward saves for the backward: a registered partitioner "
        f"(config.partitioner, {config.partitioner!r} unless given)",
    )
    parser.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE (a module name or a .py file) first, for the hooks it registers "
        "(minitorch/compile/hooks.py); repeatable",
    )
    parser.add_argument(
        "--device",
        choices=("cpu", "cuda"),
        default="cpu",
        help="cuda: also generate every graph's kernels as PTX for the GPU "
        "(compile only: the script's tensors stay where it puts them), shown "
        "as the ptx stage",
    )
    parser.add_argument(
        "--stage",
        choices=[*_logging.STAGES, "check", "time"],
        help="show only this stage (ptx implies --device cuda)",
    )
    parser.add_argument("--dump-dir", help="also write each artifact to a file in this folder")
    parser.add_argument(
        "--html",
        metavar="DIR",
        help="write the stages as an HTML report to DIR (DIR/index.html) instead of printing them",
    )
    parser.add_argument(
        "--all",
        action="store_true",
        help="compile with every extra on (the default configuration), not the core alone",
    )
    args = parser.parse_args(argv)

    if not os.path.isfile(args.script):
        print(f"minitorch.compile: no such script: {args.script}", file=sys.stderr)
        return 2
    for plugin in args.plugin:
        try:
            hooks.load_plugin(plugin)
        except Exception as e:
            print(f"minitorch.compile: plugin {plugin!r}: {type(e).__name__}: {e}", file=sys.stderr)
            return 2
    if args.partitioner and args.partitioner not in hooks.partitioners():
        choices = ", ".join(hooks.partitioners())
        print(
            f"minitorch.compile: no partitioner {args.partitioner!r}; one of {choices}",
            file=sys.stderr,
        )
        return 2
    if args.backend:
        from minitorch.compile.backends import lookup_backend
        from minitorch.errors import CompileError

        try:
            lookup_backend(args.backend)
        except CompileError as e:  # an unknown name: say so, with the choices
            print(f"minitorch.compile: {e}", file=sys.stderr)
            return 2
    saved_argv, saved_path, partitioner = sys.argv[:], sys.path[:], config.partitioner
    extras = {name: getattr(config, name) for name in config.EXTRAS}
    _switch_extras(args.all)
    config.force_backend = args.backend
    config.partitioner = args.partitioner or partitioner
    print(f"{hooks.describe()}\n")
    try:
        ptx = args.device == "cuda" or args.stage == "ptx"
        opt_in = frozenset({"ptx"}) if ptx else frozenset()
        if args.html:
            return _html(args.script, opt_in, args.html, args.dump_dir)
        recorder, seconds = run_script(args.script, opt_in)
        return 0 if report(recorder, args.stage, args.dump_dir, seconds) else 1
    except SystemExit as e:
        if e.code not in (0, None):
            print(f"minitorch.compile: {args.script} exited with status {e.code}", file=sys.stderr)
            return 1
        return 0
    except Exception:
        print(f"minitorch.compile: {args.script} raised an exception:", file=sys.stderr)
        traceback.print_exc()
        return 1
    finally:
        config.force_backend, config.partitioner = None, partitioner
        sys.argv[:], sys.path[:] = saved_argv, saved_path
        for name, value in extras.items():
            setattr(config, name, value)


def _html(script: str, opt_in: frozenset[str], directory: str, dump_dir: str | None) -> int:
    """Run `script` compiling into the report's own caches, check it, write the report."""
    from minitorch.compile import report as html_report

    with html_report.capturing() as (table, journal):
        recorder, seconds = run_script(script, opt_in)
        ok = all(report(recorder, stage, dump_dir, seconds) for stage in ("check", "time"))
    path = html_report.write(directory, recorder, table, journal, script, seconds)
    print(f"\nthe report: {os.path.abspath(path)}")
    return 0 if ok else 1


def _switch_extras(every: bool) -> None:
    """Every extra on (`--all`), or the core alone; then say which are on."""
    if every:
        for name in config.EXTRAS:
            setattr(config, name, True)
        print(f"extras on: {', '.join(config.extras_on())}\n")
    else:
        config.core_only()
        print("extras on: none, the core alone (--all: every extra, as minitorch.compile runs)\n")
