"""The bank's definitions (``quiz/definitions.yaml``): the scalars and their domains, the functions
of the notes (PE, omega, R), the proof's matrices, and the 2-D illustration with its variants.

Everything specific to this quiz lives in that file; this module only reads it. Its texts are the
instructor's, parsed by the same safe parser as answers (with functions of several arguments).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import sympy as sp
import yaml

from .bank import DEFINITIONS_FILE, BankError, default_folder
from .domains import DOMAINS, make_symbol
from .parse import Namespace, Unreadable, parse


@dataclass(frozen=True, eq=False)
class Illustration:
    inputs: dict[str, Any]  # name -> nested list of numbers as written
    quantities: dict[str, str]  # name -> expression over the inputs and earlier quantities
    variants: dict[str, dict[str, Any]]  # input name -> how a student's value is drawn
    nontrivial: dict[str, int]  # quantity -> decimals at which it must keep two significant digits
    # quantity -> known wrong answers (other quantities) that must stay apart from it at its
    # nontrivial decimals, so that the mistake never earns the point
    distinct: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)  # identity: cached per loaded file
class Definitions:
    source: Path
    required: tuple[str, ...] = ()
    symbols: dict[str, str] = field(default_factory=dict)  # name -> domain
    functions: dict[str, dict[str, Any]] = field(default_factory=dict)
    shapes: dict[str, tuple[str, str]] = field(default_factory=dict)
    permutation: str = ""
    matrix_scalars: tuple[str, ...] = ()
    define: dict[str, str] = field(default_factory=dict)
    illustration: Illustration | None = None

    def symbol(self, name: str) -> sp.Symbol:
        return make_symbol(name, self.symbols[name]) if name in self.symbols else sp.Symbol(name, real=True)

    def namespace(self, extra: dict[str, Any] | None = None) -> Namespace:
        """Scalars of the definitions (and ``extra``) with the notes' functions callable."""
        scalars = {name: self.symbol(name) for name in self.symbols}
        scalars.update(extra or {})
        return Namespace(scalars=scalars, defined=self._callables(), dot_products=True)

    def _callables(self) -> dict[str, Callable[..., sp.Basic]]:
        return {name: _function(self, name, spec) for name, spec in self.functions.items()}


def load(folder: Path | None = None) -> Definitions:
    """The definitions next to the bank in ``folder`` (default: the bank's default folder, which
    follows ``--course``), read again when the folder or the file changes."""
    path = (Path(folder or default_folder()) / DEFINITIONS_FILE).resolve()
    try:
        stamp = path.stat().st_mtime_ns, path.stat().st_size
    except OSError:
        stamp = None
    return _load(path, stamp)


@lru_cache(maxsize=8)
def _load(path: Path, stamp: tuple[int, int] | None) -> Definitions:
    if stamp is None or not path.is_file():
        return Definitions(source=path)
    text = path.read_text(encoding="utf-8")
    try:
        data = yaml.safe_load(text) or {}
        root = yaml.compose(text)
    except yaml.YAMLError as err:
        raise BankError(f"{path.name}: not valid YAML ({err})") from None
    if not isinstance(data, dict):
        raise BankError(f"{path.name}: a mapping of {', '.join(SCHEMA)}")
    _check_schema(path.name, root, SCHEMA)
    for name, domain in (data.get("symbols") or {}).items():
        if domain not in DOMAINS:
            raise BankError(f"{path.name}: symbol {name}: unknown domain {domain!r}")
    for name, spec in (data.get("functions") or {}).items():
        if not isinstance(spec, dict) or "args" not in spec or ("is" in spec) == ("cases" in spec):
            raise BankError(f"{path.name}: function {name} needs 'args' and one of 'is' or 'cases'")
    matrices = data.get("matrices") or {}
    ill = data.get("illustration")
    if ill:
        _check_quantity_names(path.name, ill)
    return Definitions(
        source=path,
        required=tuple(data.get("required") or ()),
        symbols=dict(data.get("symbols") or {}),
        functions=dict(data.get("functions") or {}),
        shapes={k: tuple(v) for k, v in (matrices.get("shapes") or {}).items()},
        permutation=str(matrices.get("permutation", "")),
        matrix_scalars=tuple(matrices.get("scalars") or ()),
        define={str(k): str(v) for k, v in (matrices.get("define") or {}).items()},
        illustration=None
        if not ill
        else Illustration(
            inputs=dict(ill["inputs"]),
            quantities={str(k): str(v) for k, v in ill["quantities"].items()},
            variants=dict(ill.get("variants") or {}),
            nontrivial={str(k): int(v) for k, v in (ill.get("nontrivial") or {}).items()},
            distinct={str(k): tuple(str(x) for x in v) for k, v in (ill.get("distinct") or {}).items()},
        ),
    )


def _check_quantity_names(file: str, ill: dict[str, Any]) -> None:
    """Refuse a name under ``nontrivial`` or ``distinct`` that is no quantity of the illustration:
    a misspelt one would otherwise guard nothing, or stop every numeric item with a bare KeyError."""
    known = set(ill.get("quantities") or {})
    named = [*(ill.get("nontrivial") or {}), *(ill.get("distinct") or {})]
    named += [other for others in (ill.get("distinct") or {}).values() for other in others or ()]
    unknown = sorted({str(n) for n in named} - known)
    if unknown:
        raise BankError(
            f"{file}: illustration: {', '.join(unknown)} named under nontrivial or distinct, but not among "
            f"its quantities ({', '.join(sorted(known))})"
        )


# The fields of definitions.yaml; None: names of the author's choosing (symbols, functions, ...).
SCHEMA: dict[str, Any] = {
    "required": None,
    "symbols": None,
    "functions": {"*": {"args": None, "is": None, "cases": None}},
    "matrices": {"shapes": None, "permutation": None, "scalars": None, "define": None},
    "illustration": {"inputs": None, "quantities": None, "variants": None, "nontrivial": None, "distinct": None},
}


def _check_schema(file: str, node: Any, schema: dict[str, Any] | None) -> None:
    """Refuse a field the schema does not know, naming the file and the line."""
    if schema is None or not isinstance(node, yaml.MappingNode):
        return
    for key, value in node.value:
        inner = schema.get(key.value, schema.get("*", KeyError))
        if inner is KeyError:
            raise BankError(
                f"{file}, line {key.start_mark.line + 1}: unknown field '{key.value}' "
                f"(known here: {', '.join(k for k in schema if k != '*')})"
            )
        _check_schema(file, value, inner)


def _function(defs: Definitions, name: str, spec: dict[str, Any]) -> Callable[..., sp.Basic]:
    """A function of the definitions: one body, or cases chosen by the form of the last argument."""
    params = [defs.symbol(a) for a in spec["args"]]
    scalars = {p.name: p for p in params}
    inner = Namespace(scalars={**{n: defs.symbol(n) for n in defs.symbols}, **scalars})
    if "is" in spec:
        body = parse(str(spec["is"]), inner)
        cases = [(None, body)]
    else:
        cases = [(parse(str(pattern), inner), parse(str(text), inner)) for pattern, text in spec["cases"].items()]

    def call(*args: sp.Basic) -> sp.Basic:
        if len(args) != len(params):
            raise Unreadable(f"{name} takes {len(params)} arguments")
        for pattern, body in cases:
            mapping = dict(zip(params, args))
            if pattern is not None:
                solved = _solve_pattern(pattern, args[-1], params[-1])
                if solved is None:
                    continue
                mapping = {**dict(zip(params[:-1], args[:-1])), **solved}
            return body.xreplace(mapping)
        raise Unreadable(f"{name}: no case of its definition matches {args[-1]}")

    return call


def _solve_pattern(pattern: sp.Expr, value: sp.Expr, param: sp.Symbol) -> dict | None:
    """The integer value of the pattern's variable for which ``pattern == value`` (e.g. 2*i = 2*i + 1 has none)."""
    variables = sorted(pattern.free_symbols, key=lambda s: s.name)
    if len(variables) != 1:
        return None
    var = variables[0]
    slope = pattern.diff(var)
    if slope == 0 or pattern.diff(var, 2) != 0:
        return None
    solution = sp.expand((value - pattern.xreplace({var: 0})) / slope)
    if solution.is_integer is not True:
        return None
    return {var: solution}


def illustration_values(
    defs: Definitions, inputs: dict[str, Any], rounded: dict[str, int] | None = None, *, halves: str = ROUND_HALF_UP
) -> dict[str, sp.Expr]:
    """Every quantity of the illustration, exactly, for these inputs (names -> sympy numbers);
    a quantity in ``rounded`` is rounded to its decimals before later quantities use it, as a
    student who writes each step down does, a half as ``halves`` says (a Decimal rounding mode)."""
    assert defs.illustration is not None
    known: dict[str, Any] = {name: matrix(value) for name, value in inputs.items()}
    for name, text in defs.illustration.quantities.items():
        known[name] = parse(text, Namespace(scalars=known, dot_products=True))
        if rounded and name in rounded:
            known[name] = round_to(known[name], rounded[name], halves=halves)
    return {name: value for name, value in known.items() if name in defs.illustration.quantities}


def round_to(value: sp.Expr, decimals: int, *, halves: str = ROUND_HALF_UP) -> sp.Rational:
    """``value`` rounded to ``decimals``, exactly; a half goes as ``halves`` says."""
    exact = Decimal(str(sp.N(value, 40)))
    return sp.Rational(str(exact.quantize(Decimal(1).scaleb(-decimals), rounding=halves)))


def matrix(value: Any) -> sp.ImmutableMatrix:
    """A nested list of numbers as an exact matrix (decimals as written: 0.10 is 1/10)."""
    return sp.ImmutableMatrix([[_exact(x) for x in row] for row in value])


def _exact(x: Any) -> sp.Rational:
    if isinstance(x, sp.Basic):
        return x
    return sp.Integer(x) if isinstance(x, int) else sp.Rational(repr(float(x)))
