"""The API keeps the promises of its own OpenAPI schema: schemathesis fuzzes every operation of a
real server from /schema and checks every response (no 5xx, bodies and status codes as documented,
valid requests accepted, invalid ones refused)."""

import subprocess
import sys
from pathlib import Path

from tests.servers import running_server

SCHEMATHESIS = Path(sys.executable).parent / "schemathesis"


def test_schemathesis_finds_no_5xx_and_no_schema_violation(examples_artifacts, tmp_path):
    with running_server(examples_artifacts, tmp_path) as server:
        run = subprocess.run(
            [str(SCHEMATHESIS), "run", f"{server.base}/schema/openapi.json", "--checks", "all", "--max-examples", "60",
             "--seed", "20261123", "--no-color", "--request-timeout", "30"],
            capture_output=True, text=True, timeout=420,
        )
        errors = [e for e in server.log_lines() if e["level"] in ("error", "critical")]
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert "No issues found" in run.stdout or " passed" in run.stdout
    assert not errors, errors[:3]
