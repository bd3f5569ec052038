//! A consume record the database refuses never blocks anybody else's: the ledger flush writes
//! the others, writes the refused one sanitised when that makes it storable, parks it in
//! `dead_letters` when not, and administrators list the parked ones.

use crate::common::TestApp;
use serde_json::json;
use switchboard_ledger::Reservation;
use switchboard_store::logs::{self, ConsumeRecord};
use switchboard_store::testing::{self, TestDb};
use switchboard_store::{tokens, users};

const QUOTA: i64 = 1_000_000;

fn poisoned(user_id: i64, token_id: i64, rid: &str, quota: i64) -> ConsumeRecord {
    ConsumeRecord {
        request_id: Some(rid.into()),
        created_at: switchboard_store::now(),
        log_type: 2,
        user_id,
        username: "poisoned".into(),
        token_id,
        token_name: "relay".into(),
        channel_id: 0,
        // A NUL byte (PostgreSQL refuses it) and 300 characters (longer than the column).
        model_name: format!("house-\0{}", "m".repeat(293)).into(),
        group_name: "default".into(),
        quota,
        prompt_tokens: 1,
        completion_tokens: 1,
        use_time_ms: 1,
        first_response_ms: 0,
        is_stream: false,
        // A forged X-Forwarded-For of 100 characters (the column holds 64).
        source_ip: "1".repeat(100).into(),
        content: String::new(),
        metadata: "{}".into(),
        cache_hit: false,
    }
}

async fn scenario(app: TestApp) {
    let a = app
        .relay_setup(QUOTA, json!({"unlimited_quota": true}))
        .await;
    let b = app
        .relay_setup(QUOTA, json!({"unlimited_quota": true}))
        .await;
    {
        let c = &mut app.conn();
        // SQLite does not enforce column sizes; this makes it refuse what PostgreSQL refuses.
        testing::enforce_log_lengths_on_sqlite(c);
        // A record no sanitising can make storable.
        testing::refuse_log_request_id(c, "unstorable-1");
    }
    // Two poisoned records of user A in the ledger's queue, as the relay would settle them.
    let ledger = &app.state.relay.ledger;
    for (rid, quota) in [("sanitisable-1", 7), ("unstorable-1", 11)] {
        let r = Reservation::none(a.user_id, a.token_id);
        ledger.settle(r, poisoned(a.user_id, a.token_id, rid, quota), 0);
    }
    // User B's request goes through after them.
    let chat = json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hi"}]});
    assert_eq!(
        app.relay(&b.key, "/v1/chat/completions", chat).await.status,
        200
    );
    app.flushed().await;
    assert_eq!(ledger.pending_len(), 0, "nothing left queued");
    let c = &mut app.conn();
    // B's request is written and charged.
    let b_logs = logs::recent_for_user(c, b.user_id, 10).unwrap();
    let b_consume: Vec<_> = b_logs.iter().filter(|l| l.log_type == 2).collect();
    assert_eq!(b_consume.len(), 1, "{b_logs:?}");
    let spent = b_consume[0].quota;
    assert!(spent > 0);
    assert_eq!(users::find(c, b.user_id).unwrap().quota, QUOTA - spent);
    // A's sanitisable record is written sanitised and charged; the unstorable one is not.
    let a_logs: Vec<_> = logs::recent_for_user(c, a.user_id, 10)
        .unwrap()
        .into_iter()
        .filter(|l| l.log_type == 2)
        .collect();
    assert_eq!(a_logs.len(), 1, "{a_logs:?}");
    let row = &a_logs[0];
    assert_eq!(row.request_id.as_deref(), Some("sanitisable-1"));
    assert_eq!(row.quota, 7);
    assert_eq!(row.model_name, format!("house-{}", "m".repeat(249)));
    assert_eq!(row.source_ip, "1".repeat(64));
    assert_eq!(users::find(c, a.user_id).unwrap().quota, QUOTA - 7);
    assert_eq!(tokens::find(c, a.token_id).unwrap().used_quota, 7);
    // Administrators see the parked record; others may not.
    let (admin, _) = app.admin("dl-admin").await;
    let r = admin.get("/api/log/dead_letters").await;
    let d = r.ok();
    assert_eq!(
        (&d["page"], &d["size"], &d["total_count"]),
        (&json!(1), &json!(10), &json!(1)),
        "{d}"
    );
    let letter = &d["data"][0];
    assert_eq!(letter["request_id"], "unstorable-1");
    assert_eq!(letter["kind"], "consume");
    assert_eq!(
        (&letter["user_id"], &letter["token_id"], &letter["quota"]),
        (&json!(a.user_id), &json!(a.token_id), &json!(11))
    );
    assert_eq!(letter["resolved_at"], 0);
    assert!(
        letter["reason"]
            .as_str()
            .unwrap()
            .contains("refused by test trigger"),
        "{letter}"
    );
    assert_eq!(
        letter["payload"]["model_name"],
        format!("house-\0{}", "m".repeat(293))
    );
    assert_eq!(letter["payload"]["source_ip"], "1".repeat(100));
    let root = app.root().get("/api/log/dead_letters?page=2&size=5").await;
    assert_eq!(root.ok()["data"], json!([]));
    assert_eq!(root.ok()["total_count"], 1);
    admin
        .get("/api/log/dead_letters?size=1000")
        .await
        .err(400, "invalid_size");
    a.user
        .get("/api/log/dead_letters")
        .await
        .err(403, "forbidden");
    app.client()
        .get("/api/log/dead_letters")
        .await
        .err(401, "not_logged_in");
}

#[actix_web::test]
async fn a_refused_record_blocks_nobody_and_is_listed_for_admins() {
    scenario(TestApp::new().await).await;
}

#[actix_web::test]
async fn a_refused_record_blocks_nobody_on_postgres() {
    match TestDb::postgres() {
        Some(db) => scenario(TestApp::on(db, |_| {}).await).await,
        None => println!("TEST_PG_DSN not set: the PostgreSQL flush isolation not run"),
    }
}
