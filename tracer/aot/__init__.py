"""AOT autograd: trace forward and backward into one graph, partition it, compile both.

aot_autograd.py  aot_trace (the one entry), aot_module, CompiledFunction (the autograd link)
make_fx.py       tracing at the dispatcher (ProxyMode)
joint.py         forward and backward traced as one graph
partition.py     the joint graph cut into forward and backward, and what is saved;
                 register_partitioner, and the "default" partitioner
min_cut.py       the "min_cut" partitioner: save few bytes, recompute cheap ops in the backward
max_flow.py      maximum flow and minimum cut (Edmonds-Karp), which min_cut.py solves with
aliasing.py      outputs that are views of inputs or of each other, remade after the graph
"""

# NOTE: imported for what it registers: the "min_cut" partitioner (an extra, [Note: min-cut
# partitioning]); a partitioner is a name in partition.py's registry, never a branch there.
from tracer.aot import min_cut  # noqa: E402, F401
from tracer.aot.aot_autograd import (
    AOTGraphs,
    CompiledFunction,
    aot_autograd,
    aot_module,
    aot_trace,
    fake_inputs,
)
from tracer.aot.joint import JointSpec, trace_joint
from tracer.aot.make_fx import ProxyMode, make_fx
from tracer.aot.partition import (
    Joint,
    Partition,
    partition_joint,
    partitioners,
    register_partitioner,
    unregister_partitioner,
)

__all__ = [
    "AOTGraphs",
    "CompiledFunction",
    "Joint",
    "JointSpec",
    "Partition",
    "ProxyMode",
    "aot_autograd",
    "aot_module",
    "aot_trace",
    "fake_inputs",
    "make_fx",
    "partition_joint",
    "partitioners",
    "register_partitioner",
    "trace_joint",
    "unregister_partitioner",
]
