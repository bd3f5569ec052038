"""The OpenAPI document the real binary serves is a valid OpenAPI 3.1 document (checked by the
independent `openapi-spec-validator`), and what it says about a few routes holds."""

import httpx
from openapi_spec_validator import validate
from openapi_spec_validator.validation.exceptions import OpenAPIValidationError

from conftest import Env


def test_served_document_is_valid_openapi_3_1(env: Env) -> None:
    doc = httpx.get(f"{env.url}/api/openapi.json", timeout=30).json()
    assert doc["openapi"] == "3.1.0"
    validate(doc)  # raises on any violation of the OpenAPI 3.1 schema


def test_validator_would_catch_a_broken_document(env: Env) -> None:
    doc = httpx.get(f"{env.url}/api/openapi.json", timeout=30).json()
    doc["paths"]["/api/user/self"]["get"]["responses"] = "none"
    try:
        validate(doc)
    except OpenAPIValidationError:
        return
    raise AssertionError("a document with invalid responses passed validation")


def test_documented_access_matches_the_server(env: Env, admin: httpx.Client) -> None:
    doc = httpx.get(f"{env.url}/api/openapi.json", timeout=30).json()
    anonymous = httpx.Client(base_url=env.url, timeout=30)
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if "{" in path or method != "get" or path in ("/api/user/logout", "/api/user/token"):
                continue
            r = anonymous.request(method.upper(), path)
            if op["x-access"] == "public":
                assert r.status_code != 401, (method, path, r.text)
            else:
                assert r.status_code == 401, (method, path, r.text)
                assert admin.request(method.upper(), path).status_code not in (401, 404, 405), (method, path)
