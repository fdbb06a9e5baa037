"""AOT autograd: trace forward and backward into one graph, partition it, compile both."""

from tracer.aot.aot_autograd import CompiledFunction, aot_autograd, aot_module
from tracer.aot.joint import JointSpec, trace_joint
from tracer.aot.make_fx import ProxyMode, make_fx
from tracer.aot.partition import Partition, partition_joint

__all__ = [
    "CompiledFunction", "JointSpec", "Partition", "ProxyMode", "aot_autograd", "aot_module",
    "make_fx", "partition_joint", "trace_joint",
]
