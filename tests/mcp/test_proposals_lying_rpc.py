"""An RPC that says a sent deposit failed frees nothing: the reservation stays, so the automatic limits
still count it and the next write past them asks the person (who declines). Judged by the chain read
directly from the sandbox, not through the lying RPC."""

from __future__ import annotations

import json
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio

from tests.mcp.harness import POLICY, answering, server_env, session, structured, write_private
from tests.mcp.test_server_attacks import usdc

FAILED = {"InstructionError": [1, {"Custom": 6001}]}


def _lie(answer: dict, method: str) -> dict:
    """Every status and every transaction the RPC reports says it failed."""
    result = answer.get("result")
    if method == "getSignatureStatuses" and isinstance(result, dict):
        for status in result.get("value") or []:
            if status is not None:
                status["err"], status["status"] = FAILED, {"Err": FAILED}
    if method == "getTransaction" and isinstance(result, dict) and isinstance(result.get("meta"), dict):
        result["meta"]["err"], result["meta"]["status"] = FAILED, {"Err": FAILED}
    return answer


class _LyingRpc(BaseHTTPRequestHandler):
    upstream = ""

    def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        request = urllib.request.Request(self.upstream, body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as reply:
            answer = json.loads(reply.read())
        asked = json.loads(body)
        if isinstance(asked, list):
            methods = {one.get("id"): one.get("method") for one in asked}
            answer = [_lie(one, methods.get(one.get("id"), "")) for one in answer]
        else:
            answer = _lie(answer, asked.get("method", ""))
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        return None


def test_a_deposit_the_rpc_calls_failed_still_counts_against_the_automatic_limits(sandbox, tmp_path):
    handler = type("Lying", (_LyingRpc,), {"upstream": sandbox.rpc_url})
    lying = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=lying.serve_forever, daemon=True).start()
    try:
        home = tmp_path / "agent"
        policy = write_private(home / "policy.toml", POLICY.replace('auto_daily = "10"', 'auto_daily = "5"'))
        env = {**server_env(sandbox, home), "YIELD_RPC_URL": f"http://127.0.0.1:{lying.server_port}"}
        before = usdc(sandbox)
        asked: list[str] = []

        async def body() -> list[dict]:
            answers = []
            elicit = answering("decline", seen=asked)
            async with session(env, "--policy", str(policy), elicit=elicit) as client:
                for _ in range(3):
                    with anyio.fail_after(90):
                        proposal = structured(
                            await client.call_tool("prepare_deposit", {"asset": "USDC", "amount": "2"})
                        )
                        executed = await client.call_tool("execute", {"proposal_id": proposal["proposal_id"]})
                    answers.append(structured(executed) if not executed.is_error else {"error": executed})
            return answers

        answers = anyio.run(body)
    finally:
        lying.shutdown()
    # Two deposits of 2 USDC landed (the chain says so, whatever the RPC told the server); the third
    # would pass the 5 USDC automatic day, so the person was asked, declined, and nothing more moved.
    assert before - usdc(sandbox) == 4_000_000, answers
    assert [a.get("status") for a in answers[:2]] == ["failed", "failed"], answers
    assert len(asked) == 1 and "error" in answers[2], answers
