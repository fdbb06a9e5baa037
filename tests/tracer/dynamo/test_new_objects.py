"""Objects of user classes made inside the compiled function, super(), and classes made there
(tracer/dynamo/variables/user_class.py): one graph, eager's values and objects."""

from __future__ import annotations

import dataclasses

import pytest

import minitorch
from tests.tracer.dynamo.helpers import assert_same, check_compiled
from tracer.dynamo import optimize
from tracer.dynamo.compiler import EAGER

pytestmark = pytest.mark.capture

explain = minitorch._dynamo.explain


class Point:
    scale = 2.0

    def __init__(self, x, y=None):
        self.x = x
        self.y = x if y is None else y

    def norm2(self):
        return self.x * self.x + self.y * self.y

    @property
    def scaled(self):
        return self.x * self.scale

    @staticmethod
    def origin_like(t):
        return minitorch.zeros_like(t)

    @classmethod
    def twice(cls, t):
        return cls(t, t * 2)

    def __add__(self, other):
        return Point(self.x + other.x, self.y + other.y)

    def __mul__(self, k):
        return Point(self.x * k, self.y * k)

    def __rmul__(self, k):
        return self * k


class Point3(Point):
    def __init__(self, x, z):
        super().__init__(x)
        self.z = z

    def norm2(self):
        return super().norm2() + self.z * self.z


class Point4(Point3):
    def __init__(self, x, z, w):
        super().__init__(x, z)  # the explicit form
        self.w = w

    def norm2(self):
        return super().norm2() + self.w


class Plain:  # no __init__ of its own: object's
    pass


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a):
        self.a = a
        self.b = a + 1


class Lazy:
    def __init__(self, t):
        self.t = t

    def __getattr__(self, name):
        return self.t * len(name)

    def __call__(self, u):
        return self.t + u


@dataclasses.dataclass
class Pair:
    first: minitorch.Tensor
    second: float = 1.0

    def total(self):
        return self.first * self.second


def methods_and_properties(x):
    p = Point(x, x.cos())
    return p.norm2() + p.scaled + Point.origin_like(x), Point.twice(x).y


def operators(x):
    p, q = Point(x), Point(x.sin())
    r = 3 * (p + q) * 0.5
    return r.x, r.y


def super_chains(x):
    return Point3(x, x.exp()).norm2(), Point4(x, x, 1.5).norm2()


def introspection(x):
    p = Point3(x, x)
    return (
        isinstance(p, Point),
        isinstance(p, (int, Point4)),
        type(p) is Point3,
        type(p).__name__,
        p is p,
        p is Point(x),
        x + 1,
    )


def attributes_set_later(x):
    o = Plain()
    o.a = x
    o.a = o.a + 1
    o.b = [o.a]
    return o.b[0] * 2


def slots_getattr_call(x):
    s = Slotted(x)
    lazy = Lazy(s.b)
    return lazy.abc, lazy(x), s.a


def dataclass_objects(x):
    return Pair(x, 3.0).total() + Pair(x).total()


@pytest.mark.parametrize(
    "fn",
    [
        methods_and_properties,
        operators,
        super_chains,
        introspection,
        attributes_set_later,
        slots_getattr_call,
        dataclass_objects,
    ],
)
def test_objects_made_in_the_frame_are_one_graph(fn):
    x = minitorch.randn(3)
    check_compiled(fn, x)
    report = explain(fn)(x)
    assert (report.graph_count, report.graph_break_count) == (1, 0), report.break_reasons


def made_and_returned(x):
    p = Point3(x.sin(), x)
    return p, [p], {"p": p}


def test_an_object_that_escapes_is_made_once_without_running_init_again():
    x = minitorch.randn(3)
    p, in_list, in_dict = optimize(made_and_returned, backend=EAGER)(x)
    assert type(p) is Point3 and in_list[0] is p and in_dict["p"] is p
    assert vars(p).keys() == {"x", "y", "z"} and p.z is x
    assert_same(p.x, x.sin())
    assert p.y is p.x  # one tensor, as in eager: y = x when no y is given


def across_a_break(x):
    p = Point(x)
    p.count = 1
    print("break")  # a graph break: p is made again for the rest of the function
    p.count += 1
    return p.norm2() * p.count


def test_an_object_live_at_a_graph_break_keeps_its_attributes(capsys):
    x = minitorch.randn(3)
    assert_same(optimize(across_a_break, backend=EAGER)(x), across_a_break(x))


def test_patching_a_method_or_class_attribute_retraces():
    x = minitorch.randn(3)
    compiled = optimize(methods_and_properties, backend=EAGER)
    compiled(x)
    old_scale, old_norm = Point.scale, Point.norm2
    try:
        Point.scale = 5.0
        Point.norm2 = lambda self: self.x
        assert_same(compiled(x), methods_and_properties(x))
    finally:
        Point.scale, Point.norm2 = old_scale, old_norm
    assert_same(compiled(x), methods_and_properties(x))


def class_in_the_frame(x):
    class Scaled:
        k = 3.0

        def __init__(self, t):
            self.t = t

        @property
        def value(self):
            return self.t * self.k

    class Shifted(Scaled):
        def __init__(self, t):
            super().__init__(t + 1)

    return Shifted(x).value, Scaled(x).value


K = 4.0


def class_body_reads_a_global(x):
    class Reads:
        k = K  # its value would be frozen into the class made while tracing

    return x * Reads.k


def test_a_class_statement_in_the_frame_is_one_graph():
    x = minitorch.randn(3)
    check_compiled(class_in_the_frame, x)
    report = explain(class_in_the_frame)(x)
    assert (report.graph_count, report.graph_break_count) == (1, 0), report.break_reasons


def test_a_class_body_that_reads_a_global_runs_eagerly_each_call():
    global K
    x = minitorch.randn(3)
    compiled = optimize(class_body_reads_a_global, backend=EAGER)
    assert_same(compiled(x), x * 4.0)
    K = 5.0
    try:
        assert_same(compiled(x), x * 5.0)
    finally:
        K = 4.0


def missing_attribute(x):
    p = Point(x)
    return p.nope


def module_made_inside(x):
    return minitorch.nn.Linear(3, 2)(x).shape


def test_what_is_not_traced_still_gives_eager_results():
    x = minitorch.randn(3)
    with pytest.raises(AttributeError, match="nope"):
        optimize(missing_attribute, backend=EAGER)(x)
    assert optimize(module_made_inside, backend=EAGER)(x) == (2,)


def validated(logits):  # the check reads the values: a break at the call, as before
    d = minitorch.distributions.Categorical(logits=logits)
    return d.log_prob(minitorch.tensor(1))


def unvalidated(logits, a):
    d = minitorch.distributions.Categorical(logits=logits, validate_args=False)
    n = minitorch.distributions.Normal(logits, logits.exp(), validate_args=False)
    return d.log_prob(a), d.entropy(), n.log_prob(logits), n.rsample().shape


def test_distributions_without_validation_are_one_graph():
    logits, a = minitorch.randn(4), minitorch.tensor(2)
    check_compiled(unvalidated, logits, a)
    report = explain(unvalidated)(logits, a)
    assert (report.graph_count, report.graph_break_count) == (1, 0), report.break_reasons
    assert_same(optimize(validated, backend=EAGER)(logits), validated(logits))


# ---- found by an adversarial helper: each was a wrong answer or a crash ----------------------


def keyword_only_after_star_args(x):
    def h(*args, scale=1, **kw):
        return args, scale, kw

    class C:
        def __init__(self, a, *rest, k=2):
            self.a, self.rest, self.k = a, rest, k

    c = C(x, 1, 2)
    return h(x, x + 1, scale=3, z=4), c.rest, c.k


def test_keyword_only_parameters_after_star_args_get_their_own_values():
    check_compiled(keyword_only_after_star_args, minitorch.randn(2))


class Made:
    def __init__(self, x):
        self.x = x

    @classmethod
    def make(cls, x):
        print("|make", end="")  # a break inside the classmethod
        return cls(x)


def classmethod_that_breaks(x):
    return Made.make(x).x + Made(x).make(x + 1).x


def test_a_classmethod_that_breaks_is_called_again_by_its_name(capsys):
    x = minitorch.randn(2)
    compiled = optimize(classmethod_that_breaks, backend=EAGER)
    for _ in range(2):
        assert_same(compiled(x), classmethod_that_breaks(x))


def same_object_twice(x, a, b):
    a.x = a.x + 5
    return b.x


def one_object_in_two_places(x):
    p = Point(x)
    ps = [p, p]
    print("|break", end="")  # in the resume function, ps[0] and ps[1] are one object
    ps[0].x = ps[0].x + 5
    return ps[1].x


def test_one_object_read_through_two_places_is_one_tracker(capsys):
    x = minitorch.randn(2)
    compiled = optimize(same_object_twice, backend=EAGER)
    for shared in (True, False, True):
        a, b = Point(x), Point(x)
        mine, theirs = (
            (a, a) if shared else (a, b),
            (Point(x),) * 2 if shared else (Point(x), Point(x)),
        )
        assert_same(compiled(x, *mine), same_object_twice(x, *theirs))
        assert_same(mine[0].x, theirs[0].x)
    compiled = optimize(one_object_in_two_places, backend=EAGER)
    for _ in range(2):
        assert_same(compiled(x), one_object_in_two_places(x))


class Patched:
    def __init__(self, x):
        self.x = x


def reads_its_attribute(x):
    return Patched(x).x + 0


def test_patching_how_the_class_makes_and_stores_retraces():
    x = minitorch.randn(2)
    compiled = optimize(reads_its_attribute, backend=EAGER)
    compiled(x)
    try:
        Patched.x = property(
            lambda s: s.__dict__["_x"] * 100, lambda s, v: s.__dict__.__setitem__("_x", v)
        )
        assert_same(compiled(x), x * 100)
        del Patched.x
        Patched.__setattr__ = lambda s, n, v: object.__setattr__(s, n, v * 7)
        assert_same(compiled(x), x * 7)
    finally:
        for name in ("x", "__setattr__"):
            if name in vars(Patched):
                delattr(Patched, name)
    assert_same(compiled(x), x + 0)


def class_returned(x):
    class Local:
        k = 3

        def __init__(self, v):
            self.v = v

    return Local(x), Local(x + 1)


class Registered:
    registry: list = []

    def __init_subclass__(cls, **kwargs):
        Registered.registry.append(cls)


def subclass_in_the_frame(x):
    class Child(Registered):
        pass

    return x + 1


def test_a_class_statement_makes_a_new_class_on_each_call_where_it_shows():
    x = minitorch.randn(2)
    compiled = optimize(class_returned, backend=EAGER)
    a, b = compiled(x)
    a2, _ = compiled(x)
    assert type(a) is type(b) and type(a) is not type(a2)  # one class per call, as eager's
    type(a).k = 99  # a class the caller changed is not the next call's
    assert compiled(x)[0].k == 3
    Registered.registry.clear()
    compiled = optimize(subclass_in_the_frame, backend=EAGER)
    for _ in range(3):
        compiled(x)
    assert len(Registered.registry) == 3  # __init_subclass__ ran for each class statement


# ---- found by the second adversarial pass --------------------------------------------------


class Counter:
    def __init__(self, w):
        self.w = w

    def step(self):
        print("|step", end="")  # the caller breaks at the call of the method
        self.w = self.w + 1

    @minitorch.no_grad()
    def under_no_grad(self, x):
        self.w = self.w + x


def method_that_breaks(x):
    m = Counter(5)
    m.step()
    m.step()
    n = Counter(x)
    n.under_no_grad(x)
    return m.w, n.w


def test_a_method_that_breaks_writes_the_object_the_frame_holds(capsys):
    x = minitorch.randn(2, requires_grad=True)
    compiled = optimize(method_that_breaks, backend=EAGER)
    for _ in range(2):
        assert_same(compiled(x), method_that_breaks(x))


class Box:
    def __init__(self, v):
        self.v = v


def write_through_one_read_through_another(x, a, b):
    a.v.add_(x)
    return b.v * 1


def max_of_tensors(x, p):
    return (
        max(x.unbind(0)),
        min([x[0], x[1]]),
        max(t for t in x.unbind(0)),
        isinstance(p, minitorch.nn.Parameter),
        isinstance(p, (minitorch.nn.Parameter, int)),
    )


def test_tensors_held_by_objects_and_parameters_are_what_eager_sees():
    mine, theirs = minitorch.zeros(2), minitorch.zeros(2)
    got = optimize(write_through_one_read_through_another, backend=EAGER)(
        minitorch.ones(2), Box(mine), Box(mine)
    )
    assert_same(
        got, write_through_one_read_through_another(minitorch.ones(2), Box(theirs), Box(theirs))
    )
    assert_same(mine, theirs)
    x, p = minitorch.tensor([1.0, 3.0, 2.0]), minitorch.nn.Parameter(minitorch.ones(2))
    assert_same(optimize(max_of_tensors, backend=EAGER)(x, p), max_of_tensors(x, p))
