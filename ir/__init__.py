"""Stage 3 of the pipeline: the loop-level IR (Inductor's IR, made small).

Imports only the eager core and `tracer.fx` (the graph IR it lowers). The files, in the order
they run:

    indexing.py     symbolic integer index expressions (`4*i0 + i1`)
    op_table.py     the loop-IR ops, one table: arity, dtype rule, numpy meaning, decomposition
    ops_handler.py  the swappable `ops` that gives loop bodies their meaning
    agreement.py    how closely each backend must agree with the interpreter, op by op
    nodes.py        buffers and the loop bodies that compute them
    printer.py      loop bodies printed as `def inner_fn(index): ...`
    segments.py     a graph split into compiled segments and extern steps (ops that do not lower);
                    a transposed product made a product of transposes first
    inline.py       which pointwise values are inlined into their readers, and which stored
    lower_pointwise.py  the lowering table's vocabulary (TensorValue, loaders) and its
                    pointwise rows
    lowering.py     fx graph -> buffers, inlining pointwise producers into their consumers
    lower_views.py  the lowerings of expand, reshape and permute: loaders that move no data
    lower_reductions.py  the lowerings of sum, amax, amin, argmax and argmin (and max(dim)
                    values read as an amax)
    lower_indirect.py  the lowerings that choose what to read: gather, x[idx], cat, dropout
    scheduler.py    buffers -> fused kernels (an outer loop nest over rows, loops over a row)
    memory.py       which buffers a kernel must store, which live in registers only, and
                    which can take the memory of a buffer that is dead
    interpreter.py  the reference meaning of all of the above, in numpy
    verify.py       what a scheduled program must satisfy (MINITORCH_CHECK=1 runs it)
    symbolic.py     sizes read back as symbols s0, s1, ... from sentinel-size traces

The stage in three calls, each importable from its module:

    program = lower_graph(graph)                         # ir.lowering
    kernels = schedule(program)                          # ir.scheduler
    outputs = run_reference(program, kernels, arrays)    # ir.interpreter
    print(program.format(kernels))
"""
