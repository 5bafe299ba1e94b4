"""What each LMS hands over and takes back, one module per LMS, shared by ``attnlab grade``,
``attnlab quiz grade`` and ``attnlab upload``.

Data flow: an LMS's download (``canvas``: bulk-download file names; ``gradescope``: the export's
``submission_metadata.yml``; ``moodle``: "Download all submissions" folder names) -> who wrote each
submission (``identity.Student``) -> matched to a roster (``canvas``: the gradebook export) -> what
goes back: ``canvas_import.csv`` (``canvas``), ``moodle_import.csv`` (``moodle``), or Canvas's REST
API (``canvas_upload``: the plan; ``canvas_rest``: the calls). ``imports`` decides, for both import
files, who is claimed by several submissions and so has no row. Nothing here grades or reads a
submission's content.
"""
