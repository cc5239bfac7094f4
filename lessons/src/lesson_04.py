from build import code, exercise, md

NAME = "04_inplace_operations"
TITLE = "Lesson 4: In-place operations"
INTRO = """
Most autograd bugs come from **in-place** operations: changing a tensor's memory
instead of making a new tensor. This lesson covers:

* what is in place and what is not (`a = a.exp()` versus `a[0] = 10`),
* the version counter `_version` and how autograd uses it,
* the three errors you will meet, and the fixes: `.data`, `detach()`, `no_grad`,
* why autograd refuses rather than guesses.
"""

CELLS = [
    md("""
    ## In place or not?

    `a = a.exp()` makes a new tensor and rebinds the name (like `i = i + 1`).
    `a[0] = 10` writes into the existing tensor (like `i += 1`). `id()` shows the
    difference.
    """),
    code("""
    a = ng.tensor([3.0, 1.0])
    before = id(a)
    a = a.exp()
    print("a = a.exp():  same object?", id(a) == before)

    a = ng.tensor([3.0, 1.0])
    before = id(a)
    a[0] = 10
    print("a[0] = 10:    same object?", id(a) == before, a)
    """),
    md("""
    ## The version counter

    Every tensor carries `_version`, starting at 0. Each in-place op adds 1. When an op
    saves a tensor for its backward, it also notes the version; backward compares.
    """),
    exercise("04-1", """
    # Exercise 04-1: b._version after each line, as a list of five integers
    #   b = a + 2        -> ?
    #   b[0] = 1000      -> ?
    #   b.mul_(2)        -> ?
    #   c = b * 3        -> ?
    #   b += 1           -> ?
    versions = «[0, 1, 2, 2, 3]»
    ex.check_versions(versions)
    """),
    code("""
    a = ng.tensor([1.0, 3.0], requires_grad=True)
    seen = []
    b = a + 2;     seen.append(b._version)
    b[0] = 1000;   seen.append(b._version)
    b.mul_(2);     seen.append(b._version)
    c = b * 3;     seen.append(b._version)
    b += 1;        seen.append(b._version)
    print(seen)
    """),
    md("""
    ## Error 1: a saved tensor was modified

    `b * b` saves `b`, because its gradient is $2b$. Changing `b` afterwards means
    backward would use the wrong numbers, so it stops with an error that names the
    versions.
    """),
    code("""
    a = ng.tensor([1.0, 3.0], requires_grad=True)
    b = a + 2
    loss = (b * b).mean()
    b[0] = 1000.0
    print("b._version =", b._version)
    try:
        loss.backward()
    except RuntimeError as err:
        print("RuntimeError:", str(err)[:200], "...")
    """),
    md("""
    Changing a tensor that no backward needs is fine: `c = b + 1` has derivative 1
    whatever `b` is, so addition saves nothing.

    ### Exercise 04-3: which of these raise at backward?

    ```python
    # (1)
    a = ng.tensor([1.0, 3.0], requires_grad=True)
    b = a + 2; loss = (b * b).sum(); b[0] = 1000.0; loss.backward()
    # (2)
    a = ng.tensor([1.0, 3.0], requires_grad=True)
    b = a + 2; loss = (b + 1).sum(); b[0] = 1000.0; loss.backward()
    # (3)
    a = ng.tensor([1.0, 3.0], requires_grad=True)
    b = a.exp(); loss = b.sum(); b.add_(1); loss.backward()
    ```
    Answer with three booleans, `True` meaning "raises".
    """),
    exercise("04-3", """
    # Exercise 04-3
    raises = («True, False, True»)
    ex.check_inplace_predictions(raises)
    """),
    code("""
    def attempt(label, fn):
        try:
            fn()
            print(label, "fine")
        except RuntimeError as err:
            print(label, "RuntimeError:", str(err)[:60], "...")

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
    """),
    md("""
    ## Errors 2 and 3: in place on a leaf

    A leaf that requires grad is a parameter you want the gradient of. Writing into
    it while autograd records would make it the *output* of an op: it would stop
    being a leaf and lose its `.grad`. Older PyTorch let `a[:] = 0` through and then
    failed at backward with "leaf variable has been moved into the graph interior";
    today (and in naivegraph) every in-place op on such a leaf fails at once.
    """),
    code("""
    a = ng.tensor([10.0, 5.0, 2.0, 3.0], requires_grad=True)
    for label, change in (("a.add_(10.)", lambda: a.add_(10.0)),
                          ("a[:] = 0", lambda: a.__setitem__(slice(None), 0.0))):
        try:
            change()
        except RuntimeError as err:
            print(f"{label:12s} RuntimeError: {str(err)[:75]} ...")
    print(a, a.is_leaf)
    """),
    md("""
    ## The fixes

    Change the values through something that shares the memory but does not record
    history, *before* the leaf is used:

    * `a.data` or `a.detach()`: the same storage, `requires_grad=False`;
    * `with ng.no_grad():` nothing inside is recorded.
    """),
    code("""
    a = ng.tensor([10.0, 5.0, 2.0, 3.0], requires_grad=True)
    a.data.fill_(10.0)                    # or a.detach().fill_(10.0)
    (a * a).mean().backward()
    print("via .data   :", a, a.is_leaf, a.grad)

    a = ng.tensor([10.0, 5.0, 2.0, 3.0], requires_grad=True)
    with ng.no_grad():
        a[:] = 10.0
    (a * a).mean().backward()
    print("via no_grad :", a, a.is_leaf, a.grad)
    """),
    exercise("04-2", """
    # Exercise 04-2: set every element of the leaf `a` to 10, keep it a leaf, return it
    def reset(a):
        «with ng.no_grad():
            a.fill_(10.0)
        return a»

    ex.check_reset_leaf(reset)
    """),
    md("""
    ## Why refuse instead of guess?

    To support any in-place op, every Function would have to copy each input it saves,
    just in case someone changes it later: memory for every activation, twice. Instead
    autograd saves references and checks versions. The deal is simple: **if backward
    does not complain, the gradient is right**; when it complains, use an out-of-place
    op (`b = b * 2`) or `clone()` before changing.
    """),
    code("""
    a = ng.tensor([1.0, 3.0], requires_grad=True)
    b = a + 2
    loss = (b * b).mean()
    b = b.clone()          # work on a copy: the saved b keeps version 0
    b[0] = 1000.0
    loss.backward()
    print(a.grad)
    """),
    md("""
    ## Summary

    * In place = same memory, new values; each one bumps `_version`.
    * A saved tensor changed in place: error at backward. In place on a leaf that
      requires grad: error at once.
    * Fix a leaf through `.data`, `.detach()` or `no_grad`; otherwise use out-of-place
      ops or `clone()`.
    """),
]
