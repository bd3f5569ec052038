//! The OpenAPI 3.1 document of the management API, generated from the route table in
//! [`super::api_routes`] (the same table that registers the routes) and the JSON Schemas of the
//! request types (`schemars`). Served at `/api/openapi.json`; `/api/docs` is a small page that
//! renders it without loading anything from elsewhere.

use super::{api_routes, Access, RouteDoc};
use actix_web::http::header;
use actix_web::HttpResponse;
use schemars::generate::SchemaSettings;
use serde_json::{json, Map, Value};
use std::sync::OnceLock;

/// `GET /api/openapi.json`.
pub async fn document() -> HttpResponse {
    static DOC: OnceLock<String> = OnceLock::new();
    let body = DOC.get_or_init(|| build().to_string());
    HttpResponse::Ok()
        .content_type("application/json")
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .body(body.as_str())
}

/// `GET /api/docs`: the browsable page.
pub async fn page() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .insert_header((
            header::CONTENT_SECURITY_POLICY,
            "default-src 'self'; script-src 'unsafe-inline' 'self'; style-src 'unsafe-inline'",
        ))
        .body(PAGE)
}

/// The whole document.
pub fn build() -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.definitions_path = "/components/schemas".into();
    let mut generator = settings.into_generator();
    let mut paths: Map<String, Value> = Map::new();
    let mut tags: Vec<&str> = Vec::new();
    for route in api_routes() {
        if !tags.contains(&route.tag) {
            tags.push(route.tag);
        }
        let op = operation(&route, &mut generator);
        let entry = paths
            .entry(format!("/api{}", route.path))
            .or_insert_with(|| json!({}));
        entry[route.method] = op;
    }
    let mut schemas = generator.take_definitions(true);
    schemas.insert(
        "Envelope".into(),
        json!({
            "type": "object",
            "description": "Every /api answer. `data` is the result; lists put `{data: [...], page, size, total_count}` there.",
            "required": ["success", "message"],
            "properties": {
                "success": {"type": "boolean"},
                "message": {"type": "string"},
                "data": {}
            }
        }),
    );
    schemas.insert(
        "Error".into(),
        json!({
            "type": "object",
            "description": "A failed call: `message` says what is wrong, `code` is stable snake_case.",
            "required": ["success", "message", "code"],
            "properties": {
                "success": {"const": false},
                "message": {"type": "string"},
                "code": {"type": "string"}
            }
        }),
    );
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Switchboard management API",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "The API behind the Switchboard console. Answers are `{success, message, data}` envelopes with real HTTP statuses. Sign in with `POST /api/user/login` (session cookie) or send an access token in `Authorization`. Each operation's `x-access` says who may call it: public, user, admin (role >= 10) or root (role 100). The OpenAI-compatible relay under `/v1` is described by OpenAI's own API reference."
        },
        "servers": [{"url": "/"}],
        "tags": tags.iter().map(|t| json!({"name": t})).collect::<Vec<_>>(),
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "session": {"type": "apiKey", "in": "cookie", "name": "session"},
                "accessToken": {"type": "apiKey", "in": "header", "name": "Authorization"}
            }
        }
    })
}

/// What a successful answer is: JSON in the envelope, except the few downloads and pages.
fn success_media_type(path: &str) -> &'static str {
    if path.ends_with(".csv") {
        "text/csv"
    } else if path.ends_with("/pdf") {
        "application/pdf"
    } else if path == "/docs" || path == "/api/docs" {
        "text/html"
    } else {
        "application/json"
    }
}

fn operation(route: &RouteDoc, generator: &mut schemars::SchemaGenerator) -> Value {
    let mut parameters: Vec<Value> = route
        .path
        .split('/')
        .filter_map(|seg| seg.strip_prefix('{')?.strip_suffix('}'))
        .map(|name| {
            let schema = if name == "id" {
                json!({"type": "integer", "format": "int64"})
            } else {
                json!({"type": "string"})
            };
            json!({"name": name, "in": "path", "required": true, "schema": schema})
        })
        .collect();
    if let Some(query) = route.query {
        let schema = query(generator);
        parameters.extend(query_parameters(&schema, generator));
    }
    let mut responses = Map::new();
    let success = match success_media_type(route.path) {
        "application/json" => {
            json!({"application/json": {"schema": {"$ref": "#/components/schemas/Envelope"}}})
        }
        other => json!({ other: {"schema": {"type": "string"}} }),
    };
    responses.insert(
        "2XX".into(),
        json!({"description": "Success", "content": success}),
    );
    let error = |what: &str| json!({"description": what, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}});
    if route.query.is_some() || route.body.is_some() || route.path.contains('{') {
        responses.insert("400".into(), error("Invalid input"));
    }
    if route.access != Access::Public {
        responses.insert("401".into(), error("Not signed in, or the session expired"));
    }
    if matches!(route.access, Access::Admin | Access::Root) {
        responses.insert("403".into(), error("The caller's role may not do this"));
    }
    if route.path.contains('{') {
        responses.insert("404".into(), error("No such record"));
    }
    responses.insert("429".into(), error("Too many requests"));
    // Refusals particular to an operation (a name already taken, a record in use, a filter only
    // administrators may set, a cross-site browser call, a service not configured) share the
    // error envelope and its stable `code`.
    responses.insert(
        "default".into(),
        error("Any other refusal: the error envelope with a stable code"),
    );
    // A payment gateway's notification is answered in that gateway's own format (epay: the
    // text `success` or `fail`; Stripe: a JSON object), never in the envelope.
    if route.path.contains("/payment/notify/") {
        let gateway = json!({
            "text/plain": {"schema": {"type": "string"}},
            "application/json": {"schema": {"type": "object"}}
        });
        responses = Map::new();
        responses.insert(
            "2XX".into(),
            json!({"description": "Acknowledged (epay: `success`; Stripe: `{\"received\": true}`)",
                   "content": gateway.clone()}),
        );
        responses.insert(
            "default".into(),
            json!({"description": "Refused (4xx) or to be retried (5xx), in the gateway's format",
                   "content": gateway}),
        );
    }
    // Telegram's webhook is answered `{"ok": ...}`, never in the envelope.
    if route.path.starts_with("/telegram/") {
        let telegram = json!({"application/json": {"schema": {"type": "object"}}});
        responses = Map::new();
        responses.insert(
            "2XX".into(),
            json!({"description": "Update handled: `{\"ok\": true}`", "content": telegram.clone()}),
        );
        responses.insert(
            "default".into(),
            json!({"description": "Refused: not this bot's token (404) or secret (401)",
                   "content": telegram}),
        );
    }
    let mut op = json!({
        "tags": [route.tag],
        "summary": route.summary,
        "operationId": route.handler.replace("super::", "").replace("::", "_"),
        "x-access": route.access.as_str(),
        "responses": responses,
    });
    if !parameters.is_empty() {
        op["parameters"] = Value::Array(parameters);
    }
    if let Some(body) = route.body {
        let schema = body(generator);
        op["requestBody"] = json!({
            "required": true,
            "content": {"application/json": {"schema": schema}}
        });
    }
    op["security"] = if route.access == Access::Public {
        json!([])
    } else {
        json!([{"session": []}, {"accessToken": []}])
    };
    op
}

/// The query parameters of a query type: the properties of its (referenced) object schema.
fn query_parameters(
    schema: &schemars::Schema,
    generator: &schemars::SchemaGenerator,
) -> Vec<Value> {
    let resolved = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.rsplit('/').next())
        .and_then(|name| generator.definitions().get(name))
        .cloned()
        .unwrap_or_else(|| schema.as_value().clone());
    let required: Vec<&str> = resolved
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = resolved.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(name, prop)| {
            let mut prop = prop.clone();
            let description = prop.as_object_mut().and_then(|o| o.remove("description"));
            let mut p = json!({
                "name": name,
                "in": "query",
                "required": required.contains(&name.as_str()),
                "schema": prop,
            });
            if let Some(d) = description {
                p["description"] = d;
            }
            p
        })
        .collect()
}

/// The browsable page: fetches the document and lists the operations by tag.
const PAGE: &str = r##"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Switchboard API</title>
<style>
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; }
  body { margin: 0 auto; max-width: 1100px; padding: 1rem; line-height: 1.4; }
  h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 2rem; border-bottom: 1px solid #8884; }
  details { border: 1px solid #8884; border-radius: 6px; margin: .4rem 0; padding: .3rem .6rem; }
  summary { cursor: pointer; display: flex; gap: .6rem; align-items: baseline; flex-wrap: wrap; }
  .m { font: 600 .75rem ui-monospace, monospace; padding: .1rem .4rem; border-radius: 4px; color: #fff; min-width: 3.5rem; text-align: center; }
  .get { background: #2563eb; } .post { background: #16a34a; } .put { background: #d97706; } .delete { background: #dc2626; }
  code, pre { font-family: ui-monospace, monospace; font-size: .85rem; }
  pre { background: #8881; padding: .5rem; overflow: auto; border-radius: 4px; }
  .a { font-size: .75rem; border: 1px solid #8886; border-radius: 99px; padding: 0 .4rem; }
  input { width: 100%; padding: .4rem; margin: .5rem 0; box-sizing: border-box; }
  table { border-collapse: collapse; } td, th { text-align: left; padding: .15rem .6rem .15rem 0; vertical-align: top; }
</style>
</head>
<body>
<h1 id="title">Switchboard API</h1>
<p id="desc"></p>
<p><a href="/api/openapi.json">openapi.json</a></p>
<input id="filter" type="search" placeholder="Filter by path or summary" aria-label="Filter">
<div id="out">Loading…</div>
<script>
const esc = (s) => String(s ?? '').replace(/[&<>"]/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]));
let doc;
function resolve(schema) {
  const ref = schema && schema.$ref;
  return ref ? doc.components.schemas[ref.split('/').pop()] : schema;
}
function render() {
  const q = document.getElementById('filter').value.toLowerCase();
  const groups = {};
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (q && !(path + ' ' + op.summary).toLowerCase().includes(q)) continue;
      (groups[op.tags[0]] ||= []).push([method, path, op]);
    }
  }
  let html = '';
  for (const tag of doc.tags.map((t) => t.name)) {
    const ops = groups[tag];
    if (!ops) continue;
    html += '<h2>' + esc(tag) + '</h2>';
    for (const [method, path, op] of ops) {
      html += '<details><summary><span class="m ' + method + '">' + method.toUpperCase() + '</span><code>' + esc(path) +
        '</code><span>' + esc(op.summary) + '</span><span class="a">' + esc(op['x-access']) + '</span></summary>';
      if (op.parameters) {
        html += '<table><tr><th>Parameter</th><th>In</th><th>Type</th><th>Description</th></tr>';
        for (const p of op.parameters) {
          const t = p.schema.type || (p.schema.anyOf || []).map((x) => x.type).join(' | ') || '';
          html += '<tr><td><code>' + esc(p.name) + (p.required ? ' *' : '') + '</code></td><td>' + esc(p.in) + '</td><td>' +
            esc(Array.isArray(t) ? t.join(' | ') : t) + '</td><td>' + esc(p.description) + '</td></tr>';
        }
        html += '</table>';
      }
      if (op.requestBody) {
        const s = resolve(op.requestBody.content['application/json'].schema);
        html += '<p>Request body</p><pre>' + esc(JSON.stringify(s, null, 2)) + '</pre>';
      }
      html += '<p>Responses: ' + Object.keys(op.responses).map(esc).join(', ') + '</p></details>';
    }
  }
  document.getElementById('out').innerHTML = html || '<p>No operation matches.</p>';
}
fetch('/api/openapi.json').then((r) => r.json()).then((d) => {
  doc = d;
  document.getElementById('title').textContent = d.info.title + ' ' + d.info.version;
  document.getElementById('desc').textContent = d.info.description;
  document.getElementById('filter').addEventListener('input', render);
  render();
}).catch((e) => { document.getElementById('out').textContent = 'Could not load the document: ' + e; });
</script>
</body>
</html>
"##;
