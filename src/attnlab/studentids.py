"""One form of an identifier a person types or an LMS exports (a student number, an email, a login),
used wherever two are compared and wherever a student number seeds the quiz's numbers: ``S1``,
``s1`` and ``"S1 "`` are one student for the roster, ``attnlab upload canvas`` and the quiz alike.

Standard library only: the quiz's Gradescope package ships a copy of this module (see
``attnlab.quiz.notebook.SHARED``).
"""

from __future__ import annotations

import unicodedata


def normal_id(text: str) -> str:
    """``text`` in Unicode's composed form (NFC), without the white space around it, in capitals.
    NFC: the same letters typed on one system and written into a file name on another (macOS
    decomposes ``ë`` into ``e`` and a combining mark) are one id. Capitals rather than a case fold:
    student numbers are mostly written in capitals and digits, so their quiz numbers stay the ones
    they were before ids were normalised."""
    return unicodedata.normalize("NFC", text).strip().upper()
