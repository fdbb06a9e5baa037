"""Backward nodes: what `tensor.grad_fn` points at.

A `Node` knows the tensors it was computed from (`inputs`, the edges of the backward graph)
and how to turn the gradients of its outputs into gradients of those inputs (`apply`). Eager
ops get an `OpBackward`, whose `apply` runs the op table's derivative formula; AOT autograd's
compiled functions define their own Node that runs a compiled backward graph; an in-place write
through a view gives the view's base a `CopySlices` node.

[Note: in-place ops and the backward graph]
An in-place op (minitorch/tensor.py, [Note: in-place ops]) overwrites a tensor's memory and
gives the tensor a new `grad_fn`. Two things must then stay right for nodes made earlier:

1. Edges. A node made before the write consumed the tensor's *old* value, so its gradient must
   flow to the old history, not to the in-place op. Each node therefore records, when it is
   made, each input's `(grad_fn, output_nr)` (PyTorch's `next_edges`); `inputs` hands the engine
   an alias (same data, recorded history) for any input whose history has changed since.

       y = x * 2;  z = y + 1;  y.mul_(5)    # z's node still sends its gradient to y's old
                                            # MulBackward, not to the new one: dz/dx == 2

2. Saved values. A formula that reads a saved tensor's values (exp's reads its output, sin's
   its input) would read the new values. Every tensor has a version counter, bumped by each
   in-place write (shared by a base and its views); a node records its inputs' and outputs'
   versions when it is made. In `apply`, a saved tensor whose version moved is passed to the
   formula as a tensor with the right shape and dtype whose *values* cannot be read: a formula
   that only needs shapes (add's, a view's) still works, and one that reads the values raises
   PyTorch's error instead of computing a wrong gradient.

       y = x.exp();  y.add_(1);  y.sum().backward()
       AutogradError: one of the variables needed for gradient computation has been modified by
       an inplace operation: [float32 [3]], output 0 of ExpBackward0, is at version 1; expected
       version 0 instead. Hint: ... clone() ...

[Note: outputs PyTorch saves]
PyTorch's derivatives of relu, softmax, log_softmax, sqrt, rsqrt and reciprocal read the op's
*output*, so writing that output in place before backward() is the error above. Ours are
composites whose primitives read other values (relu's `where` reads only its mask), so they
would compute a right gradient where PyTorch refuses, and a program that runs here would fail
there. Such a composite has `saves_output=True` in the op table; dispatch hands its result to
`keep_output`, which makes the node that produced it check the output's version when it runs,
naming the composite (`output 0 of ReluBackward0`). Compiled code checks the same: dynamo does
not rewrite such an output functionally (tracer/dynamo/variables/inplace.py), and AOT
autograd's node checks the versions of the outputs a composite kept (tracer/aot/joint.py,
`JointSpec.kept_outputs`). NOTE: a view of such an output written in place is caught eagerly
(a view shares the version counter); compiled, only the output itself is checked.
"""

from __future__ import annotations

import weakref

from minitorch.errors import AutogradError, at_user_line


class Node:
    """One step of the backward graph."""

    retained: dict[int, weakref.ref] | None = None  # output_nr -> tensor that retains its grad

    def __init__(self, inputs: tuple, num_outputs: int = 1) -> None:
        tensor = _tensor_class()
        self._inputs = inputs  # the forward inputs; tensors that require grad are edges
        # each tensor input's (grad_fn, output_nr, version) now (see the Note); None for others
        self._edges = tuple(
            [
                (x.grad_fn, x._output_nr, x._version) if isinstance(x, tensor) else None
                for x in inputs
            ]
        )
        self.num_outputs = num_outputs  # how many forward outputs point at this node
        self.output_shapes: list[tuple[int, ...]] = []

    @property
    def inputs(self) -> tuple:
        """The forward inputs, each with the history it had when this node was made."""
        if all(e is None or x.grad_fn is e[0] for x, e in zip(self._inputs, self._edges)):
            return self._inputs
        return tuple(
            x if e is None or x.grad_fn is e[0] else _with_history(x, e[0], e[1])
            for x, e in zip(self._inputs, self._edges)
        )

    @property
    def next_functions(self) -> tuple:
        """`(node, output_nr)` for each tensor input: the node its gradient flows to, an
        `AccumulateGrad` for a leaf that requires grad, None for one that does not
        (`loss.grad_fn.next_functions[0][0]` walks the graph back, as in PyTorch's tutorial)."""
        out = []
        for x, edge in zip(self._inputs, self._edges):
            if edge is None:
                continue  # not a tensor: a dim, a scalar
            grad_fn, output_nr, _ = edge
            if grad_fn is None and x.requires_grad and not _made_under_no_grad(x):
                grad_fn, output_nr = AccumulateGrad(x), 0
            out.append((grad_fn, output_nr))
        return tuple(out)

    def attach(self, outputs: tuple) -> None:
        """Make each floating-point tensor of `outputs` a non-leaf result of this node.

        Integer outputs (the indices of `max`) have no gradient and stay leaves.
        """
        self.num_outputs = len(outputs)
        self.output_shapes = [tuple(o.shape) for o in outputs]
        for i, out in enumerate(outputs):
            if not out.dtype.is_floating_point:
                continue
            out.requires_grad = True
            out._grad_fn = self
            out._output_nr = i

    def apply(self, grads: tuple) -> tuple:
        """Gradients of the inputs from the gradients of the outputs (None = zero)."""
        raise NotImplementedError

    def retain_grad(self, tensor) -> None:
        """Store the gradient of output `tensor` in its `.grad` when this node runs."""
        raise AutogradError(f"retain_grad() is not supported on outputs of {self.name()}")

    def _store_retained(self, grads: tuple) -> None:
        for nr, ref in (self.retained or {}).items():
            tensor = ref()
            if tensor is not None and grads[nr] is not None:
                tensor._accumulate_grad(grads[nr])

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{self.name()}>"


class AccumulateGrad:
    """Where a leaf's gradient ends: the engine adds it into `variable.grad`. Only seen through
    `next_functions` (the engine accumulates leaves itself)."""

    next_functions = ()

    def __init__(self, variable) -> None:
        self.variable = variable

    def name(self) -> str:
        return "AccumulateGrad"

    def __repr__(self) -> str:
        return "<AccumulateGrad>"


def _made_under_no_grad(x) -> bool:
    """A view made in no_grad mode: no gradient edge, though it may require grad
    ([Note: views made under no_grad] in minitorch/tensor.py)."""
    return x._base is not None and not x._view_differentiable


_Tensor = None  # minitorch.tensor.Tensor, looked up once (tensor.py imports autograd)


def _tensor_class():
    global _Tensor
    if _Tensor is None:
        from minitorch.tensor import Tensor

        _Tensor = Tensor
    return _Tensor


def _with_history(x, grad_fn, output_nr):
    """A tensor with x's data and version counter, and the history (grad_fn, output_nr)."""
    alias = _tensor_class()._from_array(x._data)
    alias._version_counter = x._shared_version_counter()
    alias.grad_fn = grad_fn
    alias._output_nr = output_nr
    alias.requires_grad = grad_fn is not None
    return alias


class OpBackward(Node):
    """The backward of one eager op: calls the op table's derivative formula."""

    def __init__(self, op, args: tuple, kwargs: dict) -> None:
        super().__init__(args)
        self.op = op
        self.kwargs = kwargs
        self.output = None  # the forward output(s), set by attach (some formulas reuse it)
        self.freed = False
        self.output_versions: list[int] = []  # the outputs' versions when made
        self.kept_by: str | None = None  # the composite whose output this is, if PyTorch's
        #                                  derivative of it reads it ([Note: outputs PyTorch saves])

    def attach(self, outputs: tuple) -> None:
        super().attach(outputs)
        self.output = outputs[0] if len(outputs) == 1 else outputs
        self.output_versions = [o._version for o in outputs]

    def apply(self, grads: tuple) -> tuple:
        if self.freed:
            raise AutogradError(
                f"{self.name()}: trying to backward through the graph a second time; "
                "pass retain_graph=True to the first backward() to keep it"
            )
        if self.kept_by is not None:
            self._check_kept_outputs()
        self._store_retained(grads)
        inputs = tuple(
            self._saved(x, None if e is None else e[2], f"input {i}")
            for i, (x, e) in enumerate(zip(self._inputs, self._edges))
        )
        outputs = tuple(
            self._saved(o, v, f"output {i}")
            for i, (o, v) in enumerate(zip(self._outputs(), self.output_versions))
        )
        # A single-output op's formula takes one gradient; a multi-output op's takes the tuple
        # (None where no gradient flowed), and the tuple of outputs.
        if self.num_outputs == 1:
            return self.op.backward(grads[0], outputs[0], *inputs, **self.kwargs)
        return self.op.backward(grads, outputs, *inputs, **self.kwargs)

    def _outputs(self) -> tuple:
        return self.output if self.num_outputs != 1 else (self.output,)

    def _check_kept_outputs(self) -> None:
        """PyTorch's error if an output a composite kept was written in place since."""
        for i, (out, version) in enumerate(zip(self._outputs(), self.output_versions)):
            if out._version != version:
                raise AutogradError(
                    at_user_line(
                        overwritten_message(
                            out, f"output {i} of {backward_name(self.kept_by)}", version
                        )
                    )
                )

    def _saved(self, x, version: int | None, what: str):
        """`x`, or, if an in-place op wrote it since, a stand-in whose values cannot be read."""
        if version is None or x._version == version:
            return x
        return _overwritten(x, f"{what} of {self.name()}", version)

    def retain_grad(self, tensor) -> None:
        self.retained = {**(self.retained or {}), tensor._output_nr: weakref.ref(tensor)}

    def release(self) -> None:
        """Drop saved tensors after backward (retain_graph=False)."""
        self.freed = True
        self.output = None

    def name(self) -> str:
        return backward_name(self.op.name)


def backward_name(op_name: str) -> str:
    """PyTorch's name for the backward node of an op: log_softmax -> LogSoftmaxBackward0."""
    return "".join(p.capitalize() for p in op_name.split("_")) + "Backward0"


def keep_output(op, out):
    """`out`, the result of the composite `op`, whose node now checks that it is not written in
    place before backward() ([Note: outputs PyTorch saves])."""
    node = getattr(out, "_grad_fn", None)
    if isinstance(node, OpBackward) and node.num_outputs == 1:
        node.kept_by = op.name
    return out


class CopySlices(Node):
    """The history of a base after an in-place write through one of its views.

        base_new = base_old, except view(base_new) = src     (src: the view's new value)

    so the gradient of base_new goes to base_old with the view's region zeroed, and that
    region goes to src. `view_fn(t)` makes the same view of any tensor t shaped like the base.
    """

    def __init__(self, base, src, view_fn) -> None:
        super().__init__((base, src))
        self.view_fn = view_fn

    def apply(self, grads: tuple) -> tuple:
        from minitorch.autograd.grad_mode import is_grad_enabled
        from minitorch.device import module_of

        if is_grad_enabled():
            raise AutogradError(
                "CopySlices: a backward through an in-place write to a view "
                "cannot be differentiated again (create_graph=True)"
            )
        (grad,) = grads
        self._store_retained(grads)
        # Which of the base's elements did the view cover? Replay the view on a tensor that
        # holds each element's own position: the values it picks are those positions.
        xp = module_of(grad._data)
        positions = _tensor_class()._from_array(xp.arange(grad.numel()).reshape(grad.shape))
        covered = self.view_fn(positions)._data.reshape(-1)
        grad_base = grad.clone()  # row-major, so flat position p is element p
        grad_base._data.reshape(-1)[covered] = 0
        return grad_base, self.view_fn(grad)

    def retain_grad(self, tensor) -> None:
        self.retained = {**(self.retained or {}), tensor._output_nr: weakref.ref(tensor)}


def rebase_history(tensor, result) -> None:
    """`tensor`'s memory now holds `result`'s values: give `tensor` the history of `result`.

    For a view, the write also changed its base: the base gets a `CopySlices` node, and the
    view becomes a view of the new base (minitorch/tensor.py, [Note: views]).
    """
    node = result._grad_fn
    if isinstance(node, OpBackward) and node.num_outputs == 1 and node.output is result:
        # The op's output is now `tensor` itself, as PyTorch's in-place op saves `self`: a
        # later write into it is caught if the formula reads it (x.exp_().add_(1)) or a
        # composite kept it (x.relu_(): [Note: outputs PyTorch saves]).
        node.output, node.output_versions = tensor, [tensor._version]
    base = tensor._base
    if base is None:
        if result.requires_grad:
            gained, old = not tensor.requires_grad, tensor.grad_fn
            tensor.grad_fn = result.grad_fn
            tensor._output_nr = result._output_nr
            tensor.requires_grad = True
            if tensor._retains_grad:  # the retained gradient is now the new node's output's
                old.retained = {nr: r for nr, r in old.retained.items() if r() is not tensor}
                result.grad_fn.retain_grad(tensor)
            if gained:
                tensor._base_gained_history()
        return
    if result.requires_grad or base.requires_grad:
        gained = not base.requires_grad
        CopySlices(base, result, tensor._view_fn).attach((base,))
        if gained:
            base._base_gained_history()
        tensor._refresh_view_history()


# ---- saved tensors overwritten by an in-place op ---------------------------------------


class _OverwrittenArray:
    """The data of a saved tensor that was overwritten: its metadata, and no values."""

    def __init__(self, array, message: str) -> None:
        self.shape, self.dtype, self.strides = array.shape, array.dtype, array.strides
        self.ndim, self.size, self.itemsize = array.ndim, array.size, array.itemsize
        self._message = message

    def _refuse(self, *args, **kwargs):
        raise AutogradError(at_user_line(self._message))

    # Every way numpy (or an op's kernel) can read values ends in _refuse: arithmetic too
    # (`a ** 3` calls our __pow__ before numpy is asked).
    __array__ = __array_ufunc__ = __array_function__ = _refuse
    __getitem__ = __setitem__ = __iter__ = __len__ = __float__ = __int__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _refuse
    __truediv__ = __rtruediv__ = __pow__ = __rpow__ = __neg__ = __abs__ = _refuse
    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = __bool__ = _refuse
    __hash__ = object.__hash__  # (defining __eq__ would drop it)

    def __getattr__(self, name: str):
        raise AutogradError(at_user_line(self._message))


def overwritten_message(x, what: str, expected: int) -> str:
    """PyTorch's error for a saved tensor `x` (`what`) written in place since it was saved."""
    return (
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{x.dtype.name} {list(x.shape)}], {what}, is at version "
        f"{x._version}; expected version {expected} instead. Hint: do the in-place op on a "
        "clone() or after backward(), or use the out-of-place op"
    )


def _overwritten(x, what: str, expected: int):
    """A tensor shaped like the saved tensor `x`, whose values raise PyTorch's error."""
    message = overwritten_message(x, what, expected)
    stand_in = _tensor_class()._from_array(_OverwrittenArray(x._data, message))
    stand_in.requires_grad = x.requires_grad
    return stand_in
