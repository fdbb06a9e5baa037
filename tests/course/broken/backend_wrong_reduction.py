"""Broken: a backend whose max and min reductions drop NaN (np.fmax / np.fmin, where the
loop IR's max and min propagate it, as PyTorch's do)."""

from codegen.numpy_source import NumpySourceBackend, NumpySourceKernel, generate_source
from codegen.registry import register_backend


class DropsNaN(NumpySourceBackend):
    name = "drops_nan"

    def compile_kernel(self, kernel, dtypes, sizes=()):
        source = generate_source(kernel, sizes)
        source = source.replace("np.maximum.reduce", "np.fmax.reduce")
        source = source.replace("np.minimum.reduce", "np.fmin.reduce")
        return NumpySourceKernel(kernel, source, sizes)


register_backend(DropsNaN())
