"""An error raised inside a compiled function names the user's line, as the eager error does,
not the generated code that stands for it (`<__transformed_...>`)."""

import pytest

import minitorch
from minitorch import _dynamo
from minitorch.errors import MinitorchError


def bad_view(x):
    y = x.sin()
    return y.view(7)  # fails while tracing: the transformed code runs it, and it fails again


def bad_view_after_a_break(x):
    y = x.sin()
    print(end="")
    return y.view(7)  # the same, in the resume function's transformed code


def bad_broadcast_after_a_break(x):
    y = x.sin()
    print(end="")
    return y + minitorch.ones(4)


def bad_index(x, n):
    return x.sin()[n]


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
@pytest.mark.parametrize(
    "fn, args",
    [
        (bad_view, (minitorch.ones(3),)),
        (bad_view_after_a_break, (minitorch.ones(3),)),
        (bad_broadcast_after_a_break, (minitorch.ones(3),)),
        (bad_index, (minitorch.ones(3), 5)),
    ],
)
def test_the_error_names_the_users_line(fn, args, backend):
    _dynamo.reset()
    with pytest.raises(MinitorchError) as eager:
        fn(*args)
    with pytest.raises(type(eager.value)) as compiled:
        minitorch.compile(fn, backend=backend)(*args)
    assert str(compiled.value) == str(eager.value)
    assert f"{__file__}:" in str(compiled.value)
