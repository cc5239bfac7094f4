"""Checkers of lesson 02: leaf tensors."""

from __future__ import annotations

import types
from typing import Any

import numpy as np

import naivegraph as ng

from ...dynamic import engine
from ..library_calls import LibraryCalls
from ..checking import (
    cell_computes,
    keeps_learner_state,
    AutogradCalls,
    Result,
    as_bools,
    checker,
    correct,
    crash_message,
    failed,
    is_blank,
    is_tensor,
    not_callable,
    not_done,
    not_yet,
    returned_blank,
    _code_names,
    _is_library,
)

FLAGS = ("a", "b", "c", "d")


def flags_problem(values: Any, count: int, names: str, each: str = "tensor") -> str | None:
    """What is wrong with the form of a tuple of ``count`` booleans, or None if nothing.

    Shared by the exercises that ask for booleans: numbers and strings each get the
    message that fits them (``1`` is not ``True`` to a reader of flags, ``"True"`` is
    a string).  ``each`` is what one flag is about (a tensor, a snippet).
    """
    if hasattr(values, "grad_fn") and hasattr(values, "detach"):
        return (
            f"that is a tensor: give a tuple (or list) of {count} plain Python booleans, "
            f"one per {each}, in the order {names}, not a tensor holding them."
        )
    if isinstance(values, dict):
        return (
            f"that is a dict: give a list (or tuple) of {count} booleans, one per {each}, "
            f"in the order {names}, without names."
        )
    try:
        items = tuple(values)
    except TypeError:
        return f"give a tuple of {count} booleans, one per {each} ({names})."
    if len(items) != count:
        return f"give {count} values, one per {each} ({names}); you gave {len(items)}."
    if any(isinstance(v, str) for v in items):
        return "write True / False without quotes: strings are not booleans."
    if as_bools(items) is None:
        if all(isinstance(v, (int, float)) for v in items):
            return "write True / False, not 1 / 0: the flags are booleans."
        if any(is_tensor(v) for v in items):
            return ("write each value as True or False: a tensor such as tensor(True) is a "
                    "tensor holding a flag, not the flag (its .item() is the Python bool).")
        return "write each value as True or False."
    return None


def as_flags(values: Any) -> Any:
    """``values`` made a tuple once, when it is a generator or another one-pass
    iterable, so that checking its form does not use it up; anything else as it is.

    >>> as_flags(v for v in (True, False)), as_flags({"a": True}), as_flags(True)
    ((True, False), {'a': True}, True)
    """
    if isinstance(values, (str, bytes, dict, tuple, list)) or not hasattr(values, "__iter__"):
        return values
    if hasattr(values, "grad_fn") and hasattr(values, "detach"):
        return values  # a tensor: its form is what is wrong (flags_problem)
    try:
        return tuple(values)
    except TypeError:
        return values


LEAF_FLAGS_ANSWER = """is_leaf = (True, True, False, False); requires_grad = (True, False, True, True).
a and b were made by you, not by a recorded op: leaves.  b was made without
requires_grad.  c = a + b requires grad because ONE input (a) does, and an op made it,
so it is not a leaf; d = c.sum() likewise."""


@checker("02-1", answer=LEAF_FLAGS_ANSWER, predicts=True)
def check_leaf_flags(is_leaf, requires_grad) -> Result:
    """(is_leaf, requires_grad) of a, b, c, d in: a = ones(3,4, rg=True); b = zeros; c = a + b; d = c.sum()."""
    ex = "02-1"
    is_leaf, requires_grad = as_flags(is_leaf), as_flags(requires_grad)
    if is_blank((is_leaf, requires_grad)):
        return not_done(ex)
    for given in (is_leaf, requires_grad):
        problem = flags_problem(given, 4, "a, b, c, d")
        if problem is not None:
            return failed(ex, f"hint: {problem}")
    read = cell_computes(reads=("is_leaf", "requires_grad", "grad_fn", "grad"))
    if read:
        return not_yet(
            ex,
            [
                f"your cell reads the answer off the tensors instead of predicting it: it "
                f"uses {read}. The exercise asks you to PREDICT each flag from how a, b, c "
                "and d were made, and to type them as True / False.",
                "a tensor is a leaf when no recorded op made it; it requires grad when it "
                "was made with requires_grad=True or an op made it from one that does.",
            ],
            gave=f"a cell that uses {read}",
        )
    got_leaf, got_rg = as_bools(is_leaf), as_bools(requires_grad)
    want_leaf, want_rg = (True, True, False, False), (True, False, True, True)
    if got_leaf == want_rg and got_rg == want_leaf:
        return not_yet(
            ex,
            [
                "your two tuples are each right, but swapped: the first argument is "
                "is_leaf, the second requires_grad.",
                "check_leaf_flags(is_leaf, requires_grad): one tuple of four booleans "
                "for each, in the order a, b, c, d.",
            ],
            gave="is_leaf and requires_grad swapped",
        )
    if got_rg != want_rg:
        wrong_at = [n for n, g, w in zip(FLAGS, got_rg, want_rg) if g != w]
        return not_yet(ex, _requires_grad_hints(wrong_at[0]), gave=f"requires_grad = {got_rg}")
    if got_leaf != want_leaf:
        wrong_at = [n for n, g, w in zip(FLAGS, got_leaf, want_leaf) if g != w]
        return not_yet(ex, _leaf_hints(wrong_at[0]), gave=f"is_leaf = {got_leaf}")
    return correct(
        ex,
        "a and b are leaves (made by you); c and d require grad because a does, and "
        "are not leaves because an op made them.",
    )


def _requires_grad_hints(name: str) -> list[str]:
    first = {
        "a": "look at how a was created: which argument did it get?",
        "b": "b was created without requires_grad: does anything make it require grad?",
        "c": "c = a + b: an op's output requires grad as soon as ONE of its inputs does.",
        "d": "d = c.sum(): does c require grad?",
    }[name]
    return [first, "requires_grad spreads forward: an output requires grad when any input does."]


def _leaf_hints(name: str) -> list[str]:
    first = {
        "a": "a was created by you: no recorded op made it.",
        "b": "a tensor that does not require grad is always a leaf: no op is recorded for it.",
        "c": "c was made by an op (a + b) that recorded history: it has a grad_fn.",
        "d": "d was made by an op (c.sum()) that recorded history: it has a grad_fn.",
    }[name]
    return [first, "a tensor is a leaf exactly when it has no grad_fn: print t.grad_fn to see."]


def _is_node_entry(x) -> bool:
    """A backward node, or a ``(node, index)`` entry of next_functions: not a name.

    ``(None, 0)`` alone is not one: a learner who copied the shape of next_functions
    with names in it writes the same thing (:func:`_is_name_pair`).
    """
    if isinstance(x, tuple) and len(x) == 2:
        return _is_node_entry(x[0])
    return hasattr(x, "name") and callable(x.name) and hasattr(x, "next_functions")


def _is_name_pair(x) -> bool:
    """A ``(name, index)`` pair written like an entry of next_functions, with the node's
    name (or None) where the node would be."""
    return (
        isinstance(x, tuple)
        and len(x) == 2
        and (x[0] is None or isinstance(x[0], str))
        and isinstance(x[1], int)
        and not isinstance(x[1], bool)
    )


def _loose(name: str) -> str:
    """A name without its capitals and trailing number: "MulBackward" ~ "mulbackward0"."""
    return name.lower().rstrip("0123456789")


def _names_the_op(got: str, want: str) -> bool:
    """ "Mul", "mul", "Accumulate": the start of the right node's name, without the rest
    of it (the "Backward0" of an op's node)."""
    bare = "".join(c for c in got.lower() if c.isalpha())
    return len(bare) >= 3 and _loose(want).startswith(bare)


def _fn_name(x) -> Any:
    if x is None or isinstance(x, str):
        return x
    if isinstance(x, tuple) and len(x) == 2:
        return _fn_name(x[0])
    if hasattr(x, "name") and callable(x.name):
        return x.name()
    return type(x).__name__


NEXT_ANSWER = """z_next = ["MulBackward0", "AccumulateGrad"]; y_next = ["AccumulateGrad", None].
next_functions lists one (node, index) per INPUT of the op: z = y + b has inputs y
(made by a multiplication: y.grad_fn, a MulBackward0) and b (a leaf that requires grad:
the AccumulateGrad that stores b.grad); y = w * x has inputs w (AccumulateGrad) and x
(no grad needed: None)."""


@checker("02-2", answer=NEXT_ANSWER, predicts=True)
def check_next_functions(z_next, y_next) -> Result:
    """Names in z.grad_fn.next_functions and y.grad_fn.next_functions for y = w * x; z = y + b."""
    ex = "02-2"
    if (
        z_next is Ellipsis
        or y_next is Ellipsis
        or is_blank(z_next, False)
        or is_blank(y_next, False)
    ):
        return not_done(ex)
    if isinstance(z_next, (str, bytes)) or isinstance(y_next, (str, bytes)):
        return failed(
            ex,
            "give a list of names, not one string: one string per entry, e.g. "
            "['SomeBackward0', None]; hint: one entry per input of the op, in order.",
        )
    try:
        nodes = [v for v in (*z_next, *y_next) if _is_node_entry(v)]
        pairs = [v for v in (*z_next, *y_next) if _is_name_pair(v)]
        z_names = [_fn_name(v) for v in z_next]
        y_names = [_fn_name(v) for v in y_next]
    except TypeError:
        return failed(
            ex,
            "give two lists of names, e.g. ['SomeBackward0', None]; hint: one entry "
            "per input of the op, in order.",
        )
    if pairs and not nodes:
        return not_yet(
            ex,
            [
                "write each entry's name alone (a string, or None), not a (name, index) "
                "pair: next_functions pairs every node with an index, but the exercise "
                "asks for the lists of names.",
                "one name per input of the op, in order, as a list of strings.",
            ],
            gave="(name, index) pairs",
        )
    if nodes:
        return not_yet(
            ex,
            [
                "next_functions holds the nodes, and the exercise asks you to read them and "
                "write each node's NAME: a string, or None where there is no node.",
                "a backward node's name is the word its printout shows (like the examples "
                "in the exercise text): write those, in quotes, one per input of the op.",
            ],
            gave="node objects, not names",
        )
    for which, entries in (("z", z_next), ("y", y_next)):
        boxed = [type(v).__name__ for v in entries if isinstance(v, (tuple, list))]
        if boxed:  # ('AccumulateGrad',): a trailing comma makes a tuple of one name
            return not_yet(
                ex,
                [
                    f"an entry of your {which}_next is inside a {boxed[0]}: each entry is a "
                    "name alone, a string (or None), not a "
                    f"{boxed[0]} holding one. A trailing comma, as in ('name',), makes a "
                    "tuple: leave the brackets and the comma out.",
                    "one name per input of the op, in order, as a list of strings.",
                ],
                gave=f"{which}_next with an entry inside a {boxed[0]}",
            )
    for which, names, inputs in (("z", z_names, ("y", "b")), ("y", y_names, ("w", "x"))):
        if len(names) != 2:
            return not_yet(
                ex,
                f"{which}'s op has two inputs ({', '.join(inputs)}): one entry for each.",
                gave=f"{which}_next = {names}",
            )
    if "None" in z_names + y_names:
        return not_yet(ex, 'write None without quotes where there is no node: "None" is a string.')
    read = cell_computes(reads=("next_functions", "grad_fn"))
    if read:
        return not_yet(
            ex,
            [
                f"your cell reads the answer off the graph instead of predicting it: it "
                f"uses {read}. The exercise asks you to PREDICT each entry from how y and "
                "z were made, and to type the names as strings.",
                "one entry per input of the op, in order: the node that receives that "
                "input's gradient, or None when no gradient is needed.",
            ],
            gave=f"a cell that uses {read}",
        )
    want_z, want_y = ["MulBackward0", "AccumulateGrad"], ["AccumulateGrad", None]
    if z_names == want_y and y_names == want_z:
        return not_yet(
            ex,
            [
                "your two lists are each right, but swapped: the first is z's inputs "
                "(z = y.add(b)), the second y's (y = w.mul(x)).",
                "z_next lists the nodes of z's inputs, y_next those of y's inputs.",
            ],
            gave="z_next and y_next swapped",
        )
    for which, names, want, inputs in (
        ("z", z_names, want_z, "y.add(b): y first, then b"),
        ("y", y_names, want_y, "w.mul(x): w first, then x"),
    ):
        if names != want and names == want[::-1]:
            return not_yet(
                ex,
                [
                    f"{which}_next names the right nodes, but in the wrong order: the "
                    f"entries follow the op's inputs in the order the op took them "
                    f"({inputs}).",
                    "one entry per input of the op, in the op's order.",
                ],
                gave=f"{which}_next = {names}",
            )
    z_hints = [
        _input_hint("y", z_names[0], "MulBackward0"),
        _input_hint("b", z_names[1], "AccumulateGrad"),
    ]
    y_hints = [
        _input_hint("w", y_names[0], "AccumulateGrad"),
        _input_hint("x", y_names[1], None),
    ]
    for which, names, hints in (("z", z_names, z_hints), ("y", y_names, y_hints)):
        for hint in hints:
            if hint is not None:
                return not_yet(
                    ex,
                    [
                        hint,
                        "an entry is the node that receives the gradient of that input: "
                        "the input's grad_fn, the AccumulateGrad of a leaf that requires "
                        "grad, or None when no gradient is needed.",
                    ],
                    gave=f"{which}_next = {names}",
                )
    return correct(
        ex,
        "next_functions lists one (node, index) per input: the grad_fn of a computed "
        "input, AccumulateGrad for a leaf that requires grad, None otherwise.",
    )


def _input_hint(name: str, got: Any, want: Any) -> str | None:
    """The hint for one entry of next_functions, or None if it is right."""
    if got == want:
        return None
    if isinstance(got, str) and isinstance(want, str) and got.strip() != got:
        if _loose(got.strip()) == _loose(want):
            return (
                f"the name you give for {name} has whitespace around it (a space, a tab "
                "or a newline inside the quotes): autograd's names have none, and a "
                "string with a space in it is another string. Write the name exactly as "
                "node.name() prints it."
            )
    if (
        isinstance(got, str)
        and isinstance(want, str)
        and _loose(got) == _loose(want)
        and got[-1:].isdigit()
        and not want[-1].isdigit()
    ):
        return (
            f"the node you name for {name} is the right one, but its name carries no "
            "number at the end: only an op's node (…Backward0) has an index suffix. "
            "Write the name exactly as node.name() prints it."
        )
    if isinstance(got, str) and isinstance(want, str) and _loose(got) == _loose(want):
        number = ", and the number at the end of an op's node (…Backward0) is part of it"
        return (
            f"the node you name for {name} is the right one, but its name must be spelled "
            "exactly as autograd spells it (node.name(), as the cell above prints): the "
            f"same capitals{number if want[-1].isdigit() else ''}."
        )
    if isinstance(got, str) and isinstance(want, str) and _names_the_op(got, want):
        return (
            f"the op you name for {name} is the right one, but the entry is its backward "
            "NODE, and the exercise asks for the node's name exactly as autograd spells "
            "it (node.name(), as the cell above prints): the op's name alone is not it."
        )
    if isinstance(got, str) and not got.strip() and want is None:
        return (
            f"'' (an empty string) is not None: for {name}, an input that needs no "
            "gradient, next_functions holds None itself: an empty string is a string "
            "all the same, not None."
        )
    if name == "y":
        if got == "AddBackward0":
            return "that is z's own node (z.grad_fn); the entries are the nodes of z's INPUTS."
        return "the first input of z is y: which op made y, and which node does that give y?"
    if name == "x":
        return "x was created without requires_grad: no gradient has to reach it."
    if got is None:
        return f"{name} requires grad: its gradient has to be stored somewhere."
    if got in ("MulBackward0", "AddBackward0"):
        return (
            f"{name} is a leaf, made by you: no op made it. Which node writes into a leaf's .grad?"
        )
    return f"{name} is a leaf that requires grad: which node writes into its .grad?"


FIND_LEAVES_ANSWER = """Walk the backward graph from t.grad_fn with a stack, visiting each node once:

    leaves, seen, stack = [], set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if node.name() == "AccumulateGrad":
            leaves.append(node.variable)
        stack.extend(fn for fn, _ in node.next_functions)
    return leaves

The `seen` set matters: a tensor used twice (l1 in the toy model) is reached along
two paths, and without it its leaves are reported twice."""


def _toy_model(twin: bool = False) -> tuple[ng.Tensor, dict[int, str]]:
    """Lesson 1's model: l1 feeds two ops, so its node is reached along two paths.

    Its ``twin`` has the same graph, with leaves that differ in shape and value too.
    """
    inp = ng.ones([2, 2])
    shapes = ([2, 2], [2], [1, 1]) if twin else ([], [], [])
    w1, w2, w3 = (
        ng.full(shape, v, requires_grad=True) for shape, v in zip(shapes, (2.0, 3.0, 4.0))
    )
    l1 = inp * w1
    loss = ((l1 + w2) * (l1 * w3)).mean()
    return loss, {id(w1): "w1", id(w2): "w2", id(w3): "w3", id(inp): "input"}


def _toy_leaves(loss: ng.Tensor) -> list[ng.Tensor]:
    """The leaves of lesson 1's model, read off its graph (the checker's own walk)."""
    found, seen, stack = {}, set(), [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if node.name() == "AccumulateGrad":
            found[id(node.variable)] = node.variable
        stack.extend(fn for fn, _ in node.next_functions)
    return list(found.values())


LeafCase = tuple[str, ng.Tensor, list[ng.Tensor], dict[int, str]]


def _lesson_one_case(twin: bool) -> LeafCase:
    loss, toy = _toy_model(twin)
    return "lesson 1's loss", loss, _toy_leaves(loss), toy


def _small_cases(twin: bool) -> list[LeafCase]:
    a = ng.tensor([1.0, 2.0], requires_grad=True)
    b = ng.tensor(3.0, requires_grad=True)
    c = ng.tensor([5.0, 6.0])  # no grad: must not be reported
    # Two leaves that hold the same value, in the same shape: only identity tells them
    # apart.  The twin gives them values and shapes of their own.
    p = ng.tensor([3.0, 1.0] if twin else 3.0, requires_grad=True)
    q = ng.tensor(3.0, requires_grad=True)
    names = {id(a): "a", id(b): "b", id(c): "c", id(p): "p", id(q): "q"}
    # A leaf that already holds a .grad (from an earlier backward) is a leaf all the same.
    s = ng.tensor([4.0, 1.0] if twin else 4.0, requires_grad=True)
    s.grad = ng.ones_like(s)
    names[id(s)] = "s"
    # A chain of DEPTH ops above one leaf: a walk with a depth limit stops before it.
    r = ng.tensor([2.0, 1.0] if twin else 2.0, requires_grad=True)
    names[id(r)] = "r"
    h = r
    for _ in range(DEPTH):
        h = h * 1.0
    return [
        ("(a * b + c).sum()", (a * b + c).sum(), [a, b], names),
        ("(a.exp() * a).mean()", (a.exp() * a).mean(), [a], names),
        ("b * b * b", b * b * b, [b], names),
        (
            "(p * q + q).sum(), p and q two leaves that hold equal values",
            (p * q + q).sum(),
            [p, q],
            names,
        ),
        (
            "(s * a).sum(), s a leaf that already holds a .grad",
            (s * a).sum(),
            [s, a],
            names,
        ),
        (f"h, {DEPTH} ops `h = h * 1.0` above one leaf r", h, [r], names),
    ]


#: How many ops deep the deepest graph find_leaves is tried on is: a recursive walk,
#: one frame per node, still fits under Python's default recursion limit (1000).
DEPTH = 300


def _leaf_cases(twin: bool = False) -> list[LeafCase]:
    return [_lesson_one_case(twin), *_small_cases(twin)]


def _depth(t: ng.Tensor) -> int:
    """How many ops deep the longest chain of ``t``'s backward graph is."""
    depth, node = 0, t.grad_fn
    while node is not None and node.next_functions:
        depth, node = depth + 1, node.next_functions[0][0]
    return depth


def _kept_state(find_leaves) -> str | None:
    """Where the walk keeps what it remembers between calls, or None: a set, list or
    dict at module level (named in its code) or as a default argument, which a second
    call finds already filled.  Asked only once the walk went wrong."""
    found = _kept_in(find_leaves, [])
    if found:
        return found[0]
    loss, _ = _toy_model()
    try:
        first = {id(t) for t in find_leaves(loss)}
        second = {id(t) for t in find_leaves(loss)}
    except Exception:  # the walk's own failure is reported on the real case
        return None
    return "something kept between calls" if first != second else None


def _kept_in(fn: Any, visited: list[Any]) -> list[str]:
    """The places ``fn`` and the notebook functions it calls (named in its code, found
    in its module) keep a set, list or dict between calls: the module-level name, or a
    mutable default argument (made once, when the ``def`` ran, and kept ever after)."""
    if any(fn is seen for seen in visited):
        return []
    visited.append(fn)
    code = getattr(fn, "__code__", None)
    name = getattr(fn, "__name__", "the function")
    found = [
        f"a mutable default argument of {name}(): a default such as [] or set() is "
        "made once, when the def runs, and keeps its value between calls"
        for value in getattr(fn, "__defaults__", None) or ()
        if isinstance(value, (set, list, dict))
    ][:1]
    if code is None:
        return found
    module = getattr(fn, "__globals__", {})
    for used in sorted(_code_names(code)):
        value = module.get(used)
        if isinstance(value, (set, list, dict)):
            found.append(f"the module-level {used}")
        elif isinstance(value, types.FunctionType) and not _is_library(
            value.__code__.co_filename
        ):
            found += _kept_in(value, visited)
    return found


def _graph_state(t: ng.Tensor, leaves: list[ng.Tensor]) -> dict[str, Any]:
    """What a walk that only reads ``t``'s graph leaves as it was, each under the words
    that say it changed: the leaves' flags, .grad, values, dtypes and versions, and the
    hooks on the leaves and on every node of the graph (retain_grad is one)."""
    hooks, seen, stack = 0, set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        kept = node._hooks
        hooks += sum(len(h or ()) for h in (kept.pre, kept.post, kept.tensor)) if kept else 0
        stack.extend(fn for fn, _ in node.next_functions)
    hooks += sum(
        len(leaf._hooks or ()) + len(leaf.__dict__.get("_post_accumulate_hooks") or ())
        for leaf in leaves
    )
    return {
        "requires_grad switched off on a leaf it found": [leaf.requires_grad for leaf in leaves],
        "grad": [_grad_state(leaf) for leaf in leaves],
        "the values of a leaf it found changed": [
            (leaf.dtype, tuple(leaf.shape), leaf.detach().numpy().tobytes()) for leaf in leaves
        ],
        "a leaf it found changed in place (its _version moved on)": [
            leaf._version for leaf in leaves
        ],
        "a hook registered on a leaf or a node of the graph": hooks,
        "t.retain_grad() called on the tensor it was given": t.retains_grad,
    }


def _grad_state(leaf: ng.Tensor) -> tuple | None:
    """What a caller sees of a leaf's .grad: None, or the tensor, its values and version."""
    held = leaf.grad
    if held is None:
        return None
    return (id(held), held.detach().numpy().tobytes(), held._version)


def _changed(before: dict[str, Any], after: dict[str, Any]) -> str | None:
    """The first thing a walk changed in the graph it was given (:func:`_graph_state`)."""
    what = next((what for what in before if before[what] != after[what]), None)
    if what != "grad":
        return what
    pairs = list(zip(before["grad"], after["grad"]))
    if any(old is None and new is not None for old, new in pairs):
        return "a .grad set on a leaf it found"
    if any(old is not None and new is None for old, new in pairs):
        return "the .grad a leaf it found held, cleared to None"
    return "the .grad a leaf it found already held, zeroed, replaced or added to"


#: The engine's own functions (topological_order, the backward pass, ...): a walk that
#: calls one takes the lab's walk ready-made.
_ENGINE = [
    fn
    for fn in vars(engine).values()
    if callable(fn) and getattr(fn, "__module__", None) == engine.__name__
]


def _finds_all_in_twin(find_leaves, index: int) -> bool:
    """Whether the walk finds every leaf of case ``index``'s twin, whose leaves differ
    in value and shape: then the leaves it lost were merged as equal, not missed."""
    _, tensor, leaves, _ = _leaf_cases(twin=True)[index]
    try:
        got = list(find_leaves(tensor))
    except Exception:  # the walk's own failure was reported on the real case
        return False
    return {id(t) for t in got} == {id(t) for t in leaves}


def _meets_every_leaf(find_leaves, index: int) -> bool:
    """Whether the walk reads ``node.variable`` of every leaf's node of case ``index``:
    then it met every leaf, and the leaves it does not return were dropped afterwards
    (``out[:1]``, a filter), not skipped by a walk that merges nodes by a shared key."""
    _, tensor, leaves, _ = _leaf_cases()[index]
    nodes = [n for n in _graph_nodes(tensor.grad_fn) if n.name() == "AccumulateGrad"]
    read: set[int] = set()
    swapped = [(node, type(node)) for node in nodes]
    try:
        for node, cls in swapped:
            node.__class__ = _reading_class(cls, read)
        try:
            find_leaves(tensor)
        except Exception:  # the walk's own failure was reported on the real case
            return False
    finally:
        for node, cls in swapped:
            node.__class__ = cls
    return {id(n) for n in nodes} <= read


def _loses_distinct_leaves(find_leaves) -> bool:
    """Whether the walk loses a leaf of ``p * q`` where p and q share no dtype, shape
    or value: no key a walk may merge leaves by (dtype, shape, value) merges those, so
    a leaf lost there was cut off or filtered out."""
    p = ng.tensor([1.0, 2.0], requires_grad=True)
    q = ng.tensor([[3.0], [4.0], [5.0]], dtype=ng.float64, requires_grad=True)
    try:
        got = {id(t) for t in find_leaves((p * q).sum())}
    except Exception:  # the walk's own failure was reported on the real case
        return False
    return not {id(p), id(q)} <= got


def _reading_class(cls: type, read: set[int]) -> type:
    """A class like ``cls`` (an AccumulateGrad: same name, same slots) whose
    ``variable`` notes which nodes it was read on."""
    slot = cls.__dict__["variable"]

    def variable(node):
        read.add(id(node))
        return slot.__get__(node)

    return type(cls.__name__, (cls,), {"__slots__": (), "__qualname__": cls.__qualname__,
                                       "variable": property(variable)})


def _merges_lookalike_nodes(find_leaves) -> bool:
    """Whether the walk finds a leaf that is the only one under an op, yet only one of
    two leaves under the same op: their nodes share a name (both AccumulateGrad) and
    their tensors a dtype, so a walk that remembers nodes by such a key merges them.
    A walk that stops early still finds both, as both are direct inputs of the op."""
    p = ng.tensor([1.0, 2.0], requires_grad=True)
    q = ng.tensor([[3.0], [4.0]], requires_grad=True)
    c = ng.tensor([5.0, 6.0])
    try:
        alone = [list(find_leaves(p * c)), list(find_leaves(c * q))]
        both = list(find_leaves(p * q))
    except Exception:  # the walk's own failure was reported on the real case
        return False
    finds_each = [[id(t) for t in alone[0]], [id(t) for t in alone[1]]] == [[id(p)], [id(q)]]
    return finds_each and len({id(t) for t in both} & {id(p), id(q)}) == 1


def _misses_direct_leaf(find_leaves) -> bool:
    """Whether the walk finds no leaf even where the leaf's node is t.grad_fn's direct
    input (``p * 2.0``): then its test for a leaf's node never matches, as a walk that
    stops early still finds that one."""
    p = ng.tensor([1.0, 2.0], requires_grad=True)
    try:
        got = list(find_leaves(p * 2.0))
    except Exception:  # the walk's own failure was reported on the real case
        return False
    return not any(t is p for t in got)


def _label(t: Any, names: dict[int, str]) -> str:
    """How a returned tensor is shown: its name, or what it is."""
    if id(t) in names:
        return names[id(t)]
    if t.is_leaf and t.requires_grad:
        return "a leaf of another graph"
    return "a tensor that is not a leaf"


def _copies_of(items: list, leaves: list[ng.Tensor]) -> bool:
    """Whether some returned tensors are copies of the leaves (detach(), clone(),
    .data): equal values, another tensor."""
    ids = {id(t) for t in leaves}
    others = [t for t in items if id(t) not in ids]
    return bool(others) and all(
        any(
            tuple(t.shape) == tuple(leaf.shape)
            and np.array_equal(t.detach().numpy(), leaf.detach().numpy())
            for leaf in leaves
        )
        for t in others
    )


@checker("02-3", answer=FIND_LEAVES_ANSWER)
@keeps_learner_state
def check_find_leaves(find_leaves) -> Result:
    """``find_leaves(t)`` returns the leaf tensors that ``t``'s gradient reaches, each once."""
    ex = "02-3"
    bad = not_callable(ex, find_leaves)
    if bad is not None:
        return bad
    for index, (text, tensor, leaves, names) in enumerate(_leaf_cases()):
        want = {id(t) for t in leaves}
        before, crash = _graph_state(tensor, leaves), None
        with AutogradCalls() as calls, LibraryCalls(_ENGINE) as library:
            try:
                got = find_leaves(tensor)
            except Exception as exc:  # reported below, unless what led to it is
                crash = exc
        if calls.flags:
            return not_yet(
                ex,
                [
                    "your walk runs a backward pass (backward or autograd.grad) to see "
                    "which leaves get a .grad: that fills (and adds to) the leaves' .grad "
                    "as a side effect, and frees the graph unless it is retained. The walk "
                    "should only read the graph: follow next_functions from t.grad_fn.",
                    "a leaf that requires grad shows up in the graph as an AccumulateGrad "
                    "node: the walk finds it without computing any gradient.",
                ],
                gave=f"a walk that ran backward on {text}",
            )
        if library.called:
            return not_yet(
                ex,
                [
                    f"your walk calls the lab's own graph code ({library.called[0]}, from "
                    "naivegraph.dynamic.engine): that walk is the one the exercise asks you "
                    "to write yourself.",
                    "start from t.grad_fn and follow next_functions with a stack (or "
                    "recursion) of your own.",
                ],
                gave="a walk that runs the lab's own graph code",
            )
        changed = _changed(before, _graph_state(tensor, leaves))
        if changed is not None:
            return not_yet(
                ex,
                [
                    f"on {text} your walk changes the tensors it is given ({changed}): "
                    "find_leaves only reads the graph, and the caller's tensors must be "
                    "left as they were, ready for the backward pass that follows.",
                    "collect `node.variable` as it is: set nothing on it, change nothing in "
                    "it, register nothing on it or on t.",
                ],
                gave=f"a walk that leaves {changed}",
            )
        if crash is not None and "Boolean value of Tensor" in str(crash):
            return not_yet(
                ex,
                [
                    f"on {text} your walk asks whether a tensor is already in a list (`in`, "
                    "`==`, `.index` or `.remove`): those compare with ==, which on tensors "
                    "is elementwise and gives a tensor of booleans, not one True or False "
                    f"(the error said: {type(crash).__name__}: {crash}). Compare by "
                    "identity instead.",
                    "tell tensors (and nodes) apart by identity: `any(t is x for x in "
                    "leaves)`, or remember id(t) in a set.",
                ],
                gave=f"a walk that compares tensors with == on {text}",
            )
        if crash is not None:
            return failed(ex, crash_message(crash))
        blank = returned_blank(ex, got)
        if blank is not None:
            return blank
        try:
            items = list(got)
        except TypeError:
            return failed(
                ex,
                f"your function returned {type(got).__name__}; hint: return a list of the "
                "leaf tensors you collected.",
            )
        if not isinstance(got, list):  # a set has no order, a generator runs out once read
            return not_yet(
                ex,
                [f"your find_leaves returns a {type(got).__name__}, and the exercise asks for "
                 "a list: the leaves in the order your walk meets them, which the caller "
                 "can index and read as often as it likes.",
                 "collect the leaves into a list and return that list."],
                gave=f"a {type(got).__name__} of leaves",
            )
        if any(t is None for t in items):
            return not_yet(
                ex,
                [
                    f"on {text} your list holds None: a None entry of next_functions "
                    "stands for an input that needs no gradient, so it has no node and "
                    "no leaf to report. Skip it rather than collect it.",
                    "collect only `node.variable` of the AccumulateGrad nodes you reach.",
                ],
                gave=f"a list holding None for {text}",
            )
        if any(not isinstance(t, ng.Tensor) for t in items):
            return not_yet(
                ex,
                [
                    "return tensors, not nodes: an AccumulateGrad node keeps its leaf in "
                    "`node.variable`."
                ],
                gave=f"a list holding {sorted({type(t).__name__ for t in items})}",
            )
        if _copies_of(items, leaves):
            return not_yet(
                ex,
                [
                    f"on {text} your list holds copies of the leaves (detached or cloned), "
                    "not the leaf tensors themselves: a copy has the leaf's values but not "
                    "its .grad, and changing it leaves the leaf alone.",
                    "return `node.variable` as it is, without detach() or clone().",
                ],
                gave=f"copies of the leaves for {text}",
            )
        ids = [id(t) for t in items]
        shown = sorted(_label(t, names) for t in items)
        kept = None if sorted(ids) == sorted(want) else _kept_state(find_leaves)
        if kept is not None:
            return not_yet(
                ex,
                [
                    f"on {text} your walk goes wrong because it keeps state between calls "
                    f"({kept}): what it remembered on an earlier call (nodes seen, leaves "
                    "found) is still there on the next one, for another graph or the same "
                    "one again.",
                    "make the set of seen nodes and the list of leaves fresh inside the "
                    "function, on every call.",
                ],
                gave=f"{shown} for {text}",
            )
        if set(ids) == want and len(ids) > len(want):
            return not_yet(
                ex,
                [
                    f"on {text} a leaf appears more than once: a tensor used by two ops "
                    "is reached along two paths, so your walk meets its node twice.",
                    "remember the nodes you have already visited (a set of id(node)) "
                    "and skip them.",
                ],
                gave=f"{shown} for {text}",
            )
        if items and set(ids) < want and _finds_all_in_twin(find_leaves, index):
            return not_yet(
                ex,
                [
                    f"on {text} your walk reaches every node but returns fewer leaves: "
                    "it merged distinct leaves that look alike (the same value or shape). "
                    "Two leaves are the same only when they are the same tensor.",
                    "tell leaves (and nodes) apart by identity, `is` or id(), never by "
                    "their values or shapes.",
                ],
                gave=f"{shown} for {text}",
            )
        holding = [t for t in leaves if t.grad is not None]
        if set(ids) < want and holding and not {id(t) for t in holding} & set(ids):
            return not_yet(
                ex,
                [
                    f"on {text} your walk skips the leaf that already holds a .grad (from "
                    "an earlier backward): it is a leaf of the graph all the same, and the "
                    "next backward adds to its .grad. Whether .grad is set says nothing "
                    "about being a leaf.",
                    "recognise a leaf by its node alone, whatever its .grad holds.",
                ],
                gave=f"{shown} for {text}",
            )
        if set(ids) < want and _meets_every_leaf(find_leaves, index) and (
            not items or _loses_distinct_leaves(find_leaves)
        ):  # a merge keeps one of the leaves it merges, and merges none that differ
            some = "no leaves at all" if not items else "fewer leaves than the graph holds"
            return not_yet(
                ex,
                [
                    f"on {text} your walk returns {some}, yet it meets every leaf's node "
                    "(it reads node.variable of each): the leaves it found are dropped "
                    "before the function returns them, cut off by a slice or left out by "
                    "a filter or a condition.",
                    "return every leaf the walk collects, as it is: nothing cut off, "
                    "nothing filtered by its shape or value.",
                ],
                gave=f"{shown} for {text}",
            )
        if set(ids) < want and _merges_lookalike_nodes(find_leaves):
            return not_yet(
                ex,
                [
                    f"on {text} your walk returns fewer leaves than the graph holds: it "
                    "remembers the nodes (or leaves) it has seen by a key that two "
                    "different ones can share, such as node.name() (every leaf's node "
                    "has the same name), a dtype, or a shape. Two nodes are the same only "
                    "when they are the same object: key what you remember by the node "
                    "itself or by id(node).",
                    "by name, every leaf looks like every other one (all are "
                    "AccumulateGrad), and by dtype too when they share one: the walk then "
                    "skips all of them but the first.",
                ],
                gave=f"{shown} for {text}",
            )
        if not items and tensor.grad_fn is not None and _misses_direct_leaf(find_leaves):
            return not_yet(
                ex,
                [
                    f"on {text} your walk returns no leaves at all: the test that "
                    "recognises a leaf's node never matched (or the walk never got past "
                    "t.grad_fn). Check how a leaf's node is recognised: print node.name() "
                    "for the nodes you meet and compare it with what your test looks for.",
                    "a leaf that requires grad shows up in the graph as one kind of node, "
                    "and that node keeps the leaf in node.variable.",
                ],
                gave=f"no leaves for {text}",
            )
        if set(ids) < want and tensor.grad_fn is not None and _depth(tensor) >= DEPTH:
            return not_yet(
                ex,
                [
                    f"on {text} your walk stops before it reaches the leaf: it gives up "
                    "after some number of steps (a depth limit, or a loop that runs a fixed "
                    "number of times). A graph can be any number of ops deep.",
                    "keep walking until no node is left to visit, however deep the graph is.",
                ],
                gave=f"{shown} for {text}",
            )
        if set(ids) < want:
            return not_yet(
                ex,
                [
                    f"on {text} some leaves are missing: keep walking until the stack is "
                    "empty, pushing the next_functions of EVERY node you pop.",
                    "a leaf can be several ops away from t: the walk must go all the "
                    "way down, not only through t.grad_fn's direct inputs.",
                ],
                gave=f"{shown} for {text}",
            )
        strangers = [t for t in items if id(t) not in want and t.is_leaf and t.requires_grad]
        if strangers:
            return not_yet(
                ex,
                [
                    f"on {text} your list holds leaves, but not leaves of this graph: "
                    "tensors from elsewhere, not found by walking from t.grad_fn.",
                    "find_leaves must work for any t it is given: collect the leaves "
                    "its walk meets, not tensors you name yourself.",
                ],
                gave=f"{shown} for {text}",
            )
        if set(ids) != want:
            return not_yet(
                ex,
                [
                    f"on {text} your list holds tensors that receive no gradient: only "
                    "AccumulateGrad nodes lead to leaves (check node.name()).",
                    "a tensor that does not require grad has no node at all: it appears "
                    "as None in next_functions; skip None.",
                ],
                gave=f"{shown} for {text}",
            )
    revisits = _revisits(find_leaves)
    if revisits is not None:
        return not_yet(
            ex,
            [
                f"your walk finds the right leaves, but on {_DIAMONDS} diamonds stacked "
                f"one on another (a node used by two ops, {_DIAMONDS} times over) it read "
                f"next_functions {revisits:,} times for {3 * _DIAMONDS + 1} nodes: it "
                "walks every path, and the paths double with each diamond. A deep "
                "network shares nodes this way everywhere.",
                "remember the nodes you have already visited (a set of id(node)) and "
                "skip them, so each node is walked once.",
            ],
            gave=f"{revisits:,} reads of next_functions for {3 * _DIAMONDS + 1} nodes",
        )
    return correct(ex, "your walk finds exactly the leaves that receive a gradient, each once.")


# Stacked diamonds: y = x; each level y = (y * 2) + (y * 3), so every node is reached
# along 2**k paths.  A walk that remembers what it visited reads each node's edges a
# few times at most; one that does not reads them about 2**(k+1) times.
_DIAMONDS = 12


def _revisits(find_leaves) -> int | None:
    """How many times the walk read next_functions on the stacked diamonds, when that
    is many times the number of nodes (it walks every path), else None."""
    x = ng.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(_DIAMONDS):
        y = y * 2.0 + y * 3.0
    nodes = _graph_nodes(y.grad_fn)
    reads = [0]
    swapped = [(node, type(node)) for node in nodes]
    try:
        for node, cls in swapped:
            node.__class__ = _counting_class(cls, reads)
        try:
            find_leaves(y)
        except Exception:  # its crash, if any, was reported on the real cases
            return None
    finally:
        for node, cls in swapped:
            node.__class__ = cls
    return reads[0] if reads[0] > 8 * len(nodes) else None


def _graph_nodes(root) -> list:
    found, todo, seen = [], [root], set()
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        found.append(node)
        todo += [fn for fn, _ in node.next_functions]
    return found


def _counting_class(cls: type, reads: list) -> type:
    """A class like ``cls`` (same name, same slots) whose ``next_functions`` counts the
    reads: set on a node for the walk, then the node's own class is put back."""
    slot = cls.__mro__[-2].__dict__["next_functions"]  # the base Node's slot

    def next_functions(node):
        reads[0] += 1
        return slot.__get__(node)

    return type(cls.__name__, (cls,), {"__slots__": (), "__qualname__": cls.__qualname__,
                                       "next_functions": property(next_functions)})
