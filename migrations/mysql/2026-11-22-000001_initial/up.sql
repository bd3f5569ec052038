-- Switchboard initial schema (MySQL / MariaDB).
-- Keep in sync with crates/store/src/schema.rs and the other two backends.
-- ids are BIGINT, timestamps BIGINT unix seconds, quota/money BIGINT, ratios DOUBLE.
-- TEXT columns have no DEFAULT on any backend (MySQL cannot have one); the application
-- always writes them.

CREATE TABLE users (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    username VARCHAR(64) NOT NULL,
    password VARCHAR(255) NOT NULL,
    display_name VARCHAR(64) NOT NULL DEFAULT '',
    role INT NOT NULL DEFAULT 1,
    status INT NOT NULL DEFAULT 1,
    email VARCHAR(255) NOT NULL DEFAULT '',
    avatar_url VARCHAR(512) NOT NULL DEFAULT '',
    github_id VARCHAR(64) NOT NULL DEFAULT '',
    oidc_id VARCHAR(128) NOT NULL DEFAULT '',
    lark_id VARCHAR(128) NOT NULL DEFAULT '',
    wechat_id VARCHAR(128) NOT NULL DEFAULT '',
    telegram_id BIGINT NOT NULL DEFAULT 0,
    access_token_hash VARCHAR(64) NULL,
    quota BIGINT NOT NULL DEFAULT 0,
    used_quota BIGINT NOT NULL DEFAULT 0,
    request_count BIGINT NOT NULL DEFAULT 0,
    group_name VARCHAR(64) NOT NULL DEFAULT 'default',
    aff_code VARCHAR(32) NULL,
    aff_count INT NOT NULL DEFAULT 0,
    aff_quota BIGINT NOT NULL DEFAULT 0,
    aff_history_quota BIGINT NOT NULL DEFAULT 0,
    inviter_id BIGINT NOT NULL DEFAULT 0,
    total_topup BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL DEFAULT 0,
    updated_at BIGINT NOT NULL DEFAULT 0,
    last_login_at BIGINT NOT NULL DEFAULT 0,
    UNIQUE KEY uq_users_username (username),
    KEY idx_users_email (email),
    KEY idx_users_github_id (github_id),
    KEY idx_users_oidc_id (oidc_id),
    KEY idx_users_lark_id (lark_id),
    KEY idx_users_wechat_id (wechat_id),
    KEY idx_users_telegram_id (telegram_id),
    UNIQUE KEY uq_users_access_token_hash (access_token_hash),
    UNIQUE KEY uq_users_aff_code (aff_code),
    KEY idx_users_inviter_id (inviter_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_unicode_ci;

CREATE TABLE sessions (
    id_hash VARCHAR(64) NOT NULL PRIMARY KEY,
    user_id BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL,
    ip VARCHAR(64) NOT NULL DEFAULT '',
    user_agent VARCHAR(255) NOT NULL DEFAULT '',
    KEY idx_sessions_user_id (user_id),
    KEY idx_sessions_expires_at (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_unicode_ci;

CREATE TABLE verification_codes (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    purpose VARCHAR(32) NOT NULL,
    email VARCHAR(255) NOT NULL,
    code_hash VARCHAR(64) NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    UNIQUE KEY uq_verification_codes_purpose_email (purpose, email)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_unicode_ci;

CREATE TABLE options (
    `key` VARCHAR(64) NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_unicode_ci;

CREATE TABLE tokens (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    user_id BIGINT NOT NULL,
    name VARCHAR(64) NOT NULL DEFAULT '',
    key_hash VARCHAR(64) NOT NULL,
    key_ciphertext TEXT NOT NULL,
    key_hint VARCHAR(16) NOT NULL DEFAULT '',
    status INT NOT NULL DEFAULT 1,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    accessed_at BIGINT NOT NULL DEFAULT 0,
    expired_at BIGINT NOT NULL DEFAULT -1,
    remain_quota BIGINT NOT NULL DEFAULT 0,
    unlimited_quota BOOLEAN NOT NULL DEFAULT FALSE,
    used_quota BIGINT NOT NULL DEFAULT 0,
    request_count BIGINT NOT NULL DEFAULT 0,
    group_name VARCHAR(64) NOT NULL DEFAULT '',
    models TEXT NOT NULL,
    subnet TEXT NOT NULL,
    api_rate INT NOT NULL DEFAULT 0,
    heartbeat_enabled BOOLEAN NOT NULL DEFAULT FALSE,
    heartbeat_timeout INT NOT NULL DEFAULT 30,
    cache_enabled BOOLEAN NOT NULL DEFAULT FALSE,
    UNIQUE KEY uq_tokens_key_hash (key_hash),
    KEY idx_tokens_user_id_id (user_id, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_unicode_ci;

CREATE TABLE channels (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    `type` INT NOT NULL DEFAULT 1,
    name VARCHAR(128) NOT NULL,
    `key` TEXT NOT NULL,
    base_url VARCHAR(512) NOT NULL DEFAULT '',
    group_name VARCHAR(255) NOT NULL DEFAULT 'default',
    models TEXT NOT NULL,
    model_mapping TEXT NOT NULL,
    priority BIGINT NOT NULL DEFAULT 0,
    weight INT NOT NULL DEFAULT 1,
    tag VARCHAR(64) NOT NULL DEFAULT '',
    proxy VARCHAR(512) NOT NULL DEFAULT '',
    test_model VARCHAR(128) NOT NULL DEFAULT '',
    status INT NOT NULL DEFAULT 1,
    response_time INT NOT NULL DEFAULT 0,
    test_time BIGINT NOT NULL DEFAULT 0,
    used_quota BIGINT NOT NULL DEFAULT 0,
    balance BIGINT NOT NULL DEFAULT 0,
    balance_updated_at BIGINT NOT NULL DEFAULT 0,
    custom_headers TEXT NOT NULL,
    config TEXT NOT NULL,
    disabled_stream TEXT NOT NULL,
    pre_cost INT NOT NULL DEFAULT 1,
    auto_ban BOOLEAN NOT NULL DEFAULT TRUE,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    KEY idx_channels_type (`type`),
    KEY idx_channels_tag (tag),
    KEY idx_channels_status (status)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_unicode_ci;

CREATE TABLE abilities (
    group_name VARCHAR(64) NOT NULL,
    model VARCHAR(255) NOT NULL,
    channel_id BIGINT NOT NULL,
    enabled BOOLEAN NOT NULL DEFAULT TRUE,
    priority BIGINT NOT NULL DEFAULT 0,
    weight INT NOT NULL DEFAULT 1,
    tag VARCHAR(64) NOT NULL DEFAULT '',
    PRIMARY KEY (group_name, model, channel_id),
    KEY idx_abilities_channel_id (channel_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_unicode_ci;

CREATE TABLE redemptions (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    user_id BIGINT NOT NULL,
    name VARCHAR(64) NOT NULL DEFAULT '',
    code VARCHAR(64) NOT NULL,
    status INT NOT NULL DEFAULT 1,
    quota BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    redeemed_at BIGINT NOT NULL DEFAULT 0,
    used_user_id BIGINT NOT NULL DEFAULT 0,
    KEY idx_redemptions_name (name),
    UNIQUE KEY uq_redemptions_code (code),
    KEY idx_redemptions_status (status)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_unicode_ci;

CREATE TABLE logs (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    created_at BIGINT NOT NULL,
    `type` INT NOT NULL,
    user_id BIGINT NOT NULL,
    username VARCHAR(64) NOT NULL DEFAULT '',
    token_id BIGINT NOT NULL DEFAULT 0,
    token_name VARCHAR(64) NOT NULL DEFAULT '',
    channel_id BIGINT NOT NULL DEFAULT 0,
    model_name VARCHAR(255) NOT NULL DEFAULT '',
    group_name VARCHAR(64) NOT NULL DEFAULT '',
    quota BIGINT NOT NULL DEFAULT 0,
    prompt_tokens INT NOT NULL DEFAULT 0,
    completion_tokens INT NOT NULL DEFAULT 0,
    use_time_ms INT NOT NULL DEFAULT 0,
    first_response_ms INT NOT NULL DEFAULT 0,
    is_stream BOOLEAN NOT NULL DEFAULT FALSE,
    source_ip VARCHAR(64) NOT NULL DEFAULT '',
    request_id VARCHAR(64) NULL,
    content TEXT NOT NULL,
    metadata TEXT NOT NULL,
    UNIQUE KEY uq_logs_request_id (request_id),
    KEY idx_logs_created_at_id (created_at, id),
    KEY idx_logs_user_id_created_at (user_id, created_at),
    KEY idx_logs_type_created_at (`type`, created_at),
    KEY idx_logs_token_id_created_at (token_id, created_at),
    KEY idx_logs_channel_id_created_at (channel_id, created_at),
    KEY idx_logs_model_name_created_at (model_name, created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_unicode_ci;

CREATE TABLE user_groups (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    symbol VARCHAR(64) NOT NULL,
    name VARCHAR(64) NOT NULL,
    ratio DOUBLE NOT NULL DEFAULT 1,
    public BOOLEAN NOT NULL DEFAULT FALSE,
    api_rate INT NOT NULL DEFAULT 0,
    promotion BOOLEAN NOT NULL DEFAULT FALSE,
    min_topup BIGINT NOT NULL DEFAULT 0,
    max_topup BIGINT NOT NULL DEFAULT 0,
    enabled BOOLEAN NOT NULL DEFAULT TRUE,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE KEY uq_user_groups_symbol (symbol)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_unicode_ci;

CREATE TABLE prices (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    model VARCHAR(255) NOT NULL,
    `type` VARCHAR(16) NOT NULL DEFAULT 'tokens',
    channel_type INT NOT NULL DEFAULT 0,
    input DOUBLE NOT NULL DEFAULT 0,
    output DOUBLE NOT NULL DEFAULT 0,
    extra_ratios TEXT NOT NULL,
    locked BOOLEAN NOT NULL DEFAULT FALSE,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE KEY uq_prices_model (model)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_unicode_ci;

CREATE TABLE model_owners (
    id BIGINT NOT NULL PRIMARY KEY,
    name VARCHAR(64) NOT NULL,
    icon VARCHAR(512) NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_unicode_ci;

CREATE TABLE payments (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    uuid VARCHAR(64) NOT NULL,
    name VARCHAR(64) NOT NULL,
    `type` VARCHAR(32) NOT NULL,
    icon VARCHAR(512) NOT NULL DEFAULT '',
    config TEXT NOT NULL,
    fixed_fee DOUBLE NOT NULL DEFAULT 0,
    percent_fee DOUBLE NOT NULL DEFAULT 0,
    currency VARCHAR(8) NOT NULL DEFAULT 'USD',
    notify_domain VARCHAR(255) NOT NULL DEFAULT '',
    sort INT NOT NULL DEFAULT 0,
    enabled BOOLEAN NOT NULL DEFAULT TRUE,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE KEY uq_payments_uuid (uuid)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_unicode_ci;

CREATE TABLE orders (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    trade_no VARCHAR(64) NOT NULL,
    user_id BIGINT NOT NULL,
    gateway_id BIGINT NOT NULL DEFAULT 0,
    gateway_no VARCHAR(128) NOT NULL DEFAULT '',
    amount BIGINT NOT NULL DEFAULT 0,
    discount DOUBLE NOT NULL DEFAULT 1,
    fee BIGINT NOT NULL DEFAULT 0,
    order_amount BIGINT NOT NULL DEFAULT 0,
    order_currency VARCHAR(8) NOT NULL DEFAULT 'USD',
    quota BIGINT NOT NULL DEFAULT 0,
    status VARCHAR(16) NOT NULL DEFAULT 'pending',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE KEY uq_orders_trade_no (trade_no),
    KEY idx_orders_user_id (user_id),
    KEY idx_orders_status (status)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_unicode_ci;

CREATE TABLE statistics (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    day BIGINT NOT NULL,
    user_id BIGINT NOT NULL,
    channel_id BIGINT NOT NULL,
    model_name VARCHAR(255) NOT NULL,
    request_count BIGINT NOT NULL DEFAULT 0,
    quota BIGINT NOT NULL DEFAULT 0,
    prompt_tokens BIGINT NOT NULL DEFAULT 0,
    completion_tokens BIGINT NOT NULL DEFAULT 0,
    request_time_ms BIGINT NOT NULL DEFAULT 0,
    UNIQUE KEY uq_statistics_day_user_id_channel_id_model_name (day, user_id, channel_id, model_name),
    KEY idx_statistics_user_id_day (user_id, day)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_unicode_ci;

CREATE TABLE invoices (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    user_id BIGINT NOT NULL,
    month VARCHAR(7) NOT NULL,
    status INT NOT NULL DEFAULT 1,
    quota BIGINT NOT NULL DEFAULT 0,
    request_count BIGINT NOT NULL DEFAULT 0,
    prompt_tokens BIGINT NOT NULL DEFAULT 0,
    completion_tokens BIGINT NOT NULL DEFAULT 0,
    request_time_ms BIGINT NOT NULL DEFAULT 0,
    model_details TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    paid_at BIGINT NOT NULL DEFAULT 0,
    UNIQUE KEY uq_invoices_user_id_month (user_id, month)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_unicode_ci;

CREATE TABLE tasks (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    task_id VARCHAR(64) NOT NULL,
    platform VARCHAR(32) NOT NULL,
    user_id BIGINT NOT NULL,
    channel_id BIGINT NOT NULL DEFAULT 0,
    quota BIGINT NOT NULL DEFAULT 0,
    action VARCHAR(32) NOT NULL DEFAULT '',
    status VARCHAR(32) NOT NULL DEFAULT '',
    fail_reason TEXT NOT NULL,
    submit_time BIGINT NOT NULL DEFAULT 0,
    start_time BIGINT NOT NULL DEFAULT 0,
    finish_time BIGINT NOT NULL DEFAULT 0,
    progress VARCHAR(16) NOT NULL DEFAULT '',
    properties TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    KEY idx_tasks_user_id (user_id),
    KEY idx_tasks_platform_task_id (platform, task_id),
    KEY idx_tasks_status (status)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_unicode_ci;

CREATE TABLE midjourneys (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    code INT NOT NULL DEFAULT 0,
    user_id BIGINT NOT NULL,
    action VARCHAR(40) NOT NULL DEFAULT '',
    mj_id VARCHAR(64) NOT NULL DEFAULT '',
    prompt TEXT NOT NULL,
    prompt_en TEXT NOT NULL,
    description TEXT NOT NULL,
    state TEXT NOT NULL,
    submit_time BIGINT NOT NULL DEFAULT 0,
    start_time BIGINT NOT NULL DEFAULT 0,
    finish_time BIGINT NOT NULL DEFAULT 0,
    image_url TEXT NOT NULL,
    status VARCHAR(20) NOT NULL DEFAULT '',
    progress VARCHAR(30) NOT NULL DEFAULT '',
    fail_reason TEXT NOT NULL,
    channel_id BIGINT NOT NULL DEFAULT 0,
    quota BIGINT NOT NULL DEFAULT 0,
    buttons TEXT NOT NULL,
    properties TEXT NOT NULL,
    KEY idx_midjourneys_user_id (user_id),
    KEY idx_midjourneys_mj_id (mj_id),
    KEY idx_midjourneys_status (status)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_unicode_ci;

CREATE TABLE telegram_menus (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    command VARCHAR(32) NOT NULL,
    description VARCHAR(255) NOT NULL DEFAULT '',
    parse_mode VARCHAR(16) NOT NULL DEFAULT '',
    reply_message TEXT NOT NULL,
    UNIQUE KEY uq_telegram_menus_command (command)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_unicode_ci;

CREATE TABLE job_locks (
    name VARCHAR(64) NOT NULL PRIMARY KEY,
    holder VARCHAR(64) NOT NULL,
    expires_at BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_unicode_ci;
