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


class LessonDual:
    """The lesson's Dual (11-1): sums and differences of its own; a product and quotient
    given by :func:`dual_with`."""

    def __init__(self, value, tangent=0.0):
        self.value, self.tangent = value, tangent

    def __add__(self, other):
        other = other if isinstance(other, LessonDual) else LessonDual(other)
        return LessonDual(self.value + other.value, self.tangent + other.tangent)

    def __sub__(self, other):
        other = other if isinstance(other, LessonDual) else LessonDual(other)
        return LessonDual(self.value - other.value, self.tangent - other.tangent)


def dual_with(mul, div):
    """The lesson's Dual with the tangent of a product given by ``mul(u, v)`` and of a
    quotient by ``div(u, v)``: the rules a learner writes."""

    class Mine(LessonDual):
        def __mul__(self, other):
            other = other if isinstance(other, LessonDual) else Mine(other)
            return Mine(self.value * other.value, mul(self, other))

        def __truediv__(self, other):
            other = other if isinstance(other, LessonDual) else Mine(other)
            return Mine(self.value / other.value, div(self, other))

    return Mine


def product_rule(u, v):
    return u.tangent * v.value + u.value * v.tangent


def quotient_rule(u, v):
    return (u.tangent * v.value - u.value * v.tangent) / v.value**2
