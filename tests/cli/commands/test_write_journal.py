"""Never twice, never lost: the journal of sent transactions as users meet it, through the `yield` command
against the sandbox served over loopback (its RPC can hold transactions pending until released)."""

import json
import signal
import subprocess
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import YIELD, serve_sandbox, usdc_position

DEPOSIT = ("deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes")
UNIT = 1_000_000  # 1 USDC in base units


def start(env, *args):
    # SIGINT as on a fresh terminal even when this test run was started in the background, where the
    # shell has it ignored (and a child inherits that).
    return subprocess.Popen(
        [YIELD, *args],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def held_once(sandbox, timeout=60.0) -> str:
    """The signature of the first transaction the sandbox holds pending (waits for it to be sent)."""
    deadline = time.monotonic() + timeout
    while not sandbox.runtime.pending_signatures:
        assert time.monotonic() < deadline, "no transaction was sent"
        time.sleep(0.05)
    return sandbox.runtime.pending_signatures[0]


def killed_while_pending(env, sandbox) -> str:
    """A deposit sent, held pending, its sender killed with SIGKILL: the signature it left in the journal."""
    sandbox.runtime.set_fault("pending", count=1)
    proc = start(env, *DEPOSIT, "--confirm-timeout", "300")
    signature = held_once(sandbox)
    proc.kill()
    proc.wait(timeout=30)
    return signature


def journal_path(isolated) -> Path:
    return isolated / ".local" / "share" / "yield" / "in-flight.json"


def test_eight_parallel_deposits_while_the_first_is_pending_send_exactly_one(chain, chain_env, sandbox):
    before = usdc_position(chain)
    sandbox.runtime.set_fault("pending", count=8)
    procs = [start(chain_env, *DEPOSIT, "--confirm-timeout", "2", "-o", "json") for _ in range(8)]
    outs = [(p.wait(timeout=180), *p.communicate()) for p in procs]
    assert all(code == 8 for code, _, _ in outs), [(c, e) for c, _, e in outs]
    assert all("Traceback" not in err for _, _, err in outs)
    printed = [json.loads(out)["signature"] for code, out, _ in outs if out.strip()]
    held = sandbox.runtime.pending_signatures
    assert len(held) == 1 and printed == held  # one sent, its signature printed; the seven others sent nothing
    refusals = [err for _, out, err in outs if not out.strip()]
    assert len(refusals) == 7 and all(held[0] in err and f"yield tx status {held[0]}" in err for err in refusals)
    sandbox.runtime.set_fault("clear")
    sandbox.runtime.release_pending()
    assert usdc_position(chain) == before + UNIT
    assert chain("tx", "status", held[0]).code == 0
    assert chain(*DEPOSIT).code == 0  # its fate known, the next deposit goes out
    assert usdc_position(chain) == before + 2 * UNIT


def test_eight_parallel_deposits_lose_no_signature(chain, chain_env, sandbox, isolated):
    before = usdc_position(chain)
    procs = [start(chain_env, *DEPOSIT, "-o", "json") for _ in range(8)]
    outs = [(p.wait(timeout=180), *p.communicate()) for p in procs]
    assert all(code in (0, 8, 10) for code, _, _ in outs), [(c, e) for c, _, e in outs]
    confirmed = [json.loads(out) for code, out, _ in outs if code == 0]
    landed = {body["signature"] for body in confirmed}
    # every deposit that landed was reported by the process that sent it, and no other landed
    assert landed and usdc_position(chain) == before + len(landed) * UNIT
    # The service may build the very same transaction for two requests (same blockhash, same signature):
    # it lands once; the other process says it had already landed instead of claiming a deposit of its own.
    for signature in landed:
        assert [b.get("already_processed", False) for b in confirmed if b["signature"] == signature].count(False) == 1
    assert json.loads(journal_path(isolated).read_text()) == []


def test_the_same_rpc_spelled_three_ways_is_one_cluster(chain, sandbox):
    before = usdc_position(chain)
    sandbox.runtime.set_fault("pending", count=3)
    port = sandbox.rpc_url.rsplit(":", 1)[1]
    first = chain(*DEPOSIT, "--confirm-timeout", "1", "-o", "json")
    assert first.code == 8, first.stderr
    signature = first.json()["signature"]
    for url in (f"http://127.0.0.1:{port}/", f"http://localhost:{port}", f"http://LOCALHOST:{port}//"):
        again = chain(*DEPOSIT, "--url", url)
        assert again.code == 8 and signature in again.stderr, (url, again.stderr)
    assert sandbox.runtime.pending_signatures == [signature]
    sandbox.runtime.set_fault("clear")
    sandbox.runtime.release_pending()
    assert usdc_position(chain) == before + UNIT


def test_kill_9_during_the_wait_then_a_rerun_reports_the_landed_deposit_and_needs_again(chain, chain_env, sandbox):
    before = usdc_position(chain)
    signature = killed_while_pending(chain_env, sandbox)
    sandbox.runtime.release_pending()  # it lands after its sender died
    assert usdc_position(chain) == before + UNIT
    for _ in range(2):  # a blind retry is refused every time, not only the first
        rerun = chain(*DEPOSIT)
        assert rerun.code == 10, rerun.stderr
        assert f"your earlier deposit {signature} landed in slot" in rerun.stderr and "--again" in rerun.stderr
    assert usdc_position(chain) == before + UNIT
    again = chain(*DEPOSIT, "--again", "-o", "json")
    assert again.code == 0, again.stderr
    assert f"your earlier deposit {signature} landed" in again.stderr
    assert usdc_position(chain) == before + 2 * UNIT
    assert chain(*DEPOSIT).code == 0  # acknowledged once: later deposits need nothing more


def test_kill_9_before_the_blockhash_passes_blocks_and_an_expired_entry_is_dropped(chain, chain_env, sandbox):
    before = usdc_position(chain)
    signature = killed_while_pending(chain_env, sandbox)
    blocked = chain(*DEPOSIT)
    assert blocked.code == 8 and signature in blocked.stderr
    sandbox.runtime.drop_pending()  # never lands; its blockhash then passes
    sandbox.runtime.advance_slots(400)
    assert chain(*DEPOSIT).code == 0
    assert usdc_position(chain) == before + UNIT


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_during_the_wait_prints_the_signature_and_exits_130(chain, chain_env, sandbox, sig):
    sandbox.runtime.set_fault("pending", count=1)
    proc = start(chain_env, *DEPOSIT, "--confirm-timeout", "300", "-o", "json")
    signature = held_once(sandbox)
    proc.send_signal(sig)
    code = proc.wait(timeout=60)
    out, err = proc.communicate()
    assert code == 130, err
    assert "Traceback" not in err
    assert signature in err and "may still land" in err and f"yield tx status {signature}" in err
    assert json.loads(out)["signature"] == signature  # scripts get it on stdout too
    sandbox.runtime.release_pending()
    status = chain("tx", "status", signature, "-o", "json")
    assert status.code == 0 and status.json()["status"] in ("confirmed", "finalized")


ALREADY_PROCESSED = {
    "code": -32002,
    "message": "Transaction simulation failed: This transaction has already been processed",
    "data": {"err": "AlreadyProcessed", "logs": [], "accounts": None, "unitsConsumed": 0},
}


class _SendAnswersError:
    """A stand-in RPC in front of the sandbox's: it lands each transaction sent, then answers the send
    with `error` (by default as a node answers a retry of a transaction that landed: AlreadyProcessed)."""

    def __init__(self, upstream: str, error: dict = ALREADY_PROCESSED):
        forward = self._forward = lambda body: urllib.request.urlopen(
            urllib.request.Request(upstream, body, {"Content-Type": "application/json"}), timeout=30
        ).read()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                answer = forward(body)
                request = json.loads(body)
                if isinstance(request, dict) and request.get("method") == "sendTransaction":
                    answer = json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": error}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def test_already_processed_on_send_is_reported_as_landed(chain, sandbox):
    before = usdc_position(chain)
    proxy = _SendAnswersError(sandbox.rpc_url)
    try:
        result = chain(*DEPOSIT, "--url", proxy.url, "-o", "json")
    finally:
        proxy.stop()
    assert result.code == 0, result.stderr
    body = result.json()
    assert body["status"] == "confirmed" and body["already_processed"] is True and body["slot"] > 0
    assert usdc_position(chain) == before + UNIT


def test_an_error_answering_the_send_is_not_taken_at_its_word_the_chain_is_asked(chain, sandbox):
    before = usdc_position(chain)
    proxy = _SendAnswersError(sandbox.rpc_url, {"code": -32603, "message": "Internal error"})
    try:
        result = chain(*DEPOSIT, "--url", proxy.url, "-o", "json")
    finally:
        proxy.stop()
    # The node forwarded it and then failed: the run asked the chain, which shows it landed.
    assert result.code == 0, result.stderr
    signature = result.json()["signature"]
    assert result.json()["status"] == "confirmed" and result.json()["send_error"]
    assert f"the send of {signature} ended in an error" in result.stderr and "asking the chain" in result.stderr
    assert usdc_position(chain) == before + UNIT  # it did land, once
    rerun = chain(*DEPOSIT)
    assert rerun.code == 0, rerun.stderr  # settled and shown: the next deposit is a new one
    assert usdc_position(chain) == before + 2 * UNIT


def test_sending_a_transaction_that_already_landed_reports_its_outcome(chain, sandbox, tmp_path):
    import base64

    from solders.transaction import VersionedTransaction

    before = usdc_position(chain)
    signed = chain("deposit", "--asset", "USDC", "--amount", "1", "--sign", "-o", "json")
    assert signed.code == 0, signed.stderr
    path = tmp_path / "signed.json"
    path.write_text(signed.stdout)
    # sent earlier by someone else (another tool, a crashed run): it landed
    landed = sandbox.runtime.send_transaction(
        VersionedTransaction.from_bytes(base64.b64decode(signed.json()["transaction"]))
    )
    assert landed.landed
    again = chain("tx", "send", str(path), "--yes", "-o", "json")
    assert again.code == 0, again.stderr
    body = again.json()
    assert body["status"] == "confirmed" and body["slot"] == landed.record.slot and body["already_processed"] is True
    assert body["signature"] == landed.signature and "simulation" not in again.stderr
    assert usdc_position(chain) == before + UNIT


def test_sending_a_landed_file_whose_blockhash_passed_says_it_landed(chain, sandbox, tmp_path):
    from yieldcli.sandbox.runtime import BLOCKHASH_WINDOW

    signed = chain("deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes", "-o", "json")
    assert signed.code == 0, signed.stderr
    before = usdc_position(chain)
    sandbox.runtime.advance_slots(BLOCKHASH_WINDOW + 5)  # long ago: its blockhash has passed
    path = tmp_path / "landed.json"
    path.write_text(signed.stdout)
    again = chain("tx", "send", str(path), "--yes", "-o", "json")
    # Not "the RPC does not know its blockhash" (exit 10): it landed, nothing is sent again.
    assert again.code == 0, again.stderr
    assert again.json()["already_processed"] is True and again.json()["signature"] == signed.json()["signature"]
    assert usdc_position(chain) == before


@pytest.mark.parametrize("content", ["{half a journ", '[{"signature": 5}]'])
def test_a_damaged_journal_exits_3_naming_the_file(chain, sandbox, isolated, content):
    path = journal_path(isolated)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    before = usdc_position(chain)
    result = chain(*DEPOSIT)
    assert result.code == 3, result.stderr
    assert str(path) in result.stderr and result.stderr.startswith("error:")
    assert path.read_text() == content and usdc_position(chain) == before
    # the hint says to check the signatures with `yield tx status`: that still works
    landed = chain("deposit", "--asset", "USDC", "--amount", "1", "--sign", "-o", "json").json()["signature"]
    assert chain("tx", "status", landed).code == 8  # signed, never sent: unknown to the cluster


def test_an_rpc_on_another_cluster_is_refused_before_signing(chain, sandbox, tmp_path):
    other = serve_sandbox(tmp_path / "other-cluster")
    try:
        before = usdc_position(chain)
        other.start_chain()  # started now, with the same (deterministic) first blockhashes as ours
        for _ in range(3):
            sandbox.runtime.expire_blockhash()  # ours moves on: the other cluster never saw these
        result = chain(*DEPOSIT, "--url", other.rpc_url)
        assert result.code == 10, result.stderr
        assert "does not know this transaction's blockhash" in result.stderr and "another cluster" in result.stderr
        assert other.runtime.pending_signatures == []
    finally:
        other.stop()
    assert usdc_position(chain) == before


def test_a_bot_sending_without_waiting_is_not_blocked_by_its_own_landed_sends(chain, sandbox, isolated):
    before = usdc_position(chain)
    signatures = []
    for _ in range(3):
        sent = chain(*DEPOSIT, "--no-wait", "-o", "json")
        assert sent.code == 0, sent.stderr
        signatures.append(sent.json()["signature"])
        if len(signatures) > 1:  # the one before landed: settled, said on stderr, not refused
            assert f"your earlier deposit {signatures[-2]} (sent without waiting) landed" in sent.stderr
    assert usdc_position(chain) == before + 3 * UNIT
    # one still pending blocks the next, and the refusal says how to learn its fate
    sandbox.runtime.set_fault("pending", count=1)
    held = chain(*DEPOSIT, "--no-wait", "-o", "json").json()["signature"]
    blocked = chain(*DEPOSIT, "--no-wait")
    assert blocked.code == 8 and f"yield tx status {held}" in blocked.stderr
    sandbox.runtime.set_fault("clear")
    sandbox.runtime.release_pending()
    assert chain(*DEPOSIT, "--no-wait").code == 0
    assert usdc_position(chain) == before + 5 * UNIT


def test_the_refusal_after_a_killed_run_names_tx_status_and_again(chain, chain_env, sandbox):
    signature = killed_while_pending(chain_env, sandbox)
    sandbox.runtime.release_pending()
    refused = chain(*DEPOSIT, "--no-wait")  # a landing its sender never reported still needs acknowledging
    assert refused.code == 10
    assert f"yield tx status {signature}" in refused.stderr and "--again" in refused.stderr


def test_a_tool_that_empties_the_data_folders_journal_cannot_make_a_pending_send_forgotten(
    chain, chain_env, sandbox, isolated
):
    # An agent may write the data folder: replacing the journal there with an empty one must not let a
    # second deposit go out while the first may still land (the mirror in the config folder keeps it).
    before = usdc_position(chain)
    sandbox.runtime.set_fault("pending", count=1)
    first = chain(*DEPOSIT, "--confirm-timeout", "1", "-o", "json")
    assert first.code == 8, first.stderr
    held = sandbox.runtime.pending_signatures
    path = journal_path(isolated)
    emptied = path.with_name("emptied.json")
    emptied.write_text("[]")
    emptied.chmod(0o600)
    emptied.replace(path)  # renamed over it, as a tool with write access to the folder can
    second = chain(*DEPOSIT, "-o", "json")
    assert second.code == 8 and held[0] in second.stderr, second.stderr
    assert sandbox.runtime.pending_signatures == held  # nothing more was sent
    sandbox.runtime.set_fault("clear")
    sandbox.runtime.release_pending()
    assert usdc_position(chain) <= before + UNIT
