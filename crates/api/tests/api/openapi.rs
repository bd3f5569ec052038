//! The OpenAPI document describes what the server really does: every documented operation
//! exists, and its declared access (`x-access`) is the one the server enforces.

use crate::common::{Client, Resp, TestApp};
use reqwest::Method;
use serde_json::{json, Value};

/// The concrete path of a documented one: `{id}` becomes an id nobody has (so that a let-in
/// caller reaches "not found" instead of acting on a real record), other parameters `x`.
fn concrete(path: &str) -> String {
    path.split('/')
        .map(|seg| match seg {
            "{id}" => "987654",
            s if s.starts_with('{') => "x",
            s => s,
        })
        .collect::<Vec<_>>()
        .join("/")
}

async fn call(c: &Client, method: &str, path: &str, has_body: bool) -> Resp {
    let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
    let body = if has_body { "{}" } else { "" };
    c.raw(method, path, body.to_owned()).await
}

/// Whether the answer is the router's "no such route" (the route does not exist).
fn no_route(r: &Resp) -> bool {
    r.status == 405
        || (r.status == 404
            && r.body["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("no such API route")))
}

fn refused_auth(r: &Resp) -> bool {
    matches!(
        r.body["code"].as_str(),
        Some("not_logged_in" | "session_expired" | "forbidden")
    ) && matches!(r.status, 401 | 403)
}

fn operations(doc: &Value) -> Vec<(String, String, Value)> {
    let mut ops = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            ops.push((method.clone(), path.clone(), op.clone()));
        }
    }
    ops
}

#[actix_web::test]
async fn the_document_is_served_and_well_formed() {
    let app = TestApp::new().await;
    let r = app.client().get("/api/openapi.json").await;
    assert_eq!(r.status, 200);
    let doc = r.body;
    assert_eq!(doc["openapi"], "3.1.0");
    assert!(doc["info"]["version"].is_string());
    let ops = operations(&doc);
    assert!(ops.len() >= 90, "only {} operations", ops.len());
    let mut ids = std::collections::BTreeSet::new();
    for (method, path, op) in &ops {
        assert!(path.starts_with("/api/"), "{path}");
        assert!(["get", "post", "put", "delete"].contains(&method.as_str()));
        assert!(
            !op["summary"].as_str().unwrap().is_empty(),
            "{method} {path}"
        );
        assert!(
            ids.insert(op["operationId"].as_str().unwrap().to_owned()),
            "duplicate id at {method} {path}"
        );
        assert!(["public", "user", "admin", "root"].contains(&op["x-access"].as_str().unwrap()));
        // Every $ref points at a schema that exists.
        for r in refs(op) {
            let name = r
                .strip_prefix("#/components/schemas/")
                .unwrap_or_else(|| panic!("{r}"));
            assert!(
                doc["components"]["schemas"].get(name).is_some(),
                "{r} missing ({method} {path})"
            );
        }
    }
    // Request bodies carry their field names (from the Rust types).
    let login = &doc["paths"]["/api/user/login"]["post"]["requestBody"]["content"]
        ["application/json"]["schema"];
    let name = login["$ref"].as_str().unwrap().rsplit('/').next().unwrap();
    let props = &doc["components"]["schemas"][name]["properties"];
    assert!(
        props.get("username").is_some() && props.get("password").is_some(),
        "{props}"
    );
    // List queries become query parameters.
    let params = doc["paths"]["/api/channel"]["get"]["parameters"]
        .as_array()
        .unwrap();
    for p in ["page", "size", "keyword", "order", "type", "status"] {
        assert!(
            params.iter().any(|x| x["name"] == p && x["in"] == "query"),
            "channel list lacks {p}"
        );
    }
    // The page renders the document.
    let page = app.client().get("/api/docs").await;
    assert_eq!(page.status, 200);
    let html = page.body.as_str().unwrap();
    assert!(html.contains("/api/openapi.json") && html.contains("<script>"));
}

fn refs(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                if k == "$ref" {
                    out.push(x.as_str().unwrap().to_owned());
                } else {
                    out.extend(refs(x));
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| out.extend(refs(x))),
        _ => {}
    }
    out
}

/// Every documented operation exists (never "no such route"), refuses callers below its
/// declared access with 401/403, and lets callers at that level through.
#[actix_web::test]
async fn every_operation_exists_and_enforces_its_declared_access() {
    let app = TestApp::new().await;
    let doc = app.client().get("/api/openapi.json").await.body;
    let (user, _) = app.user("doc-user").await;
    let (admin, _) = app.admin("doc-admin").await;
    let anonymous = app.client();
    let root = app.root();
    let mut checked = 0;
    for (method, path, op) in operations(&doc) {
        let access = op["x-access"].as_str().unwrap();
        let url = concrete(&path);
        let body = op.get("requestBody").is_some();
        // Calls that end the caller's own credentials run last, below.
        if path == "/api/user/logout" || path == "/api/user/token" {
            continue;
        }
        let level = ["public", "user", "admin", "root"]
            .iter()
            .position(|a| *a == access)
            .unwrap();
        for (i, (who, client)) in [
            ("anonymous", &anonymous),
            ("user", &user),
            ("admin", &admin),
            ("root", &root),
        ]
        .into_iter()
        .enumerate()
        {
            let r = call(client, &method, &url, body).await;
            assert!(
                !no_route(&r),
                "{method} {path} does not exist: {:?}",
                r.body
            );
            if i < level {
                assert!(
                    refused_auth(&r),
                    "{method} {path} is documented as {access} but let {who} in: {} {:?}",
                    r.status,
                    r.body
                );
                let expected = if i == 0 { 401 } else { 403 };
                assert_eq!(r.status, expected, "{method} {path} as {who}: {:?}", r.body);
            } else {
                assert!(
                    !refused_auth(&r),
                    "{method} {path} is documented as {access} but refused {who}: {} {:?}",
                    r.status,
                    r.body
                );
            }
        }
        checked += 1;
    }
    assert!(checked >= 90);

    // The two credential-changing calls: an access token for the signed-in user, then sign-out.
    let r = anonymous.get("/api/user/token").await;
    assert_eq!(r.status, 401);
    assert_eq!(
        anonymous.post("/api/user/token", json!({})).await.status,
        401
    );
    assert!(user
        .post("/api/user/token", json!({}))
        .await
        .ok()
        .is_string());
    assert!(root.get("/api/user/token").await.ok().is_string());
    assert!(anonymous.get("/api/user/logout").await.status < 300);
    assert!(anonymous.post("/api/user/logout", json!({})).await.status < 300);
    assert!(user.post("/api/user/logout", json!({})).await.status < 300);
    assert_eq!(user.get("/api/user/self").await.status, 401);
}
