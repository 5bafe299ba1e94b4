"""Questions about the LMS exports (attnlab.quiz.export): do they import cleanly?"""

import html
import re
import xml.etree.ElementTree as ET
import zipfile

import pytest

from attnlab.quiz.bank import load
from attnlab.quiz.export import CARRIED, main, to_html

QTI = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"
MOODLE_TYPES = {"multichoice", "numerical", "essay", "description"}


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    return main(out=tmp_path_factory.mktemp("exports"))


@pytest.fixture(scope="module")
def assessment(written):
    return _assessment(written[1])


def _assessment(qti_zip):
    """The QTI assessment of the Canvas zip, parsed, with the manifest's references checked."""
    with zipfile.ZipFile(qti_zip) as z:
        names = set(z.namelist())
        manifest = ET.fromstring(z.read("imsmanifest.xml"))
        hrefs = {e.get("href") for e in manifest.iter() if e.get("href")}
        assert hrefs and hrefs <= names, "the manifest points at files the zip lacks"
        body = next(n for n in names if n.endswith(".xml") and "meta" not in n and n != "imsmanifest.xml")
        return ET.fromstring(z.read(body))


@pytest.fixture(scope="module")
def moodle(written):
    return ET.parse(written[2]).getroot()


def test_three_files_with_a_banner_and_a_readme_beside_them(written):
    """Are the text2qti source, the QTI zip and the Moodle XML written, bannered, with the
    instructors' README beside them?"""
    txt, qti, moodle, readme = written
    assert "attnlab build" in txt.read_text() and "attnlab build" in moodle.read_text()
    assert readme.parent == txt.parent and "quiz notebook" in readme.read_text()


def test_qti_is_a_well_formed_assessment(assessment):
    """Is the QTI file a questestinterop with one assessment, one item per carried question, each
    with HTML text and response processing, and the numeric key as +- half a unit of 2 decimals?"""
    assert assessment.tag == f"{QTI}questestinterop"
    (test,) = assessment.iter(f"{QTI}assessment")
    items = list(test.iter(f"{QTI}item"))
    carried = [
        i
        for i in load().values()
        if i.type in CARRIED and i.points > 0 and not (i.type == "numeric" and i.decimals > 4)
    ]
    assert [i.get("title") for i in items] == [i.title for i in carried]
    for item in items:
        assert item.find(f"{QTI}presentation/{QTI}material/{QTI}mattext").get("texttype") == "text/html"
        assert item.find(f"{QTI}resprocessing") is not None
    bounds = {e.tag: e.text for e in assessment.iter() if e.tag in (f"{QTI}vargte", f"{QTI}varlte")}
    assert (bounds[f"{QTI}vargte"], bounds[f"{QTI}varlte"]) == ("21.9650", "21.9750")


def test_qti_text_keeps_literal_stars_and_explanations(tmp_path):
    """Does Canvas show `2*pi*10000` (in a practice item: here a bank that scores them) as typed (not
    as emphasis), and each explanation as general feedback?"""
    import shutil

    from attnlab import paths

    bank = shutil.copytree(paths.quiz_dir(), tmp_path / "quiz")
    (bank / "settings.yaml").write_text("practice_scores: true\n")
    assessment = _assessment(main(out=tmp_path / "out", folder=bank)[1])
    texts = " ".join(html.unescape(e.text or "") for e in assessment.iter(f"{QTI}mattext"))
    assert "2*pi*10000" in texts and "<em>pi</em>" not in texts
    general = [f for f in assessment.iter(f"{QTI}itemfeedback") if f.get("ident") == "general_fb"]
    explained = [i for i in load(bank).values() if i.explanation and i.type in CARRIED and i.decimals <= 4]
    assert len(general) == len(explained) > 0


def test_does_canvas_leave_out_the_practice_items_that_score_nothing(assessment, moodle):
    """text2qti refuses 0 points: are practice items (0 by default) left out of Canvas, kept in Moodle?"""
    practice = {i.title for i in load().values() if i.practice and i.type in CARRIED}
    assert practice and not practice & {i.get("title") for i in assessment.iter(f"{QTI}item")}
    grades = {q.findtext("name/text").split(": ", 1)[1]: q.findtext("defaultgrade") for q in moodle.iter("question")}
    assert {grades[t] for t in practice} == {"0"}


def test_moodle_xml_is_well_formed(moodle):
    """Does every Moodle question have a known type, a name, HTML question text, and the parts its type
    needs (answers summing to 100% for choices, a tolerance for numbers, grader info for essays)?"""
    assert moodle.tag == "quiz"
    for q in moodle.iter("question"):
        kind = q.get("type")
        assert kind in MOODLE_TYPES and q.findtext("name/text")
        assert q.find("questiontext").get("format") == "html" and q.findtext("questiontext/text")
        for tag in ("generalfeedback", "answer", "feedback", "graderinfo"):
            assert all(e.get("format") in ("html", "moodle_auto_format") for e in q.iter(tag))
        if kind == "multichoice":
            fractions = [float(a.get("fraction")) for a in q.iter("answer")]
            assert abs(sum(f for f in fractions if f > 0) - 100) < 1e-3
        if kind == "numerical":
            assert float(q.findtext("answer/tolerance")) > 0 and float(q.findtext("answer/text"))
        if kind == "essay":
            assert q.findtext("graderinfo/text")


def test_moodle_math_and_text_survive(moodle):
    """Are $...$ and $$...$$ sent as \\( \\) and \\[ \\] with their backslashes, `*` kept literal, and
    explanations sent as general feedback?"""
    text = " ".join(e.text or "" for e in moodle.iter("text"))
    assert r"\(10000^{2i/d_{model}}\)" in text and "$" not in text
    assert "2*pi*10000" in text and "<em>pi</em>" not in text
    general = {
        q.findtext("name/text").split(":")[0] for q in moodle.iter("question") if q.find("generalfeedback") is not None
    }
    assert general == {i.id for i in load().values() if i.explanation and i.type in CARRIED}


def test_to_html_protects_math_from_markdown():
    """Does Markdown leave math alone (backslashes, underscores, stars) while rendering the text?"""
    out = to_html(r"Is $a_1 * b_2 \\ c$ and $$x^*$$ *really* 2*pi?")
    assert r"\(a_1 * b_2 \\ c\)" in out and r"\[x^*\]" in out and "2*pi" in out


def _left_out():
    """The ids of the items that neither export carries (they need the kit's checker)."""
    return [i.id for i in load().values() if i.type not in CARRIED]


def test_do_the_student_facing_exports_keep_the_instructors_note_to_themselves(written, assessment, moodle):
    """Students see the quiz's description and every Moodle question: does neither name what was
    left out, nor say why?"""
    assert _left_out(), "the check needs items that the exports leave out"
    assert all(q.get("type") != "description" for q in moodle.iter("question"))
    with zipfile.ZipFile(written[1]) as z:
        shown = " ".join(z.read(n).decode() for n in z.namelist())
    moodle_text = " ".join(e.text or "" for e in moodle.iter("text"))
    for text in (shown, moodle_text):
        assert "Left out" not in text and "answer checker" not in text
        assert ", ".join(_left_out()[:2]) not in text


def test_does_the_readme_say_what_each_export_leaves_out_and_why(written):
    """Does the instructors' README name the items each export leaves out, why, and the notebook?"""
    note = written[3].read_text()
    both, canvas_only = note.split("Left out of the Canvas export only:")
    assert "Canvas and the Moodle" in both and all(i in both for i in _left_out())
    assert "answer checker" in both
    assert "weight-21" in canvas_only and "4 decimals" in canvas_only
    assert "quiz notebook" in canvas_only


def test_canvas_leaves_out_the_finely_toleranced_weight(written, moodle):
    """Is weight-21 missing from the Canvas quiz but present in the Moodle file?"""
    assert "Title: A softmax weight" not in written[0].read_text()
    names = [q.findtext("name/text") for q in moodle.iter("question")]
    assert any(n.startswith("weight-21:") for n in names)
    assert not re.search(r"^pe-dim0:", "\n".join(names), re.M)


def test_does_the_readme_flag_the_select_all_items_the_lms_scores_in_part(written, moodle):
    """Moodle (and Canvas) give a partly right choice on a select-all question part of its points,
    where the kit's checker gives all or nothing: does the instructors' README name every such item
    and say so, rather than let two scores of one answer differ silently?"""
    select_all = [
        q.findtext("name/text").split(":")[0] for q in moodle.iter("question") if q.findtext("single") == "false"
    ]
    assert select_all, "the bank has select-all questions"
    partial = [q for q in moodle.iter("question") if any(0 < float(a.get("fraction")) < 100 for a in q.iter("answer"))]
    assert len(partial) == len(select_all)  # Moodle scores a partial choice in part: the fact flagged
    paragraphs = [" ".join(p.split()) for p in written[3].read_text().split("\n\n")]
    flagged = [p for p in paragraphs if "partial credit" in p]
    assert len(flagged) == 1 and all(i in flagged[0] for i in select_all), (flagged, select_all)
    assert "all or nothing" in flagged[0]


def test_does_canvas_leave_out_an_item_worth_points_text2qti_refuses(tmp_path):
    """An item worth 1.25 points (text2qti takes whole and half points only): is it left out of the
    Canvas export with the reason said, and carried by Moodle at 1.25, rather than the build ending
    in text2qti's error?"""
    import shutil

    from attnlab import paths

    bank = shutil.copytree(paths.quiz_dir(), tmp_path / "quiz")
    source = bank / "4_theory.yaml"
    text = source.read_text()
    worth_one = 'which method is it? (a penalty on the scores)"\n  points: 1\n'
    assert worth_one in text
    source.write_text(text.replace(worth_one, worth_one.replace("points: 1", "points: 1.25")))
    canvas, _, moodle, readme = main(out=tmp_path / "out", folder=bank)
    assert "a penalty on the scores" not in canvas.read_text()
    grades = {
        q.findtext("name/text").split(":")[0]: q.findtext("defaultgrade") for q in ET.parse(moodle).iter("question")
    }
    assert grades["th-alibi"] == "1.25"
    assert "th-alibi (worth 1.25 points)" in readme.read_text() and "half points" in readme.read_text()


def _moodle_accepts(question, value):
    return any(
        abs(value - float(a.findtext("text"))) <= float(a.findtext("tolerance")) for a in question.iter("answer")
    )


def test_does_moodle_accept_every_answer_the_checker_accepts(moodle):
    """The checker accepts a numeric answer near the key rounded at every step or near the key kept
    unrounded: does the Moodle export accept each such answer too (the notes' numbers)?"""
    from attnlab.quiz.check import RIGHT
    from attnlab.quiz.kinds import KINDS
    from attnlab.quiz.kinds.numeric import accepted_keys

    questions = {q.findtext("name/text").split(":")[0]: q for q in moodle.iter("question")}
    numeric = [i for i in load().values() if i.type == "numeric"]
    assert numeric
    for item in numeric:
        for key in accepted_keys(item, None):
            for value in (key - 0.99 * item.tolerance, key + 0.99 * item.tolerance):
                assert KINDS["numeric"].check(item, repr(value), None).status == RIGHT
                assert _moodle_accepts(questions[item.id], value), (item.id, value)


def test_does_canvas_accept_a_right_answer_to_a_key_with_many_digits():
    """A key of 21970.412 with a tolerance of 0.005: does the Canvas answer range hold 21970.41,
    which the checker accepts (a key cut to 6 significant digits moves the range off it)?"""
    import dataclasses

    from attnlab.quiz.check import RIGHT
    from attnlab.quiz.kinds import KINDS

    item = dataclasses.replace(load()["score-12"], key="21970.412")
    assert KINDS["numeric"].check(item, "21970.41", None).status == RIGHT
    (line,) = KINDS["numeric"].canvas(item, str)
    key, tolerance = (float(x) for x in line.lstrip("= ").split("+-"))
    assert key - tolerance <= 21970.41 <= key + tolerance


def test_does_the_readme_give_each_exports_total_as_its_file_has_it(written, moodle):
    """Canvas and Moodle grade a quiz made from an export out of that export's total, which is not
    the notebook's: does the README say both, as the files themselves are worth, and the notebook's?"""
    with zipfile.ZipFile(written[1]) as z:
        meta = next(n for n in z.namelist() if n.endswith("assessment_meta.xml"))
        canvas = float(ET.fromstring(z.read(meta)).findtext(".//{*}points_possible"))
    in_moodle = sum(float(q.findtext("defaultgrade")) for q in moodle.iter("question"))
    notebook = sum(i.points for i in load().values())
    note = " ".join(written[3].read_text().split())
    assert f"the Canvas export is worth {canvas:g} points, the Moodle export {in_moodle:g}" in note
    assert f"the quiz notebook {notebook:g}" in note


def test_is_an_export_worth_other_points_than_its_questions_refused(tmp_path, monkeypatch):
    """Should the Canvas text lose a question on the way, is the export refused by what its zip is
    worth, rather than shipped with another total?"""
    from attnlab.paths import CourseError
    from attnlab.quiz import export

    whole = export.canvas_text
    monkeypatch.setattr(export, "canvas_text", lambda items: whole(items[:-1]))
    with pytest.raises(CourseError, match="Canvas quiz export is worth"):
        main(out=tmp_path)
