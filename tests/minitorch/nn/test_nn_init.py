"""nn.init: gains and fans from the formulas, and the distributions they fill with."""

from __future__ import annotations

import math

import numpy as np
import pytest

import minitorch
from minitorch import MinitorchError, ShapeError, nn

init = nn.init


def test_calculate_gain_table():
    assert init.calculate_gain("linear") == 1.0
    assert init.calculate_gain("conv2d") == 1.0
    assert init.calculate_gain("sigmoid") == 1.0
    assert init.calculate_gain("tanh") == 5.0 / 3
    assert init.calculate_gain("relu") == math.sqrt(2.0)
    assert init.calculate_gain("leaky_relu") == math.sqrt(2.0 / (1 + 0.01**2))
    assert init.calculate_gain("leaky_relu", math.sqrt(5)) == math.sqrt(2.0 / 6)
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(MinitorchError, match="Unsupported nonlinearity"):
        init.calculate_gain("swish")


def test_fans_count_the_receptive_field():
    assert init._calculate_fan_in_and_fan_out(minitorch.empty(8, 3, 5, 5)) == (75, 200)
    assert init._calculate_fan_in_and_fan_out(minitorch.empty(4, 6)) == (6, 4)
    with pytest.raises(ShapeError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(minitorch.empty(3))


def test_plain_fills_return_their_argument():
    w = minitorch.empty(2, 3)
    assert init.zeros_(w) is w and w.tolist() == [[0.0] * 3] * 2
    assert init.ones_(w).tolist() == [[1.0] * 3] * 2
    assert init.constant_(w, 0.5).tolist() == [[0.5] * 3] * 2


def test_fills_record_no_gradient_on_parameters():
    p = nn.Parameter(minitorch.zeros(3, 4))
    init.uniform_(p, -1, 1)
    assert p.is_leaf and p.grad_fn is None and p.requires_grad


@pytest.mark.parametrize(
    "fill, std",
    [
        (lambda w: init.uniform_(w, -2.0, 4.0), 6 / math.sqrt(12)),
        (lambda w: init.normal_(w, 1.0, 0.5), 0.5),
        (lambda w: init.xavier_uniform_(w, gain=2.0), 2.0 * math.sqrt(2.0 / (500 + 400))),
        (lambda w: init.xavier_normal_(w), math.sqrt(2.0 / (500 + 400))),
        (lambda w: init.kaiming_uniform_(w, a=math.sqrt(5)), 1 / math.sqrt(3 * 400)),
        (
            lambda w: init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu"),
            math.sqrt(2.0 / 500),
        ),
    ],
)
def test_scaled_fills_have_the_standard_deviation_of_their_formula(fill, std):
    minitorch.manual_seed(0)
    w = fill(minitorch.empty(500, 400, dtype=minitorch.float64)).numpy()
    # 200,000 draws: the sample std is within ~0.3% of the true one
    np.testing.assert_allclose(w.std(), std, rtol=0.01)


def test_uniform_stays_in_its_interval_and_seeding_repeats_it():
    minitorch.manual_seed(5)
    a = init.uniform_(minitorch.empty(1000), -0.1, 0.3).numpy().copy()
    assert a.min() >= -0.1 and a.max() < 0.3
    minitorch.manual_seed(5)
    np.testing.assert_array_equal(init.uniform_(minitorch.empty(1000), -0.1, 0.3).numpy(), a)


def test_bad_mode_is_refused():
    with pytest.raises(MinitorchError, match="Mode fan_middle not supported"):
        init.kaiming_uniform_(minitorch.empty(2, 2), mode="fan_middle")
