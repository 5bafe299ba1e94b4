"""The student tool: a wheel a student installs to check their work, holding no course secrets.

``attnlab_student-<version>-py3-none-any.whl`` installs the ``attnlab`` code (the tool itself holds
no course content) with a command ``attnlab`` that offers ``check`` and ``quiz`` only, and the
student copy of the course's quiz bank (practice items with keys, graded items without, from
``quiz.bank.student_copy``), where the quiz checker looks first. The public tests travel in each
assignment's student zip, next to the notebook, where ``attnlab check`` finds them. The wheel is
written with ``zipfile`` (PEP 427 layout), byte for byte the same for the same sources.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import re
import tempfile
import zipfile
from pathlib import Path

from . import __version__, atomic, paths

NAME = "attnlab_student"
# What the student commands import, and for the notebook matplotlib (its plots) and ipykernel (the
# kernel that runs it). Its grader.check falls back to the kit's own checker (attnlab.notebook)
# without otter-grader, whose ~50 further packages (pandas, nbconvert, ...) `[otter]` adds for those who
# want otter's own grader.check, as Gradescope and `otter run` have it.
DEPENDENCIES = ("numpy", "sympy", "pyyaml", "click", "nbformat", "matplotlib", "ipykernel")
EXTRAS = {"otter": ("otter-grader",)}
_PACKAGE = Path(__file__).resolve().parent
_DATE = (1980, 1, 1, 0, 0, 0)  # fixed timestamps: the same sources give the same wheel


def wheel_name() -> str:
    return f"{NAME}-{__version__}-py3-none-any.whl"


def _requirements(names: tuple[str, ...]) -> list[str]:
    """``names`` with the version ranges the tool itself declares (extras dropped)."""
    declared = {}
    try:
        requires = importlib.metadata.requires("attnlab") or []
    except importlib.metadata.PackageNotFoundError:  # run from a source tree without installing
        requires = []
    for req in requires:
        if "extra ==" in req:
            continue
        named = re.match(r"[A-Za-z0-9_.-]+", req)
        if named is None:
            continue
        name = named.group(0)
        declared[name.lower()] = re.sub(r"\[[^\]]*\]", "", req)
    return [declared.get(name, name) for name in names]


def _metadata() -> dict[str, str]:
    info = f"{NAME}-{__version__}.dist-info"
    meta = [
        "Metadata-Version: 2.1",
        "Name: attnlab-student",
        f"Version: {__version__}",
        "Summary: Attention Lab for students: attnlab check (public tests) and attnlab quiz (practice)",
        "Requires-Python: >=3.10",
        *(f"Requires-Dist: {r}" for r in _requirements(DEPENDENCIES)),
    ]
    for extra, names in EXTRAS.items():
        meta.append(f"Provides-Extra: {extra}")
        meta += [f'Requires-Dist: {r}; extra == "{extra}"' for r in _requirements(names)]
    return {
        f"{info}/METADATA": "\n".join(meta) + "\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: attnlab build\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{info}/entry_points.txt": "[console_scripts]\nattnlab = attnlab.cli:student_program\n",
    }


def files(*, bank_dir: Path) -> dict[str, bytes]:
    """Every file of the wheel but its RECORD, by name in the wheel."""
    from .quiz import bank

    out = {
        f"attnlab/{p.relative_to(_PACKAGE).as_posix()}": p.read_bytes()
        for p in sorted(_PACKAGE.rglob("*.py"))
        if not {"kit", "__pycache__"} & set(p.relative_to(_PACKAGE).parts)
    }
    with tempfile.TemporaryDirectory() as tmp:
        for path in bank.student_copy(bank_dir=bank_dir, out_dir=Path(tmp)):
            # where quiz.bank.default_folder() looks first
            out[f"attnlab/quiz/quiz/{path.name}"] = path.read_bytes()
    out.update({name: text.encode() for name, text in _metadata().items()})
    return out


def _record(contents: dict[str, bytes]) -> str:
    lines = []
    for name, data in contents.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append(f"{name},sha256={digest},{len(data)}")
    lines.append(f"{NAME}-{__version__}.dist-info/RECORD,,")
    return "\n".join(lines) + "\n"


def build_wheel(*, out: Path, bank_dir: Path | None = None) -> Path:
    """Write the student tool wheel into ``out`` from the course's quiz bank; returns its path."""
    contents = files(bank_dir=Path(bank_dir) if bank_dir is not None else paths.quiz_dir())
    contents[f"{NAME}-{__version__}.dist-info/RECORD"] = _record(contents).encode()
    target = Path(out) / wheel_name()
    # a failed build leaves the previous wheel
    with atomic.replacing(target) as tmp, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in contents.items():
            info = zipfile.ZipInfo(name, date_time=_DATE)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return target
