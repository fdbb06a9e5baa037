"""The guard suite, part 2: closures, function objects, modules, classes and global state
(see guard_suite.py)."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

import minitorch
import minitorch.nn.functional as F
from minitorch import nn
from tests.tracer.dynamo.guard_suite import (
    BACKENDS,
    Case,
    check_case,
    data,
    double,
    registry,
    triple,
)

pytestmark = pytest.mark.capture

CASES: dict[str, Callable[[], Case]] = {}
case = registry(CASES)


# ---- closures -------------------------------------------------------------------------------


@case
def closure_number():
    k = 2.0

    def f(x):
        return x * k

    def change(mp):
        nonlocal k
        k = 3.0

    return Case(f, lambda: (data(3),), change=change)


@case
def closure_tensor():
    w = data(3)

    def f(x):
        return x + w

    def change(mp):
        nonlocal w
        w = data(2, 3)

    return Case(f, lambda: (data(3),), change=change)


@case
def closure_function():
    g = double

    def f(x):
        return g(x)

    def change(mp):
        nonlocal g
        g = triple

    return Case(f, lambda: (data(3),), change=change)


# ---- function objects: code, defaults, kwdefaults ([Note: what a function object holds]) ---


@case
def root_defaults():
    def f(x, k=2):
        return x * k

    return Case(f, lambda: (data(3),), change=lambda mp: mp.setattr(f, "__defaults__", (3,)))


@case
def root_kwdefaults():
    def f(x, *, k=2):
        return x * k

    return Case(f, lambda: (data(3),), change=lambda mp: mp.setattr(f, "__kwdefaults__", {"k": 3}))


@case
def root_code():
    def f(x):
        return x * 2

    return Case(f, lambda: (data(3),), change=lambda mp: mp.setattr(f, "__code__", triple.__code__))


def helper_case(change: Callable[[Callable, pytest.MonkeyPatch], None], helper: Callable) -> Case:
    """A function that calls `helper` (inlined), and a change to the helper object."""
    return Case(lambda x: helper(x), lambda: (data(3),), change=lambda mp: change(helper, mp))


@case
def helper_defaults():
    def h(x, k=2):
        return x * k

    return helper_case(lambda h, mp: mp.setattr(h, "__defaults__", (3,)), h)


@case
def helper_defaults_list_mutated():
    def h(x, ks=[2]):  # noqa: B006 - the point: a mutable default, changed in place
        return x * ks[0]

    return helper_case(lambda h, mp: h.__defaults__[0].__setitem__(0, 4), h)


@case
def helper_kwdefaults_reassigned():
    def h(x, *, k=2):
        return x * k

    return helper_case(lambda h, mp: mp.setattr(h, "__kwdefaults__", {"k": 3}), h)


@case
def helper_kwdefaults_mutated():
    def h(x, *, k=2):
        return x * k

    return helper_case(lambda h, mp: mp.setitem(h.__kwdefaults__, "k", 3), h)


@case
def helper_code():
    def h(x):
        return x * 2

    return helper_case(lambda h, mp: mp.setattr(h, "__code__", triple.__code__), h)


def inner_helper(x, k=2):
    return x * k


def outer_helper(x):
    return inner_helper(x) + 1


@case
def helper_of_helper_defaults():
    return Case(
        lambda x: outer_helper(x),
        lambda: (data(3),),
        change=lambda mp: mp.setattr(inner_helper, "__defaults__", (5,)),
    )


# ---- nn.Module attributes -------------------------------------------------------------------


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.act = nn.ReLU()
        self.scale = 2.0
        self.register_buffer("offset", data(3))

    def helper(self, x, k=1.0):
        return x * k

    def forward(self, x):
        y = self.act(self.fc(x)) * self.scale + self.offset
        if self.training:
            y = y + 1
        return self.helper(y)


def module_case(change: Callable[[Scaled, pytest.MonkeyPatch], None]) -> Case:
    minitorch.manual_seed(0)
    m = Scaled()
    return Case(lambda x: m(x), lambda: (data(2, 3),), change=lambda mp: change(m, mp))


@case
def module_training_flag():
    return module_case(lambda m, mp: m.eval())


@case
def module_number_attribute():
    return module_case(lambda m, mp: setattr(m, "scale", 3.0))


@case
def module_submodule_swapped():
    return module_case(lambda m, mp: setattr(m, "act", nn.Sigmoid()))


@case
def module_linear_swapped():
    return module_case(lambda m, mp: setattr(m, "fc", nn.Linear(3, 3)))


@case
def module_parameter_replaced():
    return module_case(
        lambda m, mp: setattr(m.fc, "weight", nn.Parameter(m.fc.weight.detach() * 2))
    )


@case
def module_buffer_replaced():
    return module_case(lambda m, mp: setattr(m, "offset", data(2, 3)))


@case
def module_method_default():
    return module_case(lambda m, mp: mp.setattr(Scaled.helper, "__defaults__", (4.0,)))


@case
def module_class_method_patched():
    return module_case(lambda m, mp: mp.setattr(Scaled, "helper", lambda self, x: x - 1))


@case
def module_class_forward_patched():
    return module_case(lambda m, mp: mp.setattr(Scaled, "forward", lambda self, x: self.fc(x) * 5))


@case
def module_instance_forward():
    return module_case(lambda m, mp: setattr(m, "forward", lambda x: x * 5))


@case
def module_instance_method_shadowed():
    return module_case(lambda m, mp: setattr(m, "helper", lambda x: x * 5))


class Doubled(Scaled):
    def forward(self, x):
        return super().forward(x) * 2


@case
def module_class_swapped():
    return module_case(lambda m, mp: setattr(m, "__class__", Doubled))


@case
def module_submodule_class_swapped():
    return module_case(lambda m, mp: setattr(m.act, "__class__", nn.Sigmoid))


@case
def layer_function_rebound():
    """nn.Linear.forward reads `F` from its own module: a global of another module."""
    return module_case(lambda m, mp: mp.setattr(F, "linear", lambda x, w, b: x * 0 + 1))


# ---- plain objects --------------------------------------------------------------------------


class Scaler:
    def __init__(self):
        self.k = 2.0

    def apply(self, x):
        return x * self.k

    @property
    def twice(self):
        return self.k * 2


class OtherScaler(Scaler):
    def apply(self, x):
        return x + self.k


def object_case(
    change: Callable[[Scaler, pytest.MonkeyPatch], None], read: Callable = lambda s, x: s.apply(x)
) -> Case:
    s = Scaler()
    return Case(lambda x: read(s, x), lambda: (data(3),), change=lambda mp: change(s, mp))


@case
def object_attribute():
    return object_case(lambda s, mp: setattr(s, "k", 5.0))


@case
def object_class_method_patched():
    return object_case(lambda s, mp: mp.setattr(Scaler, "apply", lambda self, x: x - self.k))


@case
def object_instance_method_shadowed():
    return object_case(lambda s, mp: setattr(s, "apply", lambda x: x * 7))


@case
def object_class_swapped():
    return object_case(lambda s, mp: setattr(s, "__class__", OtherScaler))


@case
def object_property_patched():
    return object_case(
        lambda s, mp: mp.setattr(Scaler, "twice", property(lambda self: 9.0)),
        read=lambda s, x: x * s.twice,
    )


# ---- functions read through a module ([Note: module attributes are guarded]) ---------------


@case
def minitorch_function_rebound():
    return Case(
        lambda x: minitorch.sin(x),
        lambda: (data(3),),
        change=lambda mp: mp.setattr(minitorch, "sin", minitorch.cos),
    )


@case
def math_function_rebound():
    return Case(
        lambda x: x * math.sqrt(4.0),
        lambda: (data(3),),
        change=lambda mp: mp.setattr(math, "sqrt", math.exp),
    )


@case
def functional_rebound():
    return Case(
        lambda x: F.relu(x - 2),
        lambda: (data(3),),
        change=lambda mp: mp.setattr(F, "relu", minitorch.neg),
    )


@case
def imported_inside_rebound():
    def f(x):
        import math as m

        return x * m.sqrt(9.0)

    return Case(f, lambda: (data(3),), change=lambda mp: mp.setattr(math, "sqrt", math.exp))


# ---- grad mode ------------------------------------------------------------------------------


@case
def grad_mode_off():
    return Case(lambda x: x * 2, lambda: (data(3).requires_grad_(),), around=minitorch.no_grad)


@case
def grad_mode_branch():
    def f(x):
        return x * 2 if minitorch.is_grad_enabled() else x * 3

    return Case(f, lambda: (data(3),), around=minitorch.no_grad)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(CASES))
def test_change_between_calls_gives_eager_answer(name, backend, monkeypatch):
    check_case(CASES[name](), backend, monkeypatch)
