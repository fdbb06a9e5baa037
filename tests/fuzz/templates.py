"""The statement templates the generator draws from, one table per family of ops.

Each template is a format string over the placeholders below; the generator fills them from
the operands it picked and keeps the statement only if eager mode runs it, so a template may
be wrong for some operands (a transpose of a 1-d tensor, a `gather` along a dim the index does
not fit): it is simply not kept. That is also how a template whose op the eager API does not
have yet stays harmless: every program it would appear in is generated without it.

    {a}, {b}    tensors of the program (recent ones more likely)
    {d}, {e}    dims of {a} (d sometimes negative)
    {i}         an index into dim 0 of {a};  {j}: an index into its last dim
    {k}         True or False
    {dims}      a tuple of distinct dims of {a};  {perm}: a permutation of them
    {all_dims}  `, -1` per dim of {a} (expand's "keep this size")
    {fresh}     the new name the statement binds;  {other}: a second new name

Sizes come from `{a}.shape[...]` rather than from literals wherever they can, so that the
program stays valid at the larger sizes of calls 3 and 4 and the compiler sees them as symbols.
An index written as a literal ({i}, {j}, 0) stays in range when sizes grow, since a size above
1 only grows and a size of 1 stays 1.
"""

from __future__ import annotations

POINTWISE = [
    "{a}.sin()",
    "minitorch.cos({a})",
    "{a}.exp()",
    "({a}.abs() + 1).log()",
    "{a}.tanh()",
    "{a}.sigmoid()",
    "{a}.relu()",
    "{a}.abs().sqrt()",
    "{a}.abs()",
    "-{a}",
    "{a}.neg()",
    "{a} ** 2",
    "{a}.pow(3)",
    "{a} * 0.5 + 1",
    "{a}.clamp(-0.5, 0.5)",
    "{a}.clamp(min=0)",
    "minitorch.clamp({a}, max=1)",
    "{a}.erf()",
    "{a}.reciprocal()",
    "({a} > 0).int()",
    "{a}.float()",
    "{a}.double()",
    "{a} * {a}.shape[{d}]",
    "{a} + len({a}.shape)",
    "{a} + {b}",
    "{a} - {b}",
    "{a} * {b}",
    "{a} / {b}",
    "{a} / ({b}.abs() + 1)",
    "minitorch.maximum({a}, {b})",
    "minitorch.minimum({a}, {b})",
    "{a} > {b}",
    "{a} == {b}",
    "minitorch.where({a} > {b}, {a}, {b})",
    "minitorch.where({a} < 0, {b}, 0.0)",
    "minitorch.add({a}, {b}, alpha=2)",
    "{a} - 1.5 * {b}",
    "{a}.masked_fill({b} > 0, 0.0)",
    "{a}.abs().log1p()",
    "{a}.expm1()",
    "minitorch.log1p({a} * {a})",
]
REDUCTIONS = [
    "{a}.sum()",
    "{a}.sum({d})",
    "{a}.sum(dim={dims}, keepdim={k})",
    "{a}.mean({d}, keepdim={k})",
    "{a}.mean()",
    "{a}.amax({d})",
    "{a}.amin(dim={dims}, keepdim={k})",
    "{a}.max()",
    "{a}.min()",
    "{a}.max({d}).values",
    "{a}.min({d}, keepdim={k})[0]",
    "{a}.max(dim={d})[1]",
    "{a}.argmax({d})",
    "{a}.argmin()",
    "{a}.var({d})",
    "{a}.softmax({d})",
    "{a}.log_softmax({d})",
    "minitorch.sum({a}, {d})",
]
# Integer and bool values in the middle of a program: masks, casts, counts, index arithmetic.
INTEGER = [
    "({a} > 0).long()",
    "({a} > {b}).int()",
    "{a}.long()",
    "{a}.int() * 3 - 1",
    "{a}.to(minitorch.int32)",
    "{a}.to(minitorch.int64) + {b}.long()",
    "{a}.to(minitorch.bool)",
    "{a}.long().abs() * {b}.long()",
    "({a} > 0).sum()",
    "({a} < {b}).sum(dim={d})",
    "{a}.long().sum({d}, keepdim={k})",
    "{a}.int().sum()",
    "{a}.argmax({d}) + 1",
    "{a}.argmin(dim={d}, keepdim={k})",
    "{a}.long().amax({d})",
    "{a}.int().amin(dim={dims})",
    "{a}.long().max({d}).values",
    "minitorch.where({a} > 0, {a}.long(), 0)",
    "minitorch.where({a}.bool(), {b}, {a})",
    "({a} != 0).float() * {b}",
    "{a}.bool()",
    "{a}.long().float()",
    "({a} >= {b}).to(minitorch.float32)",
    "{a}.long() == {b}.long()",
    "minitorch.maximum({a}.long(), {b}.long())",
    "{a}.long().clamp(-2, 2)",
    "{a}.long().neg()",
    "({a}.long() * 2).double()",
]
# The named tuple that max(dim) and min(dim) return, read each way real code reads it.
MAX_DIM = [
    "{fresh} = {a}.max({d})[0]",
    "{fresh} = {a}.max(dim={d}).values",
    "{fresh} = {a}.min({d}, keepdim=True).indices",
    "{fresh} = {a}.min(dim={d})[1]",
    "{fresh}, {other} = {a}.max({d})",
    "{other}, {fresh} = {a}.min({d}, keepdim={k})",
    "{fresh} = {a} - {a}.max({d}, keepdim=True)[0]",
    "{fresh} = ({a} - {a}.max(dim={d}, keepdim=True).values).exp()",
    "{fresh} = {a} - {a}.amax(dim={d}, keepdim=True)",
]
# Tensors made inside the function, sized by the operands where a size is needed.
# Several reductions with pointwise math between them, as normalizations are written: the
# shapes that become one kernel of several loops (softmax, layernorm, log_softmax, variance),
# a value read by several reductions (costly or cheap), reductions over different dims of one
# value, and max(dim)'s values with or without its indices.
NORMALIZE = [
    "{fresh} = ({a} - {a}.max({d}, keepdim=True)[0]).exp()\n"
    "{fresh} = {fresh} / {fresh}.sum({d}, keepdim=True)",
    "{fresh} = {a} - {a}.mean({d}, keepdim=True)\n"
    "{fresh} = {fresh} / ({fresh}.pow(2).mean({d}, keepdim=True) + 1e-5).sqrt()",
    "{fresh} = {a} - {a}.amax({d}, keepdim=True)\n"
    "{fresh} = {fresh} - {fresh}.exp().sum({d}, keepdim=True).log()",
    "{fresh} = (({a} - {a}.mean(dim={dims}, keepdim=True)) ** 2).mean(dim={dims}, keepdim={k})",
    "{other} = {a}.sum({d}, keepdim=True)\n{fresh} = {a} * {other} - {a}.amax({d}, keepdim=True)",
    "{fresh}, {other} = {a}.max({d}, keepdim={k})\n"
    "{fresh} = {fresh} * 2 + {a}.sum({d}, keepdim={k})",
    "{other} = {a}.tanh().exp().sin()\n"
    "{fresh} = {other}.sum({d}, keepdim=True) + {other}.amax({d}, keepdim=True) * {other}",
    "{other} = {a} * 2\n{fresh} = {other}.sum({d}, keepdim=True) + {other}.sum(0, keepdim=True)",
    "{fresh} = {a}.sum(0, keepdim=True) * {a}.sum(-1, keepdim=True) + {a}",
    "{fresh} = {a}.max({d})[0] - {a}.min({d})[0] + {a}.mean({d})",
    "{fresh} = {a}.var({d}, keepdim=True) + {a}.mean({d}, keepdim=True) * {a}",
    "{fresh} = {a}.softmax({d}) * {a}.log_softmax({d})\n{fresh} = {fresh}.sum({d}) + {fresh}.sum()",
    "{fresh} = {a}.mean(dim={dims}, keepdim=True)\n{fresh} = {a} - {fresh} + {fresh}.amax()",
    "{fresh} = {a} / {a}.abs().sum({d}, keepdim=True).clamp(min=1e-3)\n"
    "{fresh} = {fresh}.softmax({d}).max({d}, keepdim={k}).values",
    "{fresh} = F.layer_norm({a}, {a}.shape[-1:])",
    "{fresh} = {a}.amax(dim={dims}) + {a}.sum(dim={dims})",
    "{fresh} = {a}.max({d})[1] + {a}.argmin({d}) + ({a} > {a}.mean({d}, keepdim=True)).sum({d})",
]
FACTORIES = [
    "minitorch.arange({a}.shape[{d}])",
    "{a} * minitorch.arange({a}.shape[-1])",
    "minitorch.arange(0, 6, 2) + {i}",
    "minitorch.arange({a}.shape[0], dtype=minitorch.float32)",
    "minitorch.zeros({a}.shape)",
    "minitorch.zeros({a}.shape[0], dtype=minitorch.int64)",
    "minitorch.zeros_like({a})",
    "minitorch.ones_like({a}) * {b}",
    "minitorch.ones(3, 2)",
    "minitorch.full({a}.shape, 2.0)",
    "minitorch.full_like({a}, 3)",
    "minitorch.eye(3)",
    "minitorch.eye({a}.shape[-1]) + {a}",
    "minitorch.tril(minitorch.ones(4, 4))",
    "minitorch.ones({a}.shape[-1], {a}.shape[-1]).tril()",
    "{a}.masked_fill(minitorch.tril(minitorch.ones({a}.shape[-1], {a}.shape[-1])) == 0, -1e9)",
    "({a} @ {a}.mT).masked_fill(minitorch.ones({a}.shape[-2], {a}.shape[-2]).tril() == 0, "
    "float('-inf')).softmax(-1)",
    "minitorch.zeros_like({a}, dtype=minitorch.int64) + {b}.long()",
]
VIEWS = [
    "{a}.reshape(-1)",
    "{a}.reshape({a}.shape[0], -1)",
    "{a}.view(-1)",
    "{a}.t()",
    "{a}.transpose({d}, {e})",
    "{a}.permute({perm})",
    "{a}.mT",
    "{a}[::2]",
    "{a}[1:]",
    "{a}[:, ::2]",
    "{a}[..., 1:3]",
    "{a}[{i}]",
    "{a}[-1]",
    "{a}[:, {i}]",
    "{a}[{i}, ..., ::-1]",
    "{a}.unsqueeze({d})",
    "{a}.squeeze()",
    "{a}.squeeze({d})",
    "{a}.expand(2{all_dims})",
    "{a}.expand_as({b})",
    "{a}.flatten()",
    "{a}.flatten(0, 1)",
    "{a}.contiguous()",
    "{a}.clone()",
    "{a}.detach()",
    "minitorch.cat([{a}, {b}], dim={d})",
    "minitorch.stack([{a}, {b}])",
    "{a} @ {b}",
]
# Ops that join, split, shift or pick along a dim.
SHAPING = [
    "minitorch.cat([{a}, {a} * 2], dim={d})",
    "minitorch.cat(({a}, {b}, {a}))",
    "minitorch.stack([{a}, {a}.exp()], dim={d})",
    "minitorch.stack(({a}, {b}), {d})",
    "{a}.split(2, dim={d})[0]",
    "{a}.split(1)[-1]",
    "minitorch.split({a}, 2, {d})[-1]",
    "{a}.chunk(2, {d})[0]",
    "minitorch.chunk({a}, 3, dim={d})[-1]",
    "{a}.gather({d}, {a}.argmax({d}, keepdim=True))",
    "minitorch.gather({a}, {d}, minitorch.zeros_like({a}, dtype=minitorch.int64))",
    "{a}.gather(-1, {a}.argsort(-1))",
    "{a}.tril()",
    "{a}.triu(1)",
    "minitorch.tril({a}, -1)",
    "minitorch.triu({a}, diagonal={e})",
    "{a}.roll(1, {d})",
    "minitorch.roll({a}, -1, {d})",
    "{a}.roll(2)",
    "minitorch.roll({a}, shifts=({i}, 1), dims=(0, -1))",
]
# Statements that bind two names: unpacked splits.
UNPACKING = [
    "{fresh}, {other} = {a}.chunk(2, {d})",
    "{other}, {fresh} = {a}.split(1, dim=0)[:2]",
    "{fresh}, {other} = minitorch.split({a}, [1, {a}.shape[{d}] - 1], dim={d})",
]
# Advanced indexing reads: integer tensors, lists, bool masks.
INDEXING = [
    "{a}[minitorch.tensor([{i}, 0])]",
    "{a}[[0, {i}, 0]]",
    "{a}[:, [0, {j}]]",
    "{a}[..., minitorch.tensor([{j}, 0, {j}])]",
    "{a}[{a} > 0]",
    "{a}[{a}.argmax(0)]",
    "{a}[minitorch.arange({a}.shape[0])]",
    "{a}[minitorch.tensor({i})]",
    "{a}[{a}.abs().argmin({d}).clamp(max={a}.shape[0] - 1)]",
    "{a}[minitorch.tensor([[{i}], [0]]), minitorch.tensor([0, {j}])]",
    "{a}[{b}.long().abs().clamp(max={a}.shape[0] - 1)]",
]
# An in-place op's target: the tensor itself or a view of it, written through.
TARGETS = ["{a}", "{a}", "{a}[0]", "{a}[:, ::2]", "{a}.t()", "{a}[..., -1]", "{a}[{i}:]"]
IN_PLACE = [
    "{t}.add_({b})",
    "{t}.mul_(2)",
    "{t}.sub_({b}, alpha=0.5)",
    "{t}.div_(2)",
    "{t}.clamp_(-1, 1)",
    "{t}.copy_({b})",
    "{t}.fill_(0.5)",
    "{t}.zero_()",
    "{t} += {b}",
    "{t} *= 2",
    "{t} -= 1",
    "{a}[{i}] = {b}",
    "{a}[{i}] = 1",
    "{a}[:, ::2] = 0",
    "{t}.relu_()",
    "{t}.neg_()",
    "{t}.exp_()",
    "{t}.masked_fill_({b} > 0, 1.0)",
    "minitorch.nn.functional.relu({t}, inplace=True)",
]
# Writes into a tensor the function just made, the way real code updates a copy.
UPDATES = [
    "{fresh} = {a} * 2\n{fresh}[0] = 1",
    "{fresh} = {a} + 0\n{fresh}[:, minitorch.tensor([0, {j}])] = {b}",
    "{fresh} = {a}.clone()\n{fresh}[{fresh} > 0] = 0",
    "{fresh} = {a} * 1\n{fresh}[[{i}, 0]] = {b}",
    "{fresh} = {a} - 1\n{fresh} += {b}",
    "{fresh} = {a}.exp()\n{fresh}.mul_({b})",
    "{fresh} = {a} * {b}\n{fresh}.relu_()",
    "{fresh} = {a}.abs()\n{fresh}[..., {j}] = 2.0",
    "{fresh} = {a} * 2\n{fresh}[:, 0] += 1",
    "{fresh} = minitorch.zeros_like({a})\n{fresh}[{i}] = {a}[{i}]",
]
# What a model does with them: probabilities, losses over int64 targets, dropout.
NN = [
    "F.softmax({a}, dim={d})",
    "F.log_softmax({a}, {d})",
    "F.relu({a}) - F.gelu({b})",
    "F.cross_entropy({a}, {a}.argmin(1))",
    "F.cross_entropy({a}, {a}.argmax(1), reduction='sum')",
    "F.cross_entropy({a}, minitorch.full({a}.shape[:1], {j}))",
    "F.cross_entropy({a}.reshape(-1, {a}.shape[-1]), minitorch.zeros({a}.numel() // "
    "{a}.shape[-1], dtype=minitorch.int64))",
    "F.nll_loss(F.log_softmax({a}, 1), {a}.argmax(1))",
    "F.dropout({a}, p=0.5)",
    "F.dropout({a}, 0.25, training={k})",
    "F.dropout({a} * 2, p=0.0)",
]
# Products, as models write them: a value times its own transpose, `matmul`, `mm` and `bmm` on
# reshaped operands, `F.linear`, `einsum`, batch dims that broadcast (`[None]` against a batch),
# operands that are views with odd strides (transposed, sliced, expanded with stride 0, a
# sliced-away K of 0), integer and float64 products, and products with pointwise work before
# (a prologue) or a reduction or activation after (an epilogue). Inputs that require grad send
# the products' backward through too.
PRODUCTS = [
    "{a} @ {a}.transpose(-2, -1)",
    "{a}.transpose(-2, -1) @ {a}",
    "{a} @ {a}.mT",
    "{a}.mT @ {b}",
    "{a} @ {b}.mT",
    "minitorch.matmul({a}, {b})",
    "minitorch.matmul({a}.mT, {a})",
    "{a}.matmul({a}.mT) @ {a}",
    "{a}.reshape(-1, {a}.shape[-1]).mm({a}.reshape(-1, {a}.shape[-1]).t())",
    "minitorch.mm({a}.reshape(-1, {a}.shape[-1]).t(), {b}.reshape(-1, {a}.shape[-1]))",
    "minitorch.bmm({a}, {a}.transpose(1, 2))",
    "{a}.bmm({b}.mT)",
    "{a}.reshape(-1, {a}.shape[-2], {a}.shape[-1]).bmm({a}.reshape(-1, {a}.shape[-2], "
    "{a}.shape[-1]).mT)",
    "F.linear({a}, {a}.reshape(-1, {a}.shape[-1]))",
    "F.linear({a}, minitorch.ones(3, {a}.shape[-1]), minitorch.arange(3.0))",
    "F.linear({a}, {b}.reshape(-1, {a}.shape[-1])[:2], {b}.reshape(-1)[:2])",
    "{a} @ minitorch.ones({a}.shape[-1])",
    "minitorch.ones({a}.shape[-2]) @ {a}",
    "{a}.reshape(-1) @ {a}.reshape(-1)",
    "minitorch.outer({a}.reshape(-1), {b}.reshape(-1))",
    "minitorch.einsum('...ij,...kj->...ik', {a}, {a})",
    "minitorch.einsum('ij,kj->ik', {a}.reshape(-1, {a}.shape[-1]), {b}.reshape(-1, {a}.shape[-1]))",
    "{a}[None] @ {a}.unsqueeze(1).mT",
    "{a}.unsqueeze(0) @ {b}.unsqueeze(1).mT",
    "{a}.expand(2{all_dims}) @ {a}.mT",
    "{a}[..., :1].expand_as({a}) @ {a}.mT",
    "{a}.mT @ {a}[:1].expand_as({a})",
    "{a}[..., ::2] @ {a}[..., ::2].mT",
    "{a}[1:] @ {a}[1:].mT",
    "{a}[..., 1:, :] @ {b}[..., 1:, :].mT",
    "{a}.permute({perm}) @ {a}.permute({perm}).mT",
    "{a}[..., :0] @ {a}[..., :0].mT",
    "{a}.double() @ {a}.double().mT",
    "{a}.long() @ {a}.long().mT",
    "({a} > 0).int() @ ({b} > 0).int().mT",
    "({a} @ {a}.mT).relu()",
    "({a} @ {b}.mT).sum(-1)",
    "({a} @ {a}.mT * 0.5 + 1).tanh()",
    "({a} @ {a}.mT).softmax(-1)",
    "({a}.mT @ {a}).amax({d}) + ({a} @ {a}.mT).mean()",
    "({a}.sin() * 2) @ ({a} + 1).mT",
    "{a}.exp() @ {a}.relu().mT",
    "({a} * {b}) @ {a}.mT",
    "(({a} - {a}.mean(-1, keepdim=True)) @ {a}.mT).log_softmax(-1)",
]
# Statements around products: the result updated in place, or written into a slice.
PRODUCT_STATEMENTS = [
    "{fresh} = {a} @ {a}.mT\n{fresh}.add_(1)",
    "{fresh} = {a}.mT @ {a}\n{fresh}[0] = 0",
    "{fresh} = {a}.clone()\n{fresh}[..., :1] = {a} @ minitorch.ones({a}.shape[-1], 1)",
    "{other} = {a} @ {a}.mT\n{fresh} = {other} @ {other} + {other}.t()",
]
# Convolutions and pooling over (N, C, H, W): {other} is {a} lifted to 4-d (a matrix is one
# channel, a 3-d tensor C channels), or {a} itself as an unbatched (C, H, W). Weights are
# factories or slices of the inputs (deterministic, and a slice of an input that requires grad
# gets its gradient); stride, padding, dilation, groups, bias; pooling of each kind after.
_LIFT = "{other} = {a}.reshape(1, -1, {a}.shape[-2], {a}.shape[-1])\n"
CONVOLUTIONS = [
    _LIFT + "{fresh} = F.conv2d({other}, {other}[:, :, :2, :2])",
    _LIFT + "{fresh} = F.conv2d({other}, minitorch.ones(2, {other}.shape[1], 1, 2) * 0.5)",
    _LIFT + "{fresh} = F.conv2d({other}, {other}[:, :, :2, :2], padding=1)",
    _LIFT + "{fresh} = F.conv2d({other}, {other}[:, :, :2, :2], stride=2, padding=1)",
    _LIFT + "{fresh} = F.conv2d({other}, {other}[:, :, :2, :2], dilation=2)",
    _LIFT + "{fresh} = F.conv2d({other}, {other}[:, :, :3, :3], padding='same')",
    _LIFT + "{fresh} = F.conv2d({other}, {other}[0, :, None, :2, :2], groups={other}.shape[1])",
    _LIFT + "{fresh} = F.conv2d({other}, {b}.reshape(1, -1, {b}.shape[-2], {b}.shape[-1])"
    "[:, :, :2, :2], padding=(1, 0))",
    _LIFT + "{fresh} = F.conv2d({other}, {other}[0, :, :1, :1].expand(-1, {other}.shape[1], -1)"
    "[..., None], bias={other}[0, :, 0, 0])",
    _LIFT + "{fresh} = F.conv2d({other}, minitorch.arange(4.0).reshape(1, 1, 2, 2).expand(3, "
    "{other}.shape[1], 2, 2), minitorch.ones(3), stride=(1, 2), padding=(1, 0))",
    _LIFT + "{fresh} = F.conv2d({other}.double(), {other}.double()[:, :, :1, :1]).relu()",
    _LIFT + "{fresh} = F.conv2d({other}.sin(), {other}[:, :, :2, :2]).sum(dim=(2, 3))",
    _LIFT + "{fresh} = F.max_pool2d(F.conv2d({other}, {other}[:, :, :2, :2], padding=1).relu(), 2)",
    "{fresh} = F.conv2d({a}, minitorch.ones(2, {a}.shape[-3], 2, 2))",
    "{fresh} = F.conv2d({a}, {a}[None, :, :2, :2], padding=1)",
    _LIFT + "{fresh} = F.max_pool2d({other}, 2)",
    _LIFT + "{fresh} = F.max_pool2d({other}, 2, stride=1)",
    _LIFT + "{fresh} = F.max_pool2d({other}, 3, stride=2, padding=1)",
    _LIFT + "{fresh} = F.max_pool2d({other}, 2, ceil_mode=True)",
    _LIFT + "{fresh} = F.max_pool2d({other}, 2, 1, dilation=2)",
    _LIFT + "{fresh} = F.max_pool2d({other}, 2, return_indices=True)[1]",
    _LIFT + "{fresh} = F.avg_pool2d({other}, 2)",
    _LIFT + "{fresh} = F.avg_pool2d({other}, 2, stride=1, padding=1)",
    _LIFT + "{fresh} = F.avg_pool2d({other}, 3, stride=2, padding=1, count_include_pad=False)",
    _LIFT + "{fresh} = F.avg_pool2d({other}, 2, ceil_mode=True)",
    _LIFT + "{fresh} = F.adaptive_avg_pool2d({other}, 2)",
    "{fresh} = F.max_pool2d({a}, 2)",
    "{fresh} = F.avg_pool2d({a}, 2, stride=1)",
]
# Attention, written out (masked softmax between two products) and as the fused function: over
# one input (self-attention) or two, causal, with a bool or float mask, heads made by expanding.
ATTENTION = [
    "{fresh} = ({a} @ {a}.transpose(-2, -1) * {a}.shape[-1] ** -0.5).masked_fill(minitorch."
    "tril(minitorch.ones({a}.shape[-2], {a}.shape[-2])) == 0, float('-inf')).softmax(-1) @ {a}",
    "{other} = ({a} @ {b}.mT * 0.5).masked_fill(minitorch.ones({a}.shape[-2], {b}.shape[-2])"
    ".tril() == 0, float('-inf'))\n{fresh} = {other}.softmax(-1) @ {b}",
    "{other} = ({a} @ {a}.mT).softmax(-1)\n{fresh} = {other} @ {a}.exp() + {other}.sum()",
    "{fresh} = F.scaled_dot_product_attention({a}, {a}, {a})",
    "{fresh} = F.scaled_dot_product_attention({a}, {b}, {b}, is_causal=True)",
    "{other} = {a} * 0.5\n"
    "{fresh} = F.scaled_dot_product_attention({a}, {other}, {a}.exp(), is_causal=True)",
    "{fresh} = F.scaled_dot_product_attention({a}, {a}, {b}, attn_mask=minitorch.ones("
    "{a}.shape[-2], {a}.shape[-2]).tril().bool())",
    "{fresh} = F.scaled_dot_product_attention({a}, {a}, {a}, attn_mask={a} @ {a}.mT, scale=0.5)",
    "{other} = {a}.unsqueeze(-3).expand(*{a}.shape[:-2], 2, -1, -1)\n"
    "{fresh} = F.scaled_dot_product_attention({other}, {other}, {other}, is_causal=True)",
    "{other} = F.softmax(({a} @ {a}.mT).masked_fill({a}.sum(-1, keepdim=True) > 0, -1e9), -1)\n"
    "{fresh} = ({other} @ {a}).relu().sum(-2)",
]
BREAK = 'print("", end="")'  # an untraceable call: the graph breaks there and resumes after
CONDITIONS = [
    "{a}.shape[0] > 2",
    "{a}.ndim == 2",
    "{a}.shape[-1] % 2 == 0",
    "{a}.numel() > 6",
    "{a}.sum() > 0",  # a tensor's value: compiled code branches on a graph output
]
# Expression tables, by the kind the generator draws; each is bound to a fresh name.
EXPRESSIONS = {
    "pointwise": POINTWISE,
    "reduction": REDUCTIONS,
    "view": VIEWS,
    "integer": INTEGER,
    "factory": FACTORIES,
    "shaping": SHAPING,
    "indexing": INDEXING,
    "nn": NN,
    "product": PRODUCTS,
}
# Statement tables: each template names what it binds itself ({fresh}, {other}).
STATEMENTS = {
    "max_dim": MAX_DIM,
    "unpacking": UNPACKING,
    "update": UPDATES,
    "normalize": NORMALIZE,
    "product_update": PRODUCT_STATEMENTS,
    "convolution": CONVOLUTIONS,
    "attention": ATTENTION,
}
# How often each kind is drawn, in relative weights; the old families keep most of the mass.
KINDS = {
    "pointwise": 4,
    "reduction": 1,
    "view": 2,
    "in_place": 2,
    "break": 1,
    "if": 1,
    "for": 1,
    "integer": 2,
    "factory": 1,
    "shaping": 1,
    "indexing": 1,
    "nn": 1,
    "max_dim": 1,
    "unpacking": 0.5,
    "update": 1,
    "normalize": 2,
    "product": 2,
    "product_update": 0.5,
    "convolution": 2.5,
    "attention": 1.5,
}
