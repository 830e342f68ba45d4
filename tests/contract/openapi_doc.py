"""The service's OpenAPI 3.1 document, and checks of requests and responses against it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

DOC_PATH = Path(__file__).resolve().parent / "openapi.json"
DOC = json.loads(DOC_PATH.read_text())
DOC_URI = "urn:yield:openapi"
REGISTRY = Registry().with_resource(DOC_URI, Resource.from_contents(DOC, default_specification=DRAFT202012))


def pointer(*parts: str) -> str:
    return "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts)


def validator(json_pointer: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": f"{DOC_URI}#/{json_pointer}"}, registry=REGISTRY)


def template(path: str) -> str:
    """The document's path template for a concrete path (a trailing slash is the same path)."""
    path = path.rstrip("/") or "/"
    for candidate in DOC["paths"]:
        pattern = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(candidate)) + "$"
        if re.match(pattern, path):
            return candidate
    raise AssertionError(f"{path} is not in the OpenAPI document")


def _coerce(text: str, schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "integer" in kinds and re.fullmatch(r"-?\d+", text):
        return int(text)
    if "boolean" in kinds and text in ("true", "false"):
        return text == "true"
    return text


def check_request(method: str, path: str, query: str, body: bytes) -> list[str]:
    """Problems with a request the client sent, as a list of messages (empty: it conforms)."""
    problems: list[str] = []
    tmpl = template(path)
    operation = DOC["paths"][tmpl].get(method.lower())
    if operation is None:
        return [f"{method} {tmpl} is not an operation of the document"]
    declared = {p["name"]: p for p in operation.get("parameters", []) if p.get("in") == "query"}
    sent = dict(parse_qsl(query, keep_blank_values=True))
    for name, value in sent.items():
        if name not in declared:
            problems.append(f"{method} {tmpl}: undeclared query parameter {name!r}")
            continue
        schema = declared[name].get("schema", {})
        for error in Draft202012Validator(schema).iter_errors(_coerce(value, schema)):
            problems.append(f"{method} {tmpl}: query {name}={value!r}: {error.message}")
    for name, param in declared.items():
        if param.get("required") and name not in sent:
            problems.append(f"{method} {tmpl}: missing required query parameter {name!r}")
    if method.upper() == "POST":
        content = operation["requestBody"]["content"]["application/json"]
        media_pointer = pointer("paths", tmpl, "post", "requestBody", "content", "application/json", "schema")
        assert "schema" in content
        try:
            payload = json.loads(body)
        except ValueError:
            return problems + [f"POST {tmpl}: body is not JSON"]
        for error in validator(media_pointer).iter_errors(payload):
            problems.append(f"POST {tmpl}: body: {error.message}")
    return problems
