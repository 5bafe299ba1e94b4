"""Where the grading tests' fixtures live."""

from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "grade"
ENGINE = FIXTURES / "engine"
