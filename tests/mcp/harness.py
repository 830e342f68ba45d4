"""`yield mcp` as an agent's client meets it: the official `mcp` client starts the installed command
as a subprocess over stdio, against a sandbox served on loopback."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import ElicitResult

from tests.conftest import TEST_API_KEY, YIELD
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, demo_keypair

POLICY = """\
writes = true
actions = ["deposit", "withdraw", "close-account"]
writes_per_hour = 50

[assets.USDC]
auto_per_call = "2"
auto_daily = "10"
per_call = "20"
daily = "100"
"""


def write_private(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    path.write_text(text)
    os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
    return path


def server_env(sandbox, home: Path, api_url: str | None = None) -> dict[str, str]:
    keypair = write_private(home / "keys" / "wallet.json", json.dumps(list(bytes(demo_keypair()))))
    return {
        **os.environ,
        "YIELD_API_URL": api_url or sandbox.url,
        "YIELD_API_KEY": TEST_API_KEY,
        "YIELD_RPC_URL": sandbox.rpc_url,
        "YIELD_KEYPAIR": str(keypair),
        "YIELD_STRATEGY": DEMO_STRATEGY_ID,
    }


def parameters(env: dict[str, str], *args: str) -> StdioServerParameters:
    return StdioServerParameters(command=YIELD, args=["mcp", *args], env=env)


def answering(action: str, approve: bool = True, seen: list | None = None):
    """An elicitation callback that answers every question the same way (and keeps what it was asked)."""

    async def callback(context, params):
        if seen is not None:
            seen.append(params.message)
        return ElicitResult(action=action, content={"approve": approve} if action == "accept" else None)

    return callback


def session(env: dict[str, str], *args: str, mode: str = "auto", elicit=None) -> Client:
    return Client(parameters(env, *args), mode=mode, elicitation_callback=elicit, read_timeout_seconds=120)


def run(body):
    return anyio.run(body)


def structured(result) -> dict:
    assert result.structured_content is not None, result
    return result.structured_content


class Rewriting:
    """A service in front of the sandbox's that rewrites the JSON answer of chosen paths (`rewrite`)."""

    def __init__(self, upstream: str, rewrite: dict):
        import http.client
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from urllib.parse import urlsplit

        target = urlsplit(upstream)

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                conn = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
                conn.request("GET", self.path, headers={k: v for k, v in self.headers.items() if k.lower() != "host"})
                answer = conn.getresponse()
                payload = answer.read()
                for prefix, change in rewrite.items():
                    if self.path.startswith(prefix) and answer.status == 200:
                        payload = json.dumps(change(json.loads(payload))).encode()
                self.send_response(answer.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class Echoing:
    """A service that refuses every request and echoes the API key it was sent in its message, in every
    form a careless service might: as sent, percent-encoded, base64 and hex."""

    def __init__(self, status: int):
        import base64
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from urllib.parse import quote

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                key = self.headers.get("x-api-key", "")
                forms = [key, quote(key, safe=""), base64.b64encode(key.encode()).decode(), key.encode().hex()]
                payload = json.dumps({"message": "invalid x-api-key " + " / ".join(forms)}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = _answer

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def secret_forms(secret: str) -> list[str]:
    """The forms `Echoing` sends a secret back in (what must never come out)."""
    import base64
    from urllib.parse import quote

    return [secret, quote(secret, safe=""), base64.b64encode(secret.encode()).decode(), secret.encode().hex()]


def bounded(step, seconds: float = 10):
    """`step()`'s result (or its exception, raised here), failing the test when it has not returned in
    `seconds`: a FIFO or a lock waited on is a hang, and a hang is a failure, never a stuck run."""
    import threading

    done: dict = {}

    def body():
        try:
            done["value"] = step()
        except BaseException as exc:  # handed to the test
            done["error"] = exc

    worker = threading.Thread(target=body, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still waiting after {seconds} s: a FIFO or a lock was waited on"
    if "error" in done:
        raise done["error"]
    return done["value"]
