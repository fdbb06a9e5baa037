"""The statement templates of the container fuzzer, one small function each.

A template takes the random generator, the live names by kind (`containers._Pools`: tensors,
lists, dicts, tuples, sets, views, ints) and `fresh(prefix)` for a new name, and returns one
statement (a `for` loop with its body counts as one) or None when the names it needs are not
there. Templates may write statements CPython rejects (`sum` of a list holding a dict, a tensor
used as a key): the generator runs each candidate plainly and drops those.
"""

from __future__ import annotations

import random

KEYS = ("a", "b", "c", "k")


def _value(rng: random.Random, p) -> str:
    """An expression to store: a tensor (mostly), an int, or a small computed tensor."""
    roll = rng.random()
    if roll < 0.15:
        return str(rng.randint(-3, 5))
    if roll < 0.3:
        return f"{rng.choice(p.tensors)} * {rng.randint(2, 4)}"
    return rng.choice(p.tensors)


def _key(rng: random.Random) -> str:
    return repr(rng.choice(KEYS))


def _index(rng: random.Random) -> int:
    return rng.randint(-2, 2)


# ---- tensors computed from containers -------------------------------------------------------


def tensor_arith(rng, p, fresh):
    a, b = rng.choice(p.tensors), _value(rng, p)
    return f"{fresh('t')} = {a} {rng.choice('+-*')} {b}"


def tensor_from_len(rng, p, fresh):
    if not p.sized:
        return None
    return f"{fresh('t')} = {rng.choice(p.tensors)} * len({rng.choice(p.sized)})"


def tensor_from_item(rng, p, fresh):
    if rng.random() < 0.5 and p.lists + p.tuples:
        return f"{fresh('t')} = {rng.choice(p.lists + p.tuples)}[{_index(rng)}] + 1"
    if p.dicts:
        return f"{fresh('t')} = {rng.choice(p.dicts)}[{_key(rng)}] * 2"
    return None


def tensor_sum(rng, p, fresh):
    if not p.lists + p.tuples + p.views:
        return None
    source = rng.choice(p.lists + p.tuples + p.views)
    return f"{fresh('t')} = sum({source}) + {rng.choice(p.tensors)}"


def tensor_loop(rng, p, fresh):
    """Accumulate over a container (a view, maybe, mutated before: it must be live)."""
    if not p.iterables + p.dicts:
        return None
    source = rng.choice(p.iterables + p.dicts)
    t = fresh("t")
    if source in p.dicts and rng.random() < 0.5:
        return f"{t} = {rng.choice(p.tensors)}\nfor k, v in {source}.items():\n    {t} = {t} + v"
    return f"{t} = {rng.choice(p.tensors)}\nfor v in {source}:\n    {t} = {t} + v"


# ---- lists ----------------------------------------------------------------------------------


def list_literal(rng, p, fresh):
    items = ", ".join(_value(rng, p) for _ in range(rng.randint(0, 3)))
    return f"{fresh('l')} = [{items}]"


def list_from(rng, p, fresh):
    if not p.iterables + p.dicts:
        return None
    source = rng.choice(p.iterables + p.dicts)
    form = rng.choice(["list({})", "{}[:]", "sorted({})", "[v for v in {}]", "[*{}]"])
    if source in p.lists:
        form = rng.choice([form, "{}.copy()", "{} + [1]", "{} * 2", "{}[::-1]", "{}[1:]"])
    return f"{fresh('l')} = {form.format(source)}"


def list_alias(rng, p, fresh):
    return f"{fresh('l')} = {rng.choice(p.lists)}" if p.lists else None


def list_mutate(rng, p, fresh):
    if not p.lists:
        return None
    name, v = rng.choice(p.lists), _value(rng, p)
    forms = [
        f"{name}.append({v})",
        f"{name} += [{v}]",
        f"{name}.insert({_index(rng)}, {v})",
        f"{name}.pop()",
        f"{name}.pop(0)",
        f"{name}[{_index(rng)}] = {v}",
        f"del {name}[{_index(rng)}]",
        f"{name}[1:3] = [{v}]",
        f"{name}.reverse()",
        f"del {name}[::2]",
        f"{name}.clear()",
        f"{name} *= 2",
    ]
    if p.iterables + p.dicts:
        other = rng.choice(p.iterables + p.dicts)
        forms += [f"{name}.extend({other})", f"{name} += {other}"]
    return rng.choice(forms)


def list_sort(rng, p, fresh):
    if not p.lists:
        return None
    key = rng.choice(["", "key=abs", "key=lambda v: -v", "reverse=True"])
    return f"{rng.choice(p.lists)}.sort({key})"


# ---- dicts and their views ------------------------------------------------------------------


def dict_literal(rng, p, fresh):
    items = ", ".join(f"{_key(rng)}: {_value(rng, p)}" for _ in range(rng.randint(0, 3)))
    forms = [f"{{{items}}}", f"dict({_key(rng)[1:-1]}={_value(rng, p)})"]
    if p.lists:
        forms.append(f"dict(zip({list(KEYS)!r}, {rng.choice(p.lists)}))")
    if p.dicts:
        source = rng.choice(p.dicts)
        forms += [
            f"dict({source})",
            f"{source}.copy()",
            f"{source} | {{{items}}}",
            f"{{k: v for k, v in {source}.items()}}",
        ]
    return f"{fresh('d')} = {rng.choice(forms)}"


def dict_alias(rng, p, fresh):
    return f"{fresh('d')} = {rng.choice(p.dicts)}" if p.dicts else None


def dict_view(rng, p, fresh):
    if not p.dicts:
        return None
    return f"{fresh('v')} = {rng.choice(p.dicts)}.{rng.choice(['keys', 'values', 'items'])}()"


def dict_mutate(rng, p, fresh):
    if not p.dicts:
        return None
    name, k, v = rng.choice(p.dicts), _key(rng), _value(rng, p)
    return rng.choice(
        [
            f"{name}[{k}] = {v}",
            f"{name}.update({{{k}: {v}}})",
            f"{name}.update({k[1:-1]}={v})",
            f"{name}.pop({k}, None)",
            f"{name}.setdefault({k}, {v})",
            f"del {name}[{k}]",
            f"{name} |= {{{k}: {v}}}",
            f"{name}.popitem()",
            f"{name}.clear()",
            f"{name}.update([({k}, {v})])",
        ]
    )


def view_contains(rng, p, fresh):
    if not p.views + p.dicts:
        return None
    source = rng.choice(p.views + p.dicts)
    return f"{fresh('n')} = {_key(rng)} in {source}"


# ---- tuples, unpacking and sets -------------------------------------------------------------


def tuple_make(rng, p, fresh):
    forms = [f"({_value(rng, p)}, {_value(rng, p)})"]
    if p.lists:
        forms += [f"tuple({rng.choice(p.lists)})"]
    if p.tuples:
        t = rng.choice(p.tuples)
        forms += [f"{t} + ({_value(rng, p)},)", f"{t}[1:]", f"{t} * 2"]
    return f"{fresh('tp')} = {rng.choice(forms)}"


def unpack(rng, p, fresh):
    if not p.lists + p.tuples:
        return None
    source = rng.choice(p.lists + p.tuples)
    if rng.random() < 0.5:
        return f"{fresh('u')}, *{fresh('l')} = {source}"
    return f"{fresh('u')}, {fresh('u')} = {source}[:2]"


def set_make(rng, p, fresh):
    forms = [f"{{{rng.randint(0, 3)}, {rng.randint(0, 3)}}}"]
    if p.dicts:
        forms += [f"set({rng.choice(p.dicts)})", f"set({rng.choice(p.dicts)}.keys())"]
    if p.sets:
        s = rng.choice(p.sets)
        forms += [f"{s} | {{9}}", f"{s} & {{1, 2}}", f"{s} - {{0}}", f"{s} ^ {{1}}"]
    return f"{fresh('s')} = {rng.choice(forms)}"


def set_mutate(rng, p, fresh):
    if not p.sets:
        return None
    s, n = rng.choice(p.sets), rng.randint(0, 4)
    return rng.choice(
        [
            f"{s}.add({n})",
            f"{s}.discard({n})",
            f"{s} |= {{{n}}}",
            f"{s}.update([{n}, {n + 1}])",
            f"{s} -= {{{n}}}",
        ]
    )


def set_read(rng, p, fresh):
    if not p.sets:
        return None
    return (
        f"{fresh('t')} = {rng.choice(p.tensors)} * len({rng.choice(p.sets)}) + "
        f"sum(sorted({rng.choice(p.sets)}))"
    )


# ---- nesting, identity, loops that mutate ---------------------------------------------------


def nest(rng, p, fresh):
    """Put one container inside another: a later mutation of the inner one must show."""
    inner = p.lists + p.dicts + p.sets
    if not inner or not p.lists + p.dicts:
        return None
    outer, item = rng.choice(p.lists + p.dicts), rng.choice(inner)
    if outer in p.dicts:
        return f"{outer}[{_key(rng)}] = {item}"
    return f"{outer}.append({item})"


def identity(rng, p, fresh):
    if len(p.sized) < 2:
        return None
    a, b = rng.sample(p.sized, 2)
    return f"{fresh('n')} = {a} is {b}"


def item_augmented(rng, p, fresh):
    """`lst[i] += v`: on a tensor item, an in-place add seen by every holder of the tensor."""
    if not p.lists + p.dicts:
        return None
    name = rng.choice(p.lists + p.dicts)
    where = _key(rng) if name in p.dicts else _index(rng)
    return f"{name}[{where}] {rng.choice(['+=', '*='])} {_value(rng, p)}"


def loop_mutating(rng, p, fresh):
    """A loop that reads one container and writes another (or the same: a view stays live)."""
    if not p.iterables or not p.lists + p.dicts:
        return None
    source, target = rng.choice(p.iterables), rng.choice(p.lists + p.dicts)
    if target in p.dicts:
        return (
            f"for i, v in enumerate({source}):\n    if i > 12:\n        break\n"
            f"    {target}[str(i)] = v"
        )
    return (
        f"for v in {source}:\n    if len({target}) > 12:\n        break  # {source} may be "
        f"{target}: live, it would grow forever\n    if v is not None:\n"
        f"        {target}.append(v)"
    )


def dict_get(rng, p, fresh):
    if not p.dicts:
        return None
    return f"{fresh('t')} = {rng.choice(p.dicts)}.get({_key(rng)}, {rng.choice(p.tensors)})"


def filtered(rng, p, fresh):
    if not p.iterables:
        return None
    return f"{fresh('l')} = [v * 2 for v in {rng.choice(p.iterables)} if v is not None]"


def global_alias(rng, p, fresh):
    return f"{fresh('l')} = GL"


# ---- globals --------------------------------------------------------------------------------


def global_mutate(rng, p, fresh):
    forms = [f"GL.append({_value(rng, p)})", f"GL.extend([{_value(rng, p)}])"]
    if p.lists:
        forms.append(f"GL += {rng.choice(p.lists)}")  # += on a global needs `global`: dropped
    return rng.choice(forms)


def global_read(rng, p, fresh):
    return f"{fresh('t')} = {rng.choice(p.tensors)} * (len(GL) + 1)"


TEMPLATES = (
    tensor_arith,
    tensor_from_len,
    tensor_from_item,
    tensor_sum,
    tensor_loop,
    list_literal,
    list_literal,
    list_from,
    list_alias,
    list_mutate,
    list_mutate,
    list_mutate,
    list_sort,
    dict_literal,
    dict_alias,
    dict_view,
    dict_view,
    dict_mutate,
    dict_mutate,
    dict_mutate,
    view_contains,
    tuple_make,
    unpack,
    set_make,
    set_mutate,
    set_read,
    global_mutate,
    global_read,
    global_alias,
    nest,
    identity,
    item_augmented,
    loop_mutating,
    dict_get,
    filtered,
)


def raising(rng, p) -> str:
    """A last statement that raises in CPython: compiled must raise the same class."""
    forms = [
        "x + {}['zz']".format(rng.choice(p.dicts) if p.dicts else "d"),
        "[].pop()",
        f"x + {rng.choice(p.lists) if p.lists else 'lst'}[99]",
        "(1, 2).index(7)",
        "{1}.remove(5)",
        "next(iter([]))",
    ]
    return rng.choice(forms)
