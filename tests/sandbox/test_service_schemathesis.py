"""Schemathesis against `yield sandbox serve`, from the service's OpenAPI document (the repository's
copy of it): no server error, no response breaking its schema, and without a key every operation
answers `Missing credentials`. Examples per operation are bounded so the suite stays fast."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import response_schema_conformance

from tests.conftest import YIELD
from tests.contract.openapi_doc import DOC_PATH

schema = schemathesis.openapi.from_path(DOC_PATH)
EXAMPLES_PER_OPERATION = 15


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    home = tmp_path_factory.mktemp("schemathesis-home")
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
    }
    env = {k: v for k, v in env.items() if not k.startswith("YIELD_")}
    proc = subprocess.Popen(
        [YIELD, "sandbox", "serve", "-o", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        yield json.loads(proc.stdout.readline())
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@schema.parametrize()
@settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, suppress_health_check=list(HealthCheck))
def test_operation_conforms_with_the_key(served, case):
    response = case.call(base_url=served["url"], headers={"x-api-key": served["api_key"]}, timeout=30)
    assert response.status_code < 500, (case.method, case.formatted_path, response.status_code, response.text[:300])
    # Status codes the document does not list (415 for a body without Content-Type, as the real
    # service answers) are not a schema violation; a documented one with a wrong body is.
    case.validate_response(response, checks=[response_schema_conformance])


@schema.parametrize()
@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
def test_operation_without_a_key_is_missing_credentials(served, case):
    headers = {k: v for k, v in (case.headers or {}).items() if k.lower() != "x-api-key"}
    case.headers = headers
    response = case.call(base_url=served["url"], timeout=30)
    assert response.status_code == 401, (case.method, case.formatted_path, response.status_code)
    assert response.json() == {"message": "Missing credentials"}
