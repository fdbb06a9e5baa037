"""optim: SGD, Adam and AdamW against hand-written numpy versions of PyTorch's update formulas."""

import numpy as np
import pytest

import minitorch
from minitorch.errors import AutogradError, MinitorchError
from minitorch.nn import Parameter
from minitorch.optim import SGD, Adam, AdamW, Optimizer

STEPS = 5


# ---- the formulas, in numpy, one step at a time --------------------------------------------


def numpy_sgd(
    theta, grads, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False
):
    """θ after each step of PyTorch's SGD."""
    b, out = None, []
    for g in grads:
        if maximize:
            g = -g
        g = g + weight_decay * theta
        if momentum != 0:
            b = g.copy() if b is None else momentum * b + (1 - dampening) * g
            g = g + momentum * b if nesterov else b
        theta = theta - lr * g
        out.append(theta)
    return out


def numpy_adam(
    theta,
    grads,
    lr=1e-3,
    betas=(0.9, 0.999),
    eps=1e-8,
    weight_decay=0.0,
    amsgrad=False,
    maximize=False,
):
    """θ after each step of PyTorch's Adam."""
    beta1, beta2 = betas
    m = np.zeros_like(theta)
    v = np.zeros_like(theta)
    v_max = np.zeros_like(theta)
    out = []
    for t, g in enumerate(grads, start=1):
        if maximize:
            g = -g
        g = g + weight_decay * theta
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g**2
        m_hat = m / (1 - beta1**t)
        if amsgrad:
            v_max = np.maximum(v_max, v)
            v_hat = v_max / (1 - beta2**t)
        else:
            v_hat = v / (1 - beta2**t)
        theta = theta - lr * m_hat / (np.sqrt(v_hat) + eps)
        out.append(theta)
    return out


def numpy_adamw(
    theta,
    grads,
    lr=1e-3,
    betas=(0.9, 0.999),
    eps=1e-8,
    weight_decay=1e-2,
    amsgrad=False,
    maximize=False,
):
    """θ after each step of PyTorch's AdamW: θ shrinks by lr * weight_decay (the gradient
    never sees the decay), then Adam's step."""
    beta1, beta2 = betas
    m = v = v_max = np.zeros_like(theta)
    out = []
    for t, g in enumerate(grads, start=1):
        g = -g if maximize else g
        theta = theta * (1 - lr * weight_decay)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g**2
        v_max = np.maximum(v_max, v)
        v_hat = (v_max if amsgrad else v) / (1 - beta2**t)
        theta = theta - lr * (m / (1 - beta1**t)) / (np.sqrt(v_hat) + eps)
        out.append(theta)
    return out


def run_optimizer(make_optimizer, theta, grads):
    """θ after each step of a minitorch optimizer fed the given gradients."""
    p = Parameter(minitorch.tensor(theta))
    opt = make_optimizer([p])
    out = []
    for g in grads:
        p.grad = minitorch.tensor(g)
        opt.step()
        out.append(p.detach().numpy().copy())
    return out


@pytest.fixture
def problem():
    """A float64 starting point and a sequence of gradients (of both signs, several scales)."""
    rng = np.random.default_rng(0)
    theta = rng.normal(size=(3, 4))
    grads = [rng.normal(size=(3, 4)) * scale for scale in (1.0, 0.1, 3.0, 1.0, 0.5)]
    return theta, grads[:STEPS]


SGD_CASES = [
    dict(lr=0.1),
    dict(lr=0.1, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.3),
    dict(lr=0.1, momentum=0.9, nesterov=True),
    dict(lr=0.1, weight_decay=0.01),
    dict(lr=0.1, momentum=0.5, weight_decay=0.1, nesterov=True),
    dict(lr=0.1, momentum=0.9, weight_decay=0.1, maximize=True),
]


@pytest.mark.parametrize(
    "hyper", SGD_CASES, ids=lambda h: ",".join(f"{k}={v}" for k, v in h.items())
)
def test_sgd_matches_formula(problem, hyper):
    theta, grads = problem
    got = run_optimizer(lambda ps: SGD(ps, **hyper), theta, grads)
    want = numpy_sgd(theta, grads, **hyper)
    for step, (g, w) in enumerate(zip(got, want), start=1):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12, err_msg=f"step {step}")


ADAM_CASES = [
    dict(lr=0.01),
    dict(lr=0.1, betas=(0.8, 0.99), eps=1e-6),
    dict(lr=0.01, weight_decay=0.1),
    dict(lr=0.01, amsgrad=True),
    dict(lr=0.01, weight_decay=0.05, amsgrad=True, maximize=True),
    dict(lr=0.01, betas=(0.0, 0.0)),  # no averaging: sign-like steps of size lr
]


ADAMW_CASES = [
    dict(),  # PyTorch's defaults: lr=1e-3, weight_decay=1e-2
    dict(lr=0.1, weight_decay=0.5),
    dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.0),
    dict(lr=0.05, weight_decay=0.1, amsgrad=True, maximize=True),
]
ADAM_FAMILY = [(Adam, numpy_adam, hyper) for hyper in ADAM_CASES] + [
    (AdamW, numpy_adamw, hyper) for hyper in ADAMW_CASES
]


@pytest.mark.parametrize(
    "method, formula, hyper",
    ADAM_FAMILY,
    ids=lambda v: (
        (",".join(f"{k}={x}" for k, x in v.items()) or "defaults")
        if isinstance(v, dict)
        else getattr(v, "__name__", "")
    ),
)
def test_adam_and_adamw_match_their_formulas(problem, method, formula, hyper):
    theta, grads = problem
    got = run_optimizer(lambda ps: method(ps, **hyper), theta, grads)
    want = formula(theta, grads, **hyper)
    for step, (g, w) in enumerate(zip(got, want), start=1):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12, err_msg=f"step {step}")


def test_adamw_defaults_and_decay_is_not_adams():
    opt = AdamW([Parameter(minitorch.zeros(2))])
    assert opt.defaults == dict(
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=1e-2,
        amsgrad=False,
        maximize=False,
        foreach=None,
        fused=None,
        capturable=False,
        differentiable=False,
    )
    # With weight decay the two methods differ; without it they are the same method.
    theta, grads = np.ones((2, 2)), [np.full((2, 2), 0.5)] * 3

    def last(make, decay):
        return run_optimizer(lambda ps: make(ps, lr=0.1, weight_decay=decay), theta, grads)[-1]

    assert not np.allclose(last(Adam, 0.5), last(AdamW, 0.5))
    np.testing.assert_array_equal(last(Adam, 0.0), last(AdamW, 0.0))


def test_adam_first_step_moves_each_coordinate_by_lr(problem):
    # Bias correction makes m̂/√v̂ = g/|g| on the first step: every coordinate moves by lr.
    theta, grads = problem
    (after,) = run_optimizer(lambda ps: Adam(ps, lr=0.01, eps=0.0), theta, grads[:1])
    np.testing.assert_allclose(after, theta - 0.01 * np.sign(grads[0]), rtol=1e-12)


def test_step_uses_gradients_from_backward():
    target = minitorch.tensor([1.0, -2.0, 3.0])
    p = Parameter(minitorch.tensor([0.0, 0.0, 0.0]))
    opt = SGD([p], lr=0.1, momentum=0.9)
    for _ in range(200):
        opt.zero_grad()
        ((p - target) * (p - target)).sum().backward()
        opt.step()
    np.testing.assert_allclose(p.detach().numpy(), [1.0, -2.0, 3.0], atol=1e-4)


@pytest.mark.parametrize(
    "make",
    [
        lambda ps: SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.1),
        lambda ps: Adam(ps, lr=0.1, weight_decay=0.1, amsgrad=True),
    ],
)
def test_updates_in_place_and_keep_float32(make):
    p = Parameter(minitorch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    array = p._data
    opt = make([p])
    for _ in range(3):
        p.grad = minitorch.tensor([[0.5, -0.5], [1.0, 0.0]])
        opt.step()
    assert p._data is array  # the same storage: views and modules holding p see the update
    assert p.dtype is minitorch.float32
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    for value in opt.state[p].values():
        if isinstance(value, minitorch.Tensor):
            assert value.dtype is minitorch.float32


def test_a_step_between_forward_and_backward_is_caught():
    # The graph saved w for mul's derivative; the step changed w in place since.
    w = Parameter(minitorch.tensor([1.0, 2.0]))
    opt = SGD([w], lr=0.1)
    loss = (w * w).sum()
    w.grad = minitorch.tensor([1.0, 1.0])
    opt.step()
    with pytest.raises(AutogradError, match="modified by an inplace operation"):
        loss.backward()


def test_params_without_grad_are_skipped():
    used = Parameter(minitorch.tensor([1.0, 2.0]))
    unused = Parameter(minitorch.tensor([3.0, 4.0]))
    opt = Adam([used, unused], lr=0.1)
    used.grad = minitorch.tensor([1.0, 1.0])
    opt.step()
    assert unused.tolist() == [3.0, 4.0]
    assert unused not in opt.state
    assert opt.state[used]["step"] == 1


def test_zero_grad():
    p = Parameter(minitorch.tensor([1.0, 2.0]))
    opt = SGD([p], lr=0.1)
    p.grad = grad = minitorch.tensor([5.0, 6.0])
    opt.zero_grad(set_to_none=False)
    assert p.grad is grad  # zeroed, not replaced: references to it see the zeros
    assert grad.tolist() == [0.0, 0.0] and grad.dtype is minitorch.float32
    opt.zero_grad()
    assert p.grad is None
    opt.zero_grad()  # nothing to forget: no error


def test_closure_is_called_and_its_loss_returned():
    p = Parameter(minitorch.tensor([2.0]))
    opt = SGD([p], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with minitorch.no_grad():  # step turns grad mode back on for the closure
        loss = opt.step(closure)
    assert loss.item() == 4.0
    assert p.tolist() == [1.0]  # 2 - 0.25 * 2*2


# ---- parameter groups ----------------------------------------------------------------------


def test_param_groups_have_their_own_hyperparameters():
    a = Parameter(minitorch.tensor([1.0]))
    b = Parameter(minitorch.tensor([1.0]))
    opt = SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["momentum"] == 0.9  # filled from the defaults
    a.grad = minitorch.tensor([1.0])
    b.grad = minitorch.tensor([1.0])
    opt.step()
    assert a.item() == pytest.approx(0.9) and b.item() == pytest.approx(0.5)


def test_add_param_group():
    a = Parameter(minitorch.tensor([1.0]))
    b = Parameter(minitorch.tensor([1.0]))
    opt = Adam([a], lr=0.1)
    opt.add_param_group({"params": [b], "lr": 0.01})
    assert len(opt.param_groups) == 2
    assert opt.param_groups[1]["betas"] == (0.9, 0.999)
    b.grad = minitorch.tensor([1.0])
    opt.step()
    assert b.item() == pytest.approx(1.0 - 0.01)
    with pytest.raises(MinitorchError, match="more than once"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(MinitorchError, match="Invalid learning rate"):
        opt.add_param_group({"params": [Parameter(minitorch.tensor([1.0]))], "lr": -1.0})


def test_named_parameters_of_a_module_can_be_optimized():
    model = minitorch.nn.Module()
    model.w = Parameter(minitorch.tensor([1.0, 2.0]))
    model.b = Parameter(minitorch.tensor([0.0]))
    opt = SGD(model.parameters(), lr=1.0)
    (model.w.sum() + model.b.sum()).backward()
    opt.step()
    assert model.w.tolist() == [0.0, 1.0] and model.b.tolist() == [-1.0]


# ---- bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda ps: SGD(ps, lr=-0.1), "Invalid learning rate: -0.1"),
        (lambda ps: SGD(ps, lr=float("nan")), "Invalid learning rate"),
        (lambda ps: SGD(ps, momentum=-0.5), "Invalid momentum value: -0.5"),
        (lambda ps: SGD(ps, weight_decay=-1), "Invalid weight_decay value: -1"),
        (lambda ps: SGD(ps, nesterov=True), "Nesterov momentum requires a momentum"),
        (lambda ps: SGD(ps, momentum=0.9, dampening=0.1, nesterov=True), "zero dampening"),
        (lambda ps: Adam(ps, lr=-1e-3), "Invalid learning rate"),
        (lambda ps: Adam(ps, betas=(1.0, 0.999)), "Invalid beta parameter at index 0: 1.0"),
        (lambda ps: Adam(ps, betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
        (lambda ps: Adam(ps, eps=-1e-8), "Invalid epsilon value"),
        (lambda ps: Adam(ps, weight_decay=-0.1), "Invalid weight_decay value"),
    ],
)
def test_bad_hyperparameters_are_refused(make, message):
    with pytest.raises(MinitorchError, match=message) as info:
        make([Parameter(minitorch.tensor([1.0]))])
    assert __file__ in str(info.value)  # names the user's line


def test_bad_params_are_refused():
    p = Parameter(minitorch.tensor([1.0]))
    with pytest.raises(MinitorchError, match="empty parameter list"):
        SGD([], lr=0.1)
    with pytest.raises(MinitorchError, match="iterable of Tensors"):
        SGD(p, lr=0.1)
    with pytest.raises(MinitorchError, match="more than once"):
        SGD([p, p], lr=0.1)
    with pytest.raises(MinitorchError, match="ordered collections"):
        SGD([{"params": {p}}], lr=0.1)
    with pytest.raises(MinitorchError, match="only optimize Tensors, .* float"):
        SGD([1.0], lr=0.1)
    with pytest.raises(MinitorchError, match="non-leaf"):
        SGD([p * 2], lr=0.1)


def test_base_class_without_update():
    opt = Optimizer([Parameter(minitorch.tensor([1.0]))], dict(lr=0.1))
    opt.param_groups[0]["params"][0].grad = minitorch.tensor([1.0])
    with pytest.raises(NotImplementedError, match="Optimizer does not implement _update"):
        opt.step()


# ---- saving and loading --------------------------------------------------------------------


def _make_model(theta):
    return [Parameter(minitorch.tensor(t)) for t in theta]


@pytest.mark.parametrize(
    "make",
    [
        lambda ps, lr: SGD(
            [{"params": ps[:1]}, {"params": ps[1:], "lr": lr / 10}], lr=lr, momentum=0.9
        ),
        lambda ps, lr: Adam(
            [{"params": ps[:1]}, {"params": ps[1:], "lr": lr / 10}], lr=lr, amsgrad=True
        ),
        lambda ps, lr: AdamW(
            [{"params": ps[:1]}, {"params": ps[1:], "lr": lr / 10}], lr=lr, weight_decay=0.3
        ),
    ],
)
def test_state_dict_round_trip_continues_identically(make):
    rng = np.random.default_rng(1)
    theta = [rng.normal(size=(2, 3)), rng.normal(size=(3,))]
    grads = [[rng.normal(size=t.shape) for t in theta] for _ in range(6)]

    def train(params, opt, steps):
        for step_grads in steps:
            for p, g in zip(params, step_grads):
                p.grad = minitorch.tensor(g)
            opt.step()

    params = _make_model(theta)
    opt = make(params, 0.1)
    train(params, opt, grads[:3])
    saved = opt.state_dict()
    saved_arrays = {
        k: v.numpy().copy() for k, v in saved["state"][1].items() if isinstance(v, minitorch.Tensor)
    }

    # A fresh model at the same point, a fresh optimizer built with other hyper-parameters.
    resumed = _make_model([p.detach().numpy() for p in params])
    opt2 = make(resumed, 123.0)
    opt2.load_state_dict(saved)
    assert [g["lr"] for g in opt2.param_groups] == [0.1, 0.01]
    assert opt2.param_groups[1]["params"][0] is resumed[1]

    train(resumed, opt2, grads[3:])
    for name, array in saved_arrays.items():  # loading copied the state: opt2 has its own
        np.testing.assert_array_equal(saved["state"][1][name].numpy(), array)
    train(params, opt, grads[3:])
    for p, q in zip(params, resumed):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_state_dict_format():
    a = Parameter(minitorch.tensor([1.0, 2.0]))
    b = Parameter(minitorch.tensor([3.0]))
    opt = Adam([{"params": [a]}, {"params": [b], "lr": 0.5}])
    b.grad = minitorch.tensor([1.0])
    opt.step()
    sd = opt.state_dict()
    assert sorted(sd) == ["param_groups", "state"]
    assert [g["params"] for g in sd["param_groups"]] == [[0], [1]]
    assert sd["param_groups"][1]["lr"] == 0.5 and sd["param_groups"][0]["lr"] == 1e-3
    assert list(sd["state"]) == [1]  # only b has had a gradient
    assert sorted(sd["state"][1]) == ["exp_avg", "exp_avg_sq", "step"]
    assert isinstance(sd["state"][1]["exp_avg"], minitorch.Tensor)
    assert sd["state"][1]["step"] == 1


def test_load_state_dict_refuses_a_different_layout():
    a = Parameter(minitorch.tensor([1.0]))
    b = Parameter(minitorch.tensor([1.0]))
    saved = SGD([a, b], lr=0.1).state_dict()
    with pytest.raises(MinitorchError, match="group 0 has 2 parameters, but the optimizer's has 1"):
        SGD([a], lr=0.1).load_state_dict(saved)
    with pytest.raises(MinitorchError, match="has 1 parameter groups, but the optimizer has 2"):
        SGD([{"params": [a]}, {"params": [b]}], lr=0.1).load_state_dict(saved)


def test_load_state_dict_casts_state_to_the_parameters_dtype():
    p64 = Parameter(minitorch.tensor([1.0, 2.0], dtype=minitorch.float64))
    opt = SGD([p64], lr=0.1, momentum=0.9)
    p64.grad = minitorch.tensor([1.0, 1.0], dtype=minitorch.float64)
    opt.step()
    p32 = Parameter(minitorch.tensor([1.0, 2.0]))
    opt32 = SGD([p32], lr=0.1, momentum=0.9)
    opt32.load_state_dict(opt.state_dict())
    assert opt32.state[p32]["momentum_buffer"].dtype is minitorch.float32


def test_repr():
    opt = SGD([Parameter(minitorch.tensor([1.0]))], lr=0.1, momentum=0.9)
    assert repr(opt) == (
        "SGD (\n"
        "Parameter Group 0\n"
        "    dampening: 0\n"
        "    differentiable: False\n"
        "    foreach: None\n"
        "    fused: None\n"
        "    lr: 0.1\n"
        "    maximize: False\n"
        "    momentum: 0.9\n"
        "    nesterov: False\n"
        "    weight_decay: 0\n"
        ")"
    )


def test_bad_hyper_parameters_are_value_errors_as_in_pytorch():
    p = minitorch.nn.Parameter(minitorch.zeros(2))
    with pytest.raises(ValueError, match="Invalid learning rate"):
        minitorch.optim.SGD([p], lr=-1.0)
    with pytest.raises(minitorch.MinitorchError, match="Invalid beta parameter at index 1"):
        minitorch.optim.Adam([p], betas=(0.9, 1.5))


@pytest.mark.parametrize(
    "method, formula, hyper",
    ADAM_FAMILY + [(SGD, numpy_sgd, hyper) for hyper in SGD_CASES],
    ids=lambda v: (
        (",".join(f"{k}={x}" for k, x in v.items()) or "defaults")
        if isinstance(v, dict)
        else getattr(v, "__name__", "")
    ),
)
def test_updates_in_place_are_bit_identical_to_the_formulas_in_float32(
    problem, method, formula, hyper
):
    """The scratch arrays ([Note: updating in place]) change where intermediates live, not
    one bit of a float32 result: the same operations, in the same order."""
    theta, grads = problem
    theta, grads = theta.astype(np.float32), [g.astype(np.float32) for g in grads]
    got = run_optimizer(lambda ps: method(ps, **hyper), theta, grads)
    want = formula(theta, grads, **hyper)
    for step, (g, w) in enumerate(zip(got, want), start=1):
        assert g.dtype == np.float32
        np.testing.assert_array_equal(g, w.astype(np.float32), err_msg=f"step {step}")


def test_scratch_arrays_are_shared_by_parameters_of_one_shape():
    a, b, c = (Parameter(minitorch.zeros(*shape)) for shape in [(3, 4), (3, 4), (5,)])
    opt = Adam([a, b, c], lr=0.1)
    for p in (a, b, c):
        p.grad = minitorch.ones(*p.shape)
    opt.step()
    assert len(opt._scratch_arrays) == 2  # (3, 4) and (5,), float32, numpy
    assert opt.state_dict()["state"][0].keys() == {"step", "exp_avg", "exp_avg_sq"}
