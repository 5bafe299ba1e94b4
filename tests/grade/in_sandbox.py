"""Running a snippet as a submission in one sandbox of a zygote: what the isolation and start-up
tests share."""

import ast
import textwrap

from attnlab.grade.session import Output


def run(zygote, code: str, timeout: float = 20, wants=None):
    """Execute ``code`` (which defines ``probe()``) as a submission in a new sandbox (asked for with
    ``wants``, as ``Zygote.spawn``); (the sandbox, what ``probe()`` returns)."""
    code = textwrap.dedent(code)
    sb = zygote.spawn(Output(), wants=wants)
    sb.request("load", [code], timeout, "compiling")
    for j in range(len(ast.parse(code).body)):
        err = sb.request("exec", (0, j), timeout, "executing")
        assert err is None, err
    return sb, sb.call("probe", None, (), {}, timeout)[0]
