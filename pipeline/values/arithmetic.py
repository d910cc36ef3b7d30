"""A small arithmetic evaluator over Python's syntax tree: numbers, + - * / % **, parentheses, with sizes
bounded. What a question asks to be worked out and what an answer computes from quoted figures are
evaluated here, never with eval()."""

from __future__ import annotations

import ast
import math
from fractions import Fraction

from pipeline.errors import ArithmeticRefused

MAX_EXPRESSION_CHARS = 200
MAX_NODES = 60
# Results (and intermediate values) beyond 10**100 are refused rather than computed.
MAX_DIGITS = 100

Number = Fraction | float


def _check(value: Number) -> Number:
    if isinstance(value, float) and not math.isfinite(value):
        raise ArithmeticRefused("the result is not a finite number")
    if abs(value) >= 10**MAX_DIGITS:
        raise ArithmeticRefused(f"the result has more than {MAX_DIGITS} digits")
    return value


def _power(base: Number, exponent: Number) -> Number:
    if isinstance(base, Fraction) and isinstance(exponent, Fraction) and exponent.denominator == 1:
        if base == 0 and exponent < 0:
            raise ArithmeticRefused("zero cannot be raised to a negative power")
        # Digits of the result's numerator or denominator, bounded before anything is computed.
        widest = max(abs(base.numerator), base.denominator)
        if widest > 1 and abs(exponent) * math.log10(widest) > MAX_DIGITS + 1:
            raise ArithmeticRefused(f"the result has more than {MAX_DIGITS} digits")
        return _check(base ** int(exponent))
    if base < 0:
        raise ArithmeticRefused("a negative number has no real fractional power")
    try:
        return _check(float(base) ** float(exponent))
    except OverflowError as exc:
        raise ArithmeticRefused(f"the result has more than {MAX_DIGITS} digits") from exc


def _eval(node: ast.AST) -> Number:
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return _check(Fraction(node.value))
    if isinstance(node, ast.Constant) and type(node.value) is float:
        return Fraction(str(_check(node.value)))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd | ast.USub):
        value = _eval(node.operand)
        return value if isinstance(node.op, ast.UAdd) else -value
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow):
            return _power(left, right)
        if isinstance(node.op, ast.Div | ast.Mod) and right == 0:
            raise ArithmeticRefused("division by zero")
        if isinstance(node.op, ast.Add):
            return _check(left + right)
        if isinstance(node.op, ast.Sub):
            return _check(left - right)
        if isinstance(node.op, ast.Mult):
            return _check(left * right)
        if isinstance(node.op, ast.Div):
            return _check(left / right)
        if isinstance(node.op, ast.Mod):
            return _check(left % right)
        raise _refused(node.op)
    raise _refused(node)


def _refused(part: ast.AST) -> ArithmeticRefused:
    return ArithmeticRefused(f"only numbers, + - * / % ** and parentheses are worked out, not {type(part).__name__}")


def evaluate_arithmetic(expression: str) -> Number:
    """The value of `expression`; ArithmeticRefused names why it is not worked out."""
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise ArithmeticRefused(f"the expression is longer than {MAX_EXPRESSION_CHARS} characters")
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError as exc:
        raise ArithmeticRefused("the expression could not be read") from exc
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise ArithmeticRefused(f"the expression has more than {MAX_NODES} parts")
    return _eval(tree)


def format_number(value: Number) -> str:
    """An integer in full, anything else to ten significant digits."""
    if isinstance(value, Fraction) and value.denominator == 1:
        return str(value.numerator)
    return f"{float(value):.10g}"
