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
