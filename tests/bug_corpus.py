"""The bug corpus of tests/autograder/test_bug_corpus.py (``BUGS``, its one-bug overlays, and
``compose``, an overlay on its correct base), for the tests elsewhere that grade it whole."""

import importlib.util
from pathlib import Path
from types import ModuleType


def load() -> ModuleType:
    path = Path(__file__).resolve().parent / "autograder" / "test_bug_corpus.py"
    spec = importlib.util.spec_from_file_location("bug_corpus_module", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
