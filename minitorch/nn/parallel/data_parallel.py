"""`DataParallel`: PyTorch's single-process multi-GPU wrapper, on one device.

PyTorch's DataParallel scatters each batch over `device_ids`, runs a replica of the module on
each device and gathers the outputs on `output_device`. minitorch runs on one device, so the
wrapper only forwards to its module; what programs rely on stays true: the wrapped model is
`.module`, and the state dict's keys start with "module." (why checkpoints saved from a
DataParallel model need `model.module.state_dict()` to load into a bare one).
"""

from __future__ import annotations

from minitorch.errors import MinitorchError, at_user_line
from minitorch.nn.module import Module


class DataParallel(Module):
    """forward(*inputs) is module(*inputs); the module is a child named "module".

    >>> DataParallel(nn.Linear(2, 3)).state_dict().keys()
    odict_keys(['module.weight', 'module.bias'])
    """

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise MinitorchError(
                at_user_line(f"DataParallel: expected an nn.Module, got {type(module).__name__}")
            )
        if device_ids is not None and len(device_ids) > 1:
            raise MinitorchError(
                at_user_line(
                    f"DataParallel: minitorch runs on one device; device_ids={list(device_ids)} "
                    f"asks for {len(device_ids)}"
                )
            )
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
