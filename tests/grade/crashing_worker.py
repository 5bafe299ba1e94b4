"""A real grading worker that dies on submissions that ask for it, for the batch's retry tests:
a line ``# CRASH ALWAYS`` kills every worker that grades it, ``# CRASH ONCE`` only the first."""

import json
import os
import sys
from pathlib import Path

from attnlab.grade import runner, worker

_grade = runner.Grader.grade


def grade(self, path):
    text = Path(path).read_text()
    marker = Path(path).with_name("crashed-once")
    if "# CRASH ALWAYS" in text or ("# CRASH ONCE" in text and not marker.exists()):
        marker.touch()
        os._exit(1)
    return _grade(self, path)


runner.Grader.grade = grade
worker.serve(json.loads(sys.argv[1]))
