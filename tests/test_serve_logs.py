"""Keys, tokens and passwords never reach ``docbase serve``'s output or any log file.

The server runs with its default logging; each secret is sent in every place a client
may put it (``x-apikey``, ``?apikey=``, ``Authorization: Bearer``, ``?jwt=``, a login
body), accepted and refused, and then the server's stdout/stderr and every file of its
working and data directories except the key file itself are searched for them.
"""

from __future__ import annotations

import signal
from pathlib import Path

from tests.test_serve_harness import run_cli, serving

PASSWORD = "correct horse battery staple"


def test_keys_tokens_and_passwords_are_never_logged(tmp_path: Path) -> None:
    wrong_key = "0123456789abcdef0123456789abcdef01234567"
    with serving(tmp_path) as served:
        admin = served.admin_key
        run_cli(tmp_path, "users", "create", "--email", "ann@example.com",
                "--password", PASSWORD)
        scoped = run_cli(tmp_path, "keys", "create", "--path", "/rest/notes/**").stdout.strip()
        login = served.request("POST", "/auth/login",
                               json={"email": "ann@example.com", "password": PASSWORD})
        assert login.status_code == 200, login.text
        token = login.json()["jwt"]
        failed = served.request("POST", "/auth/login",
                                json={"email": "ann@example.com", "password": PASSWORD + "!"})
        assert failed.status_code == 401

        answers = [
            served.request("GET", "/rest/notes", headers={"x-apikey": admin}),
            served.request("GET", "/rest/notes", params={"apikey": admin}),
            served.request("GET", "/rest/notes", params={"apikey": scoped}),
            served.request("GET", "/rest/people", params={"apikey": scoped}),  # 403
            served.request("GET", "/rest/notes", headers={"authorization": f"Bearer {token}"}),
            served.request("GET", "/rest/notes", params={"jwt": token}),
            served.request("GET", "/rest/notes", params={"apikey": wrong_key}),  # 401
            served.request("GET", "/rest/notes", params={"jwt": token + "x"}),  # 401
            served.request("GET", "/no/such/route", params={"apikey": admin}),  # 404
            served.request("POST", "/rest/notes", params={"apikey": admin},
                           content=b"{not json", headers={"content-type": "application/json"}),
        ]
        assert [a.status_code for a in answers] == [200, 200, 200, 403, 200, 200, 401, 401,
                                                    404, 400]
        served.stop(signal.SIGTERM)
        output = served.output()
    assert "Listening at" in output  # the log really is the server's
    secrets = {"admin key": admin, "scoped key": scoped, "wrong key": wrong_key,
               "token": token, "token signature": token.rsplit(".", 1)[1],
               "password": PASSWORD}
    texts = {"server output": output}
    key_file = served.data_dir / "admin.key"
    for path in tmp_path.rglob("*"):
        if path.is_file() and path != key_file and path.suffix not in (".db", ".db-wal",
                                                                          ".db-shm"):
            texts[str(path.relative_to(tmp_path))] = path.read_text(errors="replace")
    for where, text in texts.items():
        for name, secret in secrets.items():
            assert secret not in text, f"the {name} appears in {where}"
