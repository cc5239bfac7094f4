# %% [markdown]
# # Lesson 3: Getting at gradients
#
# `loss.backward()` fills the leaves' `.grad` and throws the rest away. This lesson is
# the toolbox for everything else:
#
# * `retain_grad()` and hooks to see (or change) intermediate gradients,
# * accumulation, and `retain_graph` to run backward twice,
# * `backward(gradient)` for outputs that are not scalars,
# * `ng.autograd.grad`, which returns gradients instead of storing them, and second
#   derivatives with `create_graph=True`.

# %%
import numpy as np
import naivegraph as ng
from naivegraph.lessons import exercises as ex

np.set_printoptions(precision=4, suppress=True)


# %% [markdown]
# ## retain_grad: keep an intermediate gradient
#
# Back to the toy model of lesson 1. `retain_grad()` asks autograd to store the
# gradient of a non-leaf tensor too.

# %%
def toy_model():
    input = ng.ones([2, 2])
    w1, w2, w3 = (ng.tensor(v, requires_grad=True) for v in (2.0, 3.0, 4.0))
    l1 = input * w1
    l2 = l1 + w2
    l3 = l1 * w3
    l4 = l2 * l3
    return input, (w1, w2, w3), (l1, l2, l3, l4), l4.mean()

input, (w1, w2, w3), (l1, l2, l3, l4), loss = toy_model()
for t in (l1, l2, l3, l4, loss):
    t.retain_grad()
loss.backward()
print("loss.grad =", loss.grad)
print("l4.grad =", l4.grad)
print("l1.grad =", l1.grad)

# %% [markdown]
# With the intermediate gradients kept, the drawing writes each one on its tensor:
# `grad` on the `l1` node is $\partial loss/\partial l1$, the 7s of exercise 01-3.

# %%
ng.render(loss, kind="forward", params={"input": input, "w1": w1, "w2": w2, "w3": w3,
                                        "l1": l1, "l2": l2, "l3": l3, "l4": l4,
                                        "loss": loss})

# %% [markdown]
# The backward graph can carry the same numbers without `retain_grad()`: with
# `gradients=True` each node is labelled with the gradient arriving at it (the 7s
# on `l1`'s `MulBackward0`), computed on a graph that has not run backward yet.

# %%
w1, w2, w3 = (ng.tensor(v, requires_grad=True) for v in (2.0, 3.0, 4.0))
l1 = input * w1
l2, l3 = l1 + w2, l1 * w3
loss = (l2 * l3).mean()
ng.render(loss, gradients=True, params={"w1": w1, "w2": w2, "w3": w3, "l1": l1,
                                        "loss": loss})

# %% [markdown]
# ## Hooks: look at a gradient as it passes
#
# `t.register_hook(fn)` calls `fn(grad)` when the gradient of `t` is computed,
# without storing anything. Handy for debugging: print, log, check for NaNs.

# %%
input, (w1, w2, w3), (l1, l2, l3, l4), loss = toy_model()
l1.register_hook(lambda grad: print("l1 grad:", grad.tolist()))
l4.register_hook(lambda grad: print("l4 grad:", grad.tolist()))
loss.register_hook(lambda grad: print("loss grad:", grad.item()))
loss.backward()


# %% [markdown]
# A hook may also **return** a tensor: it then replaces the gradient that flows on.
# The tensor a hook receives belongs to autograd: compute a new one, do not change
# it in place. `register_hook` returns a handle; `handle.remove()` takes the hook off.
#
# ### Exercise 03-1: a hook that doubles the gradient
#
# Write `double(grad)` so that, registered on a leaf `v`, it makes `v.grad` twice
# what it would be. The checker tries it on several incoming gradients, negative ones
# and other shapes too.

# %% exercise="03-1"
# Exercise 03-1
def double(grad):
    ### BEGIN SOLUTION
    return grad * 2
    ### END SOLUTION

ex.check_double_hook(double)

# %% [markdown]
# ## Gradients accumulate; graphs are freed
#
# `AccumulateGrad` *adds* into `.grad`. That is a feature (you can sum gradients of
# several losses, or of several small batches) and a trap: a training loop must zero
# the gradients before each step.
#
# Backward also frees what the graph saved for it. To run backward twice through
# the same graph, pass `retain_graph=True` to the first call.

# %%
x = ng.tensor(3.0, requires_grad=True)
y = x ** 2
y.backward(retain_graph=True)
print("after one backward:", x.grad)

# %% [markdown]
# ### Exercise 03-2: backward twice

# %% exercise="03-2"
# Exercise 03-2: predict x.grad after a SECOND y.backward() (a number; the next cell runs it)
### BEGIN SOLUTION
x_grad_after_two = 12.0
### END SOLUTION
ex.check_accumulated_grad(x_grad_after_two)

# %% [markdown]
# Once your check passes, see it happen, and see the error of a third call: the
# second call did not retain the graph. The message says what to do.

# %%
if ex.solved("03-2"):
    y.backward()          # the graph was retained, so this works ...
    print("after two:", x.grad)
    try:
        y.backward()      # ... but this one did not retain it
    except RuntimeError as err:
        print("RuntimeError:", err)
    x.grad = None         # zero (or drop) the gradient before the next step
else:
    print("(solve exercise 03-2 first: this cell runs the second backward)")

# %% [markdown]
# A dynamic graph lives for one forward and one backward pass; the next forward
# builds a new one. A **static** graph (lesson 6) is the opposite: built once, then
# run again and again with new inputs.
#
# [An animation](figures/animation_static_runs.gif) shows one static graph run several
# times.
#
# Here is this section's example, $y = x^2$ at $x = 3$, as a static graph, stepped
# through by `ns.walkthrough(y)`:

# %%
import naivegraph.static as ns

with ns.Graph():
    xs = ns.Variable(3.0, name="x")
    ys = xs ** 2.0
ns.walkthrough(ys)

# %% [markdown]
# Page through it with **Next** and **Previous** (or click it and use ← / →): the
# graph is built first with no values, then one run computes `y = 9`, then the backward
# sweep sends 6 to `x`. Unlike `x.grad` above, the static gradient replaces the last
# one instead of accumulating. (The static nodes are named `xs` and `ys` here, to keep
# them apart from the tensors `x` and `y`.) The walkthrough computes on copies: the
# static Variable `xs` keeps no gradient after it, `xs.grad` is still `None`.
#
# ## backward(gradient) for a non-scalar output
#
# `backward()` with no argument only works for a scalar: autograd starts from
# $\partial y/\partial y = 1$. For a tensor output, you pass the vector $v$ that
# plays that role, and autograd computes the vector-Jacobian product $v^T J$.
# Passing ones gives the gradient of `y.sum()`.

# %%
x = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * x
try:
    y.backward()
except RuntimeError as err:
    print("RuntimeError:", err)
y.backward(ng.ones(3))
print("with ones:", x.grad)

# %% [markdown]
# ### Exercise 03-3: a vector-Jacobian product by hand

# %% exercise="03-3"
# Exercise 03-3: x = [1, 2, 3]; y = x * x; y.backward(gradient=[1, 0.1, 0.01]). x.grad?
### BEGIN SOLUTION
x_grad = [2.0, 0.4, 0.06]
### END SOLUTION
ex.check_vector_backward(x_grad)


# %% [markdown]
# ### Exercise 03-4: check autograd against a hand-derived gradient
#
# For $f(x) = x^2 e^x$ write `gradf(x)` by hand (use `ng.exp`): the exact formula,
# returned as a tensor, with no autograd of either mode and no finite difference. The
# checker compares it with the exact derivative on a 4x4 grid of points, small and
# large; the cell after it compares it with autograd on a random 3x4 input, as the old
# tutorials did.

# %% exercise="03-4"
# Exercise 03-4
def f(x):
    return x ** 2 * ng.exp(x)

def gradf(x):
    ### BEGIN SOLUTION
    return 2 * x * ng.exp(x) + x ** 2 * ng.exp(x)
    ### END SOLUTION

ex.check_manual_gradient(gradf)

# %%
ng.manual_seed(0)
x = ng.randn(3, 4, requires_grad=True)
y = f(x)
y.backward(ng.ones(y.shape))
print(x.grad)
try:
    print("gradf agrees with autograd:", np.allclose(gradf(x.detach()).numpy(), x.grad.numpy()))
except Exception as err:
    print("gradf is not finished yet:", type(err).__name__, err)

# %% [markdown]
# ## autograd.grad and second derivatives
#
# `ng.autograd.grad(outputs, inputs)` returns the gradients instead of adding them
# into `.grad`: nothing accumulates, nothing to zero. With `create_graph=True`, the
# backward pass itself is recorded, so the gradient is a tensor with a `grad_fn` and
# can be differentiated again. For $y = x^3$ at $x = 3$: $y' = 3x^2 = 27$ and
# $y'' = 6x = 18$.

# %%
x = ng.tensor(3.0, requires_grad=True)
y = x ** 3
(dy,) = ng.autograd.grad(y, [x], create_graph=True)
print("dy/dx   =", dy)
(d2y,) = ng.autograd.grad(dy, [x])
print("d2y/dx2 =", d2y, "  x.grad is still", x.grad)


# %% [markdown]
# ### Exercise 03-5: second derivatives of any function
#
# Write `derivatives(f, x)` returning $f'(x)$ and $f''(x)$ for a function `f` of one
# scalar tensor `x` (which requires grad), with `ng.autograd.grad` twice. The checker
# tries it on several functions and points.

# %% exercise="03-5"
# Exercise 03-5
def derivatives(f, x):
    ### BEGIN SOLUTION
    (first,) = ng.autograd.grad(f(x), [x], create_graph=True)
    (second,) = ng.autograd.grad(first, [x])
    return first, second
    ### END SOLUTION

ex.check_second_derivative(derivatives)

# %% [markdown]
# ## Summary
#
# * `retain_grad()` keeps an intermediate gradient; `register_hook` sees it (and may
#   replace it, by returning a new tensor) without keeping it.
# * `.grad` accumulates; zero it between steps. `retain_graph=True` allows a second
#   backward through the same graph.
# * A non-scalar output needs `backward(gradient)`: you get $v^T J$.
# * `autograd.grad` returns gradients; `create_graph=True` makes them differentiable.
#
# ## Further reading
#
# * PyTorch, [Autograd mechanics](https://pytorch.org/docs/stable/notes/autograd.html):
#   "Saved tensors", "Backward hooks execution".
# * PyTorch, [A gentle introduction to `torch.autograd`](https://pytorch.org/tutorials/beginner/blitz/autograd_tutorial.html):
#   vector-Jacobian products and `backward(gradient)`.
# * A. Karpathy, [micrograd](https://github.com/karpathy/micrograd): gradients
#   accumulate with `+=`, the same reason `.grad` must be zeroed.
# * Dive into Deep Learning, [Automatic differentiation](https://d2l.ai/chapter_preliminaries/autograd.html):
#   backward for non-scalar variables, detaching computation.
# * CMU [Deep Learning Systems](https://dlsyscourse.org/): reverse-mode AD that
#   builds the gradient as a graph, which is what `create_graph=True` does.
