# %% [markdown]
# # Lesson 4: In-place operations
#
# Most autograd bugs come from **in-place** operations: changing a tensor's memory
# instead of making a new tensor. This lesson covers:
#
# * what is in place and what is not (`a = a.exp()` versus `a[0] = 10`),
# * the version counter `_version` and how autograd uses it,
# * the two in-place errors you will meet, and the fixes: `detach()`, `no_grad`, `.data`,
# * the one in-place change autograd cannot see (through `.data`), and why autograd
#   refuses rather than guesses.

# %%
import numpy as np
import naivegraph as ng
from naivegraph.lessons import exercises as ex

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## In place or not?
#
# `a = a.exp()` makes a new tensor and rebinds the name `a` to it: the old tensor is
# untouched. `a[0] = 10` writes into the existing tensor, like `lst[0] = 10` on a
# Python list. (Python ints are no guide here: they are immutable, so `i += 1`
# makes a new int and rebinds `i`. On a tensor, `b += 1` writes in place.) `id()`
# shows the difference.

# %%
a = ng.tensor([3.0, 1.0])
before = id(a)
a = a.exp()
print("a = a.exp():  same object?", id(a) == before)

a = ng.tensor([3.0, 1.0])
before = id(a)
a[0] = 10
print("a[0] = 10:    same object?", id(a) == before, a)

# %% [markdown]
# ## The version counter
#
# Every tensor carries `_version`, starting at 0. Each in-place op adds 1. When an op
# saves a tensor for its backward, it also notes the version; backward compares.
#
# ### Exercise 04-1: count the versions

# %% exercise="04-1"
# Exercise 04-1: b._version after each line, as a list of five integers
#   a = ng.tensor([1.0, 3.0], requires_grad=True)
#   b = a + 2        -> ?
#   b[0] = 1000      -> ?
#   b.mul_(2)        -> ?
#   c = b * 3        -> ?
#   b += 1           -> ?
### BEGIN SOLUTION
versions = [0, 1, 2, 2, 3]
### END SOLUTION
ex.check_versions(versions)

# %% [markdown]
# Once your check passes, watch the counter:

# %%
if ex.solved("04-1"):
    a = ng.tensor([1.0, 3.0], requires_grad=True)
    seen = []
    b = a + 2;     seen.append(b._version)
    b[0] = 1000;   seen.append(b._version)
    b.mul_(2);     seen.append(b._version)
    c = b * 3;     seen.append(b._version)
    b += 1;        seen.append(b._version)
    print(seen)
else:
    print("(solve exercise 04-1 first: this cell counts the versions)")

# %% [markdown]
# ## Error 1: a saved tensor was modified
#
# `b * b` saves `b`, because its gradient is $2b$. Changing `b` afterwards means
# backward would use the wrong numbers, so it stops with an error that names the
# versions, and says what to do instead.

# %%
a = ng.tensor([1.0, 3.0], requires_grad=True)
b = a + 2
loss = (b * b).mean()
b[0] = 1000.0
print("b._version =", b._version)
try:
    loss.backward()
except RuntimeError as err:
    print("RuntimeError:", err)

# %% [markdown]
# Changing a tensor that no backward needs is fine: `c = b + 1` has derivative 1
# whatever `b` is, so addition saves nothing.
#
# ### Exercise 04-2: which of these raise at backward?
#
# ```python
# # (1)
# a = ng.tensor([1.0, 3.0], requires_grad=True)
# b = a + 2; loss = (b * b).sum(); b[0] = 1000.0; loss.backward()
# # (2)
# a = ng.tensor([1.0, 3.0], requires_grad=True)
# b = a + 2; loss = (b + 1).sum(); b[0] = 1000.0; loss.backward()
# # (3)
# a = ng.tensor([1.0, 3.0], requires_grad=True)
# b = a.exp(); loss = b.sum(); b.add_(1); loss.backward()
# ```
# Answer with three booleans, `True` meaning "raises".

# %% exercise="04-2"
# Exercise 04-2
### BEGIN SOLUTION
raises = (True, False, True)
### END SOLUTION
ex.check_inplace_predictions(raises)


# %% [markdown]
# Once your check passes, run the three snippets:

# %%
if ex.solved("04-2"):
    def attempt(label, fn):
        try:
            fn()
            print(label, "fine")
        except RuntimeError as err:
            print(label, "RuntimeError:", err)

    def one():
        a = ng.tensor([1.0, 3.0], requires_grad=True)
        b = a + 2; loss = (b * b).sum(); b[0] = 1000.0; loss.backward()

    def two():
        a = ng.tensor([1.0, 3.0], requires_grad=True)
        b = a + 2; loss = (b + 1).sum(); b[0] = 1000.0; loss.backward()

    def three():
        a = ng.tensor([1.0, 3.0], requires_grad=True)
        b = a.exp(); loss = b.sum(); b.add_(1); loss.backward()

    for label, fn in (("(1)", one), ("(2)", two), ("(3)", three)):
        attempt(label, fn)
else:
    print("(solve exercise 04-2 first: this cell runs the three snippets)")

# %% [markdown]
# ## Error 2: in place on a leaf
#
# A leaf that requires grad is a parameter you want the gradient of. Writing into
# it while autograd records would make it the *output* of an op: it would stop
# being a leaf and lose its `.grad`. So every in-place op on such a leaf fails at
# once, `a.add_(10.)` and `a[:] = 0` alike.
#
# These are the two in-place errors you will meet. Older PyTorch had a third: it let
# `a[:] = 0` through and failed only at backward with "leaf variable has been moved
# into the graph interior" (the reference articles show it). Today that case raises
# error 2 at once, in PyTorch as in naivegraph.

# %%
a = ng.tensor([10.0, 5.0, 2.0, 3.0], requires_grad=True)
for label, change in (("a.add_(10.)", lambda: a.add_(10.0)),
                      ("a[:] = 0", lambda: a.__setitem__(slice(None), 0.0))):
    try:
        change()
    except RuntimeError as err:
        print(f"{label:12s} RuntimeError: {err}")
print(a, a.is_leaf)

# %% [markdown]
# ## The fixes
#
# Change a leaf's values where autograd does not record, *before* the leaf is used:
#
# * `with ng.no_grad():` nothing inside is recorded;
# * `a.detach()`: the same storage, `requires_grad=False`, and the **same version
#   counter** as `a`;
# * `a.data`: the same storage, `requires_grad=False`, but a version counter of its
#   own: autograd never sees what you do through it.
#
# `a.fill_(10.0)` writes every element whatever `a`'s shape; `a[:] = 10.0` does too,
# except on a 0-d tensor (a single number, shape `()`), which has no dimension to slice.

# %%
a = ng.tensor([10.0, 5.0, 2.0, 3.0], requires_grad=True)
with ng.no_grad():
    a.fill_(10.0)
(a * a).mean().backward()
print("via no_grad  :", a, a.is_leaf, a.grad)

a = ng.tensor([10.0, 5.0, 2.0, 3.0], requires_grad=True)
a.detach().fill_(10.0)
(a * a).mean().backward()
print("via detach() :", a, a.is_leaf, a.grad)

# %% [markdown]
# ## detach() and .data are not the same
#
# For a leaf changed *before* it is used, both work. The difference shows when the
# tensor has already been saved for a backward pass. Through `detach()` the change
# bumps the shared version counter, and backward catches it (error 1). Through
# `.data` nothing is counted: backward runs without a word, with the **new** values,
# and the gradient is silently wrong: $\partial/\partial a$ of $(b \cdot b)$.mean()
# should be $b = [3, 5]$, not $[1000, 5]$.

# %%
a = ng.tensor([1.0, 3.0], requires_grad=True)
b = a + 2
loss = (b * b).mean()
b.detach()[0] = 1000.0
try:
    loss.backward()
except RuntimeError as err:
    print("through detach(): RuntimeError:", err)

a = ng.tensor([1.0, 3.0], requires_grad=True)
b = a + 2
loss = (b * b).mean()
b.data[0] = 1000.0
loss.backward()
print("through .data: no error, a.grad =", a.grad, "(wrong: it should be [3, 5])")


# %% [markdown]
# So prefer `detach()` or `no_grad` to `.data`: they keep autograd's checks on.
#
# ### Exercise 04-3: reset a leaf

# %% exercise="04-3"
# Exercise 04-3: set every element of the leaf `a` to 10, keep it a leaf that
# requires grad, and return it
def reset(a):
    ### BEGIN SOLUTION
    with ng.no_grad():
        a.fill_(10.0)
    return a
    ### END SOLUTION

ex.check_reset_leaf(reset)

# %% [markdown]
# ## Why refuse instead of guess?
#
# To support any in-place op, every Function would have to copy each input it saves,
# just in case someone changes it later: memory for every activation, twice. Instead
# autograd saves references and checks versions. The deal: as long as every change
# goes through ops autograd can see (not `.data`), **if backward does not complain,
# the gradient is right**; when it complains, use an out-of-place op (`b = b * 2`) or
# `clone()` before changing.

# %%
a = ng.tensor([1.0, 3.0], requires_grad=True)
b = a + 2
loss = (b * b).mean()
b = b.clone()          # work on a copy: the saved b keeps version 0
b[0] = 1000.0
loss.backward()
print(a.grad)

# %% [markdown]
# ## Summary
#
# * In place = same memory, new values; each one bumps `_version`.
# * Two errors: a saved tensor changed in place (at backward); in place on a leaf
#   that requires grad (at once).
# * Change a leaf through `no_grad` or `detach()`; otherwise use out-of-place ops or
#   `clone()`.
# * `.data` hides the change from autograd: no error, and a wrong gradient if the
#   tensor was saved.
#
# ## Further reading
#
# * PyTorch, [Autograd mechanics](https://pytorch.org/docs/stable/notes/autograd.html):
#   "In-place operations with autograd" and "In-place correctness checks".
# * PyTorch, [`torch.Tensor.detach`](https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html):
#   why in-place changes through `detach()` are reported and through `.data` are not.
# * PyTorch, [A gentle introduction to `torch.autograd`](https://pytorch.org/tutorials/beginner/blitz/autograd_tutorial.html).
# * Dive into Deep Learning, [Automatic differentiation](https://d2l.ai/chapter_preliminaries/autograd.html).
# * CMU [Deep Learning Systems](https://dlsyscourse.org/): the lectures on automatic
#   differentiation and on memory (why saved activations cost so much).
