"""`minitorch.backends.cpu`: what the CPU's vector units are, as PyTorch names them."""

from __future__ import annotations


def get_cpu_capability() -> str:
    """PyTorch's name for the widest vector ISA its kernels use: "DEFAULT" here.

    NOTE: minitorch's compiled kernels are built by LLVM for the host CPU itself (all of its
    vector instructions), and its eager kernels are numpy's, which choose their own; there is no
    one ISA level to report, so this answers PyTorch's name for "no special build".
    """
    return "DEFAULT"
