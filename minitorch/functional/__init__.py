"""The user-facing functions: `minitorch.sin(x)`, `minitorch.sum(x, dim=1)`, ...

Each normalises PyTorch's signature (keyword names, defaults, `alpha=`, negative dims) and calls
the op table (`minitorch.ops`). Bytecode capture records these public functions in the graphs it
builds (`minitorch.sin`), as Dynamo records `torch.sin`; AOT autograd then records the op-table
calls underneath (`minitorch.ops.sin`), as AOTAutograd records aten ops.

One file per family of ops, each with the functions and a mixin of the matching Tensor methods
(einstein.py holds `einsum`, a composition of the others).
"""

from minitorch.functional import (
    einstein,
    extra,
    indexing,
    linalg,
    logical,
    pointwise,
    reductions,
    views,
)
from minitorch.functional.creation import CreationMethods
from minitorch.functional.einstein import *  # noqa: F403
from minitorch.functional.extra import *  # noqa: F403
from minitorch.functional.extra import ExtraMethods
from minitorch.functional.indexing import *  # noqa: F403
from minitorch.functional.indexing import IndexingMethods
from minitorch.functional.linalg import *  # noqa: F403 - each family lists its functions
from minitorch.functional.linalg import LinalgMethods
from minitorch.functional.logical import *  # noqa: F403
from minitorch.functional.logical import LogicalMethods
from minitorch.functional.pointwise import *  # noqa: F403
from minitorch.functional.pointwise import PointwiseMethods
from minitorch.functional.reductions import *  # noqa: F403
from minitorch.functional.reductions import ReductionMethods
from minitorch.functional.views import *  # noqa: F403
from minitorch.functional.views import ViewMethods
from minitorch.unsupported import UnsupportedMethods

__all__ = [
    *indexing.__all__,
    *linalg.__all__,
    *pointwise.__all__,
    *reductions.__all__,
    *views.__all__,
    *einstein.__all__,
    *extra.__all__,
    *logical.__all__,
]
METHOD_MIXINS = (
    PointwiseMethods,
    ReductionMethods,
    ViewMethods,
    IndexingMethods,
    LinalgMethods,
    ExtraMethods,
    LogicalMethods,
    CreationMethods,
    UnsupportedMethods,
)
