"""Dual numbers for the forward-mode exercise (11-1): a Dual whose product and quotient
are a learner's, the exact rules, and the phrases of the answer no hint may state."""

from __future__ import annotations

DUAL_SECRETS = ("u.tangent * v.value", "u'v + uv'", "(u'v - uv')")


class Dual:
    def __init__(self, value, tangent=0.0):
        self.value, self.tangent = value, tangent


def dual_from(mul, div):
    """A Dual class whose * is ``mul`` and whose / is ``div``."""

    class Made(Dual):
        __mul__ = mul
        __truediv__ = div

    return Made


def exact_mul(u, v):
    return Dual(u.value * v.value, u.tangent * v.value + u.value * v.tangent)


def exact_div(u, v):
    return Dual(u.value / v.value, (u.tangent * v.value - u.value * v.tangent) / v.value**2)
