#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The async-task repository on every backend available to this run (SQLite always, PostgreSQL
//! and MariaDB when TEST_PG_DSN / TEST_MYSQL_DSN are set).

use switchboard_store::tasks::{self, NewTask, TaskFilter, TaskProgress};
use switchboard_store::testing::TestDb;
use switchboard_store::users::{self, NewUser};
use switchboard_store::{logs, tokens, DbConn, PageReq};

fn user(c: &mut DbConn, name: &str) -> i64 {
    users::insert(
        c,
        &NewUser {
            username: name,
            password: "$2b$04$hash",
            display_name: name,
            role: 1,
            status: 1,
            email: "",
            quota: 1000,
            group_name: "default",
            aff_code: None,
            inviter_id: 0,
            created_at: 1,
            updated_at: 1,
        },
    )
    .unwrap()
}

fn token(c: &mut DbConn, user_id: i64, hash: &str) -> i64 {
    tokens::insert(
        c,
        &tokens::NewToken {
            user_id,
            name: "key",
            key_hash: hash,
            key_ciphertext: "ct",
            key_hint: "sk-ab**yz",
            status: 1,
            created_at: 1,
            updated_at: 1,
            expired_at: -1,
            remain_quota: 500,
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
    .unwrap()
}

fn task<'a>(task_id: &'a str, platform: &'a str, user_id: i64, token_id: i64) -> NewTask<'a> {
    NewTask {
        task_id,
        platform,
        user_id,
        token_id,
        channel_id: 7,
        quota: 100,
        action: "IMAGINE",
        status: "SUBMITTED",
        fail_reason: "",
        submit_time: 1000,
        progress: "0%",
        prompt: "a cat",
        prompt_en: "",
        image_url: "",
        properties: r#"{"model":"mj_imagine"}"#,
        data: "{}",
        created_at: 1000,
        updated_at: 1000,
    }
}

#[test]
fn tasks_insert_find_and_scope_by_user() {
    for db in TestDb::all() {
        let c = &mut db.conn();
        let (a, b) = (user(c, "alice"), user(c, "bob"));
        let id = tasks::insert(c, &task("t1", "midjourney", a, 0)).unwrap();
        tasks::insert(c, &task("t2", "midjourney", b, 0)).unwrap();
        let t = tasks::find(c, id).unwrap();
        assert_eq!((t.task_id.as_str(), t.user_id, t.quota), ("t1", a, 100));
        assert!(!t.is_finished() && !t.refunded);
        assert_eq!(
            tasks::find_by_task_id(c, "midjourney", "t1", Some(a))
                .unwrap()
                .id,
            id
        );
        assert!(tasks::find_by_task_id(c, "midjourney", "t1", Some(b))
            .unwrap_err()
            .is_not_found());
        assert!(tasks::find_by_task_id(c, "suno", "t1", None)
            .unwrap_err()
            .is_not_found());
        let ids = vec!["t1".to_owned(), "t2".to_owned(), "nope".to_owned()];
        assert_eq!(
            tasks::find_by_task_ids(c, "midjourney", &ids, Some(a))
                .unwrap()
                .len(),
            1,
            "{:?}",
            db.backend
        );
        assert_eq!(
            tasks::find_by_task_ids(c, "midjourney", &ids, None)
                .unwrap()
                .len(),
            2
        );
    }
}

#[test]
fn tasks_list_filters_and_pages() {
    for db in TestDb::all() {
        let c = &mut db.conn();
        let (a, b) = (user(c, "alice"), user(c, "bob"));
        for i in 0..12 {
            let name = format!("mj-{i}");
            let mut t = task(&name, "midjourney", a, 0);
            t.submit_time = 1000 + i;
            if i % 3 == 0 {
                t.channel_id = 9;
            }
            tasks::insert(c, &t).unwrap();
        }
        let mut s = task("s-1", "suno", b, 0);
        s.action = "MUSIC";
        tasks::insert(c, &s).unwrap();
        let page = |p, size| PageReq { page: p, size };
        let all = tasks::list(c, &TaskFilter::default(), page(1, 5)).unwrap();
        assert_eq!((all.total, all.items.len()), (13, 5));
        assert_eq!(all.items[0].task_id, "s-1", "newest first");
        let mine = TaskFilter {
            platform: Some("midjourney".into()),
            user_id: Some(a),
            ..Default::default()
        };
        let p3 = tasks::list(c, &mine, page(3, 5)).unwrap();
        assert_eq!((p3.total, p3.items.len()), (12, 2));
        assert_eq!(p3.items[1].task_id, "mj-0");
        let f = TaskFilter {
            channel_id: Some(9),
            ..Default::default()
        };
        assert_eq!(tasks::list(c, &f, page(1, 10)).unwrap().total, 4);
        let f = TaskFilter {
            start: Some(1005),
            end: Some(1007),
            platform: Some("midjourney".into()),
            ..Default::default()
        };
        assert_eq!(tasks::list(c, &f, page(1, 10)).unwrap().total, 3);
        let f = TaskFilter {
            task_id: Some("mj-4".into()),
            ..Default::default()
        };
        assert_eq!(
            tasks::list(c, &f, page(1, 10)).unwrap().items[0].task_id,
            "mj-4"
        );
        let f = TaskFilter {
            user_id: Some(b),
            action: Some("MUSIC".into()),
            status: Some("SUBMITTED".into()),
            ..Default::default()
        };
        assert_eq!(tasks::list(c, &f, page(1, 10)).unwrap().total, 1);
    }
}

#[test]
fn tasks_progress_unfinished_and_refund_once() {
    for db in TestDb::all() {
        let c = &mut db.conn();
        let a = user(c, "alice");
        let k = token(c, a, "h1");
        let ok_id = tasks::insert(c, &task("ok", "midjourney", a, k)).unwrap();
        let bad_id = tasks::insert(c, &task("bad", "midjourney", a, k)).unwrap();
        assert_eq!(tasks::unfinished(c, 0, 10).unwrap().len(), 2);
        assert_eq!(tasks::unfinished(c, ok_id, 10).unwrap().len(), 1);

        let done = TaskProgress {
            status: Some("SUCCESS".into()),
            progress: Some("100%".into()),
            image_url: Some("https://img/x.png".into()),
            finish_time: Some(2000),
            ..Default::default()
        };
        assert!(tasks::update_progress(c, ok_id, &done).unwrap());
        let again = TaskProgress {
            status: Some("IN_PROGRESS".into()),
            ..Default::default()
        };
        assert!(
            !tasks::update_progress(c, ok_id, &again).unwrap(),
            "a finished task keeps its state"
        );
        let t = tasks::find(c, ok_id).unwrap();
        assert_eq!(
            (t.status.as_str(), t.image_url.as_str()),
            ("SUCCESS", "https://img/x.png")
        );
        assert_eq!(
            tasks::refund(c, ok_id).unwrap(),
            0,
            "a success is not refunded"
        );

        let failed = TaskProgress {
            status: Some("FAILURE".into()),
            fail_reason: Some("banned prompt".into()),
            ..Default::default()
        };
        assert!(tasks::update_progress(c, bad_id, &failed).unwrap());
        assert!(tasks::unfinished(c, 0, 10).unwrap().is_empty());
        assert_eq!(tasks::refund(c, bad_id).unwrap(), 100);
        assert_eq!(tasks::refund(c, bad_id).unwrap(), 0, "refunded once");
        assert!(tasks::find(c, bad_id).unwrap().refunded);
        assert_eq!(users::find(c, a).unwrap().quota, 1100);
        assert_eq!(tokens::find(c, k).unwrap().remain_quota, 600);
        let l = logs::recent_for_user(c, a, 10).unwrap();
        assert_eq!(l.len(), 1, "{:?}", db.backend);
        assert_eq!(
            (l[0].quota, l[0].log_type, l[0].model_name.as_str()),
            (100, 4, "mj_imagine")
        );
        assert!(l[0].content.contains("bad"));
    }
}
