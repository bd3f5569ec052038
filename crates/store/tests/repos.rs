#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Repository behaviour on every backend available to this run: SQLite always, PostgreSQL and
//! MariaDB when TEST_PG_DSN / TEST_MYSQL_DSN are set (as .ci/run does).

use switchboard_store::testing::TestDb;
use switchboard_store::users::{self, NewUser, UserChangeset, UserFilter};
use switchboard_store::{
    logs, model_owners, options, redemptions, sessions, user_groups, verification, Backend,
    PageReq, StoreError,
};

fn new_user<'a>(name: &'a str, email: &'a str) -> NewUser<'a> {
    NewUser {
        username: name,
        password: "$2b$04$hash",
        display_name: name,
        role: 1,
        status: 1,
        email,
        quota: 100,
        group_name: "default",
        aff_code: None,
        inviter_id: 0,
        created_at: 1,
        updated_at: 1,
    }
}

#[test]
fn users_insert_find_and_unique_names() {
    for db in TestDb::all() {
        let c = &mut db.conn();
        let id = users::insert(c, &new_user("alice", "a@x.io")).unwrap();
        let id2 = users::insert(c, &new_user("bob", "b@x.io")).unwrap();
        assert!(id2 > id, "{:?}: ids must grow", db.backend);
        let u = users::find(c, id).unwrap();
        assert_eq!((u.username.as_str(), u.quota, u.role), ("alice", 100, 1));
        assert_eq!(users::find_by_login(c, "b@x.io").unwrap().id, id2);
        assert_eq!(users::find_by_login(c, "bob").unwrap().id, id2);
        assert!(users::find_by_login(c, "nobody")
            .unwrap_err()
            .is_not_found());
        let dup = users::insert(c, &new_user("alice", "other@x.io"));
        assert!(
            matches!(dup, Err(StoreError::Conflict(_))),
            "{:?}: {dup:?}",
            db.backend
        );
        assert!(users::username_taken(c, "alice", 0).unwrap());
        assert!(!users::username_taken(c, "alice", id).unwrap());
        // Names are one name whatever their case, and sign-in finds them so.
        assert!(users::username_taken(c, "ALICE", 0).unwrap());
        assert!(!users::username_taken(c, "Alice", id).unwrap());
        assert_eq!(users::find_by_login(c, "BoB").unwrap().id, id2);
        // Rows from before names were compared case-insensitively may differ only by case
        // (MySQL's collation never allowed them): then only the exact name finds an account.
        let carol = users::insert(c, &new_user("Carol", "c@x.io")).unwrap();
        assert_eq!(users::find_by_login(c, "carol").unwrap().id, carol);
        if db.backend != Backend::Mysql {
            let carol2 = users::insert(c, &new_user("CAROL", "c2@x.io")).unwrap();
            assert!(users::find_by_login(c, "carol").unwrap_err().is_not_found());
            assert_eq!(users::find_by_login(c, "CAROL").unwrap().id, carol2);
            assert_eq!(users::find_by_login(c, "Carol").unwrap().id, carol);
        }
        assert!(users::email_taken(c, "a@x.io", 0).unwrap());
        assert!(!users::email_taken(c, "", 0).unwrap());
    }
}

#[test]
fn users_list_filters_orders_and_pages() {
    for db in TestDb::all() {
        let c = &mut db.conn();
        for i in 0..25 {
            let name = format!("user{i:02}");
            let email = format!("u{i}@x.io");
            let mut n = new_user(&name, &email);
            n.quota = i;
            users::insert(c, &n).unwrap();
        }
        users::insert(c, &new_user("50%_off", "p@x.io")).unwrap();
        let page = users::list(
            c,
            &UserFilter::default(),
            "-id",
            PageReq { page: 1, size: 10 },
        )
        .unwrap();
        assert_eq!(page.total, 26);
        assert_eq!(page.items.len(), 10);
        assert_eq!(page.items[0].username, "50%_off");
        let last = users::list(
            c,
            &UserFilter::default(),
            "quota",
            PageReq { page: 3, size: 10 },
        )
        .unwrap();
        assert_eq!(last.items.len(), 6);
        let by_quota = users::list(
            c,
            &UserFilter::default(),
            "-quota",
            PageReq { page: 1, size: 3 },
        )
        .unwrap();
        assert_eq!(
            by_quota.items.iter().map(|u| u.quota).collect::<Vec<_>>(),
            vec![100, 24, 23]
        );
        let kw = UserFilter {
            keyword: Some("USER1"),
            ..Default::default()
        };
        let found = users::list(c, &kw, "id", PageReq { page: 1, size: 100 }).unwrap();
        assert_eq!(
            found.total, 10,
            "{:?}: case-insensitive keyword",
            db.backend
        );
        // LIKE wildcards in the keyword are literal.
        let kw = UserFilter {
            keyword: Some("%_"),
            ..Default::default()
        };
        let found = users::list(c, &kw, "id", PageReq { page: 1, size: 100 }).unwrap();
        assert_eq!(
            found
                .items
                .iter()
                .map(|u| u.username.as_str())
                .collect::<Vec<_>>(),
            vec!["50%_off"]
        );
    }
}

#[test]
fn quota_changes_never_go_below_zero() {
    for db in TestDb::all() {
        let c = &mut db.conn();
        let id = users::insert(c, &new_user("carol", "")).unwrap();
        assert!(users::add_quota(c, id, 50).unwrap());
        assert!(!users::add_quota(c, id, -151).unwrap());
        assert_eq!(users::find(c, id).unwrap().quota, 150);
        assert!(users::add_quota(c, id, -150).unwrap());
        assert_eq!(users::find(c, id).unwrap().quota, 0);
        assert!(users::add_quota(c, 999_999, 1).unwrap_err().is_not_found());
    }
}

#[test]
fn users_update_and_delete() {
    for db in TestDb::all() {
        let c = &mut db.conn();
        let id = users::insert(c, &new_user("dave", "")).unwrap();
        let ch = UserChangeset {
            display_name: Some("Dave".into()),
            status: Some(2),
            ..Default::default()
        };
        users::update(c, id, &ch).unwrap();
        let u = users::find(c, id).unwrap();
        assert_eq!(
            (u.display_name.as_str(), u.status, u.username.as_str()),
            ("Dave", 2, "dave")
        );
        users::set_access_token_hash(c, id, Some("abc")).unwrap();
        assert_eq!(users::find_by_access_token_hash(c, "abc").unwrap().id, id);
        users::delete(c, id).unwrap();
        assert!(users::delete(c, id).unwrap_err().is_not_found());
        assert!(users::update(c, id, &ch).unwrap_err().is_not_found());
    }
}

#[test]
fn sessions_expire_and_end() {
    for db in TestDb::all() {
        let c = &mut db.conn();
        let row = |h: &str, exp: i64| sessions::SessionRow {
            id_hash: h.into(),
            user_id: 7,
            created_at: 100,
            expires_at: exp,
            last_seen_at: 100,
            ip: "127.0.0.1".into(),
            user_agent: "t".into(),
        };
        sessions::insert(c, &row("a", 200)).unwrap();
        sessions::insert(c, &row("b", 300)).unwrap();
        assert!(sessions::find_valid(c, "a", 150).unwrap().is_some());
        assert!(
            sessions::find_valid(c, "a", 200).unwrap().is_none(),
            "expired at its expiry time"
        );
        sessions::touch(c, "a", 190, 500).unwrap();
        assert!(sessions::find_valid(c, "a", 400).unwrap().is_some());
        sessions::delete(c, "a").unwrap();
        assert!(sessions::find_valid(c, "a", 150).unwrap().is_none());
        assert_eq!(sessions::purge_expired(c, 301).unwrap(), 1);
        sessions::insert(c, &row("c", 900)).unwrap();
        assert_eq!(sessions::delete_for_user(c, 7).unwrap(), 1);
    }
}

#[test]
fn options_upsert() {
    for db in TestDb::all() {
        let c = &mut db.conn();
        options::set(c, "SystemName", "One").unwrap();
        options::set(c, "SystemName", "Two").unwrap();
        options::set(c, "Notice", "").unwrap();
        let mut all = options::all(c).unwrap();
        all.sort();
        assert_eq!(
            all,
            vec![
                ("Notice".into(), "".into()),
                ("SystemName".into(), "Two".into())
            ]
        );
    }
}

#[test]
fn verification_codes_are_single_use() {
    for db in TestDb::all() {
        let c = &mut db.conn();
        verification::put(c, "register", "a@x.io", "h1", 100, 600).unwrap();
        verification::put(c, "register", "a@x.io", "h2", 100, 600).unwrap();
        assert!(
            !verification::take(c, "register", "a@x.io", "h1", 101, 5).unwrap(),
            "replaced by the newer code"
        );
        assert!(
            !verification::take(c, "register", "a@x.io", "h2", 700, 5).unwrap(),
            "expired"
        );
        assert!(verification::take(c, "register", "a@x.io", "h2", 101, 5).unwrap());
        assert!(
            !verification::take(c, "register", "a@x.io", "h2", 101, 5).unwrap(),
            "used once"
        );
    }
}

#[test]
fn wrong_verification_codes_void_the_code_at_the_limit() {
    for db in TestDb::all() {
        let c = &mut db.conn();
        verification::put(c, "register", "a@x.io", "good", 100, 600).unwrap();
        for _ in 0..2 {
            assert!(!verification::check(c, "register", "a@x.io", "bad", 101, 3).unwrap());
        }
        assert!(verification::check(c, "register", "a@x.io", "good", 101, 3).unwrap());
        assert!(!verification::check(c, "register", "a@x.io", "bad", 101, 3).unwrap());
        assert!(
            !verification::check(c, "register", "a@x.io", "good", 101, 3).unwrap(),
            "void after the third wrong try"
        );
        assert!(!verification::take(c, "register", "a@x.io", "good", 101, 3).unwrap());
        // Wrong tries for an address without a code change nothing.
        assert!(!verification::check(c, "reset", "none@x.io", "bad", 101, 3).unwrap());
    }
}

#[test]
fn seeds_are_idempotent_and_logs_record() {
    for db in TestDb::all() {
        let c = &mut db.conn();
        assert!(user_groups::seed_default(c).unwrap());
        assert!(!user_groups::seed_default(c).unwrap());
        assert!(user_groups::exists_enabled(c, "default").unwrap());
        assert_eq!(
            model_owners::seed_built_in(c).unwrap(),
            model_owners::BUILT_IN.len()
        );
        assert_eq!(model_owners::seed_built_in(c).unwrap(), 0);
        assert_eq!(model_owners::list(c).unwrap()[0].name, "OpenAI");
        logs::record(
            c,
            switchboard_domain::log::LogType::Manage,
            5,
            "eve",
            10,
            "changed",
            "{}",
        )
        .unwrap();
        let l = logs::recent_for_user(c, 5, 10).unwrap();
        assert_eq!((l.len(), l[0].log_type, l[0].quota), (1, 3, 10));
    }
}

fn token<'a>(
    user_id: i64,
    name: &'a str,
    hash: &'a str,
) -> switchboard_store::tokens::NewToken<'a> {
    switchboard_store::tokens::NewToken {
        user_id,
        name,
        key_hash: hash,
        key_ciphertext: "ct",
        key_hint: "sk-ab**yz",
        status: 1,
        created_at: 1,
        updated_at: 1,
        expired_at: -1,
        remain_quota: 1000,
        unlimited_quota: false,
        group_name: "",
        models: "",
        subnet: "",
        api_rate: 0,
        heartbeat_enabled: false,
        heartbeat_timeout: 30,
        cache_enabled: false,
    }
}

#[test]
fn tokens_belong_to_their_owner() {
    use switchboard_store::tokens::{self, TokenChangeset, TokenFilter};
    for db in TestDb::all() {
        let c = &mut db.conn();
        let a = tokens::insert(c, &token(1, "alpha", "h1")).unwrap();
        tokens::insert(c, &token(1, "beta", "h2")).unwrap();
        let other = tokens::insert(c, &token(2, "alpha", "h3")).unwrap();
        assert!(matches!(
            tokens::insert(c, &token(1, "dup", "h1")),
            Err(StoreError::Conflict(_))
        ));
        assert_eq!(tokens::find_by_key_hash(c, "h2").unwrap().name, "beta");
        assert!(tokens::find_owned(c, other, 1).unwrap_err().is_not_found());
        let mine = tokens::list(
            c,
            &TokenFilter {
                user_id: Some(1),
                ..Default::default()
            },
            "-id",
            PageReq { page: 1, size: 10 },
        )
        .unwrap();
        assert_eq!(mine.total, 2);
        let kw = TokenFilter {
            user_id: Some(1),
            keyword: Some("ALP"),
            ..Default::default()
        };
        assert_eq!(
            tokens::list(c, &kw, "name", PageReq { page: 1, size: 10 })
                .unwrap()
                .items[0]
                .id,
            a
        );
        tokens::update(
            c,
            a,
            &TokenChangeset {
                status: Some(2),
                remain_quota: Some(5),
                ..Default::default()
            },
        )
        .unwrap();
        let t = tokens::find(c, a).unwrap();
        assert_eq!((t.status, t.remain_quota, t.name.as_str()), (2, 5, "alpha"));
        assert!(tokens::delete_owned(c, other, 1)
            .unwrap_err()
            .is_not_found());
        tokens::delete_owned(c, a, 1).unwrap();
        assert_eq!(tokens::count_for_user(c, 1).unwrap(), 1);
    }
}

fn channel_fields(
    name: &str,
    groups: &str,
    models: &str,
) -> switchboard_store::channels::ChannelFields {
    switchboard_store::channels::ChannelFields {
        channel_type: 1,
        name: name.into(),
        key: "sk-upstream".into(),
        base_url: "http://127.0.0.1:1".into(),
        group_name: groups.into(),
        models: models.into(),
        model_mapping: "{}".into(),
        priority: 0,
        weight: 1,
        tag: "t1".into(),
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
    }
}

#[test]
fn channels_keep_abilities_in_step() {
    use switchboard_store::channels::{self, ChannelFilter};
    for db in TestDb::all() {
        let c = &mut db.conn();
        let id = channels::insert(
            c,
            &channel_fields("one", "default,vip", "gpt-4o,gpt-4o-mini,gpt-4o"),
        )
        .unwrap();
        assert_eq!(
            channels::abilities_of(c, id).unwrap().len(),
            4,
            "{:?}: 2 groups x 2 models",
            db.backend
        );
        let mut f = channel_fields("one", "vip", "gpt-4o");
        f.priority = 5;
        channels::update(c, id, &f).unwrap();
        assert_eq!(
            channels::abilities_of(c, id).unwrap(),
            vec![("vip".into(), "gpt-4o".into(), true)]
        );
        assert!(channels::set_status(c, id, 3).unwrap());
        assert!(!channels::set_status(c, id, 3).unwrap());
        assert!(!channels::abilities_of(c, id).unwrap()[0].2);
        assert_eq!(channels::find(c, id).unwrap().status, 3);
        let id2 = channels::insert(c, &channel_fields("two", "default", "claude-3")).unwrap();
        let mut by = |f: ChannelFilter| {
            channels::list(c, &f, "id", PageReq { page: 1, size: 10 })
                .unwrap()
                .items
                .iter()
                .map(|r| r.id)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            by(ChannelFilter {
                group: Some("vip"),
                ..Default::default()
            }),
            vec![id]
        );
        assert_eq!(
            by(ChannelFilter {
                model: Some("claude-3"),
                ..Default::default()
            }),
            vec![id2]
        );
        assert_eq!(
            by(ChannelFilter {
                status: Some(3),
                ..Default::default()
            }),
            vec![id]
        );
        assert_eq!(
            by(ChannelFilter {
                keyword: Some("TWO"),
                ..Default::default()
            }),
            vec![id2]
        );
        channels::delete(c, id).unwrap();
        assert!(channels::abilities_of(c, id).unwrap().is_empty());
        assert!(channels::delete(c, id).unwrap_err().is_not_found());
    }
}

/// Start-up's sealing pass writes a sealed value only over the value it read (another node may
/// have changed it meanwhile), and a copy takes the key it is given. A sealed value longer than
/// MySQL's TEXT (65,535 bytes) fits (MEDIUMTEXT since the sealed_secrets migration).
#[test]
fn secrets_are_replaced_only_over_the_value_read() {
    use switchboard_store::{channels, tokens};
    for db in TestDb::all() {
        let c = &mut db.conn();
        let id = channels::insert(c, &channel_fields("one", "default", "gpt-4o")).unwrap();
        let other = channels::insert(c, &channel_fields("two", "default", "gpt-4o")).unwrap();
        assert_eq!(
            channels::keys(c).unwrap(),
            vec![(id, "sk-upstream".into()), (other, "sk-upstream".into())]
        );
        assert!(!channels::replace_key(c, id, "sk-changed-meanwhile", "sealed:v1:x").unwrap());
        assert!(channels::replace_key(c, id, "sk-upstream", "sealed:v1:x").unwrap());
        assert!(!channels::replace_key(c, id, "sk-upstream", "sealed:v1:y").unwrap());
        assert_eq!(channels::find(c, id).unwrap().key, "sealed:v1:x");
        assert_eq!(channels::find(c, other).unwrap().key, "sk-upstream");
        let long = format!("sealed:v1:{}", "A".repeat(100_000));
        assert!(channels::replace_key(c, other, "sk-upstream", &long).unwrap());
        assert_eq!(
            channels::find(c, other).unwrap().key,
            long,
            "{:?}",
            db.backend
        );
        let copy = channels::copy(c, id, "one_copy", "sealed:v1:z").unwrap();
        let row = channels::find(c, copy).unwrap();
        assert_eq!(
            (row.name.as_str(), row.key.as_str()),
            ("one_copy", "sealed:v1:z")
        );
        assert_eq!(channels::abilities_of(c, copy).unwrap().len(), 1);

        options::set(c, "SMTPToken", "plain").unwrap();
        assert!(!options::replace(c, "SMTPToken", "other", "sealed:v1:s").unwrap());
        assert!(!options::replace(c, "Missing", "plain", "sealed:v1:s").unwrap());
        assert!(options::replace(c, "SMTPToken", "plain", &long).unwrap());
        assert_eq!(
            options::all(c).unwrap(),
            vec![("SMTPToken".into(), long.clone())]
        );

        let t1 = tokens::insert(c, &token(1, "a", "h1")).unwrap();
        let t2 = tokens::insert(c, &token(1, "b", "h2")).unwrap();
        let t3 = tokens::insert(c, &token(1, "c", "h3")).unwrap();
        assert_eq!(
            tokens::ciphertexts_after(c, 0, 2).unwrap(),
            vec![(t1, "ct".into()), (t2, "ct".into())]
        );
        assert_eq!(
            tokens::ciphertexts_after(c, t2, 2).unwrap(),
            vec![(t3, "ct".into())]
        );
        assert!(!tokens::replace_ciphertext(c, t1, "other", "ct2").unwrap());
        assert!(tokens::replace_ciphertext(c, t1, "ct", "ct2").unwrap());
        assert_eq!(tokens::find(c, t1).unwrap().key_ciphertext, "ct2");
        assert_eq!(tokens::find(c, t2).unwrap().key_ciphertext, "ct");
    }
}

#[test]
fn settle_batch_applies_each_request_once() {
    use switchboard_store::logs::ConsumeRecord;
    use switchboard_store::{channels, tokens};
    for db in TestDb::all() {
        let c = &mut db.conn();
        let uid = users::insert(c, &new_user("payer", "")).unwrap();
        let tid = tokens::insert(c, &token(uid, "k", "hk")).unwrap();
        let cid = channels::insert(c, &channel_fields("up", "default", "m")).unwrap();
        let rec = |rid: &str, quota: i64, at: i64| ConsumeRecord {
            request_id: Some(rid.into()),
            created_at: at,
            log_type: 2,
            user_id: uid,
            username: "payer".into(),
            token_id: tid,
            token_name: "k".into(),
            channel_id: cid,
            model_name: "m".into(),
            group_name: "default".into(),
            quota,
            prompt_tokens: 10,
            completion_tokens: 5,
            use_time_ms: 100,
            first_response_ms: 10,
            is_stream: false,
            source_ip: "127.0.0.1".into(),
            content: String::new(),
            metadata: "{}".into(),
            cache_hit: false,
        };
        let batch = vec![
            rec("r1", 30, 86_400 * 3 + 5),
            rec("r2", 7, 86_400 * 3 + 50),
            rec("r3", 1, 86_400 * 4),
        ];
        assert_eq!(logs::settle_new_batch(c, &batch).unwrap(), 3);
        assert!(
            matches!(
                logs::settle_new_batch(c, &batch),
                Err(StoreError::Conflict(_))
            ),
            "the fast path refuses a batch already written, whole"
        );
        assert_eq!(
            logs::settle_batch(c, &batch).unwrap(),
            0,
            "replay inserts nothing"
        );
        assert_eq!(
            logs::settle_batch(c, &[rec("r4", 2, 86_400 * 4), rec("r4", 2, 86_400 * 4)]).unwrap(),
            1
        );
        let u = users::find(c, uid).unwrap();
        assert_eq!((u.quota, u.used_quota, u.request_count), (100 - 40, 40, 4));
        let t = tokens::find(c, tid).unwrap();
        assert_eq!(
            (t.remain_quota, t.used_quota, t.request_count),
            (1000 - 40, 40, 4)
        );
        assert_eq!(channels::find(c, cid).unwrap().used_quota, 40);
        assert_eq!(logs::consumed_by_user(c, uid).unwrap(), 40);
    }
}

fn code(i: usize) -> String {
    format!("c{i:0>31}")
}

fn new_code<'a>(name: &'a str, code: &'a str, quota: i64) -> redemptions::NewRedemption<'a> {
    redemptions::NewRedemption {
        user_id: 1,
        name,
        code,
        status: 1,
        quota,
        created_at: 10,
    }
}

#[test]
fn redemptions_batch_insert_list_and_filter() {
    use redemptions::RedemptionFilter;
    for db in TestDb::all() {
        let c = &mut db.conn();
        let codes: Vec<String> = (0..12).map(code).collect();
        let rows: Vec<_> = codes
            .iter()
            .enumerate()
            .map(|(i, k)| {
                new_code(
                    if i < 5 { "Spring 50%" } else { "winter" },
                    k,
                    i as i64 * 10,
                )
            })
            .collect();
        assert_eq!(redemptions::insert_batch(c, &rows).unwrap(), 12);
        assert_eq!(redemptions::insert_batch(c, &[]).unwrap(), 0);
        // A batch containing an existing code fails as a whole.
        let again = [
            new_code("x", "fresh000000000000000000000000000", 1),
            new_code("x", &codes[3], 1),
        ];
        assert!(
            matches!(
                redemptions::insert_batch(c, &again),
                Err(StoreError::Conflict(_))
            ),
            "{:?}",
            db.backend
        );
        assert!(
            redemptions::find_by_code(c, "fresh000000000000000000000000000")
                .unwrap_err()
                .is_not_found()
        );
        let all = |f: &RedemptionFilter<'_>, order: &str, page: i64, size: i64| {
            redemptions::list(&mut db.conn(), f, order, PageReq { page, size }).unwrap()
        };
        let p = all(&RedemptionFilter::default(), "-id", 1, 5);
        assert_eq!((p.total, p.items.len()), (12, 5));
        assert_eq!(p.items[0].code, codes[11]);
        let p3 = all(&RedemptionFilter::default(), "-id", 3, 5);
        assert_eq!(p3.items.len(), 2);
        assert_eq!(p3.items[1].code, codes[0]);
        // Keyword: name (case-insensitive, LIKE characters literal), code substring, or id.
        let by_name = |k: &str| {
            all(
                &RedemptionFilter {
                    keyword: Some(k),
                    ..Default::default()
                },
                "id",
                1,
                100,
            )
            .total
        };
        assert_eq!(by_name("SPRING"), 5);
        assert_eq!(by_name("50%"), 5);
        assert_eq!(by_name("5_%"), 0);
        assert_eq!(by_name(&codes[11].to_uppercase()), 1, "the whole code");
        assert_eq!(
            by_name(&codes[11][..31]),
            0,
            "codes match whole, not as substrings"
        );
        let id = p.items[0].id;
        assert_eq!(by_name(&id.to_string()), 1);
        let by_quota = all(&RedemptionFilter::default(), "-quota", 1, 3);
        assert_eq!(
            by_quota.items.iter().map(|r| r.quota).collect::<Vec<_>>(),
            vec![110, 100, 90]
        );
        let r = redemptions::find(c, id).unwrap();
        assert_eq!((r.status, r.redeemed_at, r.used_user_id), (1, 0, 0));
        redemptions::update_unused(
            c,
            id,
            &redemptions::RedemptionChangeset {
                status: Some(2),
                ..Default::default()
            },
        )
        .unwrap();
        let disabled = all(
            &RedemptionFilter {
                status: Some(2),
                ..Default::default()
            },
            "id",
            1,
            10,
        );
        assert_eq!((disabled.total, disabled.items[0].id), (1, id));
    }
}

#[test]
fn redemptions_are_redeemed_once_and_used_codes_are_frozen() {
    use redemptions::RedemptionChangeset;
    for db in TestDb::all() {
        let c = &mut db.conn();
        let uid = users::insert(c, &new_user("redeemer", "")).unwrap();
        redemptions::insert_batch(
            c,
            &[
                new_code("a", &code(1), 500),
                new_code("b", &code(2), 7),
                new_code("c", &code(3), 9),
            ],
        )
        .unwrap();
        let one = redemptions::find_by_code(c, &code(1)).unwrap();
        let ch = RedemptionChangeset {
            name: Some("renamed".into()),
            quota: Some(600),
            ..Default::default()
        };
        assert!(redemptions::update_unused(c, one.id, &ch).unwrap());
        assert!(
            redemptions::update_unused(c, one.id, &ch).unwrap(),
            "{:?}: an update to the same values still finds the row",
            db.backend
        );
        assert!(redemptions::update_unused(c, one.id, &RedemptionChangeset::default()).unwrap());
        let got = redemptions::redeem(c, &code(1), uid, 1234)
            .unwrap()
            .unwrap();
        assert_eq!(
            (
                got.id,
                got.quota,
                got.status,
                got.redeemed_at,
                got.used_user_id
            ),
            (one.id, 600, 3, 1234, uid)
        );
        assert_eq!(
            redemptions::redeem(c, &code(1), uid, 1235).unwrap(),
            None,
            "once"
        );
        assert_eq!(
            redemptions::redeem(c, &code(9), uid, 1235).unwrap(),
            None,
            "unknown"
        );
        // Disabled codes cannot be redeemed until enabled again.
        let two = redemptions::find_by_code(c, &code(2)).unwrap();
        let set = |s| RedemptionChangeset {
            status: Some(s),
            ..Default::default()
        };
        redemptions::update_unused(c, two.id, &set(2)).unwrap();
        assert_eq!(redemptions::redeem(c, &code(2), uid, 1).unwrap(), None);
        // Used codes are history: edits change nothing.
        assert!(!redemptions::update_unused(c, one.id, &set(1)).unwrap());
        assert!(!redemptions::update_unused(c, one.id, &RedemptionChangeset::default()).unwrap());
        assert_eq!(redemptions::find(c, one.id).unwrap().status, 3);
        assert!(redemptions::update_unused(c, 999_999, &set(1))
            .unwrap_err()
            .is_not_found());
        // Crediting a top-up moves the balance and the cumulative top-up together.
        assert_eq!(redemptions::credit_topup(c, uid, 600).unwrap(), 700);
        let u = users::find(c, uid).unwrap();
        assert_eq!((u.quota, u.total_topup), (700, 600));
        assert!(redemptions::credit_topup(c, 999_999, 1)
            .unwrap_err()
            .is_not_found());
        // Clearing invalid codes removes the used and the disabled one, not the enabled one.
        assert_eq!(redemptions::delete_invalid(c).unwrap(), 2);
        assert_eq!(redemptions::delete_invalid(c).unwrap(), 0);
        let three = redemptions::find_by_code(c, &code(3)).unwrap();
        redemptions::delete(c, three.id).unwrap();
        assert!(redemptions::delete(c, three.id).unwrap_err().is_not_found());
    }
}

#[test]
fn concurrent_redemptions_of_one_code_succeed_once() {
    for db in TestDb::all() {
        let winner_quota = 321;
        let ids: Vec<i64> = {
            let c = &mut db.conn();
            redemptions::insert_batch(c, &[new_code("race", &code(42), winner_quota)]).unwrap();
            (0..8)
                .map(|i| users::insert(c, &new_user(&format!("racer{i}"), "")).unwrap())
                .collect()
        };
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(ids.len()));
        let results: Vec<(i64, bool)> = std::thread::scope(|s| {
            let handles: Vec<_> =
                ids.iter()
                    .map(|&uid| {
                        let db = &db;
                        let barrier = barrier.clone();
                        s.spawn(move || {
                            let mut conn = db.conn();
                            barrier.wait();
                            let won = switchboard_store::transaction(&mut conn, |c| {
                                match redemptions::redeem(c, &code(42), uid, 5)? {
                                    Some(r) => {
                                        redemptions::credit_topup(c, uid, r.quota)?;
                                        Ok::<bool, StoreError>(true)
                                    }
                                    None => Ok(false),
                                }
                            })
                            .unwrap();
                            (uid, won)
                        })
                    })
                    .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let winners: Vec<i64> = results.iter().filter(|r| r.1).map(|r| r.0).collect();
        assert_eq!(winners.len(), 1, "{:?}: {results:?}", db.backend);
        let c = &mut db.conn();
        let row = redemptions::find_by_code(c, &code(42)).unwrap();
        assert_eq!((row.status, row.used_user_id), (3, winners[0]));
        for uid in ids {
            let u = users::find(c, uid).unwrap();
            let gained = if uid == winners[0] { winner_quota } else { 0 };
            assert_eq!((u.quota, u.total_topup), (100 + gained, gained));
        }
    }
}

fn group<'a>(
    symbol: &'a str,
    promotion: bool,
    min: i64,
    max: i64,
) -> user_groups::NewUserGroup<'a> {
    user_groups::NewUserGroup {
        symbol,
        name: symbol,
        ratio: 1.0,
        public: true,
        api_rate: 0,
        promotion,
        min_topup: min,
        max_topup: max,
        enabled: true,
        created_at: 1,
        updated_at: 1,
    }
}

#[test]
fn user_groups_crud_list_and_usage() {
    use user_groups::{UserGroupChangeset, UserGroupFilter};
    for db in TestDb::all() {
        let c = &mut db.conn();
        user_groups::seed_default(c).unwrap();
        let vip = user_groups::insert(c, &group("vip", false, 0, 0)).unwrap();
        let gold = user_groups::insert(c, &group("Gold_1", true, 100, 0)).unwrap();
        assert!(gold > vip);
        assert!(matches!(
            user_groups::insert(c, &group("vip", false, 0, 0)),
            Err(StoreError::Conflict(_))
        ));
        assert!(
            user_groups::symbol_taken(c, "VIP").unwrap(),
            "case-insensitive"
        );
        assert!(user_groups::symbol_taken(c, "gold_1").unwrap());
        assert!(!user_groups::symbol_taken(c, "silver").unwrap());
        assert_eq!(user_groups::find(c, gold).unwrap().symbol, "Gold_1");
        assert_eq!(user_groups::find_by_symbol(c, "vip").unwrap().id, vip);
        assert!(user_groups::find(c, 999).unwrap_err().is_not_found());
        let ch = UserGroupChangeset {
            name: Some("V.I.P.".into()),
            ratio: Some(0.5),
            api_rate: Some(60),
            enabled: Some(false),
            ..Default::default()
        };
        user_groups::update(c, vip, &ch).unwrap();
        user_groups::update(c, vip, &ch).unwrap();
        assert!(user_groups::update(c, 999, &ch).unwrap_err().is_not_found());
        let v = user_groups::find(c, vip).unwrap();
        assert_eq!(
            (
                v.name.as_str(),
                v.ratio,
                v.api_rate,
                v.enabled,
                v.symbol.as_str()
            ),
            ("V.I.P.", 0.5, 60, false, "vip")
        );
        assert!(!user_groups::exists_enabled(c, "vip").unwrap());
        assert_eq!(user_groups::all(c).unwrap().len(), 3);
        let list = |f: &UserGroupFilter<'_>, order: &str| {
            user_groups::list(&mut db.conn(), f, order, PageReq { page: 1, size: 2 }).unwrap()
        };
        let p = list(&UserGroupFilter::default(), "-id");
        assert_eq!((p.total, p.items.len(), p.items[0].id), (3, 2, gold));
        let p = list(&UserGroupFilter::default(), "ratio");
        assert_eq!(p.items[0].symbol, "vip");
        let p = list(
            &UserGroupFilter {
                keyword: Some("GOLD"),
                ..Default::default()
            },
            "id",
        );
        assert_eq!((p.total, p.items[0].id), (1, gold));
        let p = list(
            &UserGroupFilter {
                keyword: Some("v.i.p"),
                ..Default::default()
            },
            "id",
        );
        assert_eq!(p.total, 1, "by name");
        let p = list(
            &UserGroupFilter {
                enabled: Some(true),
                promotion: Some(false),
                ..Default::default()
            },
            "id",
        );
        assert_eq!((p.total, p.items[0].symbol.as_str()), (1, "default"));
        // Usage: users and keys referencing the symbol.
        let mut u = new_user("grouped", "");
        u.group_name = "vip";
        let uid = users::insert(c, &u).unwrap();
        let mut t = token(uid, "k", "hash-g");
        t.group_name = "Gold_1";
        switchboard_store::tokens::insert(c, &t).unwrap();
        assert_eq!(user_groups::usage(c, "vip").unwrap(), (1, 0));
        assert_eq!(user_groups::usage(c, "Gold_1").unwrap(), (0, 1));
        assert_eq!(user_groups::usage(c, "default").unwrap(), (0, 0));
        user_groups::delete(c, gold).unwrap();
        assert!(user_groups::delete(c, gold).unwrap_err().is_not_found());
    }
}

#[test]
fn promotion_follows_cumulative_top_up_and_never_demotes() {
    for db in TestDb::all() {
        let c = &mut db.conn();
        user_groups::seed_default(c).unwrap();
        user_groups::insert(c, &group("silver", true, 1000, 5000)).unwrap();
        user_groups::insert(c, &group("gold", true, 5000, 0)).unwrap();
        let mut off = group("platinum", true, 7000, 0);
        off.enabled = false;
        user_groups::insert(c, &off).unwrap();
        let uid = users::insert(c, &new_user("climber", "")).unwrap();
        assert_eq!(user_groups::apply_promotion(c, uid).unwrap(), None);
        redemptions::credit_topup(c, uid, 999).unwrap();
        assert_eq!(
            user_groups::apply_promotion(c, uid).unwrap(),
            None,
            "below silver"
        );
        redemptions::credit_topup(c, uid, 1).unwrap();
        assert_eq!(
            user_groups::apply_promotion(c, uid).unwrap().as_deref(),
            Some("silver")
        );
        assert_eq!(users::find(c, uid).unwrap().group_name, "silver");
        assert_eq!(
            user_groups::apply_promotion(c, uid).unwrap(),
            None,
            "already there"
        );
        redemptions::credit_topup(c, uid, 6000).unwrap();
        assert_eq!(
            user_groups::apply_promotion(c, uid).unwrap().as_deref(),
            Some("gold"),
            "the disabled platinum group is skipped"
        );
        // An administrator moves the user to a promotion group above their top-up: kept.
        user_groups::insert(c, &group("diamond", true, 100_000, 0)).unwrap();
        users::update(
            c,
            uid,
            &UserChangeset {
                group_name: Some("diamond".into()),
                ..Default::default()
            },
        )
        .unwrap();
        redemptions::credit_topup(c, uid, 10).unwrap();
        assert_eq!(
            user_groups::apply_promotion(c, uid).unwrap(),
            None,
            "never demoted"
        );
        assert_eq!(users::find(c, uid).unwrap().group_name, "diamond");
        // Each move wrote a system log.
        let moves: Vec<_> = logs::recent_for_user(c, uid, 10)
            .unwrap()
            .into_iter()
            .filter(|l| l.log_type == 4)
            .collect();
        assert_eq!(moves.len(), 2);
        assert!(moves[0].content.contains("gold"), "{}", moves[0].content);
        assert!(user_groups::apply_promotion(c, 999_999)
            .unwrap_err()
            .is_not_found());
    }
}

#[test]
fn logs_filter_page_by_offset_and_keyset_sum_and_delete_in_batches() {
    use switchboard_domain::log::LogType;
    use switchboard_store::logs::{ConsumeRecord, LogFilter};
    for db in TestDb::all() {
        let c = &mut db.conn();
        let uid = users::insert(c, &new_user("ann", "")).unwrap();
        let other = users::insert(c, &new_user("ben", "")).unwrap();
        // 30 consume logs over 3 seconds of time, two models, two users, large quotas (sums
        // beyond i32 and beyond what a float would keep exactly).
        let mut batch = Vec::new();
        for i in 0..30i64 {
            let user = if i % 3 == 0 { other } else { uid };
            batch.push(ConsumeRecord {
                request_id: Some(format!("req-{i}").into()),
                created_at: 1_000 + i / 10,
                log_type: 2,
                user_id: user,
                username: if user == uid { "ann" } else { "ben" }.into(),
                token_id: 7,
                token_name: if i % 2 == 0 { "even" } else { "odd" }.into(),
                channel_id: 1 + i % 2,
                model_name: if i < 15 { "m-a" } else { "m-b" }.into(),
                group_name: "default".into(),
                quota: 3_000_000_000_000 + i,
                prompt_tokens: i32::try_from(i).unwrap(),
                completion_tokens: 2,
                use_time_ms: 1,
                first_response_ms: 1,
                is_stream: false,
                source_ip: format!("10.0.0.{}", i % 4).into(),
                content: String::new(),
                metadata: "{}".into(),
                cache_hit: false,
            });
        }
        // Inserted out of time order, as several ledger flushes could.
        batch.reverse();
        assert_eq!(logs::settle_batch(c, &batch).unwrap(), 30);
        logs::record(c, LogType::Manage, uid, "ann", 5, "quota changed", "{}").unwrap();
        let all = LogFilter::default();
        let page = logs::list(c, &all, PageReq { page: 1, size: 7 }).unwrap();
        assert_eq!((page.total, page.items.len()), (31, 7));
        assert_eq!(page.items[0].log_type, 3, "newest first");
        // Offset pages and keyset pages list the same rows in the same order.
        let mut by_offset = Vec::new();
        for p in 1..=5 {
            let r = logs::list(c, &all, PageReq { page: p, size: 7 }).unwrap();
            by_offset.extend(r.items.into_iter().map(|l| l.id));
        }
        let mut by_keyset = Vec::new();
        let mut before = i64::MAX;
        loop {
            let r = logs::list_before(c, &all, before, 7).unwrap();
            if r.is_empty() {
                break;
            }
            before = r.last().unwrap().id;
            by_keyset.extend(r.into_iter().map(|l| l.id));
        }
        assert_eq!(by_offset.len(), 31, "{:?}", db.backend);
        assert_eq!(by_keyset, by_offset, "{:?}", db.backend);
        let rows = logs::list(c, &all, PageReq { page: 1, size: 100 })
            .unwrap()
            .items;
        for w in rows.windows(2) {
            assert!((w[0].created_at, w[0].id) > (w[1].created_at, w[1].id));
        }
        // A cursor of another user (or made up) is not looked up for a user: id < before_id.
        let mine = LogFilter {
            user_id: Some(uid),
            ..Default::default()
        };
        let ben_row = rows.iter().find(|l| l.user_id == other).unwrap();
        let r = logs::list_before(c, &mine, ben_row.id, 100).unwrap();
        assert!(r.iter().all(|l| l.user_id == uid && l.id < ben_row.id));
        // Filters.
        let count = |c: &mut switchboard_store::DbConn, f: LogFilter| {
            logs::list(c, &f, PageReq { page: 1, size: 100 })
                .unwrap()
                .total
        };
        assert_eq!(count(c, mine.clone()), 21);
        let f = |g: fn(&mut LogFilter)| {
            let mut f = LogFilter::default();
            g(&mut f);
            f
        };
        assert_eq!(count(c, f(|f| f.log_type = Some(2))), 30);
        assert_eq!(count(c, f(|f| f.log_type = Some(3))), 1);
        assert_eq!(count(c, f(|f| f.start = Some(1_001))), 21);
        assert_eq!(
            count(
                c,
                f(|f| {
                    f.start = Some(1_001);
                    f.end = Some(1_001)
                })
            ),
            10
        );
        assert_eq!(count(c, f(|f| f.model_name = Some("m-b".into()))), 15);
        // Model and key names match by prefix; `%`, `_` and `\` in the filter are literal.
        assert_eq!(count(c, f(|f| f.model_name = Some("m-".into()))), 30);
        assert_eq!(count(c, f(|f| f.model_name = Some("m_b".into()))), 0);
        assert_eq!(count(c, f(|f| f.model_name = Some("%".into()))), 0);
        assert_eq!(count(c, f(|f| f.model_name = Some("\\".into()))), 0);
        assert_eq!(count(c, f(|f| f.model_name = Some("b".into()))), 0);
        assert_eq!(count(c, f(|f| f.token_name = Some("ev".into()))), 15);
        assert_eq!(count(c, f(|f| f.token_name = Some("even".into()))), 15);
        assert_eq!(count(c, f(|f| f.username = Some("ben".into()))), 10);
        assert_eq!(count(c, f(|f| f.channel_id = Some(2))), 15);
        assert_eq!(count(c, f(|f| f.source_ip = Some("10.0.0.1".into()))), 8);
        assert_eq!(count(c, f(|f| f.group_name = Some("vip".into()))), 0);
        assert_eq!(count(c, f(|f| f.token_id = Some(7))), 30);
        // Sums are exact and only count consume logs.
        let s = logs::consume_sums(c, &mine).unwrap();
        let listed: Vec<_> = logs::list(c, &mine, PageReq { page: 1, size: 100 })
            .unwrap()
            .items
            .into_iter()
            .filter(|l| l.log_type == 2)
            .collect();
        assert_eq!(s.request_count, 20);
        assert_eq!(s.quota, listed.iter().map(|l| l.quota).sum::<i64>());
        assert!(s.quota > 60_000_000_000_000, "{:?}", db.backend);
        assert_eq!(
            s.prompt_tokens,
            listed
                .iter()
                .map(|l| i64::from(l.prompt_tokens))
                .sum::<i64>()
        );
        assert_eq!(s.completion_tokens, 40);
        let none = logs::consume_sums(c, &f(|f| f.log_type = Some(3))).unwrap();
        assert_eq!(none, logs::ConsumeSums::default());
        // Deletion in batches: everything before 1002, three rows per statement.
        let log_id = rows[0].id;
        logs::set_created_at(c, log_id, 10).unwrap();
        assert_eq!(logs::delete_before(c, 1_002, 3).unwrap(), 21);
        assert_eq!(count(c, LogFilter::default()), 10);
        assert_eq!(logs::delete_before(c, 1_002, 3).unwrap(), 0);
        // The daily rollup is kept.
        let day = switchboard_store::statistics::daily_by_model(c, None, 0, 0).unwrap();
        assert_eq!(day.iter().map(|d| d.request_count).sum::<i64>(), 30);
    }
}

#[test]
fn statistics_sum_per_day_and_model() {
    use switchboard_store::logs::ConsumeRecord;
    use switchboard_store::statistics::daily_by_model;
    for db in TestDb::all() {
        let c = &mut db.conn();
        let rec =
            |rid: &str, user: i64, channel: i64, model: &str, quota: i64, at: i64| ConsumeRecord {
                request_id: Some(rid.into()),
                created_at: at,
                log_type: 2,
                user_id: user,
                username: Default::default(),
                token_id: 0,
                token_name: Default::default(),
                channel_id: channel,
                model_name: model.into(),
                group_name: Default::default(),
                quota,
                prompt_tokens: 10,
                completion_tokens: 1,
                use_time_ms: 5,
                first_response_ms: 1,
                is_stream: false,
                source_ip: Default::default(),
                content: String::new(),
                metadata: "{}".into(),
                cache_hit: false,
            };
        let d = 86_400;
        let big = 5_000_000_000_000;
        logs::settle_batch(
            c,
            &[
                rec("a", 1, 1, "m1", big, d + 5),
                rec("b", 1, 2, "m1", big, d + 6),
                rec("c", 1, 1, "m2", 3, d + 7),
                rec("d", 1, 1, "m1", 4, 2 * d),
                rec("e", 2, 1, "m1", 100, d + 8),
                rec("f", 1, 1, "m1", 1, 0),
            ],
        )
        .unwrap();
        let rows = daily_by_model(c, Some(1), d, 2 * d).unwrap();
        let got: Vec<_> = rows
            .iter()
            .map(|r| {
                (
                    r.day,
                    r.model_name.as_str(),
                    r.request_count,
                    r.quota,
                    r.prompt_tokens,
                    r.completion_tokens,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (d, "m1", 2, 2 * big, 20, 2),
                (d, "m2", 1, 3, 10, 1),
                (2 * d, "m1", 1, 4, 10, 1),
            ],
            "{:?}",
            db.backend
        );
        let everyone = daily_by_model(c, None, d, d).unwrap();
        assert_eq!(everyone[0].quota, 2 * big + 100);
        assert_eq!(everyone[0].request_count, 3);
    }
}

/// The statistics read through the daily rollup equal the sums over the logs for every range and
/// filter, also after the oldest logs were cleaned up (their days are then read from the logs).
#[test]
fn rollup_statistics_equal_the_log_sums() {
    use switchboard_store::logs::{consume_sums, consume_sums_fast, ConsumeRecord, LogFilter};
    let d: i64 = 86_400;
    for db in TestDb::all() {
        let c = &mut db.conn();
        // 7 days, 3 users, 2 channels, 3 models, a few records per hour; every 7th one a
        // large amount (sums beyond 32 bits).
        let mut batch = Vec::new();
        for i in 0..7 * 24 * 3 {
            let at = 10 * d + i * 1_200 + (i % 5);
            batch.push(ConsumeRecord {
                request_id: Some(format!("r{i}").into()),
                created_at: at,
                log_type: 2,
                user_id: 1 + i % 3,
                username: format!("u{}", i % 3).into(),
                token_id: 1 + i % 4,
                token_name: format!("k{}", i % 4).into(),
                channel_id: 1 + i % 2,
                model_name: format!("m{}", i % 3).into(),
                group_name: "default".into(),
                quota: if i % 7 == 0 {
                    3_000_000_000 + i
                } else {
                    100 + i
                },
                prompt_tokens: 10 + (i % 50) as i32,
                completion_tokens: (i % 30) as i32,
                use_time_ms: 5,
                first_response_ms: 1,
                is_stream: false,
                source_ip: Default::default(),
                content: String::new(),
                metadata: "{}".into(),
                cache_hit: false,
            });
        }
        for chunk in batch.chunks(100) {
            logs::settle_batch(c, chunk).unwrap();
        }
        let ranges: Vec<(Option<i64>, Option<i64>)> = vec![
            (None, None),
            (Some(10 * d), None),
            (Some(10 * d + 5_000), Some(15 * d + 7)),
            (Some(11 * d), Some(13 * d - 1)),
            (Some(12 * d + 1), Some(12 * d + 50_000)),
            (None, Some(14 * d)),
            (Some(20 * d), None),
        ];
        let check = |c: &mut switchboard_store::DbConn, label: &str| {
            for (start, end) in &ranges {
                for variant in 0..7 {
                    let mut f = LogFilter {
                        start: *start,
                        end: *end,
                        ..LogFilter::default()
                    };
                    match variant {
                        1 => f.user_id = Some(2),
                        2 => f.channel_id = Some(1),
                        3 => f.model_name = Some("m1".into()),
                        4 => {
                            f.user_id = Some(3);
                            f.model_name = Some("m2".into());
                            f.log_type = Some(2);
                        }
                        5 => f.token_name = Some("k1".into()),
                        // A model prefix: every model (the rollup matches it the same way).
                        6 => f.model_name = Some("m".into()),
                        _ => {}
                    }
                    let slow = consume_sums(c, &f).unwrap();
                    let fast = consume_sums_fast(c, &f).unwrap();
                    assert_eq!(fast, slow, "{label} {:?} {f:?}", db.backend);
                }
            }
        };
        check(c, "all logs");
        // Clean up the first two and a half days: their rollup stays, the sums follow the logs.
        logs::delete_before(c, 12 * d + d / 2, 1_000).unwrap();
        check(c, "after cleanup");
        let top_ups = LogFilter {
            log_type: Some(1),
            ..LogFilter::default()
        };
        assert_eq!(
            consume_sums_fast(c, &top_ups).unwrap(),
            logs::ConsumeSums::default()
        );
    }
}

/// Orders: stored exactly (decimal text), paid at most once even when many connections race,
/// never once past their expiry, where they are paid late instead (again once); the expiry pass
/// and the order log's filters.
#[test]
fn orders_are_paid_once_in_time_or_late() {
    use switchboard_store::payments::{self, GatewayFields, NewOrder, OrderFilter, OrderStatus};
    for db in TestDb::all() {
        let what = format!("{:?}", db.backend);
        let c = &mut db.conn();
        let user = users::insert(c, &new_user("payer", "p@x.io")).unwrap();
        let gw = payments::insert_gateway(
            c,
            "gw-uuid-1",
            &GatewayFields {
                name: "Epay".into(),
                gateway_type: "epay".into(),
                icon: "alipay".into(),
                enabled: true,
                fixed_fee: "0.3".into(),
                percent_fee: "0.029".into(),
                currency: "CNY".into(),
                notify_domain: String::new(),
                sort: 2,
                config: "sealed".into(),
                updated_at: 10,
            },
        )
        .unwrap();
        let g = payments::find_gateway_by_uuid(c, "gw-uuid-1").unwrap();
        assert_eq!(
            (g.id, g.fixed_fee.as_str(), g.created_at),
            (gw, "0.3", 10),
            "{what}"
        );
        let order = |c: &mut switchboard_store::DbConn, no: &str, expires_at: i64| {
            payments::insert_order(
                c,
                &NewOrder {
                    trade_no: no,
                    user_id: user,
                    gateway_id: gw,
                    amount: 10,
                    discount: "0.9",
                    fee: "3.29",
                    order_amount: "68.99",
                    currency: "CNY",
                    quota: 5_000_000,
                    status: OrderStatus::Pending.as_i32(),
                    created_at: 100,
                    expires_at,
                },
            )
            .unwrap()
        };
        order(c, "SB-A", 1_000);
        order(c, "SB-B", 1_000);
        order(c, "SB-C", 150);
        // Waiting to be paid: all three at 120, two once SB-C's time is up, none for others.
        assert_eq!(
            payments::count_open_orders(c, user, 120).unwrap(),
            3,
            "{what}"
        );
        assert_eq!(
            payments::count_open_orders(c, user, 151).unwrap(),
            2,
            "{what}"
        );
        assert_eq!(
            payments::count_open_orders(c, user + 1, 120).unwrap(),
            0,
            "{what}"
        );
        let a = payments::find_order(c, "SB-A").unwrap();
        assert_eq!(
            (a.order_amount.as_str(), a.discount.as_str()),
            ("68.99", "0.9"),
            "{what}"
        );

        // Eight connections race to mark SB-A paid: exactly one wins.
        let winners: usize = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|i| {
                    let db = &db;
                    s.spawn(move || {
                        let c = &mut db.conn();
                        usize::from(payments::mark_paid(c, "SB-A", &format!("G{i}"), 500).unwrap())
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(winners, 1, "{what}");
        assert_eq!(
            payments::count_open_orders(c, user, 120).unwrap(),
            2,
            "{what}: a paid order is not waiting"
        );
        let a = payments::find_order(c, "SB-A").unwrap();
        assert_eq!(
            (a.status, a.paid_at),
            (OrderStatus::Paid.as_i32(), 500),
            "{what}"
        );
        // Past its expiry, a pending order is not paid, whether or not the expiry pass ran.
        assert!(
            !payments::mark_paid(c, "SB-C", "late", 151).unwrap(),
            "{what}"
        );
        assert!(
            !payments::mark_paid(c, "SB-NONE", "x", 1).unwrap(),
            "{what}"
        );
        // ...but paid late (pending past its expiry), once: of eight racing connections one
        // wins; a paid order never is.
        let late: usize = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|i| {
                    let db = &db;
                    s.spawn(move || {
                        let c = &mut db.conn();
                        usize::from(
                            payments::mark_paid_late(c, "SB-C", &format!("L{i}"), 600).unwrap(),
                        )
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(late, 1, "{what}");
        let late_order = payments::find_order(c, "SB-C").unwrap();
        assert_eq!(
            (late_order.status, late_order.paid_at),
            (OrderStatus::PaidLate.as_i32(), 600),
            "{what}"
        );
        assert!(
            !payments::mark_paid_late(c, "SB-A", "again", 700).unwrap(),
            "{what}: SB-A is paid"
        );
        assert!(!payments::mark_failed(c, "SB-C").unwrap(), "{what}");
        assert_eq!(
            payments::expire_pending(c, 200).unwrap(),
            0,
            "{what}: a paid-late order is not swept"
        );
        order(c, "SB-D", 150);
        assert_eq!(
            payments::expire_pending(c, 200).unwrap(),
            1,
            "{what}: only SB-D"
        );
        assert!(
            payments::mark_paid_late(c, "SB-D", "L-D", 700).unwrap(),
            "{what}: an expired order is paid late"
        );
        let log = payments::list_orders(
            c,
            &OrderFilter {
                status: Some(OrderStatus::Pending.as_i32()),
                ..OrderFilter::default()
            },
            PageReq { page: 1, size: 10 },
        )
        .unwrap();
        assert_eq!(log.total, 1, "{what}");
        assert_eq!(
            (
                log.items[0].order.trade_no.as_str(),
                log.items[0].username.as_str(),
                log.items[0].gateway_name.as_str()
            ),
            ("SB-B", "payer", "Epay"),
            "{what}"
        );
        let all = payments::list_orders(c, &OrderFilter::default(), PageReq { page: 1, size: 2 })
            .unwrap();
        assert_eq!((all.total, all.items.len()), (4, 2), "{what}");
        assert_eq!(all.items[0].order.trade_no, "SB-D", "{what}: newest first");
        payments::delete_gateway(c, gw).unwrap();
        assert!(payments::find_gateway(c, gw).unwrap_err().is_not_found());
    }
}

#[test]
fn response_history_is_the_owners_until_it_expires() {
    use switchboard_store::response_history::{self, Conversation};
    for db in TestDb::all() {
        let c = &mut db.conn();
        let row = |id: &str, user_id: i64, expires_at: i64| Conversation {
            response_id: id.to_owned(),
            user_id,
            model_name: "claude-sonnet-4-5".to_owned(),
            items: format!("[{{\"type\":\"message\",\"id\":\"{id}\"}}]"),
            created_at: 100,
            expires_at,
        };
        response_history::put(c, &row("resp_a", 7, 1_000)).unwrap();
        response_history::put(c, &row("resp_b", 8, 2_000)).unwrap();
        let found = response_history::find(c, "resp_a", 7, 500).unwrap();
        assert_eq!(found, Some(row("resp_a", 7, 1_000)), "{:?}", db.backend);
        // Another user's id, an unknown id and an expired one are not found.
        assert_eq!(response_history::find(c, "resp_a", 8, 500).unwrap(), None);
        assert_eq!(response_history::find(c, "resp_x", 7, 500).unwrap(), None);
        assert_eq!(response_history::find(c, "resp_a", 7, 1_000).unwrap(), None);
        // Written again under the same id: replaced.
        let mut again = row("resp_a", 7, 3_000);
        again.items = "[]".to_owned();
        response_history::put(c, &again).unwrap();
        assert_eq!(
            response_history::find(c, "resp_a", 7, 2_500).unwrap(),
            Some(again)
        );
        // The purge removes what has expired only.
        assert_eq!(response_history::purge(c, 2_000).unwrap(), 1);
        assert_eq!(response_history::find(c, "resp_b", 8, 10).unwrap(), None);
        assert!(response_history::find(c, "resp_a", 7, 2_500)
            .unwrap()
            .is_some());
        assert_eq!(response_history::purge(c, 2_000).unwrap(), 0);
    }
}
