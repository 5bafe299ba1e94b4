"""Run code in one sandbox and print what it found, as JSON: a helper the isolation tests start
with another interpreter (a virtual environment under /tmp) or as another user.

    python sandbox_probe.py SRC_FOLDER CODE_FILE [hold]

The code runs at the top level of a submission and must define ``probe()``, whose result is
printed together with the zygote's isolation mode. With ``hold``, the pids of the zygote and the
sandbox are printed first, and both live on until a line arrives on stdin.
"""

import ast
import json
import os
import sys

sys.path.insert(0, sys.argv[1])

from attnlab.grade.session import Output, Zygote
from attnlab.grade.worker import claim_uid

code = open(sys.argv[2]).read()
# as root, a user id that no other run's sandboxes hold (held until this process ends): a run that
# sweeps its own user id's processes must never reach these
uid = claim_uid()[0] if os.geteuid() == 0 else None
zygote = Zygote(uid=uid, gid=uid, memory_mb=1024, cpu_seconds=60)
try:
    sandbox = zygote.spawn(Output())
    sandbox.request("load", [code], 20, "compiling")
    errors = [sandbox.request("exec", (0, j), 20, "executing") for j in range(len(ast.parse(code).body))]
    result, _ = sandbox.call("probe", None, (), {}, 20)
    if sys.argv[3:] == ["hold"]:
        print(json.dumps({"zygote": zygote.proc.pid, "sandbox": sandbox.pid}), flush=True)
        sys.stdin.readline()
    sandbox.kill()
    print(json.dumps({"mode": zygote.mode, "errors": [e for e in errors if e], "result": result}))
finally:
    zygote.close()
