"""Read a student's answer into sympy without ever running it.

The text is parsed by Python's ``ast`` (which only builds a tree) and the tree is translated node by
node through a whitelist: numbers, ``+ - * / ** ^``, the item's symbols, ``sin cos tan exp log
sqrt pi``, nested lists as matrices, ``.T`` / ``^T`` as transpose and, for proof items,
non-commuting matrix symbols and ``softmax``. Anything else, and anything too long, deep or large,
raises :class:`Unreadable`, the only error this module lets escape.

Numbers are read exactly as typed: an integer of any length, and a decimal such as ``1e-500`` as
the Rational it denotes (``1e-500 - 10**-500`` is 0). No single literal has its own limit; the bound
is on the whole answer (``MAX_LENGTH`` characters, ``MAX_NODES`` nodes, ``MAX_DEPTH`` levels) and on
the size of any number it denotes (``MAX_RESULT_DIGITS`` digits, for a literal as for a power), so
``1e-5000`` and ``10**-5000`` are read and ``1e-6000`` and ``10**-6000`` are refused alike.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field
from typing import Callable

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr

MAX_LENGTH = 1000
MAX_DEPTH = 40
MAX_NODES = 400
MAX_RESULT_DIGITS = 5000  # no number in an answer (literal or power) may be longer than this
_DECIMAL = re.compile(r"(?P<mantissa>[0-9_.]*)(?:[eE](?P<exponent>[+-]?[0-9_]+))?")
MAX_SYMBOLIC_EXPONENT = 100  # (x+y)**N is expanded later; N beyond this only costs time
MAX_MATRIX_POWER = 8  # P^2 reads as P*P; no step of these proofs needs more
MAX_MATRIX_SIDE = 8


class Unreadable(ValueError):
    """The answer cannot be read: bad syntax, unknown name, unsafe or too large."""


class Softmax(MatrixExpr):
    """Row-wise softmax of a matrix expression, opaque to sympy's algebra."""

    def __new__(cls, arg: MatrixExpr):
        return sp.Basic.__new__(cls, arg)

    @property
    def shape(self):
        return self.args[0].shape

    def _latex(self, printer) -> str:
        return r"\operatorname{softmax}\left(%s\right)" % printer._print(self.args[0])


FUNCTIONS: dict[str, Callable[[sp.Expr], sp.Expr]] = {
    "sin": sp.sin,
    "cos": sp.cos,
    "tan": sp.tan,
    "exp": sp.exp,
    "log": sp.log,
    "sqrt": sp.sqrt,
}
CONSTANTS = {"pi": sp.pi}
# Typed symbols people paste from notes; mapped before parsing so the whitelist stays ASCII.
_UNICODE = {"−": "-", "×": "*", "·": "*", "π": " pi ", "√": "sqrt", "ᵀ": ".T"}
_CARET_T = re.compile(r"\^\s*T(?![A-Za-z0-9_])")
# One token of an answer: a decimal number (no complex or hex literals), a name, or any other character.
_TOKEN = re.compile(
    r"(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<space>\s+)|(?P<other>.)",
    re.S,
)
CALLABLE = ("softmax",)  # besides FUNCTIONS: names that a bracket after them calls rather than multiplies


@dataclass(frozen=True)
class Namespace:
    """What an answer to one item may name: scalar symbols, matrix symbols, softmax."""

    scalars: dict[str, sp.Basic] = field(default_factory=dict)
    matrices: dict[str, sp.MatrixSymbol] = field(default_factory=dict)
    softmax: bool = False
    # Only for the bank's own definitions (never a student's answer): functions of several
    # arguments, and 1x1 products read as numbers (a row times a column is a dot product).
    defined: dict[str, Callable[..., sp.Basic]] = field(default_factory=dict)
    dot_products: bool = False

    def known(self) -> tuple[str, ...]:
        """The names that stand for a value (not functions)."""
        return (*self.scalars, *self.matrices, *CONSTANTS)

    def names(self) -> list[str]:
        return sorted(
            [*self.scalars, *self.matrices, *CONSTANTS, *FUNCTIONS, *self.defined]
            + (["softmax"] if self.softmax else [])
        )


@dataclass(frozen=True)
class Source:
    """The answer rewritten as Python syntax, and for each of its characters the student's own offset."""

    text: str
    origin: tuple[int, ...]
    typed: str

    def quote(self, start: int, end: int) -> str:
        """What the student typed for ``text[start:end]``."""
        if not self.origin or start >= len(self.origin):
            return self.typed.strip()
        first, last = self.origin[start], self.origin[max(start, min(end, len(self.origin)) - 1)]
        return self.typed[first : last + 1].strip()


def normalise(text: str) -> str:
    """Map the spellings the SPEC allows onto Python syntax (``^T``, ``^``, implicit products)."""
    return rewrite(text).text


def rewrite(typed: str, callables: tuple[str, ...] = (), known: tuple[str, ...] = ()) -> Source:
    """``typed`` as Python syntax: ``^T`` as ``.T``, then ``^`` as ``**``, then a ``*`` for each product
    written by a space or by juxtaposition (``2 pi``, ``2i``, ``P A P^T``, ``sin(x)cos(x)``), and a
    run of ``known`` names that splits one way only (``PAP^T``: ``P*A*P.T``) written out."""
    chars: list[str] = []
    origin: list[int] = []

    def put(piece: str, at: int) -> None:
        chars.extend(piece)
        origin.extend([at] * len(piece))

    pieces: list[tuple[str, int]] = []
    for at, ch in enumerate(typed):
        pieces.append((_UNICODE.get(ch, ch), at))
    flat = "".join(p for p, _ in pieces)
    flat_origin = [at for p, at in pieces for _ in p]
    flat, flat_origin = _substitute(flat, flat_origin, _CARET_T, ".T")
    flat, flat_origin = _substitute(flat, flat_origin, re.compile(r"\^"), "**")
    previous = ""  # kind of the last token that was not a space: num, name, call, close, or other
    for match in _TOKEN.finditer(flat):
        kind, piece, at = match.lastgroup, match.group(), match.start()
        if kind == "space":
            put(piece, flat_origin[at])
            continue
        opens = kind == "other" and piece == "("
        if previous in ("num", "name", "close") and (kind in ("num", "name") or opens):
            if not (kind == "num" and previous == "num"):  # "2 3" stays an error, not 6
                put("*", flat_origin[at])
        ways = (
            splits(piece, known)
            if kind == "name"
            and piece not in known
            and piece not in callables
            and piece not in FUNCTIONS
            and piece not in CALLABLE
            and not "".join(chars).rstrip().endswith(".")
            else []
        )
        if len(ways) == 1:
            offset = 0
            for n, part in enumerate(ways[0]):
                put(("*" if n else "") + part, flat_origin[at + offset])
                offset += len(part)
            piece = ways[0][-1]
        else:
            put(piece, flat_origin[at])
        if kind == "name":
            previous = "call" if piece in FUNCTIONS or piece in CALLABLE or piece in callables else "name"
        elif kind == "num":
            previous = "num"
        elif piece == ")":
            previous = "close"
        else:
            previous = "other"
    return Source("".join(chars), tuple(origin), typed)


def splits(name: str, known: tuple[str, ...], limit: int = 2) -> list[list[str]]:
    """The ways ``name`` reads as known names written together (`PAP`: P A P), at most ``limit``."""
    found: list[list[str]] = []

    def walk(rest: str, parts: list[str]) -> None:
        if len(found) >= limit or len(parts) > 12:
            return
        if not rest:
            if len(parts) > 1:
                found.append(parts)
            return
        for n in known:
            if rest.startswith(n):
                walk(rest[len(n) :], [*parts, n])

    walk(name, [])
    return found


def _substitute(text: str, origin: list[int], pattern: re.Pattern, by: str) -> tuple[str, list[int]]:
    out: list[str] = []
    where: list[int] = []
    last = 0
    for match in pattern.finditer(text):
        out.append(text[last : match.start()])
        where.extend(origin[last : match.start()])
        out.append(by)
        where.extend([origin[match.start()]] * len(by))
        last = match.end()
    out.append(text[last:])
    where.extend(origin[last:])
    return "".join(out), where


def parse(text: str, ns: Namespace):
    """The sympy object (expression, Matrix or matrix expression) that ``text`` denotes."""
    if not isinstance(text, str):
        raise Unreadable("an answer is text")
    if len(text) > MAX_LENGTH:
        raise Unreadable(f"the answer is longer than {MAX_LENGTH} characters")
    if not text.strip():
        raise Unreadable("the answer is empty")
    source = rewrite(text, tuple(ns.defined), ns.known())
    try:
        tree = ast.parse(source.text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise Unreadable(f"'{_shorten(text.strip())}' is not a formula I can read ({_syntax_hint(exc)})") from None
    _check_shape(tree)
    try:
        return _Builder(ns, source).build(tree.body)
    except Unreadable:
        raise
    except (TypeError, ValueError, ArithmeticError, AttributeError, RecursionError):
        # sympy rejects ill-formed combinations (a matrix plus a number, mismatched shapes) this way
        raise Unreadable(
            f"in '{_shorten(text.strip())}' the parts do not combine (a matrix with a number, "
            "or matrices whose shapes do not fit)"
        ) from None


def _syntax_hint(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        return "write * between factors, ** or ^ for powers, brackets must match"
    return "it is nested too deeply"


def _check_shape(tree: ast.AST) -> None:
    """Bound the tree's depth and size before anything is built from it (iteratively: no recursion)."""
    stack = [(tree, 0)]
    count = 0
    while stack:
        node, depth = stack.pop()
        count += 1
        if depth > MAX_DEPTH:
            raise Unreadable("the answer is nested too deeply")
        if count > MAX_NODES:
            raise Unreadable("the answer is too long")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


class _Builder:
    """Translate a checked ``ast`` tree into sympy, one whitelisted node type at a time."""

    def __init__(self, ns: Namespace, source: Source):
        self.ns = ns
        self.source = source
        # ast counts columns in UTF-8 bytes from the stripped text; quotes count characters
        self.offset = len(source.text) - len(source.text.lstrip())
        self.lines = source.text.strip().split("\n")

    def typed(self, node: ast.AST) -> str:
        """The student's own text for ``node``."""
        try:
            # a node without a position (AttributeError) is described instead
            start = self._char(node.lineno, node.col_offset)  # type: ignore[attr-defined]
            end = self._char(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        except (AttributeError, TypeError, IndexError):
            return _describe(node)
        return _shorten(self.source.quote(self.offset + start, self.offset + end))

    def _char(self, line: int, byte: int) -> int:
        before = sum(len(text) + 1 for text in self.lines[: line - 1])
        return before + len(self.lines[line - 1].encode()[:byte].decode(errors="ignore"))

    def build(self, node: ast.AST):
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise Unreadable(f"'{self.typed(node)}' is not allowed in an answer")
        return method(node)

    def _Constant(self, node: ast.Constant):
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise Unreadable(f"'{self.typed(node)}' is not a number I accept")
        if isinstance(value, int):
            return sp.Integer(value)  # its length is bounded by the answer's (MAX_LENGTH)
        # The decimal as typed, exactly (0.5 and 1/2 are then the same expression), read from its
        # digits rather than from the float, which rounds 1e-500 to 0 and 1e400 to inf.
        digits = ast.get_source_segment("\n".join(self.lines), node) or repr(value)
        return sp.Rational(_bounded_decimal(digits))

    def _Name(self, node: ast.Name):
        name = node.id
        for table in (self.ns.scalars, self.ns.matrices, CONSTANTS):
            if name in table:
                return table[name]
        if name in FUNCTIONS or name == "softmax" or name in self.ns.defined:
            raise Unreadable(f"'{name}' is a function: write {name}(...)")
        ways = splits(name, self.ns.known())
        hint = f" (write a space between factors: {' or '.join(' '.join(s) for s in ways)})" if ways else ""
        allowed = ", ".join(self.ns.names())
        raise Unreadable(f"unknown name '{name}'{hint}; this question knows: {allowed}")

    def _UnaryOp(self, node: ast.UnaryOp):
        operand = self.build(node.operand)
        if isinstance(node.op, ast.USub):
            return -operand
        if isinstance(node.op, ast.UAdd):
            return operand
        raise Unreadable(f"the operator in '{self.typed(node)}' is not allowed")

    def _BinOp(self, node: ast.BinOp):
        left, right = self.build(node.left), self.build(node.right)
        op = node.op
        if isinstance(op, (ast.Add, ast.Sub)):
            if _is_matrix(left) and _is_matrix(right) and left.shape != right.shape:
                raise Unreadable(
                    f"the sum of {_show(left)} ({_dims(left)}) and {_show(right)} ({_dims(right)}) is not defined"
                )
            return left + right if isinstance(op, ast.Add) else left - right
        if isinstance(op, (ast.Mult, ast.MatMult)):
            return self._product(left, right, node)
        if isinstance(op, ast.Div):
            if _is_matrix(right):
                raise Unreadable("dividing by a matrix is not defined")
            return left / right
        if isinstance(op, ast.Pow):
            return self._power(left, right)
        raise Unreadable(f"the operator in '{self.typed(node)}' is not allowed")

    def _product(self, left, right, node: ast.AST):
        if _is_matrix(left) and _is_matrix(right):
            # sizes are numbers or the proof's named dimensions: unequal names never fit
            if left.shape[1] != right.shape[0] and isinstance(left, sp.MatrixBase):
                raise Unreadable(f"a {_dims(left)} matrix cannot multiply a {_dims(right)} matrix")
            if left.shape[1] != right.shape[0]:
                raise Unreadable(
                    f"the product {_show(left)} {_show(right)} is not defined: {_show(left)} is "
                    f"{_dims(left)} and {_show(right)} is {_dims(right)}"
                )
            if _symbolic(left, right):
                return sp.MatMul(left, right).doit(deep=False)
            product = left * right
            return product[0, 0] if self.ns.dot_products and product.shape == (1, 1) else product
        return left * right

    def _power(self, base, exponent):
        if _is_matrix(exponent):
            raise Unreadable("a matrix cannot be an exponent")
        if _is_matrix(base):
            return self._matrix_power(base, exponent)
        if exponent.is_Number:
            size = abs(float(exponent))
            if base.is_Number and base != 0:
                digits = size * abs(math.log10(abs(complex(base)) or 1.0))
                if digits > MAX_RESULT_DIGITS:
                    raise Unreadable("a power in the answer is too large")
            elif size > MAX_SYMBOLIC_EXPONENT:
                raise Unreadable("an exponent in the answer is too large")
        result = base**exponent
        # sympy folds (x**a)**b into x**(a*b); bound what that produced too
        if isinstance(result, sp.Pow) and not result.base.is_Number and result.exp.is_Number:
            if abs(float(result.exp)) > MAX_SYMBOLIC_EXPONENT:
                raise Unreadable("an exponent in the answer is too large")
        return result

    def _matrix_power(self, base, exponent):
        """``P^2`` is ``P*P`` (SPEC: ``^`` raises to a power): a whole power >= 1 of a square matrix."""
        if not (exponent.is_Integer and 1 <= exponent <= MAX_MATRIX_POWER):
            raise Unreadable(f"a matrix can be raised only to a whole power from 1 to {MAX_MATRIX_POWER}")
        if base.shape[0] != base.shape[1]:
            raise Unreadable("only a square matrix can be raised to a power")
        return sp.MatMul(*[base] * int(exponent)).doit() if exponent > 1 else base

    def _Call(self, node: ast.Call):
        if not isinstance(node.func, ast.Name):
            raise Unreadable(f"'{self.typed(node.func)}' cannot be called")
        name = node.func.id
        if name in self.ns.defined and not node.keywords:
            return self.ns.defined[name](*[self.build(a) for a in node.args])
        if node.keywords or len(node.args) != 1 or isinstance(node.args[0], ast.Starred):
            raise Unreadable(f"{name}(...) takes exactly one argument")
        if name == "softmax" and self.ns.softmax:
            arg = self.build(node.args[0])
            if not isinstance(arg, MatrixExpr):
                raise Unreadable("softmax(...) applies to a matrix expression")
            return Softmax(arg)
        if name not in FUNCTIONS:
            raise Unreadable(f"unknown function '{name}'; known: {', '.join(FUNCTIONS)}")
        arg = self.build(node.args[0])
        if _is_matrix(arg):
            raise Unreadable(f"{name}(...) applies to a number, not a matrix")
        return FUNCTIONS[name](arg)

    def _List(self, node: ast.List):
        rows = node.elts
        if not rows or len(rows) > MAX_MATRIX_SIDE:
            raise Unreadable(f"a matrix has 1 to {MAX_MATRIX_SIDE} rows")
        lists = [r for r in rows if isinstance(r, ast.List)]
        if len(lists) == len(rows):
            built = [[self._entry(e) for e in r.elts] for r in lists]
        elif not any(isinstance(r, ast.List) for r in rows):
            built = [[self._entry(e)] for e in rows]  # [a, b] is a column vector
        else:
            raise Unreadable("mix of numbers and rows in a matrix")
        widths = {len(r) for r in built}
        if len(widths) != 1 or not 1 <= widths.pop() <= MAX_MATRIX_SIDE:
            raise Unreadable("the rows of a matrix must have the same length")
        return sp.ImmutableMatrix(built)

    def _entry(self, node: ast.AST):
        value = self.build(node)
        if _is_matrix(value):
            raise Unreadable("matrices nest at most two levels: [[a, b], [c, d]]")
        return value

    def _Attribute(self, node: ast.Attribute):
        if node.attr != "T":
            raise Unreadable(f"'.{node.attr}' is not allowed; only .T (transpose)")
        value = self.build(node.value)
        if not _is_matrix(value):
            raise Unreadable(".T transposes a matrix, not a number")
        return value.T


def _bounded_decimal(digits: str) -> str:
    """``digits`` (a decimal literal) once its exact value is known to fit in MAX_RESULT_DIGITS digits;
    checked on the text, before 1e99999999 could be built as a Rational."""
    match = _DECIMAL.fullmatch(digits)
    if match is None:
        raise Unreadable(f"'{_shorten(digits)}' is not a number I accept")
    if abs(int(match["exponent"] or 0)) > MAX_RESULT_DIGITS:  # the mantissa is bounded by MAX_LENGTH
        raise Unreadable(f"a number in the answer has more than {MAX_RESULT_DIGITS} digits")
    return digits


def _is_matrix(obj) -> bool:
    return isinstance(obj, (MatrixExpr, sp.MatrixBase))


def _symbolic(*objs) -> bool:
    """Any matrix symbol or expression of them (an explicit matrix is a MatrixExpr to sympy, too)."""
    return any(isinstance(o, MatrixExpr) and not isinstance(o, sp.MatrixBase) for o in objs)


def _show(m) -> str:
    """A matrix expression as the notes write it (``P Q P^T``)."""
    return _shorten(str(m).replace(".T", "^T").replace("*", " "))


def _dims(m) -> str:
    """``2x3``, or ``n x d_k`` for the proof's named sizes."""
    rows, cols = (str(d).removeprefix("dim_") for d in m.shape)
    return f"{rows}x{cols}" if rows.isdigit() and cols.isdigit() else f"{rows} x {cols}"


def _shorten(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def _describe(node: ast.AST) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # noqa: BLE001 - unparse of an odd tree must not turn a clear refusal into a crash
        text = type(node).__name__
    return text if len(text) <= 40 else text[:37] + "..."
