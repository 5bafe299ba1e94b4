"""Where the grading tests' fixtures live, and what a known-outcome submission's name promises."""

from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "grade"
ENGINE = FIXTURES / "engine"


def expected(name: str) -> str:
    """The outcome a known-outcome submission's name promises: full, partial or zero."""
    for outcome in ("full", "perfect", "partial", "zero"):
        if f"_score_{outcome}" in name:
            return "full" if outcome == "perfect" else outcome
    raise ValueError(f"{name} does not name its outcome")


def outcome(score: float, possible: float) -> str:
    return "full" if score == possible else "zero" if score == 0 else "partial"
