"""Canvas's REST API: the few calls ``attnlab upload canvas`` makes (``canvas_upload`` decides
what to send). The token comes from ``CANVAS_TOKEN``.

Canvas's rate limiting (403 "Rate Limit Exceeded") is waited out with growing pauses. Canvas's
answers are untrusted: each has a deadline and a size limit, and every field read from one is
checked to be of its type; an answer that is not what Canvas sends stops the upload with one line
(``UploadError``).
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

from .canvas import points_mismatch, same_points

TOKEN = "CANVAS_TOKEN"
BACKOFF = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0)  # seconds waited between tries while Canvas throttles
# seconds a request to Canvas may take in all, from connecting to its answer's last byte: a Canvas
# that never answers, or answers a byte at a time, ends the upload with a message instead of hanging it
DEADLINE = 60.0
MAX_ANSWER = 64 << 20  # bytes: a page of 100 submissions with their comments is a few MiB
PER_PAGE = 100  # items a page of a list (Canvas's own maximum)
MAX_PAGES = 1000  # pages of one list: 100,000 students or submissions
MAKE_TOKEN = "make one in Canvas under Account -> Settings -> New access token"

T = TypeVar("T")


class UploadError(Exception):
    """What stops the upload, in one line for the user."""


@dataclass
class User:
    """An enrolled student, as Canvas lists them."""

    id: int
    name: str  # the sortable name, else the name, else the id
    sis_id: str
    email: str
    login: str
    display: str = ""  # the name as Canvas shows it to people ("Jane Doe"), else ``name``


@dataclass
class Submission:
    """What Canvas holds for one student in the assignment."""

    user_id: int
    score: float | None
    excused: bool
    comments: list[str]


@dataclass
class _Answer:
    status: int
    headers: Any  # (requests' case-insensitive dict)
    links: dict[str, Any]  # the Link header, by rel
    body: bytes


class _Odd(Exception):
    """An answer that is not what Canvas's API sends: what is wrong in it, for the message."""


def base_url(url: str) -> str:
    text = url.strip()
    try:
        parts = urlsplit(text)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname) and parts.port != 0
        ok = ok and not parts.query and not parts.fragment and text.isprintable() and " " not in text
    except ValueError:  # an unclosed IPv6 bracket, a port that is no number
        ok = False
    if not ok:
        raise UploadError(f"--url {url!r} is not your Canvas's address, like https://canvas.example.edu")
    return text.rstrip("/").removesuffix("/api/v1").rstrip("/")


class Canvas:
    """The few REST calls the upload makes. A request has ``deadline`` seconds in all, from
    connecting to the last byte of its answer; an answer is checked field by field before it is
    used; what goes wrong is one ``UploadError`` line."""

    def __init__(self, base: str, token: str, course: int, assignment: int, deadline: float):
        import requests

        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"
        self.base, self.api, self.deadline = base, f"{base}/api/v1", deadline
        self.course_id, self.assignment_id = course, assignment
        self.no_course = f"there is no course {course} at {base}"
        self.no_assignment = f"course {course} has no assignment {assignment}"
        self.path = f"courses/{course}/assignments/{assignment}"

    def assignment(self, possible: float) -> str:
        """The Canvas assignment's name, checked to be worth the autograder's total."""
        self.get(f"courses/{self.course_id}", lambda data: _object(data, "the course"), missing=self.no_course)
        name, points = self.get(self.path, _assignment, missing=self.no_assignment)
        name = name or str(self.assignment_id)
        if points is None or not same_points(points, possible):
            raise UploadError(
                points_mismatch(f"{name!r} ({self.assignment_id})", points, possible)
                + " (the upload sends the autograder's points; for a column worth other points, "
                "import the canvas_import.csv that `attnlab grade --roster ... --scale` writes)"
            )
        return name

    def students(self) -> list[User]:
        query = {"enrollment_type[]": ["student"], "include[]": ["email"]}
        return self.pages(f"courses/{self.course_id}/users", _user, query, missing=self.no_course)

    def submissions(self, user_ids: list[int]) -> dict[int, Submission]:
        """Each user's submission with its comments (Canvas lists one per student; asked one by one
        for any it left out)."""
        query = {"include[]": ["submission_comments"]}
        listed = self.pages(f"{self.path}/submissions", _submission, query, missing=self.no_assignment)
        found = {s.user_id: s for s in listed}
        for user_id in user_ids:
            if user_id not in found:
                missing = f"Canvas has no submission of user {user_id} in assignment {self.assignment_id}"
                sub = self.get(f"{self.path}/submissions/{user_id}", _submission, query, missing=missing)
                if sub.user_id != user_id:
                    raise UploadError(f"Canvas answered user {user_id}'s submission with user {sub.user_id}'s")
                found[user_id] = sub
        return found

    def send(self, user_id: int, *, grade: float | None, comment: str) -> None:
        """Set a student's grade (unless None) and add a comment (unless empty), in one PUT."""
        form: dict[str, str] = {}
        if grade is not None:
            form["submission[posted_grade]"] = f"{grade:.2f}"
        if comment:
            form["comment[text_comment]"] = comment
        url = f"{self.api}/{self.path}/submissions/{user_id}"
        self.call("PUT", url, _submission, missing=f"Canvas has no submission of user {user_id}", form=form)

    def get(self, path: str, parse: Callable[[Any], T], query: dict[str, Any] | None = None, *, missing: str) -> T:
        return self.call("GET", f"{self.api}/{path}", parse, missing=missing, query=query)[0]

    def pages(self, path: str, parse: Callable[[Any], T], query: dict[str, Any], *, missing: str) -> list[T]:
        """Every item of a list Canvas hands out in pages, by their ``next`` links: each under
        ``self.api``, none twice, at most ``MAX_PAGES``."""
        url: str | None = f"{self.api}/{path}"
        params: dict[str, Any] | None = {**query, "per_page": PER_PAGE}
        items: list[T] = []
        seen: set[str] = set()
        while url is not None:
            if len(seen) == MAX_PAGES:
                raise UploadError(f"Canvas's list at {path} goes on past {MAX_PAGES} pages: is --url your Canvas?")
            seen.add(url)
            page, links = self.call(
                "GET", url, lambda data: [parse(x) for x in _list(data)], missing=missing, query=params
            )
            items += page
            url, params = (links.get("next") or {}).get("url"), None  # (a next link holds the query)
            if url in seen:
                raise UploadError(f"Canvas's list at {path} never ends: its next page, {_said(url)}, is one it gave")
            if url is not None and not url.startswith(f"{self.api}/"):
                raise UploadError(
                    f"Canvas's next page of {path}, {_said(url)}, is not under {self.base}: give --url as the "
                    "address Canvas uses itself"
                )
        return items

    def call(
        self,
        method: str,
        url: str,
        parse: Callable[[Any], T],
        *,
        missing: str,
        query: dict[str, Any] | None = None,
        form: dict[str, str] | None = None,
    ) -> tuple[T, dict[str, Any]]:
        """``parse`` of Canvas's answer and its Link header, retried while Canvas throttles;
        ``missing`` is said for a 404."""
        shown = f"{method} {urlsplit(url).path}"
        for pause in (*BACKOFF, None):
            answer = self.exchange(method, url, query, form, shown)
            throttled = answer.status == 429 or (answer.status == 403 and b"rate limit exceeded" in answer.body.lower())
            if not throttled:
                break
            if pause is None:
                raise UploadError(
                    f"Canvas kept answering 'Rate Limit Exceeded' for {sum(BACKOFF):g} s: try again later "
                    "(what was sent is remembered; a re-run resumes)"
                )
            time.sleep(pause)
        if not 200 <= answer.status < 300:
            raise self.refused(answer, shown, missing)
        try:
            data = json.loads(answer.body)
        except (ValueError, RecursionError):  # (RecursionError: nested deeper than the parser goes)
            kind = answer.headers.get("Content-Type", "no type")
            raise UploadError(
                f"Canvas at {self.base} answered {shown} with something that is not JSON ({_said(kind)}: "
                f"{_said(answer.body.decode('utf-8', 'replace'))[:80]!r}): is --url your Canvas's own address, "
                "not a login page or a proxy?"
            ) from None
        try:
            return parse(data), answer.links
        except _Odd as e:
            raise UploadError(
                f"Canvas at {self.base} answered {shown} with what its API never sends ({e}): is --url your Canvas?"
            ) from None

    def refused(self, answer: _Answer, shown: str, missing: str) -> UploadError:
        """What an answer other than 2xx means."""
        status, said = answer.status, _errors(answer.body)
        if status == 401 and "WWW-Authenticate" in answer.headers:
            return UploadError(
                f"Canvas at {self.base} refused the token in {TOKEN}: it is wrong or expired ({MAKE_TOKEN})"
            )
        if status == 401:
            return UploadError(
                f"the token in {TOKEN} may not do this in course {self.course_id} "
                f"(is its account a teacher there?): {said}"
            )
        if status == 403:
            return UploadError(f"Canvas forbids it: {said}")
        if status == 404:
            return UploadError(missing)
        if 300 <= status < 400:
            where = _said(answer.headers.get("Location", "nowhere"))
            return UploadError(
                f"Canvas at {self.base} sent {shown} on to {where} (HTTP {status}): give --url as the address "
                "Canvas uses itself (https://, no path)"
            )
        return UploadError(f"Canvas answered {shown} with an error (HTTP {status}): {said}")

    def exchange(
        self, method: str, url: str, query: dict[str, Any] | None, form: dict[str, str] | None, shown: str
    ) -> _Answer:
        """One request and its whole answer, within ``self.deadline``. The request runs in a thread
        of its own, since a socket's timeout bounds each read, not their sum: a Canvas that sends a
        byte every few seconds would never time out."""
        import requests

        end = time.monotonic() + self.deadline
        box: list[Any] = []
        done = threading.Event()

        def run() -> None:
            try:
                box.append(self.fetch(method, url, query, form, end, shown))
            except Exception as e:  # noqa: BLE001 - handed to the waiting thread, which says it
                box.append(e)
            finally:
                done.set()

        threading.Thread(target=run, name="canvas-request", daemon=True).start()
        resumes = " (what was sent is remembered; a re-run resumes)" if method == "PUT" else ""
        late = UploadError(
            f"Canvas at {self.base} did not answer {shown} within {self.deadline:g} s (the deadline of each "
            f"request): it is down or overloaded; try again later{resumes}"
        )
        if not done.wait(self.deadline) or box == [None]:
            raise late  # (the thread ends at its socket's next read; nothing waits for it)
        [got] = box
        if isinstance(got, _Answer):
            return got
        if isinstance(got, requests.exceptions.ReadTimeout):
            raise late from None
        if isinstance(got, requests.exceptions.ConnectionError):  # no route, refused, reset, DNS, TLS
            raise UploadError(
                f"cannot reach Canvas at {self.base} (network down or wrong --url): {_said(got)}"
            ) from None
        if isinstance(got, requests.exceptions.RequestException):  # an answer cut off or garbled
            raise UploadError(f"Canvas at {self.base} broke off its answer to {shown}: {_said(got)}") from None
        raise got

    def fetch(
        self,
        method: str,
        url: str,
        query: dict[str, Any] | None,
        form: dict[str, str] | None,
        end: float,
        shown: str,
    ) -> _Answer | None:
        """The request, its socket's every wait bounded by what is left until ``end``; no redirect is
        followed (requests would turn a redirected PUT into a GET, or drop its form)."""
        left = max(end - time.monotonic(), 0.001)
        with self.session.request(
            method, url, params=query, data=form, timeout=(left, left), stream=True, allow_redirects=False
        ) as r:
            body = bytearray()
            for chunk in r.iter_content(1 << 16):
                body += chunk
                if len(body) > MAX_ANSWER:
                    raise UploadError(
                        f"Canvas at {self.base} answered {shown} with over {MAX_ANSWER / 2**20:g} MiB: is --url your Canvas?"
                    )
                if time.monotonic() > end:
                    return None  # (nobody waits any more)
            return _Answer(r.status_code, r.headers, r.links, bytes(body))


# what the upload reads from Canvas's answers, each field checked: absent or null reads as None
KINDS: dict[type, tuple[str, Callable[[Any], bool]]] = {
    int: ("a whole number", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    float: ("a number", lambda v: is_number(v)),
    str: ("text", lambda v: isinstance(v, str)),
    bool: ("true or false", lambda v: isinstance(v, bool)),
    list: ("a list", lambda v: isinstance(v, list)),
}


def _field(data: dict[str, Any], key: str, kind: type, what: str, *, required: bool = False) -> Any:
    value = data.get(key)
    if value is None:
        if required:
            raise _Odd(f"{what} has no {key!r}")
        return None
    name, fits = KINDS[kind]
    if not fits(value):
        raise _Odd(f"{what}'s {key!r} is {_shown(value)}, not {name}")
    return float(value) if kind is float else value


def _object(data: Any, what: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise _Odd(f"{what} is {_shown(data)}, not an object")
    return data


def _list(data: Any) -> list[Any]:
    if not isinstance(data, list):
        raise _Odd(f"{_shown(data)} where a list belongs")
    return data


def _assignment(data: Any) -> tuple[str, float | None]:
    fields = _object(data, "the assignment")
    return _field(fields, "name", str, "the assignment") or "", _field(
        fields, "points_possible", float, "the assignment"
    )


def _user(data: Any) -> User:
    fields = _object(data, "a user")
    user_id = _field(fields, "id", int, "a user", required=True)
    text = {
        k: _field(fields, k, str, "a user") or "" for k in ("sortable_name", "name", "sis_user_id", "email", "login_id")
    }
    name = text["sortable_name"] or text["name"] or str(user_id)
    return User(user_id, name, text["sis_user_id"], text["email"], text["login_id"], text["name"] or name)


def _submission(data: Any) -> Submission:
    fields = _object(data, "a submission")
    comments = [
        _field(_object(c, "a submission comment"), "comment", str, "a submission comment") or ""
        for c in _field(fields, "submission_comments", list, "a submission") or []
    ]
    return Submission(
        _field(fields, "user_id", int, "a submission", required=True),
        _field(fields, "score", float, "a submission"),
        bool(_field(fields, "excused", bool, "a submission")),
        comments,
    )


def is_number(value: Any) -> bool:
    """A finite number (JSON's NaN and Infinity are no grade, nor points)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False


def _shown(value: Any) -> str:
    """A value of an answer, as JSON writes it, cut short."""
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _errors(body: bytes) -> str:
    """What Canvas said in an error answer: its ``errors`` messages, else the start of its text."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        data = None
    errors = data.get("errors") if isinstance(data, dict) else None
    if isinstance(errors, list):
        messages = [e["message"] for e in errors if isinstance(e, dict) and isinstance(e.get("message"), str)]
        if messages:
            return _said("; ".join(messages))
    return _said(body.decode("utf-8", "replace")) or "(nothing said)"


def _said(e: object) -> str:
    return " ".join(str(e).split())[:300]
