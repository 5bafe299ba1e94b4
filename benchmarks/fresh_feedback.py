"""What the grader tells students about mistakes it has never seen: grades the fresh fixtures and
writes one report to read, not a pass/fail number.

    .venv/bin/python benchmarks/fresh_feedback.py --out DIR [--folder tests/fixtures/fresh]

Runs ``attnlab grade FIXTURES --out DIR/results --force`` (forced, so a rerun after a change of
the grader regrades everything), then writes ``DIR/review.md``: per submission, the mistake as its
``MANIFEST.yaml`` states it, the points lost per function and the feedback lines of every function
that lost points; and the counts: mistakes caught (their function lost points), collateral (points
lost in a function the manifest does not name) and valid alternatives short of full marks. Judging
the feedback (named, described, vague, misleading) is a human's job: see ``JUDGED-*.md`` there.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from attnlab.grade.report import folder_name

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Graded:
    """One submission's outcome: (score, possible) and failing test lines per function."""

    points: dict[str, tuple[float, float]]
    failures: dict[str, list[str]]

    def lost(self) -> dict[str, float]:
        return {q: possible - score for q, (score, possible) in self.points.items() if score < possible}


def grade(*, fixtures: Path, results: Path) -> None:
    attnlab = Path(sys.executable).with_name("attnlab")
    cmd = [str(attnlab), "grade", str(fixtures), "--out", str(results), "--force"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    # 3 means graded, with something for a human to look at (listed in grades.csv): still a result
    if done.returncode not in (0, 3):
        sys.exit(f"attnlab grade failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")


def read_results(*, path: Path) -> Graded:
    points: dict[str, tuple[float, float]] = {}
    failures: dict[str, list[str]] = {}
    for test in json.loads(path.read_text(encoding="utf-8"))["tests"]:
        question = test.get("extra_data", {}).get("question") or test["name"].rsplit(" - ", 1)[0]
        score, possible = points.get(question, (0.0, 0.0))
        points[question] = (score + test["score"], possible + test["max_score"])
        if test["score"] < test["max_score"]:
            failures.setdefault(question, []).append(f"{test['name']} ({test['visibility']}): {test['output']}")
    return Graded(points=points, failures=failures)


def section(*, name: str, entry: dict, graded: Graded | None) -> tuple[list[str], dict[str, bool]]:
    """The report's lines for one submission and its flags (caught, collateral, short)."""
    lines = [f"### {name}", "", f"- kind: {entry['kind']}; mistake: {entry['mistake']}"]
    if entry.get("hard_to_describe"):
        lines.append("- the author expected this one to be hard to describe")
    if graded is None:
        return [*lines, "- NOT GRADED (no results.json)", ""], {"missing": True}
    lost = graded.lost()
    expected = set(entry["functions"])
    flags = {
        "caught": bool(expected) and expected <= lost.keys(),
        "partly": bool(expected & lost.keys()) and not expected <= lost.keys(),
        "collateral": bool(lost.keys() - expected),
        "short": entry["kind"] == "alternative" and bool(lost),
    }
    lost_text = ", ".join(f"{q} -{v:g}" for q, v in sorted(lost.items())) or "nothing"
    lines.append(f"- points lost: {lost_text}")
    for question in sorted(lost):
        marker = "" if question in expected else " (COLLATERAL)"
        lines.append(f"- feedback on `{question}`{marker}:")
        lines += [f"    - {line}" for line in graded.failures.get(question, [])]
    return [*lines, ""], flags


def write_review(*, fixtures: Path, results: Path, out: Path) -> Path:
    manifest = yaml.safe_load((fixtures / "MANIFEST.yaml").read_text(encoding="utf-8"))
    body: list[str] = []
    totals = {"caught": 0, "partly": 0, "collateral": 0, "short": 0, "missing": 0}
    uncaught: list[str] = []
    mistaken = 0
    for name, entry in manifest.items():
        # the grader names the folder as it names any student (a hashed slug where the name has capitals)
        path = results / "submissions" / folder_name(name) / "results.json"
        graded = read_results(path=path) if path.exists() else None
        lines, flags = section(name=name, entry=entry, graded=graded)
        body += lines
        for key, value in flags.items():
            totals[key] += value
        if entry["kind"] != "alternative":
            mistaken += 1
            if graded is not None and not flags["caught"] and not flags["partly"]:
                uncaught.append(name)
    alternatives = len(manifest) - mistaken
    head = [
        "# Fresh mistakes: what the grader said",
        "",
        f"Fixtures: `{fixtures.relative_to(ROOT) if fixtures.is_relative_to(ROOT) else fixtures}`; results: `{results}`.",
        "",
        f"- mistaken submissions: {mistaken}; caught (every mistaken function lost points): {totals['caught']}; "
        f"partly caught (some of them): {totals['partly']}; uncaught: {len(uncaught)}",
        f"- collateral (points lost in a function without a mistake, alternatives included): {totals['collateral']}",
        f"- valid alternatives: {alternatives}; not at full marks: {totals['short']}",
        f"- not graded: {totals['missing']}",
        f"- uncaught: {', '.join(uncaught) or 'none'}",
        "",
    ]
    review = out / "review.md"
    review.write_text("\n".join(head + body), encoding="utf-8")
    return review


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    # --folder names any set of fresh fixtures (tests/fixtures/fresh2 ...); --fixtures is its older name
    parser.add_argument(
        "--folder", "--fixtures", dest="fixtures", type=Path, default=ROOT / "tests" / "fixtures" / "fresh"
    )
    args = parser.parse_args(argv)
    out, fixtures = args.out.resolve(), args.fixtures.resolve()
    out.mkdir(parents=True, exist_ok=True)
    grade(fixtures=fixtures, results=out / "results")
    print(write_review(fixtures=fixtures, results=out / "results", out=out))


if __name__ == "__main__":
    main()
