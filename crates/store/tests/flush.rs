#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The isolating flush (`logs::settle_isolated`): one record the database refuses never blocks
//! the others, a refused record is written sanitised when that makes it storable, and parked in
//! `dead_letters` when not. On every backend available to this run: SQLite always, PostgreSQL
//! and MariaDB when TEST_PG_DSN / TEST_MYSQL_DSN are set.

use diesel::prelude::*;
use switchboard_store::conn::Backend;
use switchboard_store::logs::{self, ConsumeRecord};
use switchboard_store::testing::{self, TestDb};
use switchboard_store::users::NewUser;
use switchboard_store::{channels, dead_letters, schema, tokens, users, DbConn, PageReq};

const START_QUOTA: i64 = 1_000_000;

struct Account {
    user: i64,
    token: i64,
    channel: i64,
}

fn account(c: &mut DbConn, name: &str) -> Account {
    let user = users::insert(
        c,
        &NewUser {
            username: name,
            password: "$2b$04$hash",
            display_name: name,
            role: 1,
            status: 1,
            email: "",
            quota: START_QUOTA,
            group_name: "default",
            aff_code: None,
            inviter_id: 0,
            created_at: 1,
            updated_at: 1,
        },
    )
    .unwrap();
    let hash = format!("hash-{name}");
    let token = tokens::insert(
        c,
        &tokens::NewToken {
            user_id: user,
            name: "k",
            key_hash: &hash,
            key_ciphertext: "ct",
            key_hint: "sk-ab**yz",
            status: 1,
            created_at: 1,
            updated_at: 1,
            expired_at: -1,
            remain_quota: START_QUOTA,
            unlimited_quota: false,
            group_name: "",
            models: "",
            subnet: "",
            api_rate: 0,
            heartbeat_enabled: false,
            heartbeat_timeout: 30,
            cache_enabled: false,
        },
    )
    .unwrap();
    let channel = channels::insert(
        c,
        &channels::ChannelFields {
            channel_type: 1,
            name: format!("up-{name}"),
            key: "sk-upstream".into(),
            base_url: "http://127.0.0.1:1".into(),
            group_name: "default".into(),
            models: "m".into(),
            model_mapping: "{}".into(),
            priority: 0,
            weight: 1,
            tag: String::new(),
            proxy: String::new(),
            test_model: String::new(),
            status: 1,
            custom_headers: "{}".into(),
            config: "{}".into(),
            disabled_stream: String::new(),
            pre_cost: 1,
            auto_ban: true,
            updated_at: 1,
            destination_by_root: true,
        },
    )
    .unwrap();
    Account {
        user,
        token,
        channel,
    }
}

fn record(a: &Account, rid: &str, quota: i64) -> ConsumeRecord {
    ConsumeRecord {
        request_id: Some(rid.into()),
        created_at: 86_400 * 100 + quota,
        log_type: 2,
        user_id: a.user,
        username: "payer".into(),
        token_id: a.token,
        token_name: "k".into(),
        channel_id: a.channel,
        model_name: "gpt-4o-mini".into(),
        group_name: "default".into(),
        quota,
        prompt_tokens: 10,
        completion_tokens: 5,
        use_time_ms: 100,
        first_response_ms: 10,
        is_stream: false,
        source_ip: "127.0.0.1".into(),
        content: String::new(),
        metadata: "{\"group_ratio\":1}".into(),
        cache_hit: false,
    }
}

/// 30 records of one account, quotas 1..=30, with `poison` in place of the tenth.
fn batch_with(
    a: &Account,
    tag: &str,
    poison: impl FnOnce(&mut ConsumeRecord),
) -> Vec<ConsumeRecord> {
    let mut batch: Vec<ConsumeRecord> = (1..=30)
        .map(|i| record(a, &format!("{tag}-{i}"), i))
        .collect();
    poison(&mut batch[9]);
    batch
}

#[derive(Debug, PartialEq, Eq)]
struct Books {
    logs: i64,
    log_quota: i64,
    user: (i64, i64, i64),
    token: (i64, i64, i64),
    channel: i64,
    rollup: (i64, i64),
}

/// The account's balances and counters beside the sums of its consume logs and rollup rows.
fn books(c: &mut DbConn, a: &Account) -> Books {
    use schema::{logs as l, statistics as s};
    let quotas: Vec<i64> = l::table
        .filter(l::user_id.eq(a.user))
        .select(l::quota)
        .load(c)
        .unwrap();
    let rollup: Vec<(i64, i64)> = s::table
        .filter(s::user_id.eq(a.user))
        .select((s::request_count, s::quota))
        .load(c)
        .unwrap();
    let u = users::find(c, a.user).unwrap();
    let t = tokens::find(c, a.token).unwrap();
    Books {
        logs: quotas.len() as i64,
        log_quota: quotas.iter().sum(),
        user: (u.quota, u.used_quota, u.request_count),
        token: (t.remain_quota, t.used_quota, t.request_count),
        channel: channels::find(c, a.channel).unwrap().used_quota,
        rollup: rollup
            .iter()
            .fold((0, 0), |acc, r| (acc.0 + r.0, acc.1 + r.1)),
    }
}

/// Every balance delta equals the consume logs actually written.
fn assert_balanced(c: &mut DbConn, a: &Account, what: &str) -> Books {
    let b = books(c, a);
    let (n, q) = (b.logs, b.log_quota);
    assert_eq!(b.user, (START_QUOTA - q, q, n), "{what}: user");
    assert_eq!(b.token, (START_QUOTA - q, q, n), "{what}: token");
    assert_eq!(b.channel, q, "{what}: channel");
    assert_eq!(b.rollup, (n, q), "{what}: rollup");
    b
}

fn stored(c: &mut DbConn, rid: &str) -> logs::LogRow {
    schema::logs::table
        .filter(schema::logs::request_id.eq(rid))
        .select(logs::LogRow::as_select())
        .first(c)
        .unwrap()
}

type Poison = dyn Fn(&mut ConsumeRecord);

#[test]
fn one_poisoned_record_does_not_block_the_batch_and_is_written_sanitised() {
    let nul = |r: &mut ConsumeRecord| r.model_name = "gpt-4o\0-mini".into();
    let long_model =
        |r: &mut ConsumeRecord| r.model_name = format!("house-{}", "m".repeat(294)).into();
    let long_ip = |r: &mut ConsumeRecord| r.source_ip = "9".repeat(100).into();
    let cases: [(&str, &Poison); 3] = [
        ("nul", &nul),
        ("long-model", &long_model),
        ("long-ip", &long_ip),
    ];
    for db in TestDb::all() {
        let c = &mut db.conn();
        testing::enforce_log_lengths_on_sqlite(c);
        for (tag, poison) in cases {
            let what = format!("{:?} {tag}", db.backend);
            let a = account(c, tag);
            let batch = batch_with(&a, tag, poison);
            let poisoned = batch[9].clone();
            // What each backend refuses as it stands: PostgreSQL NUL and over-long values,
            // MariaDB (strict mode) over-long values, SQLite over-long values with the trigger
            // that stands in for the column sizes it does not enforce.
            let refused = match db.backend {
                Backend::Postgres => true,
                Backend::Mysql | Backend::Sqlite => tag != "nul",
            };
            if refused {
                let whole = logs::settle_new_batch(c, &batch).unwrap_err();
                assert!(whole.is_about_data(), "{what}: {whole}");
            }
            let out = logs::settle_isolated(c, &batch).unwrap();
            assert_eq!(out.written, 30, "{what}: {out:?}");
            assert_eq!(out.sanitised, usize::from(refused), "{what}: {out:?}");
            assert!(out.parked.is_empty(), "{what}: {out:?}");
            let b = assert_balanced(c, &a, &what);
            assert_eq!((b.logs, b.log_quota), (30, (1..=30).sum()), "{what}");
            let row = stored(c, &format!("{tag}-10"));
            let expected = if refused {
                poisoned.sanitised()
            } else {
                poisoned.clone()
            };
            assert_eq!(
                (row.model_name.as_str(), row.source_ip.as_str()),
                (expected.model_name.as_str(), expected.source_ip.as_str()),
                "{what}"
            );
            assert_eq!(
                (row.user_id, row.token_id, row.quota),
                (a.user, a.token, 10)
            );
            if refused {
                assert!(row.model_name.chars().count() <= 255 && !row.model_name.contains('\0'));
                assert!(row.source_ip.chars().count() <= 64, "{what}");
            }
            // The same batch again (a flush whose acknowledgement was lost): nothing changes.
            let again = logs::settle_isolated(c, &batch).unwrap();
            assert_eq!((again.written, again.parked.len()), (0, 0), "{what}");
            assert_eq!(books(c, &a), b, "{what}: replay");
        }
        assert_eq!(dead_letters::count_open(c).unwrap(), 0);
    }
}

#[test]
fn a_record_refused_even_sanitised_is_parked_and_the_others_written() {
    for db in TestDb::all() {
        let c = &mut db.conn();
        let a = account(c, "payer");
        let other = account(c, "bystander");
        testing::refuse_log_request_id(c, "park-10");
        let mut batch = batch_with(&a, "park", |r| {
            // Also poisoned in ways sanitising would fix: the parked payload keeps them.
            r.model_name = format!("m\0{}", "x".repeat(300)).into();
            r.content = "secret \0 prompt".into();
        });
        batch.push(record(&other, "bystander-1", 1_000));
        let out = logs::settle_isolated(c, &batch).unwrap();
        let what = format!("{:?}", db.backend);
        assert_eq!(out.written, 30, "{what}: {out:?}");
        assert_eq!(out.parked.len(), 1, "{what}: {out:?}");
        let p = &out.parked[0];
        assert_eq!(
            (p.request_id.as_deref(), p.user_id, p.token_id, p.quota),
            (Some("park-10"), a.user, a.token, 10)
        );
        assert!(
            p.reason.contains("refused by test trigger"),
            "{what}: {}",
            p.reason
        );
        // The parked record reaches no balance; everything else does.
        let b = assert_balanced(c, &a, &what);
        assert_eq!((b.logs, b.log_quota), (29, (1..=30).sum::<i64>() - 10));
        let o = assert_balanced(c, &other, &what);
        assert_eq!((o.logs, o.log_quota), (1, 1_000));
        // The dead letter: who, how much, why, and the record as JSON (NUL escaped).
        assert_eq!(dead_letters::count_open(c).unwrap(), 1);
        let page = dead_letters::list_page(c, PageReq { page: 1, size: 10 }).unwrap();
        assert_eq!((page.total, page.items.len()), (1, 1));
        let d = &page.items[0];
        assert_eq!(
            (
                d.kind.as_str(),
                d.request_id.as_deref(),
                d.user_id,
                d.token_id,
                d.quota,
                d.resolved_at
            ),
            ("consume", Some("park-10"), a.user, a.token, 10, 0)
        );
        assert!(d.reason.contains("refused by test trigger"), "{}", d.reason);
        assert!(!d.payload.contains('\0'));
        let payload: serde_json::Value = serde_json::from_str(&d.payload).unwrap();
        assert_eq!(payload["model_name"], batch[9].model_name.as_str());
        assert_eq!(payload["content"], "secret \0 prompt");
        assert_eq!(payload["quota"], 10);
        // Replaying the batch changes nothing: no log, no balance, no second letter.
        let again = logs::settle_isolated(c, &batch).unwrap();
        assert_eq!(again.written, 0, "{what}: {again:?}");
        assert_eq!(books(c, &a), b, "{what}: replay");
        assert_eq!(books(c, &other), o, "{what}: replay");
        assert_eq!(dead_letters::count_open(c).unwrap(), 1, "{what}: replay");
    }
}

/// A request id longer than its column is a value sanitising does not touch (it is the
/// request's identity): PostgreSQL and MariaDB refuse it and the record is parked; SQLite, which
/// does not enforce `VARCHAR(64)`, stores it.
#[test]
fn an_overlong_request_id_is_parked_where_the_database_refuses_it() {
    for db in TestDb::all() {
        let c = &mut db.conn();
        let a = account(c, "payer");
        let long = format!("rid-{}", "r".repeat(96));
        let batch = batch_with(&a, "rid", |r| r.request_id = Some(long.clone().into()));
        let out = logs::settle_isolated(c, &batch).unwrap();
        let what = format!("{:?}", db.backend);
        let b = assert_balanced(c, &a, &what);
        if db.backend == Backend::Sqlite {
            assert_eq!((out.written, out.parked.len()), (30, 0), "{what}");
        } else {
            assert_eq!((out.written, out.parked.len()), (29, 1), "{what}: {out:?}");
            assert_eq!(out.parked[0].request_id.as_deref(), Some(long.as_str()));
            assert_eq!(b.log_quota, (1..=30).sum::<i64>() - 10, "{what}");
            let d = &dead_letters::list_page(c, PageReq { page: 1, size: 1 })
                .unwrap()
                .items[0];
            assert_eq!(d.request_id.as_deref(), Some(long.as_str()));
        }
    }
}

#[test]
fn a_clean_batch_takes_the_fast_path_and_errors_not_about_data_are_returned() {
    for db in TestDb::all() {
        let c = &mut db.conn();
        let a = account(c, "payer");
        let batch = batch_with(&a, "ok", |_| {});
        let out = logs::settle_isolated(c, &batch).unwrap();
        assert_eq!((out.written, out.sanitised, out.parked.len()), (30, 0, 0));
        assert_balanced(c, &a, "clean");
        assert_eq!(
            logs::settle_isolated(c, &[]).unwrap(),
            logs::SettleOutcome::default()
        );
    }
    // A table missing (the schema, not a record): the error comes back, nothing is written
    // (the transaction rolls back) and nothing parked, so the caller keeps the batch queued.
    let db = TestDb::sqlite();
    let c = &mut db.conn();
    let a = account(c, "payer");
    diesel::connection::SimpleConnection::batch_execute(c, "DROP TABLE statistics").unwrap();
    let err = logs::settle_isolated(c, &batch_with(&a, "gone", |_| {})).unwrap_err();
    assert!(!err.is_about_data(), "{err}");
    assert_eq!(logs::consumed_by_user(c, a.user).unwrap(), 0);
    assert_eq!(dead_letters::count_open(c).unwrap(), 0);
}

/// When no record of a batch of several can be written, the database is the likelier cause:
/// nothing is parked and the error comes back (the batch stays queued). A refused record is
/// parked once it meets a good one, or when it is alone.
#[test]
fn a_batch_refused_whole_is_kept_not_parked() {
    for db in TestDb::all() {
        let c = &mut db.conn();
        let a = account(c, "payer");
        testing::refuse_log_request_id(c, "bad-1");
        testing::refuse_log_request_id(c, "bad-2");
        let bad = vec![record(&a, "bad-1", 1), record(&a, "bad-2", 2)];
        let what = format!("{:?}", db.backend);
        let err = logs::settle_isolated(c, &bad).unwrap_err();
        assert!(err.is_about_data(), "{what}: {err}");
        assert_eq!(dead_letters::count_open(c).unwrap(), 0, "{what}");
        // Alone, a refused record is parked.
        let out = logs::settle_isolated(c, &bad[..1]).unwrap();
        assert_eq!((out.written, out.parked.len()), (0, 1), "{what}");
        // With a good one, both refused records are parked and the good one written.
        let mixed = vec![bad[0].clone(), record(&a, "good-1", 5), bad[1].clone()];
        let out = logs::settle_isolated(c, &mixed).unwrap();
        assert_eq!((out.written, out.parked.len()), (1, 2), "{what}");
        assert_eq!(dead_letters::count_open(c).unwrap(), 2, "{what}");
        let b = assert_balanced(c, &a, &what);
        assert_eq!((b.logs, b.log_quota), (1, 5));
    }
}

#[test]
fn dead_letters_store_anything_and_page_newest_first() {
    for db in TestDb::all() {
        let c = &mut db.conn();
        for i in 0..12 {
            let fresh = dead_letters::insert(
                c,
                &dead_letters::NewDeadLetter {
                    kind: "consume".into(),
                    request_id: Some(format!("r\0{i}{}", "x".repeat(400))),
                    user_id: i,
                    token_id: 0,
                    quota: 5,
                    reason: format!("bad \0 value {}", "y".repeat(5_000)),
                    payload: format!("{{\"a\":\"\0{}\"}}", "z".repeat(70_000)),
                },
            )
            .unwrap();
            assert!(fresh);
        }
        let page = dead_letters::list_page(c, PageReq { page: 1, size: 5 }).unwrap();
        assert_eq!((page.total, page.items.len()), (12, 5));
        let ids: Vec<i64> = page.items.iter().map(|d| d.user_id).collect();
        assert_eq!(ids, vec![11, 10, 9, 8, 7], "{:?}", db.backend);
        let d = &page.items[0];
        assert_eq!(d.reason.chars().count(), dead_letters::REASON_MAX_CHARS);
        assert!(!d.reason.contains('\0') && !d.payload.contains('\0'));
        assert!(d.payload.len() <= dead_letters::PAYLOAD_MAX_BYTES);
        assert_eq!(
            d.request_id.as_deref().unwrap().chars().count(),
            dead_letters::REQUEST_ID_MAX_CHARS
        );
        let huge = dead_letters::list_page(
            c,
            PageReq {
                page: 1,
                size: 10_000,
            },
        )
        .unwrap();
        assert_eq!(huge.items.len(), 12);
        let bounded = dead_letters::list_page(c, PageReq { page: 3, size: 5 }).unwrap();
        assert_eq!(bounded.items.len(), 2);
        assert_eq!(dead_letters::count_open(c).unwrap(), 12);
        // The same request id again while open: not parked twice.
        let again = dead_letters::insert(
            c,
            &dead_letters::NewDeadLetter {
                kind: "consume".into(),
                request_id: Some(format!("r\0{}{}", 0, "x".repeat(400))),
                user_id: 0,
                token_id: 0,
                quota: 5,
                reason: String::new(),
                payload: String::new(),
            },
        )
        .unwrap();
        assert!(!again);
        assert_eq!(dead_letters::count_open(c).unwrap(), 12);
    }
}

/// A flush of several 64-row statements with one request id twice (a record requeued beside
/// itself): the first attempt writes the batch as it is and the unique index refuses it whole;
/// the retry drops the copy. Every record lands once, the books balance, and on SQLite the
/// connection goes back to the pool with its own settings (the flush keeps its statement
/// journals in memory only while it runs).
#[test]
fn a_batch_with_a_request_id_twice_is_written_once_and_the_connection_restored() {
    for db in TestDb::all() {
        let c = &mut db.conn();
        let what = format!("{:?}", db.backend);
        let a = account(c, "dup");
        let mut batch: Vec<ConsumeRecord> = (1..=200)
            .map(|i| record(&a, &format!("dup-{i}"), i))
            .collect();
        batch.push(batch[150].clone());
        let whole = logs::settle_new_batch(c, &batch).unwrap_err();
        assert!(
            matches!(whole, switchboard_store::StoreError::Conflict(_)),
            "{what}: {whole}"
        );
        assert_eq!(
            books(c, &a).logs,
            0,
            "{what}: the refused attempt wrote nothing"
        );
        let out = logs::settle_isolated(c, &batch).unwrap();
        assert_eq!((out.written, out.parked.len()), (200, 0), "{what}: {out:?}");
        let b = assert_balanced(c, &a, &what);
        assert_eq!((b.logs, b.log_quota), (200, (1..=200).sum()), "{what}");
        if db.backend == Backend::Sqlite {
            #[derive(QueryableByName)]
            struct Setting {
                #[diesel(sql_type = diesel::sql_types::Integer)]
                temp_store: i32,
            }
            let s: Setting = diesel::sql_query("PRAGMA temp_store")
                .get_result(c)
                .unwrap();
            assert_eq!(s.temp_store, 0, "temp_store is back to the default");
        }
    }
}

/// The log writer's own multi-row insert: a batch of 85 records goes out in statements of 64,
/// 16, 4 and 1 rows, and every column of every record reads back as written, in batch order,
/// a missing request id as NULL (twice: NULLs do not collide in the unique index).
#[test]
fn every_column_of_a_batch_in_statements_of_every_size_reads_back_as_written() {
    for db in TestDb::all() {
        let c = &mut db.conn();
        let what = format!("{:?}", db.backend);
        let a = account(c, "cols");
        let batch: Vec<ConsumeRecord> = (1..=85i64)
            .map(|i| {
                let n = i as i32;
                ConsumeRecord {
                    request_id: (i % 40 != 7).then(|| format!("col-{i}").into()),
                    created_at: 86_400 * 200 + i,
                    log_type: if i % 5 == 0 { 5 } else { 2 },
                    user_id: a.user,
                    username: format!("user-{i}").into(),
                    token_id: a.token,
                    token_name: format!("key named at length, number {i}").into(),
                    channel_id: a.channel,
                    model_name: format!("model-{}", i % 3).into(),
                    group_name: format!("g{i}").into(),
                    quota: 1000 + i,
                    prompt_tokens: 10 + n,
                    completion_tokens: 20 + n,
                    use_time_ms: 300 + n,
                    first_response_ms: 40 + n,
                    is_stream: i % 2 == 0,
                    source_ip: format!("10.0.0.{i}").into(),
                    content: format!("content {i} with 'quotes' and \"more\""),
                    metadata: format!("{{\"n\":{i}}}"),
                    cache_hit: i % 3 == 0,
                }
            })
            .collect();
        assert_eq!(logs::settle_new_batch(c, &batch).unwrap(), 85, "{what}");
        let rows: Vec<logs::LogRow> = schema::logs::table
            .filter(schema::logs::user_id.eq(a.user))
            .order(schema::logs::id.asc())
            .select(logs::LogRow::as_select())
            .load(c)
            .unwrap();
        assert_eq!(rows.len(), 85, "{what}");
        for (r, w) in batch.iter().zip(&rows) {
            let read = ConsumeRecord {
                request_id: w.request_id.as_deref().map(Into::into),
                created_at: w.created_at,
                log_type: w.log_type,
                user_id: w.user_id,
                username: w.username.as_str().into(),
                token_id: w.token_id,
                token_name: w.token_name.as_str().into(),
                channel_id: w.channel_id,
                model_name: w.model_name.as_str().into(),
                group_name: w.group_name.as_str().into(),
                quota: w.quota,
                prompt_tokens: w.prompt_tokens,
                completion_tokens: w.completion_tokens,
                use_time_ms: w.use_time_ms,
                first_response_ms: w.first_response_ms,
                is_stream: w.is_stream,
                source_ip: w.source_ip.as_str().into(),
                content: w.content.clone(),
                metadata: w.metadata.clone(),
                cache_hit: w.cache_hit,
            };
            assert_eq!(&read, r, "{what}");
        }
        // Only the consume rows (type 2) move the balances.
        let consumed: i64 = batch
            .iter()
            .filter(|r| r.log_type == 2)
            .map(|r| r.quota)
            .sum();
        assert_eq!(
            users::find(c, a.user).unwrap().used_quota,
            consumed,
            "{what}"
        );
    }
}
