//! Hand-written Diesel schema shared by the SQLite, PostgreSQL and MySQL backends.
//!
//! Only backend-neutral SQL types are used (`BigInt`, `Integer`, `Text`, `Bool`,
//! `Double`, `Nullable<..>`) so the same tables work through the
//! `MultiConnection` enum. Must match `migrations/*/2026-11-22-000001_initial/up.sql`.

diesel::table! {
    users (id) {
        id -> BigInt,
        username -> Text,
        password -> Text,
        display_name -> Text,
        role -> Integer,
        status -> Integer,
        email -> Text,
        avatar_url -> Text,
        github_id -> Text,
        oidc_id -> Text,
        lark_id -> Text,
        wechat_id -> Text,
        telegram_id -> BigInt,
        access_token_hash -> Nullable<Text>,
        quota -> BigInt,
        used_quota -> BigInt,
        request_count -> BigInt,
        group_name -> Text,
        aff_code -> Nullable<Text>,
        aff_count -> Integer,
        aff_quota -> BigInt,
        aff_history_quota -> BigInt,
        inviter_id -> BigInt,
        total_topup -> BigInt,
        created_at -> BigInt,
        updated_at -> BigInt,
        last_login_at -> BigInt,
        language -> Text,
    }
}

diesel::table! {
    sessions (id_hash) {
        id_hash -> Text,
        user_id -> BigInt,
        created_at -> BigInt,
        expires_at -> BigInt,
        last_seen_at -> BigInt,
        ip -> Text,
        user_agent -> Text,
    }
}

diesel::table! {
    verification_codes (id) {
        id -> BigInt,
        purpose -> Text,
        email -> Text,
        code_hash -> Text,
        created_at -> BigInt,
        expires_at -> BigInt,
        attempts -> Integer,
    }
}

diesel::table! {
    options (key) {
        key -> Text,
        value -> Text,
    }
}

diesel::table! {
    tokens (id) {
        id -> BigInt,
        user_id -> BigInt,
        name -> Text,
        key_hash -> Text,
        key_ciphertext -> Text,
        key_hint -> Text,
        status -> Integer,
        created_at -> BigInt,
        updated_at -> BigInt,
        accessed_at -> BigInt,
        expired_at -> BigInt,
        remain_quota -> BigInt,
        unlimited_quota -> Bool,
        used_quota -> BigInt,
        request_count -> BigInt,
        group_name -> Text,
        models -> Text,
        subnet -> Text,
        api_rate -> Integer,
        heartbeat_enabled -> Bool,
        heartbeat_timeout -> Integer,
        cache_enabled -> Bool,
    }
}

diesel::table! {
    channels (id) {
        id -> BigInt,
        #[sql_name = "type"]
        channel_type -> Integer,
        name -> Text,
        key -> Text,
        base_url -> Text,
        group_name -> Text,
        models -> Text,
        model_mapping -> Text,
        priority -> BigInt,
        weight -> Integer,
        tag -> Text,
        proxy -> Text,
        test_model -> Text,
        status -> Integer,
        response_time -> Integer,
        test_time -> BigInt,
        used_quota -> BigInt,
        balance -> BigInt,
        balance_updated_at -> BigInt,
        custom_headers -> Text,
        config -> Text,
        disabled_stream -> Text,
        pre_cost -> Integer,
        auto_ban -> Bool,
        created_at -> BigInt,
        updated_at -> BigInt,
        destination_by_root -> Bool,
    }
}

diesel::table! {
    abilities (group_name, model, channel_id) {
        group_name -> Text,
        model -> Text,
        channel_id -> BigInt,
        enabled -> Bool,
        priority -> BigInt,
        weight -> Integer,
        tag -> Text,
    }
}

diesel::table! {
    redemptions (id) {
        id -> BigInt,
        user_id -> BigInt,
        name -> Text,
        code -> Text,
        status -> Integer,
        quota -> BigInt,
        created_at -> BigInt,
        redeemed_at -> BigInt,
        used_user_id -> BigInt,
    }
}

diesel::table! {
    logs (id) {
        id -> BigInt,
        created_at -> BigInt,
        #[sql_name = "type"]
        log_type -> Integer,
        user_id -> BigInt,
        username -> Text,
        token_id -> BigInt,
        token_name -> Text,
        channel_id -> BigInt,
        model_name -> Text,
        group_name -> Text,
        quota -> BigInt,
        prompt_tokens -> Integer,
        completion_tokens -> Integer,
        use_time_ms -> Integer,
        first_response_ms -> Integer,
        is_stream -> Bool,
        source_ip -> Text,
        request_id -> Nullable<Text>,
        content -> Text,
        metadata -> Text,
        cache_hit -> Bool,
    }
}

diesel::table! {
    user_groups (id) {
        id -> BigInt,
        symbol -> Text,
        name -> Text,
        ratio -> Double,
        public -> Bool,
        api_rate -> Integer,
        promotion -> Bool,
        min_topup -> BigInt,
        max_topup -> BigInt,
        enabled -> Bool,
        created_at -> BigInt,
        updated_at -> BigInt,
    }
}

diesel::table! {
    prices (id) {
        id -> BigInt,
        model -> Text,
        #[sql_name = "type"]
        price_type -> Text,
        channel_type -> Integer,
        input -> Double,
        output -> Double,
        extra_ratios -> Text,
        locked -> Bool,
        created_at -> BigInt,
        updated_at -> BigInt,
        max_output_tokens -> BigInt,
    }
}

diesel::table! {
    model_owners (id) {
        id -> BigInt,
        name -> Text,
        icon -> Text,
        created_at -> BigInt,
        updated_at -> BigInt,
    }
}

diesel::table! {
    statistics (id) {
        id -> BigInt,
        day -> BigInt,
        user_id -> BigInt,
        channel_id -> BigInt,
        model_name -> Text,
        request_count -> BigInt,
        quota -> BigInt,
        prompt_tokens -> BigInt,
        completion_tokens -> BigInt,
        request_time_ms -> BigInt,
        cache_hits -> BigInt,
    }
}

diesel::table! {
    invoices (id) {
        id -> BigInt,
        user_id -> BigInt,
        month -> Text,
        status -> Integer,
        quota -> BigInt,
        request_count -> BigInt,
        prompt_tokens -> BigInt,
        completion_tokens -> BigInt,
        request_time_ms -> BigInt,
        model_details -> Text,
        created_at -> BigInt,
        paid_at -> BigInt,
    }
}

diesel::table! {
    tasks (id) {
        id -> BigInt,
        task_id -> Text,
        platform -> Text,
        user_id -> BigInt,
        channel_id -> BigInt,
        quota -> BigInt,
        action -> Text,
        status -> Text,
        fail_reason -> Text,
        submit_time -> BigInt,
        start_time -> BigInt,
        finish_time -> BigInt,
        progress -> Text,
        properties -> Text,
        data -> Text,
        created_at -> BigInt,
        updated_at -> BigInt,
        token_id -> BigInt,
        prompt -> Text,
        prompt_en -> Text,
        image_url -> Text,
        refunded -> Bool,
    }
}

diesel::table! {
    midjourneys (id) {
        id -> BigInt,
        code -> Integer,
        user_id -> BigInt,
        action -> Text,
        mj_id -> Text,
        prompt -> Text,
        prompt_en -> Text,
        description -> Text,
        state -> Text,
        submit_time -> BigInt,
        start_time -> BigInt,
        finish_time -> BigInt,
        image_url -> Text,
        status -> Text,
        progress -> Text,
        fail_reason -> Text,
        channel_id -> BigInt,
        quota -> BigInt,
        buttons -> Text,
        properties -> Text,
    }
}

diesel::table! {
    telegram_menus (id) {
        id -> BigInt,
        command -> Text,
        description -> Text,
        parse_mode -> Text,
        reply_message -> Text,
    }
}

diesel::table! {
    job_locks (name) {
        name -> Text,
        holder -> Text,
        expires_at -> BigInt,
    }
}

diesel::table! {
    dead_letters (id) {
        id -> BigInt,
        created_at -> BigInt,
        kind -> Text,
        request_id -> Nullable<Text>,
        user_id -> BigInt,
        token_id -> BigInt,
        quota -> BigInt,
        reason -> Text,
        payload -> Text,
        resolved_at -> BigInt,
    }
}

diesel::table! {
    payment_gateways (id) {
        id -> BigInt,
        uuid -> Text,
        name -> Text,
        gateway_type -> Text,
        icon -> Text,
        enabled -> Bool,
        fixed_fee -> Text,
        percent_fee -> Text,
        currency -> Text,
        notify_domain -> Text,
        sort -> BigInt,
        config -> Text,
        created_at -> BigInt,
        updated_at -> BigInt,
    }
}

diesel::table! {
    orders (id) {
        id -> BigInt,
        trade_no -> Text,
        user_id -> BigInt,
        gateway_id -> BigInt,
        gateway_no -> Text,
        amount -> BigInt,
        discount -> Text,
        fee -> Text,
        order_amount -> Text,
        currency -> Text,
        quota -> BigInt,
        status -> Integer,
        created_at -> BigInt,
        expires_at -> BigInt,
        paid_at -> BigInt,
    }
}

diesel::allow_tables_to_appear_in_same_query!(
    users,
    sessions,
    verification_codes,
    options,
    tokens,
    channels,
    abilities,
    redemptions,
    logs,
    user_groups,
    prices,
    model_owners,
    statistics,
    invoices,
    tasks,
    midjourneys,
    telegram_menus,
    job_locks,
    dead_letters,
    payment_gateways,
    orders,
);

diesel::table! {
    response_cache (cache_key) {
        cache_key -> Text,
        user_id -> BigInt,
        model_name -> Text,
        body -> Text,
        usage_json -> Text,
        created_at -> BigInt,
        expires_at -> BigInt,
    }
}

diesel::table! {
    response_history (response_id) {
        response_id -> Text,
        user_id -> BigInt,
        model_name -> Text,
        items -> Text,
        created_at -> BigInt,
        expires_at -> BigInt,
    }
}
