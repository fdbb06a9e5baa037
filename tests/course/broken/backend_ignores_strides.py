"""Broken: a backend that ignores strides. Its kernels read each buffer as `reshape(-1)` (a
copy in logical order, for a transposed input) instead of the memory it spans, so a flat
index computed from the buffer's strides reads the wrong elements."""

import numpy as np

from codegen.numpy_source import NumpySourceBackend, NumpySourceKernel, generate_source
from codegen.registry import register_backend


class ContiguousKernel(NumpySourceKernel):
    def __call__(self, buffers, sizes=None):
        arguments = [a for name in self.buffers for a in (buffers[name].reshape(-1), 0)]
        arguments += [(sizes or {})[name] for name in self.sizes]
        with np.errstate(all="ignore"):
            self.function(*arguments)


class IgnoresStrides(NumpySourceBackend):
    name = "ignores_strides"

    def compile_kernel(self, kernel, dtypes, sizes=()):
        return ContiguousKernel(kernel, generate_source(kernel, sizes), sizes)


register_backend(IgnoresStrides())
