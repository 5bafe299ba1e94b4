"""The folders instructors download, built from each format's documented structure.

- Gradescope "Export submissions": a folder (zipped as ``assignment_<id>_export/``) holding
  ``submission_metadata.yml`` and one ``submission_<id>/`` folder per submission. The YAML maps each
  folder name to a record whose ``:submitters:`` list holds ``:name:``, ``:sid:`` and ``:email:``
  (Ruby symbol keys), beside ``:created_at:``, ``:score:`` and ``:history:``.
- Canvas "Download Submissions": one file per attachment, named
  ``<sortable name, lowercased, no punctuation>_[LATE_]<user id>_<attachment id>_<original name>``.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from known_outcomes import ENGINE

FULL = (ENGINE / "submissions" / "honest_score_full.py").read_text()  # 5 of 5
PARTIAL = (ENGINE / "submissions" / "mutates_input_score_partial.py").read_text()  # 4 of 5

GRADESCOPE_METADATA = """\
submission_1001:
  :submitters:
  - :name: Jane Doe
    :sid: '4001'
    :email: jane@example.edu
  :created_at: 2025-03-01 10:00:00.000000000 -08:00
  :score: 0.0
  :history: []
submission_1002:
  :submitters:
  - :name: Rémi Ångström
    :sid: '4002'
    :email: remi@example.edu
  - :name: Bo Li
    :sid: '4003'
    :email: bo@example.edu
  :created_at: 2025-03-01 11:00:00.000000000 -08:00
  :score: 0.0
  :history: []
"""


def gradescope_export(root: Path) -> Path:
    """Jane (full marks), and a group of two (partial) who zipped their folder."""
    folder = root / "assignment_777_export"
    (folder / "submission_1001").mkdir(parents=True)
    (folder / "submission_1002").mkdir()
    (folder / "submission_metadata.yml").write_text(GRADESCOPE_METADATA, encoding="utf-8")
    (folder / "submission_1001" / "pe_attention.py").write_text(FULL)
    with zipfile.ZipFile(folder / "submission_1002" / "work.zip", "w") as zf:
        zf.writestr("pe_attention/pe_attention.py", PARTIAL)
        zf.writestr("pe_attention/notes.txt", "we worked together")
    return folder


def canvas_download(root: Path) -> Path:
    """doejane (user 4001, full), smithbob (user 4002, late, partial, with a notes file), and
    leeann (user 4003) who uploaded a notebook that is not JSON."""
    folder = root / "canvas"
    folder.mkdir()
    (folder / "doejane_4001_5550001_pe_attention.py").write_text(FULL)
    (folder / "smithbob_LATE_4002_5550002_pe_attention-1.py").write_text(PARTIAL)
    (folder / "smithbob_LATE_4002_5550003_readme.txt").write_text("see my code")
    (folder / "leeann_4003_5550004_pe_attention.ipynb").write_text("this is not json")
    return folder


# (pe_attention is worth 5 here: the engine's own test assignment, which the batch tests grade with)
CANVAS_ROSTER = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Lab 1 (111),pe_attention (12345),Current Score\n"
    "    Points Possible,,,,,10,5,\n"
    '"Doe, Jane",4001,S1,jdoe,A,9,,90\n'
    '"Smith, Bob",4002,S2,bsmith,A,8,,80\n'
    '"Lee, Ann",4003,S3,alee,B,7,,70\n'
    '"Kim, Noh",4004,S4,nkim,B,6,,60\n'
)


def moodle_download(root: Path) -> Path:
    """Moodle's "Download all submissions" with "Download submissions in folders": Jane (participant
    123456, full marks), Rémi (123457, partial, beside an online text), and Bo (123458) who uploaded
    only a PDF."""
    folder = root / "moodle"
    for name, files in {
        "Jane Doe_123456_assignsubmission_file_": {"pe_attention.py": FULL},
        "Rémi Ångström_123457_assignsubmission_file_": {"attention.py": PARTIAL},
        "Rémi Ångström_123457_assignsubmission_onlinetext_": {"onlinetext.html": "<p>see the file</p>"},
        "Bo Li_123458_assignsubmission_file_": {"report.pdf": "%PDF-1.7"},
    }.items():
        (folder / name).mkdir(parents=True)
        for file, text in files.items():
            (folder / name / file).write_text(text, encoding="utf-8")
    return folder
