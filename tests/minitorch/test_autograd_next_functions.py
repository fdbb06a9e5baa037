"""`grad_fn.next_functions`: walking the backward graph as PyTorch's "Neural Networks" tutorial
does (`loss.grad_fn.next_functions[0][0]`)."""

import minitorch


def test_next_functions_walk_back_to_the_leaves():
    w = minitorch.randn(3, 2, requires_grad=True)
    x = minitorch.randn(4, 3)
    y = (x @ w).exp()
    (exp_edge,) = y.grad_fn.next_functions
    assert exp_edge[1] == 0 and exp_edge[0].name() == "MmBackward0"
    (x_edge, w_edge) = exp_edge[0].next_functions
    assert x_edge == (None, 0)  # x does not require grad
    assert w_edge[0].name() == "AccumulateGrad" and w_edge[0].variable is w
    assert w_edge[0].next_functions == ()


def test_next_functions_name_the_output_of_a_multi_output_node():
    x = minitorch.randn(2, 4, requires_grad=True)
    first, second = x.split(2, dim=1)
    z = second * 3
    ((node, nr),) = [e for e in z.grad_fn.next_functions if e[0] is not None]
    assert node is second.grad_fn and nr == second._output_nr
