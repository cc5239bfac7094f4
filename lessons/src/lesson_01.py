from build import code, exercise, md

NAME = "01_computational_graphs"
TITLE = "Lesson 1: What a computational graph is"
INTRO = """
A computational graph has two kinds of nodes: **tensors** (the data) and
**Functions** (the operations). Data flows forward through the Functions to a loss;
gradients flow backward, Function by Function, by the chain rule.

In this lesson you will:

* see that every op remembers how to undo itself (its `grad_fn`),
* build the four-layer toy model used throughout the lab and draw its forward and
  backward graphs,
* derive its gradients by hand and check them against autograd.

Exercises are code cells marked **Exercise**: replace each `...` with your answer and
run the cell. The checker prints `✓ correct`, `✗ not yet` (with a hint) or
`○ not done yet`.
"""

CELLS = [
    md("""
    ## A Function has a forward and a backward

    In dynamic mode (PyTorch style) an op runs at once and, if one of its inputs
    requires a gradient, records a *backward node* in the result's `grad_fn`.
    `exp` is the simplest example: its forward is $e^a$ and its backward multiplies the
    incoming gradient by $e^a$ again.
    """),
    code("""
    a = ng.tensor(2.0, requires_grad=True)
    b = a.exp()
    print(b)
    print("grad_fn:", b.grad_fn.name())
    """),
    md("""
    `b` prints as `tensor(7.3891, grad_fn=<ExpBackward0>)`: the value is already
    computed (eager execution), and `ExpBackward0` is the Function that backward will
    call. Calling `b.backward()` runs it and stores $db/da = e^2$ in `a.grad`.
    """),
    code("""
    b.backward()
    a.grad
    """),
    md("""
    ## The toy model

    The lab's running example is a tiny network: an input, three scalar weights and
    four "layers".

    ```
    l1 = input * w1
    l2 = l1 + w2
    l3 = l1 * w3
    l4 = l2 * l3
    loss = mean(l4)
    ```

    Swap the products for convolutions and it already looks like a neural network.
    `input` does not require a gradient (it is data); the weights do.
    """),
    code("""
    input = ng.ones([2, 2])
    w1 = ng.tensor(2.0, requires_grad=True)
    w2 = ng.tensor(3.0, requires_grad=True)
    w3 = ng.tensor(4.0, requires_grad=True)

    l1 = input * w1
    l2 = l1 + w2
    l3 = l1 * w3
    l4 = l2 * l3
    loss = l4.mean()

    for name, t in [("w1", w1), ("l1", l1), ("loss", loss)]:
        print(f"{name:5s} grad_fn={t.grad_fn.name() if t.grad_fn else None}")
    loss
    """),
    md("""
    ### Exercise 01-1: the forward pass by hand

    Every element of `input` is 1, so every element of each layer is the same number.
    Work out one element of each layer (and the loss) on paper, then check.
    """),
    exercise("01-1", """
    # Exercise 01-1: one element of each layer, computed by hand
    l1_value = «2.0»
    l2_value = «5.0»
    l3_value = «8.0»
    l4_value = «40.0»
    loss_value = «40.0»
    ex.check_forward_values(l1_value, l2_value, l3_value, l4_value, loss_value)
    """),
    md("""
    ## Drawing the graph both ways

    `ng.render(tensor, kind=...)` draws the graph. The **forward** graph shows tensors
    and the ops between them, edges in the direction data flows. The **backward**
    graph shows the `grad_fn` nodes that `loss.backward()` will visit, edges in the
    direction gradients flow. Leaves are green; `input` does not require a gradient,
    so it has no place in the backward graph.
    """),
    code("""
    names = {"input": input, "w1": w1, "w2": w2, "w3": w3,
             "l1": l1, "l2": l2, "l3": l3, "l4": l4, "loss": loss}
    ng.render(loss, kind="forward", params=names)
    """),
    code("""
    ng.render(loss, kind="backward", params=names)
    """),
    md("""
    ## Gradients by hand

    Go backward from the loss with the chain rule, one element at a time:

    * $\\partial\\,loss / \\partial\\,l4 = 1/4$ (the mean of four numbers);
    * $l4 = l2 \\cdot l3$, so $\\partial l4/\\partial l2 = l3 = 8$ and $\\partial l4/\\partial l3 = l2 = 5$;
    * $l1$ feeds **two** paths: through $l2$ (derivative 1) and through $l3$ (derivative $w3$).

    The weights are scalars *broadcast* over the 2x2 input: each one touches all four
    elements, so its gradient is the **sum** of four per-element contributions.
    """),
    exercise("01-2", """
    # Exercise 01-2: d loss / d w1, w2, w3 (scalars), derived by hand
    w1_grad = «28.0»
    w2_grad = «8.0»
    w3_grad = «10.0»
    ex.check_leaf_grads(w1_grad, w2_grad, w3_grad)
    """),
    exercise("01-3", """
    # Exercise 01-3: d loss / d l1 for ONE element of l1
    l1_grad = «7.0»
    ex.check_l1_grad(l1_grad)
    """),
    md("""
    Now let autograd do it. `loss.backward()` walks the backward graph from `loss` to
    the leaves and *accumulates* into each leaf's `.grad`.
    """),
    code("""
    loss.backward()
    print("w1.grad =", w1.grad, " w2.grad =", w2.grad, " w3.grad =", w3.grad)
    assert w1.grad.item() == 28 and w2.grad.item() == 8 and w3.grad.item() == 10
    """),
    md("""
    The intermediate tensors do not keep their gradients: `l1.grad` is `None` (and
    naivegraph warns, as PyTorch does, that you probably meant a leaf). Lesson 2
    explains why, and lesson 3 shows how to keep them.
    """),
    code("""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        print(l1.grad, l4.grad, loss.grad)
    """),
    md("""
    After backward the graph's saved values are freed: the backward drawing now marks
    the freed nodes, and a second `loss.backward()` is an error (lesson 3 shows
    `retain_graph`).
    """),
    code("""
    try:
        loss.backward()
    except RuntimeError as err:
        print("RuntimeError:", str(err)[:90], "...")
    ng.render(loss, kind="both", params=names)
    """),
    md("""
    ## Summary

    * Tensors and Functions form a graph; every recorded op has a `grad_fn`.
    * Forward computes values now (eager); backward applies the chain rule from the
      loss to the leaves.
    * A broadcast weight collects the sum of the gradients of every element it touched.
    """),
]
