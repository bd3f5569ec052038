#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The import writes (`store::import`) on every backend available to this run: the outcome
//! (inserted, updated, unchanged), the source id kept when it is free, and the id sequence moved
//! past it.

use std::collections::HashSet;
use switchboard_domain::price::Price;
use switchboard_store::import::{self, IdTable, Outcome, Upserted};
use switchboard_store::testing::TestDb;
use switchboard_store::{channels, logs, prices, redemptions, tokens, user_groups, users};

fn user(name: &str, keep_id: Option<i64>) -> import::ImportedUser {
    import::ImportedUser {
        keep_id,
        fields: import::ImportedUserFields {
            username: name.into(),
            password: String::new(),
            display_name: name.into(),
            role: 1,
            status: 1,
            email: String::new(),
            avatar_url: String::new(),
            github_id: String::new(),
            oidc_id: String::new(),
            lark_id: String::new(),
            wechat_id: String::new(),
            telegram_id: 0,
            quota: 500,
            used_quota: 7,
            request_count: 3,
            group_name: "default".into(),
            aff_code: Some(format!("aff-{name}")),
            aff_count: 0,
            aff_quota: 0,
            aff_history_quota: 0,
            inviter_id: 0,
            created_at: 1_700_000_000,
            last_login_at: 0,
        },
    }
}

fn outcome(up: Upserted) -> Outcome {
    up.outcome
}

#[test]
fn users_keep_their_id_and_a_second_write_changes_nothing() {
    for db in TestDb::all() {
        let c = &mut db.conn();
        let alice = user("Alice", Some(41));
        let up = import::upsert_user_with_id(c, &alice).unwrap();
        assert_eq!(
            (up.id, up.outcome),
            (41, Outcome::Inserted),
            "{:?}",
            db.backend
        );
        let row = users::find(c, 41).unwrap();
        assert_eq!((row.quota, row.used_quota, row.request_count), (500, 7, 3));
        assert_eq!(row.aff_code.as_deref(), Some("aff-Alice"));
        assert_eq!(
            import::upsert_user_with_id(c, &alice).unwrap(),
            Upserted {
                id: 41,
                outcome: Outcome::Unchanged
            }
        );

        // Matched ignoring case: the stored name keeps its case, the rest is updated (a missing
        // invitation code is written as NULL).
        let mut again = user("alice", Some(99));
        again.fields.quota = 900;
        again.fields.aff_code = None;
        let up = import::upsert_user_with_id(c, &again).unwrap();
        assert_eq!((up.id, up.outcome), (41, Outcome::Updated));
        let row = users::find(c, 41).unwrap();
        assert_eq!((row.username.as_str(), row.quota), ("Alice", 900));
        assert_eq!(row.aff_code, None);
        assert!(users::find(c, 99).is_err(), "an update inserts nothing");
        assert_eq!(
            outcome(import::upsert_user_with_id(c, &again).unwrap()),
            Outcome::Unchanged
        );

        // The source id is taken: a fresh one.
        let up = import::upsert_user_with_id(c, &user("bob", Some(41))).unwrap();
        assert_eq!(up.outcome, Outcome::Inserted);
        assert_ne!(up.id, 41);
        assert_eq!(users::find(c, up.id).unwrap().username, "bob");
    }
}

#[test]
fn the_id_sequence_moves_past_kept_ids() {
    for db in TestDb::all() {
        let c = &mut db.conn();
        import::upsert_user_with_id(c, &user("carol", Some(500))).unwrap();
        import::move_id_sequence_past_max(c, IdTable::Users).unwrap();
        let fresh = import::upsert_user_with_id(c, &user("dave", None)).unwrap();
        assert!(fresh.id > 500, "{:?}: {}", db.backend, fresh.id);
        for table in [
            IdTable::Tokens,
            IdTable::Channels,
            IdTable::Redemptions,
            IdTable::Logs,
        ] {
            import::move_id_sequence_past_max(c, table).unwrap();
        }
    }
}

fn token(hash: &str, keep_id: Option<i64>) -> import::ImportedToken {
    import::ImportedToken {
        keep_id,
        key_hash: hash.into(),
        key_ciphertext: format!("sealed-{hash}"),
        key_hint: "sk-ab...yz".into(),
        fields: import::ImportedTokenFields {
            user_id: 1,
            name: "imported".into(),
            status: 1,
            created_at: 10,
            accessed_at: 20,
            expired_at: -1,
            remain_quota: 1000,
            unlimited_quota: false,
            used_quota: 5,
            group_name: String::new(),
            models: "gpt-4o".into(),
            subnet: String::new(),
            heartbeat_enabled: false,
            heartbeat_timeout: 30,
        },
    }
}

#[test]
fn tokens_match_by_digest_and_keep_their_key() {
    for db in TestDb::all() {
        let c = &mut db.conn();
        let t = token("digest-1", Some(7));
        assert_eq!(
            import::upsert_token_with_id(c, &t).unwrap(),
            Upserted {
                id: 7,
                outcome: Outcome::Inserted
            }
        );
        assert_eq!(
            outcome(import::upsert_token_with_id(c, &t).unwrap()),
            Outcome::Unchanged
        );
        let mut changed = token("digest-1", Some(8));
        changed.key_ciphertext = "sealed-again".into();
        changed.fields.remain_quota = 10;
        assert_eq!(
            import::upsert_token_with_id(c, &changed).unwrap(),
            Upserted {
                id: 7,
                outcome: Outcome::Updated
            }
        );
        let row = tokens::find(c, 7).unwrap();
        assert_eq!(row.remain_quota, 10);
        assert_eq!(
            row.key_ciphertext, "sealed-digest-1",
            "the key is written once"
        );
        let other = import::upsert_token_with_id(c, &token("digest-2", Some(7))).unwrap();
        assert_eq!(other.outcome, Outcome::Inserted);
        assert_ne!(other.id, 7);
    }
}

fn channel(name: &str, keep_id: Option<i64>) -> import::ImportedChannel {
    import::ImportedChannel {
        keep_id,
        fields: channels::ChannelFields {
            channel_type: 1,
            name: name.into(),
            key: "sealed:key".into(),
            base_url: String::new(),
            group_name: "default,vip".into(),
            models: "gpt-4o,gpt-4o-mini".into(),
            model_mapping: String::new(),
            priority: 0,
            weight: 1,
            tag: String::new(),
            proxy: String::new(),
            test_model: String::new(),
            status: 1,
            custom_headers: String::new(),
            config: String::new(),
            disabled_stream: String::new(),
            pre_cost: 1,
            auto_ban: true,
            updated_at: 1,
            destination_by_root: true,
        },
        stats: import::ImportedChannelStats {
            created_at: 100,
            used_quota: 42,
            balance: 1_500_000,
            balance_updated_at: 200,
            response_time: 300,
            test_time: 400,
        },
    }
}

#[test]
fn channels_keep_id_abilities_and_stats_and_compare_keys_through_the_caller() {
    for db in TestDb::all() {
        let c = &mut db.conn();
        let none = HashSet::new();
        let ch = channel("upstream", Some(12));
        let up = import::upsert_channel_with_id(c, &ch, &none, |_| true).unwrap();
        assert_eq!(
            (up.id, up.outcome),
            (12, Outcome::Inserted),
            "{:?}",
            db.backend
        );
        let row = channels::find(c, 12).unwrap();
        assert_eq!(
            (row.created_at, row.used_quota, row.balance, row.test_time),
            (100, 42, 1_500_000, 400)
        );
        assert_eq!(channels::abilities_of(c, 12).unwrap().len(), 4);

        let same = import::upsert_channel_with_id(c, &ch, &none, |k| k == "sealed:key").unwrap();
        assert_eq!(same.outcome, Outcome::Unchanged);
        // The caller says the stored key is another: updated.
        let up = import::upsert_channel_with_id(c, &ch, &none, |_| false).unwrap();
        assert_eq!((up.id, up.outcome), (12, Outcome::Updated));

        // A channel claimed by another source row is not the match: a new one.
        let claimed = HashSet::from([12]);
        let second = import::upsert_channel_with_id(c, &ch, &claimed, |_| true).unwrap();
        assert_eq!(second.outcome, Outcome::Inserted);
        assert_ne!(second.id, 12);
        assert_eq!(channels::abilities_of(c, second.id).unwrap().len(), 4);
        // Without an id: the first channel (by id) of that name and type.
        let by_name =
            import::upsert_channel_with_id(c, &channel("upstream", None), &none, |_| true).unwrap();
        assert_eq!(
            (by_name.id, by_name.outcome),
            (second.id.min(12), Outcome::Unchanged)
        );
    }
}

#[test]
fn codes_groups_prices_and_logs() {
    for db in TestDb::all() {
        let c = &mut db.conn();
        let code = import::ImportedRedemption {
            keep_id: Some(3),
            code: "code-abc".into(),
            fields: import::ImportedRedemptionFields {
                user_id: 1,
                name: "gift".into(),
                status: 1,
                quota: 100,
                created_at: 5,
                redeemed_at: 0,
            },
        };
        let up = import::upsert_redemption_with_id(c, &code).unwrap();
        assert_eq!((up.id, up.outcome), (3, Outcome::Inserted));
        assert_eq!(redemptions::find(c, 3).unwrap().code, "code-abc");
        let up = import::upsert_redemption_with_id(c, &code).unwrap();
        assert_eq!(up.outcome, Outcome::Unchanged);

        let mut group = import::ImportedGroup {
            symbol: "vip".into(),
            name: "VIP".into(),
            ratio: 0.8,
            public: false,
            api_rate: 60,
            promotion: false,
            min_topup: 0,
            max_topup: 0,
            enabled: true,
            ratio_only: false,
        };
        assert_eq!(
            outcome(import::upsert_group(c, &group).unwrap()),
            Outcome::Inserted
        );
        assert_eq!(
            outcome(import::upsert_group(c, &group).unwrap()),
            Outcome::Unchanged
        );
        // Ratio only: the other fields are neither compared nor written.
        group.ratio_only = true;
        group.name = "renamed".into();
        assert_eq!(
            outcome(import::upsert_group(c, &group).unwrap()),
            Outcome::Unchanged
        );
        group.ratio = 0.5;
        assert_eq!(
            outcome(import::upsert_group(c, &group).unwrap()),
            Outcome::Updated
        );
        let row = user_groups::find_by_symbol(c, "vip").unwrap();
        assert_eq!(
            (row.name.as_str(), row.ratio, row.api_rate),
            ("VIP", 0.5, 60)
        );

        let mut price = Price::tokens("imported-model", 1, 1.5, 3.0);
        assert_eq!(
            outcome(import::upsert_price(c, &price).unwrap()),
            Outcome::Inserted
        );
        assert_eq!(
            outcome(import::upsert_price(c, &price).unwrap()),
            Outcome::Unchanged
        );
        price.output = 6.0;
        assert_eq!(
            outcome(import::upsert_price(c, &price).unwrap()),
            Outcome::Updated
        );
        assert_eq!(prices::find(c, "imported-model").unwrap().output, 6.0);

        let log = import::ImportedLog {
            request_id: "import:one-api:9".into(),
            created_at: 1_700_000_000,
            log_type: 2,
            user_id: 41,
            username: "alice".into(),
            token_name: "t".into(),
            channel_id: 12,
            model_name: "gpt-4o".into(),
            quota: 77,
            prompt_tokens: 10,
            completion_tokens: 20,
            use_time_ms: 1500,
            is_stream: true,
            source_ip: String::new(),
            content: String::new(),
            metadata: String::new(),
        };
        let first = import::insert_log_once(c, &log).unwrap();
        assert_eq!(first.outcome, Outcome::Inserted);
        assert_eq!(
            import::insert_log_once(c, &log).unwrap(),
            Upserted {
                id: first.id,
                outcome: Outcome::Unchanged
            }
        );
        let rows = logs::recent_for_user(c, 41, 10).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].quota, rows[0].use_time_ms), (77, 1500));
    }
}
