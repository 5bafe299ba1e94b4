"""Gradescope's "Export submissions": ``submission_<id>/`` folders beside ``submission_metadata.yml``,
whose ``:submitters:`` (``:name:``, ``:email:``, ``:sid:``) say who wrote each one. The SID is the
roster's Student ID, the institution's student number.

(The autograder that runs on Gradescope itself is ``attnlab.gradescope``.)
"""

from __future__ import annotations

from .identity import Student

METADATA = "submission_metadata.yml"


def submitters(data: bytes, shown: str) -> dict[str, tuple[Student, ...]]:
    """Folder name -> submitters, from the bytes of an export's metadata (``shown``: where it is,
    for the message); ``ValueError`` when it cannot be read."""
    import yaml

    try:
        parsed = yaml.safe_load(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, yaml.YAMLError, RecursionError) as e:
        raise ValueError(f"{shown} cannot be read: {type(e).__name__}: {str(e)[:200]}") from None
    if not isinstance(parsed, dict):
        raise ValueError(f"{shown} is not a Gradescope export's metadata (no submissions in it)")
    out: dict[str, tuple[Student, ...]] = {}
    for folder, record in parsed.items():
        people = record.get(":submitters") if isinstance(record, dict) else None
        if not isinstance(people, list):
            continue
        out[str(folder)] = tuple(
            Student(
                name=_text(s.get(":name")),
                email=_text(s.get(":email")),
                id=_text(s.get(":sid")),
                number=_text(s.get(":sid")),
            )
            for s in people
            if isinstance(s, dict)
        )
    return out


def _text(value: object) -> str:
    return "" if value is None else str(value).strip()
