"""A real grading worker that notes, once it has graded a submission, whether it has been told
that no more will come (its input has ended): ``told.txt`` beside the graded copy, "True" or
"False". For the batch's test that a worker ends while the batch writes the reports."""

import json
import os
import select
import sys
from pathlib import Path

from attnlab.grade import runner, worker

_grade = runner.Grader.grade


def grade(self, path):
    graded = _grade(self, path)
    # input that has ended reads as empty at once; a worker with more to come would wait here
    told = bool(select.select([sys.stdin.fileno()], [], [], 2)[0]) and os.read(sys.stdin.fileno(), 1) == b""
    Path(path).with_name("told.txt").write_text(str(told))
    return graded


runner.Grader.grade = grade
worker.serve(json.loads(sys.argv[1]))
