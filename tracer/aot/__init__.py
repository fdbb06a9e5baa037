"""AOT autograd: trace forward and backward into one graph, partition it, compile both.

aot_autograd.py  aot_trace (the one entry), aot_module, CompiledFunction (the autograd link)
make_fx.py       tracing at the dispatcher (ProxyMode)
joint.py         forward and backward traced as one graph
partition.py     the joint graph cut into forward and backward, and what is saved
min_cut.py       the min-cut partitioner: save few bytes, recompute cheap ops in the backward
max_flow.py      maximum flow and minimum cut (Edmonds-Karp), which min_cut.py solves with
aliasing.py      outputs that are views of inputs or of each other, remade after the graph
"""

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
from tracer.aot.partition import Partition, partition_joint

__all__ = [
    "AOTGraphs",
    "CompiledFunction",
    "JointSpec",
    "Partition",
    "ProxyMode",
    "aot_autograd",
    "aot_module",
    "aot_trace",
    "fake_inputs",
    "make_fx",
    "partition_joint",
    "trace_joint",
]
