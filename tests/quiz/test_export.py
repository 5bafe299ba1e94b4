"""Questions about the LMS exports (attnlab.quiz.export)."""

import xml.etree.ElementTree as ET
import zipfile

import pytest

from attnlab.quiz.export import main


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    return main(out=tmp_path_factory.mktemp("exports"))


def test_three_files_with_a_banner(written):
    """Are the text2qti source, the QTI zip and the Moodle XML written, bannered?"""
    txt, qti, moodle = written
    assert "attnlab build" in txt.read_text() and "attnlab build" in moodle.read_text()
    assert "quiz notebook" in txt.read_text()


def test_qti_zip_holds_an_assessment(written):
    """Does the Canvas zip hold a manifest and an assessment with the numeric key?"""
    with zipfile.ZipFile(written[1]) as z:
        names = z.namelist()
        assert "imsmanifest.xml" in names
        body = "".join(z.read(n).decode() for n in names if n.endswith(".xml"))
    assert "21.92" in body and "22.02" in body  # score-12: 21.97 +- 0.05


def test_moodle_xml_carries_only_gradable_types(written):
    """Does the Moodle file parse and hold only choice, numeric and essay questions?"""
    root = ET.parse(written[2]).getroot()
    types = {q.get("type") for q in root.iter("question")}
    assert types <= {"multichoice", "numerical", "essay"} and "numerical" in types
    names = [q.findtext("name/text") for q in root.iter("question")]
    assert not any(n.startswith("pe-dim0:") for n in names)


def test_description_says_what_each_export_leaves_out_and_why(written):
    """Does the Canvas description name the items each export leaves out, why, and the notebook?"""
    description = next(line for line in written[0].read_text().splitlines()
                       if line.startswith("Quiz description:"))
    both, canvas_only = description.split("Left out of the Canvas export only:")
    assert "Canvas and the Moodle" in both and "proof-z" in both and "pe-dim0" in both
    assert "answer checker" in both
    assert "weight-21" in canvas_only and "4 decimals" in canvas_only
    assert "quiz notebook" in canvas_only


def test_canvas_leaves_out_the_finely_toleranced_weight(written):
    """Is weight-21 missing from the Canvas quiz but present in the Moodle file?"""
    assert "Title: A softmax weight" not in written[0].read_text()
    names = [q.findtext("name/text") for q in ET.parse(written[2]).getroot().iter("question")]
    assert any(n.startswith("weight-21:") for n in names)
