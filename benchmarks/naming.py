"""How many one-bug submissions get their mistake named: a ``looks like <mistake>:`` line in the
feedback of the function that has the bug. A measurement, not a test (``test_bug_corpus.py`` checks
each fixture's ``NAMED``).

    PYTHONPATH=src:tests python benchmarks/naming.py [BUG_FILE ...]

Each file is a bug overlay as in ``tests/fixtures/bugs/`` (``<bug>_loses_<function>.py``), composed
with the correct base and graded in-process; without arguments, the whole corpus. Prints one line
per file (``named`` or ``-``, the score on its function, the mistakes named) and the total.
"""

from __future__ import annotations

import sys
from pathlib import Path

from attnlab import paths, testfiles
from attnlab.grade import messages
from in_process import grade_env

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
BASE = CORPUS / "alternatives" / "vectorised.py"


def named(overlay: Path, test_files: list[testfiles.TestFile]) -> tuple[float, float, set[str]]:
    """The score on the overlay's function and the mistakes its feedback names."""
    target = overlay.stem.split("_loses_")[1]
    env: dict = {}
    source = f"{BASE.read_text(encoding='utf-8')}\n\n{overlay.read_text(encoding='utf-8')}"
    exec(compile(source, str(overlay), "exec"), env)
    score, possible, failures = grade_env(env, [tf for tf in test_files if tf.name == target])[target]
    return score, possible, {label for m in failures if (label := messages.misconception(m))}


def main(argv: list[str]) -> None:
    files = [Path(a) for a in argv] or sorted((CORPUS / "bugs").glob("*_loses_*.py"))
    test_files = testfiles.load_dir(paths.tests_dir())
    count = 0
    for path in files:
        score, possible, labels = named(path, test_files)
        count += bool(labels)
        print(f"{'named' if labels else '-':5} {score:g}/{possible:g} {path.stem}: {'; '.join(sorted(labels))}")
    print(f"named {count} of {len(files)}")


if __name__ == "__main__":
    main(sys.argv[1:])
