"""AOT autograd: trace forward and backward into one graph, partition it, compile both."""

from tracer.aot.aot_autograd import (
    AOTGraphs,
    CompiledFunction,
    aot_autograd,
    aot_module,
    aot_trace,
    fake_inputs,
    link,
)
from tracer.aot.joint import JointSpec, trace_joint
from tracer.aot.make_fx import ProxyMode, make_fx
from tracer.aot.partition import Partition, partition_joint

__all__ = [
    "AOTGraphs", "CompiledFunction", "JointSpec", "Partition", "ProxyMode", "aot_autograd",
    "aot_module", "aot_trace", "fake_inputs", "link", "make_fx", "partition_joint", "trace_joint",
]
