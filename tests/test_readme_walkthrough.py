"""The README's curl walk-through works as written against a freshly started server.

The block between ``<!-- walkthrough:start -->`` and ``<!-- walkthrough:end -->`` runs
in one bash process, in the directory where ``docbase serve`` was started. Its steps are
separated by blank lines; a step's ``# → ...`` lines are what its commands print (``…``
matches anything). The only change made to the block is the one the README itself
invites: ``DOCBASE_URL`` points at the port the test server got, when 8443 is taken.
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from tests.backends import service_missing
from tests.test_serve_harness import serving

README = Path(__file__).resolve().parent.parent / "README.md"
MARKER = "@@walkthrough-step@@"
OUTPUT = "# → "


def walkthrough() -> str:
    text = README.read_text()
    match = re.search(r"<!-- walkthrough:start -->\s*```bash\n(.*?)```\s*<!-- walkthrough:end -->",
                      text, re.DOTALL)
    assert match, "README.md has no walkthrough block"
    return match.group(1)


def steps(block: str) -> list[tuple[str, str]]:
    """``(commands, expected output)`` of each blank-line-separated step."""
    found = []
    for chunk in re.split(r"\n\s*\n", block.strip()):
        lines = chunk.splitlines()
        expected = "".join(line[len(OUTPUT):] for line in lines if line.startswith(OUTPUT))
        commands = "\n".join(line for line in lines if not line.startswith(OUTPUT))
        found.append((commands, expected))
    return found


def matches(expected: str, actual: str) -> bool:
    pattern = ".*?".join(re.escape(part) for part in expected.split("…"))
    return re.fullmatch(pattern, actual, re.DOTALL) is not None


def _port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def test_walkthrough_block_has_the_promised_steps() -> None:
    block = walkthrough()
    for spelled in ("-X PUT", "$inc", "/orders", "-X DELETE", "--data-urlencode 'q="):
        assert spelled in block
    assert all(expected for commands, expected in steps(block)[1:])


def test_readme_walkthrough_works_as_written(tmp_path: Path) -> None:
    if shutil.which("curl") is None or shutil.which("bash") is None:
        service_missing("curl and bash are needed to run the README walk-through")
    block = walkthrough()
    port = 8443 if _port_is_free(8443) else None
    with serving(tmp_path, **({"port": port} if port else {})) as served:
        if served.port != 8443:
            block = block.replace("export DOCBASE_URL=https://127.0.0.1:8443",
                                  f"export DOCBASE_URL={served.url}", 1)
            assert served.url in block
        script = "set -euo pipefail\n" + f"\nprintf '\\n{MARKER}\\n'\n".join(
            commands for commands, _ in steps(block))
        result = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True,
                                text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    outputs = [part.replace("\n", "") for part in result.stdout.split(MARKER)]
    expected = [want for _, want in steps(block)]
    assert len(outputs) == len(expected)
    for step, (want, got) in enumerate(zip(expected, outputs, strict=True)):
        assert matches(want, got), f"step {step}: expected {want!r}\n got {got!r}"


@pytest.mark.parametrize(("expected", "actual", "ok"), [
    ('{"_id":"…","n":1}', '{"_id":"abc","n":1}', True),
    ('{"_id":"…","n":1}', '{"_id":"abc","n":2}', False),
    ("[]", "[]", True),
    ("", "", True),
])
def test_output_patterns(expected: str, actual: str, ok: bool) -> None:
    assert matches(expected, actual) is ok
