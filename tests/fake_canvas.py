"""A local Canvas that speaks the few REST endpoints ``attnlab upload canvas`` uses, written from
Canvas's public API documentation (canvas.instructure.com/doc/api):

- ``GET /api/v1/courses/:id``; ``GET /api/v1/courses/:id/users`` and its twin ``.../search_users``
  (``enrollment_type[]``, ``include[]=email``); ``GET /api/v1/courses/:course_id/assignments/:id``;
- ``GET .../assignments/:id/submissions`` (``include[]=submission_comments``) and
  ``GET``/``PUT .../submissions/:user_id``, the PUT taking ``submission[posted_grade]`` and
  ``comment[text_comment]`` as form fields;
- lists paginated with ``page``/``per_page`` and a ``Link`` header (``rel="next"`` and friends),
  at most ``page_size`` items a page whatever ``per_page`` asks;
- 401 with ``WWW-Authenticate`` for a wrong token, 404 for an unknown course, assignment or user,
  and 403 "Rate Limit Exceeded" for the next ``throttle`` requests.

And a Canvas gone wrong, to see the upload stop with one line: ``answers`` replaces what a route
answers (a JSON value, or a str sent as it is); ``drip`` sends each answer a byte at a time;
``next_page`` is the ``next`` link of every page.

It listens on 127.0.0.1 only, in a thread of the test process.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

ROUTES = [
    ("course", re.compile(r"^/api/v1/courses/(\d+)$")),
    ("users", re.compile(r"^/api/v1/courses/(\d+)/(?:users|search_users)$")),
    ("assignment", re.compile(r"^/api/v1/courses/(\d+)/assignments/(\d+)$")),
    ("submissions", re.compile(r"^/api/v1/courses/(\d+)/assignments/(\d+)/submissions$")),
    ("submission", re.compile(r"^/api/v1/courses/(\d+)/assignments/(\d+)/submissions/(\d+)$")),
]


@dataclass
class FakeCanvas:
    token: str = "secret-token"
    course: int = 101
    assignment: int = 202
    points: float = 100.0
    users: list[dict[str, Any]] = field(default_factory=list)
    page_size: int = 2
    throttle: int = 0  # the next requests answered 403 Rate Limit Exceeded
    fail_puts_after: int | None = None  # PUTs after this many answer 500 (a Canvas that goes away)
    log: list[tuple[str, str]] = field(default_factory=list)  # (method, path with query) of each request
    puts: list[dict[str, list[str]]] = field(default_factory=list)  # the form of each applied PUT
    scores: dict[int, float | None] = field(default_factory=dict)
    comments: dict[int, list[str]] = field(default_factory=dict)
    excused: set[int] = field(default_factory=set)
    answers: dict[str, Any] = field(default_factory=dict)  # route name -> its answer instead
    drip: float | None = None  # seconds between the bytes of an answer
    next_page: str | None = None  # every page's next link

    def __post_init__(self) -> None:
        for u in self.users:
            self.scores.setdefault(u["id"], None)
            self.comments.setdefault(u["id"], [])
        self.lock = threading.Lock()
        self.closing = threading.Event()  # ends the drips
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.closing.set()
        self.server.shutdown()
        self.server.server_close()

    def submission(self, user_id: int, comments: bool) -> dict[str, Any]:
        score = self.scores[user_id]
        sub: dict[str, Any] = {
            "id": 70000 + user_id,
            "user_id": user_id,
            "assignment_id": self.assignment,
            "score": score,
            "grade": None if score is None else f"{score:g}",
            "workflow_state": "unsubmitted" if score is None else "graded",
            "excused": user_id in self.excused,
        }
        if comments:
            sub["submission_comments"] = [
                {"id": 900 + i, "author_id": 1, "comment": text} for i, text in enumerate(self.comments[user_id])
            ]
        return sub

    def answer(self, method: str, path: str, query: dict[str, list[str]], form: dict[str, list[str]]) -> tuple:
        """(status, body, extra headers) for one request."""
        route = next(((name, m.groups()) for name, r in ROUTES if (m := r.match(path))), None)
        if route is None:
            return 404, {"errors": [{"message": "The specified resource does not exist."}]}, {}
        name, ids = route
        numbers = [int(i) for i in ids]
        if numbers[0] != self.course or (len(numbers) > 1 and numbers[1] != self.assignment):
            return 404, {"errors": [{"message": "The specified resource does not exist."}]}, {}
        if name in self.answers:
            return 200, self.answers[name], {}
        comments = "submission_comments" in query.get("include[]", [])
        if name == "course":
            return 200, {"id": self.course, "name": "Transformers 101", "course_code": "TR101"}, {}
        if name == "assignment":
            return (
                200,
                {
                    "id": self.assignment,
                    "course_id": self.course,
                    "name": "pe_attention",
                    "points_possible": self.points,
                },
                {},
            )
        if name == "users":
            shown = [
                {k: v for k, v in u.items() if k != "email" or "email" in query.get("include[]", [])}
                for u in self.users
            ]
            return self.page(path, query, shown)
        if name == "submissions":
            return self.page(path, query, [self.submission(u["id"], comments) for u in self.users])
        user_id = numbers[2]
        if user_id not in self.scores:
            return 404, {"errors": [{"message": "The specified resource does not exist."}]}, {}
        if method == "PUT":
            if self.fail_puts_after is not None and len(self.puts) >= self.fail_puts_after:
                return 500, {"errors": [{"message": "Internal server error"}]}, {}
            self.puts.append(form)
            if "submission[posted_grade]" in form:
                self.scores[user_id] = float(form["submission[posted_grade]"][0])
                self.excused.discard(user_id)
            if "comment[text_comment]" in form:
                self.comments[user_id].append(form["comment[text_comment]"][0])
        return 200, self.submission(user_id, comments), {}

    def page(self, path: str, query: dict[str, list[str]], items: list) -> tuple:
        per_page = min(int(query.get("per_page", ["10"])[0]), self.page_size)
        number = int(query.get("page", ["1"])[0])
        last = max(1, -(-len(items) // per_page))

        def link(page: int) -> str:
            params = [(k, v) for k, vs in query.items() if k != "page" for v in vs] + [("page", str(page))]
            return f"{self.url}{path}?{urlencode(params)}"

        rels = [("current", number), ("first", 1), ("last", last)]
        if number < last:
            rels.append(("next", number + 1))
        if number > 1:
            rels.append(("prev", number - 1))
        header = ",".join(f'<{link(p)}>; rel="{rel}"' for rel, p in rels if rel != "next" or not self.next_page)
        if self.next_page:
            header += f',<{self.next_page}>; rel="next"'
        return 200, items[(number - 1) * per_page : number * per_page], {"Link": header}


def _handler(canvas: FakeCanvas) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet: pytest shows failures its own way
            pass

        def do_GET(self) -> None:
            self.serve("GET")

        def do_PUT(self) -> None:
            self.serve("PUT")

        def serve(self, method: str) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            form = parse_qs(self.rfile.read(length).decode()) if length else {}
            with canvas.lock:
                canvas.log.append((method, self.path))
                if canvas.throttle > 0:
                    canvas.throttle -= 1
                    self.reply(403, "403 Forbidden (Rate Limit Exceeded)", {})
                    return
                if self.headers.get("Authorization") != f"Bearer {canvas.token}":
                    body = {"errors": [{"message": "Invalid access token."}]}
                    self.reply(401, body, {"WWW-Authenticate": 'Bearer realm="canvas-lms"'})
                    return
                status, body, headers = canvas.answer(method, parts.path, parse_qs(parts.query), form)
            self.reply(status, body, headers)

        def reply(self, status: int, body: Any, headers: dict[str, str]) -> None:
            data = (body if isinstance(body, str) else json.dumps(body)).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            if canvas.drip is None:
                self.wfile.write(data)
                return
            for i in range(len(data)):
                if canvas.closing.wait(canvas.drip):
                    return
                self.wfile.write(data[i : i + 1])
                self.wfile.flush()

    return Handler
