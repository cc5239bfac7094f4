"""Lesson 8's right answers as a learner writes them: the derivative table OPS (the
learner's engine functions read it by this name, and the checkers swap it in their
globals), the static sweep, run_backward, the dynamic Node on it, and makers of
jacobian / gradient_descent answers."""

from __future__ import annotations

import math

OPS = {
    "add": (lambda a, b: a + b, lambda a, b, i: 1.0),
    "sub": (lambda a, b: a - b, lambda a, b, i: 1.0 if i == 0 else -1.0),
    "mul": (lambda a, b: a * b, lambda a, b, i: b if i == 0 else a),
    "div": (lambda a, b: a / b, lambda a, b, i: 1 / b if i == 0 else -a / b**2),
    "pow": (
        lambda a, b: a**b,
        lambda a, b, i: b * a ** (b - 1) if i == 0 else a**b * math.log(a),
    ),
    "sin": (lambda a: math.sin(a), lambda a, i: math.cos(a)),
    "cos": (lambda a: math.cos(a), lambda a, i: -math.sin(a)),
    "exp": (lambda a: math.exp(a), lambda a, i: math.exp(a)),
    "log": (lambda a: math.log(a), lambda a, i: 1 / a),
}
TABLE = {k: OPS[k] for k in ("mul", "div", "sin", "exp")}


def table_with(**rows):
    table = dict(TABLE)
    table.update(rows)
    return table


def static_backward(nodes, loss):
    """The right sweep (08-2), reading the table OPS of this module."""
    for n in nodes:
        n.grad = 0.0
    loss.grad = 1.0
    for n in reversed(nodes):
        if n.op is None:
            continue
        args = [i.value for i in n.inputs]
        for k, inp in enumerate(n.inputs):
            if inp.needs_grad:
                inp.grad += n.grad * OPS[n.op][1](*args, k)


def run_backward(root):
    """The notebook's run_backward (08-3), right: the engine the Node class below calls."""
    order, seen = [], set()

    def visit(node):
        if id(node) not in seen:
            seen.add(id(node))
            for inp in node.inputs:
                if inp.requires_grad:
                    visit(inp)
            order.append(node)

    visit(root)
    grads = {id(root): 1.0}
    for node in reversed(order):
        g = grads.pop(id(node), 0.0)
        if node.is_leaf:
            node.grad += g
            continue
        if node.saved is None:
            raise RuntimeError("the graph was freed by an earlier backward")
        for k, inp in enumerate(node.inputs):
            if inp.requires_grad:
                d = OPS[node.grad_fn][1](*node.saved, k)
                grads[id(inp)] = grads.get(id(inp), 0.0) + g * d
    return order


def free_graph(order):
    """The right 08-4: every computed node lets go of its saved values."""
    for node in order:
        if not node.is_leaf:
            node.saved = None


class Node:
    """The notebook's dynamic engine, completed, on the run_backward above."""

    def __init__(self, value, requires_grad=False):
        self.value = float(value)
        self.requires_grad = requires_grad
        self.grad = 0.0 if requires_grad else None
        self.grad_fn, self.inputs, self.saved = None, (), None

    is_leaf = property(lambda self: self.grad_fn is None)

    @staticmethod
    def frame(op, *inputs):
        inputs = [i if isinstance(i, Node) else Node(i) for i in inputs]
        values = tuple(i.value for i in inputs)
        out = Node(OPS[op][0](*values), requires_grad=any(i.requires_grad for i in inputs))
        if out.requires_grad:
            out.grad_fn, out.inputs, out.saved = op, tuple(inputs), values
        return out

    __add__ = lambda self, o: Node.frame("add", self, o)  # noqa: E731
    __radd__ = lambda self, o: Node.frame("add", o, self)  # noqa: E731
    __sub__ = lambda self, o: Node.frame("sub", self, o)  # noqa: E731
    __mul__ = lambda self, o: Node.frame("mul", self, o)  # noqa: E731
    __rmul__ = lambda self, o: Node.frame("mul", o, self)  # noqa: E731
    __truediv__ = lambda self, o: Node.frame("div", self, o)  # noqa: E731
    __pow__ = lambda self, o: Node.frame("pow", self, o)  # noqa: E731
    sin = lambda self: Node.frame("sin", self)  # noqa: E731
    exp = lambda self: Node.frame("exp", self)  # noqa: E731

    def backward(self, retain_graph=False):
        if not self.requires_grad:
            raise RuntimeError(
                "element 0 of tensors does not require grad and does not have a grad_fn"
            )
        order = run_backward(self)
        if not retain_graph:
            for node in order:
                if not node.is_leaf:
                    node.saved = None


def jacobian_with(backward: str, needs=(True, True)):
    """jacobian, each row's backward run as Node.backward or as run_backward called on
    the output, the leaves made with requires_grad as ``needs`` says."""

    def jacobian(F, x0, y0):
        J = []
        for k in range(len(F(Node(x0), Node(y0)))):
            x, y = Node(x0, requires_grad=needs[0]), Node(y0, requires_grad=needs[1])
            out = F(x, y)[k]
            if backward == "run_backward":
                run_backward(out)
            else:
                out.backward()
            J.append([x.grad, y.grad])
        return J

    return jacobian


def descend_with(backward: str = "method", stop_after=None, stop_below=None):
    """gradient_descent, backward run either way, with an early stop of its own or none."""

    def gradient_descent(f, x0, y0, lr=0.1, steps=200):
        x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
        for step in range(steps):
            if stop_after is not None and step >= stop_after:
                break
            x.grad = y.grad = 0.0
            out = f(x, y)
            if backward == "run_backward":
                run_backward(out)
            else:
                out.backward()
            if stop_below is not None and abs(x.grad) + abs(y.grad) < stop_below:
                break
            x.value -= lr * x.grad
            y.value -= lr * y.grad
        return x.value, y.value

    return gradient_descent
