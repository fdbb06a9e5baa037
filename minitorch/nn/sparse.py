"""`Embedding`: a lookup table of learned vectors, one per index."""

from __future__ import annotations

from minitorch import ops
from minitorch.errors import MinitorchError, ShapeError, at_user_line
from minitorch.factories import empty
from minitorch.nn import functional as F
from minitorch.nn import init
from minitorch.nn._data import copy_into
from minitorch.nn.linear import _factory
from minitorch.nn.module import Module
from minitorch.nn.parameter import Parameter
from minitorch.ops.nn import row_mask
from minitorch.tensor import Tensor


class Embedding(Module):
    """indices of any shape S -> vectors of shape (*S, embedding_dim): weight[indices].

    weight starts as N(0, 1); the padding_idx row starts at zero and gets no gradient, so it
    stays a fixed "nothing here" vector.

        >>> Embedding(10, 3, padding_idx=0)
        Embedding(10, 3, padding_idx=0)
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm=None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight=None,
        _freeze: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if max_norm is not None or scale_grad_by_freq or sparse:
            raise MinitorchError(
                at_user_line("Embedding: max_norm, scale_grad_by_freq and sparse are not supported")
            )
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ShapeError(
                    at_user_line(
                        f"Embedding: padding_idx {padding_idx} must be within num_embeddings "
                        f"{num_embeddings}"
                    )
                )
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            weight = empty(num_embeddings, embedding_dim, **_factory(device, dtype))
            self.weight = Parameter(weight, requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ShapeError(
                    at_user_line(
                        f"Embedding: _weight of shape {tuple(_weight.shape)} does not match "
                        f"({num_embeddings}, {embedding_dim})"
                    )
                )
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:  # the padding row starts at zero
            mask = row_mask(self.num_embeddings, self.padding_idx, self.weight.device)
            copy_into(self.weight, ops.masked_fill(self.weight.detach(), mask, 0.0))

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(input, self.weight, self.padding_idx)

    @classmethod
    def from_pretrained(
        cls, embeddings, freeze: bool = True, padding_idx: int | None = None, **kwargs
    ) -> Embedding:
        """An Embedding holding `embeddings` (rows, dim); frozen (no gradient) by default."""
        if embeddings.ndim != 2:
            raise ShapeError(
                at_user_line(
                    f"Embeddings parameter is expected to be 2-dimensional, got shape "
                    f"{tuple(embeddings.shape)}"
                )
            )
        rows, dim = embeddings.shape
        return cls(rows, dim, padding_idx, _weight=embeddings, _freeze=freeze, **kwargs)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s
