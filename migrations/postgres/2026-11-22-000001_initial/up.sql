-- Switchboard initial schema (PostgreSQL).
-- Keep in sync with crates/store/src/schema.rs and the other two backends.
-- ids are BIGINT, timestamps BIGINT unix seconds, quota/money BIGINT, ratios DOUBLE.
-- TEXT columns have no DEFAULT on any backend (MySQL cannot have one); the application
-- always writes them.

CREATE TABLE users (
    id BIGSERIAL PRIMARY KEY,
    username VARCHAR(64) NOT NULL,
    password VARCHAR(255) NOT NULL,
    display_name VARCHAR(64) NOT NULL DEFAULT '',
    role INTEGER NOT NULL DEFAULT 1,
    status INTEGER NOT NULL DEFAULT 1,
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
    aff_count INTEGER NOT NULL DEFAULT 0,
    aff_quota BIGINT NOT NULL DEFAULT 0,
    aff_history_quota BIGINT NOT NULL DEFAULT 0,
    inviter_id BIGINT NOT NULL DEFAULT 0,
    total_topup BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL DEFAULT 0,
    updated_at BIGINT NOT NULL DEFAULT 0,
    last_login_at BIGINT NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX uq_users_username ON users (username);
CREATE INDEX idx_users_email ON users (email);
CREATE INDEX idx_users_github_id ON users (github_id);
CREATE INDEX idx_users_oidc_id ON users (oidc_id);
CREATE INDEX idx_users_lark_id ON users (lark_id);
CREATE INDEX idx_users_wechat_id ON users (wechat_id);
CREATE INDEX idx_users_telegram_id ON users (telegram_id);
CREATE UNIQUE INDEX uq_users_access_token_hash ON users (access_token_hash);
CREATE UNIQUE INDEX uq_users_aff_code ON users (aff_code);
CREATE INDEX idx_users_inviter_id ON users (inviter_id);

CREATE TABLE sessions (
    id_hash VARCHAR(64) NOT NULL PRIMARY KEY,
    user_id BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL,
    ip VARCHAR(64) NOT NULL DEFAULT '',
    user_agent VARCHAR(255) NOT NULL DEFAULT ''
);
CREATE INDEX idx_sessions_user_id ON sessions (user_id);
CREATE INDEX idx_sessions_expires_at ON sessions (expires_at);

CREATE TABLE verification_codes (
    id BIGSERIAL PRIMARY KEY,
    purpose VARCHAR(32) NOT NULL,
    email VARCHAR(255) NOT NULL,
    code_hash VARCHAR(64) NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX uq_verification_codes_purpose_email ON verification_codes (purpose, email);

CREATE TABLE options (
    "key" VARCHAR(64) NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE tokens (
    id BIGSERIAL PRIMARY KEY,
    user_id BIGINT NOT NULL,
    name VARCHAR(64) NOT NULL DEFAULT '',
    key_hash VARCHAR(64) NOT NULL,
    key_ciphertext TEXT NOT NULL,
    key_hint VARCHAR(16) NOT NULL DEFAULT '',
    status INTEGER NOT NULL DEFAULT 1,
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
    api_rate INTEGER NOT NULL DEFAULT 0,
    heartbeat_enabled BOOLEAN NOT NULL DEFAULT FALSE,
    heartbeat_timeout INTEGER NOT NULL DEFAULT 30,
    cache_enabled BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE UNIQUE INDEX uq_tokens_key_hash ON tokens (key_hash);
CREATE INDEX idx_tokens_user_id_id ON tokens (user_id, id);

CREATE TABLE channels (
    id BIGSERIAL PRIMARY KEY,
    "type" INTEGER NOT NULL DEFAULT 1,
    name VARCHAR(128) NOT NULL,
    "key" TEXT NOT NULL,
    base_url VARCHAR(512) NOT NULL DEFAULT '',
    group_name VARCHAR(255) NOT NULL DEFAULT 'default',
    models TEXT NOT NULL,
    model_mapping TEXT NOT NULL,
    priority BIGINT NOT NULL DEFAULT 0,
    weight INTEGER NOT NULL DEFAULT 1,
    tag VARCHAR(64) NOT NULL DEFAULT '',
    proxy VARCHAR(512) NOT NULL DEFAULT '',
    test_model VARCHAR(128) NOT NULL DEFAULT '',
    status INTEGER NOT NULL DEFAULT 1,
    response_time INTEGER NOT NULL DEFAULT 0,
    test_time BIGINT NOT NULL DEFAULT 0,
    used_quota BIGINT NOT NULL DEFAULT 0,
    balance BIGINT NOT NULL DEFAULT 0,
    balance_updated_at BIGINT NOT NULL DEFAULT 0,
    custom_headers TEXT NOT NULL,
    config TEXT NOT NULL,
    disabled_stream TEXT NOT NULL,
    pre_cost INTEGER NOT NULL DEFAULT 1,
    auto_ban BOOLEAN NOT NULL DEFAULT TRUE,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX idx_channels_type ON channels ("type");
CREATE INDEX idx_channels_tag ON channels (tag);
CREATE INDEX idx_channels_status ON channels (status);

CREATE TABLE abilities (
    group_name VARCHAR(64) NOT NULL,
    model VARCHAR(255) NOT NULL,
    channel_id BIGINT NOT NULL,
    enabled BOOLEAN NOT NULL DEFAULT TRUE,
    priority BIGINT NOT NULL DEFAULT 0,
    weight INTEGER NOT NULL DEFAULT 1,
    tag VARCHAR(64) NOT NULL DEFAULT '',
    PRIMARY KEY (group_name, model, channel_id)
);
CREATE INDEX idx_abilities_channel_id ON abilities (channel_id);

CREATE TABLE redemptions (
    id BIGSERIAL PRIMARY KEY,
    user_id BIGINT NOT NULL,
    name VARCHAR(64) NOT NULL DEFAULT '',
    code VARCHAR(64) NOT NULL,
    status INTEGER NOT NULL DEFAULT 1,
    quota BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    redeemed_at BIGINT NOT NULL DEFAULT 0,
    used_user_id BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX idx_redemptions_name ON redemptions (name);
CREATE UNIQUE INDEX uq_redemptions_code ON redemptions (code);
CREATE INDEX idx_redemptions_status ON redemptions (status);

CREATE TABLE logs (
    id BIGSERIAL PRIMARY KEY,
    created_at BIGINT NOT NULL,
    "type" INTEGER NOT NULL,
    user_id BIGINT NOT NULL,
    username VARCHAR(64) NOT NULL DEFAULT '',
    token_id BIGINT NOT NULL DEFAULT 0,
    token_name VARCHAR(64) NOT NULL DEFAULT '',
    channel_id BIGINT NOT NULL DEFAULT 0,
    model_name VARCHAR(255) NOT NULL DEFAULT '',
    group_name VARCHAR(64) NOT NULL DEFAULT '',
    quota BIGINT NOT NULL DEFAULT 0,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    use_time_ms INTEGER NOT NULL DEFAULT 0,
    first_response_ms INTEGER NOT NULL DEFAULT 0,
    is_stream BOOLEAN NOT NULL DEFAULT FALSE,
    source_ip VARCHAR(64) NOT NULL DEFAULT '',
    request_id VARCHAR(64) NULL,
    content TEXT NOT NULL,
    metadata TEXT NOT NULL
);
CREATE UNIQUE INDEX uq_logs_request_id ON logs (request_id);
CREATE INDEX idx_logs_created_at_id ON logs (created_at, id);
CREATE INDEX idx_logs_user_id_created_at ON logs (user_id, created_at);
CREATE INDEX idx_logs_type_created_at ON logs ("type", created_at);
CREATE INDEX idx_logs_token_id_created_at ON logs (token_id, created_at);
CREATE INDEX idx_logs_channel_id_created_at ON logs (channel_id, created_at);
CREATE INDEX idx_logs_model_name_created_at ON logs (model_name, created_at);

CREATE TABLE user_groups (
    id BIGSERIAL PRIMARY KEY,
    symbol VARCHAR(64) NOT NULL,
    name VARCHAR(64) NOT NULL,
    ratio DOUBLE PRECISION NOT NULL DEFAULT 1,
    public BOOLEAN NOT NULL DEFAULT FALSE,
    api_rate INTEGER NOT NULL DEFAULT 0,
    promotion BOOLEAN NOT NULL DEFAULT FALSE,
    min_topup BIGINT NOT NULL DEFAULT 0,
    max_topup BIGINT NOT NULL DEFAULT 0,
    enabled BOOLEAN NOT NULL DEFAULT TRUE,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX uq_user_groups_symbol ON user_groups (symbol);

CREATE TABLE prices (
    id BIGSERIAL PRIMARY KEY,
    model VARCHAR(255) NOT NULL,
    "type" VARCHAR(16) NOT NULL DEFAULT 'tokens',
    channel_type INTEGER NOT NULL DEFAULT 0,
    input DOUBLE PRECISION NOT NULL DEFAULT 0,
    output DOUBLE PRECISION NOT NULL DEFAULT 0,
    extra_ratios TEXT NOT NULL,
    locked BOOLEAN NOT NULL DEFAULT FALSE,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX uq_prices_model ON prices (model);

CREATE TABLE model_owners (
    id BIGINT NOT NULL PRIMARY KEY,
    name VARCHAR(64) NOT NULL,
    icon VARCHAR(512) NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE payments (
    id BIGSERIAL PRIMARY KEY,
    uuid VARCHAR(64) NOT NULL,
    name VARCHAR(64) NOT NULL,
    "type" VARCHAR(32) NOT NULL,
    icon VARCHAR(512) NOT NULL DEFAULT '',
    config TEXT NOT NULL,
    fixed_fee DOUBLE PRECISION NOT NULL DEFAULT 0,
    percent_fee DOUBLE PRECISION NOT NULL DEFAULT 0,
    currency VARCHAR(8) NOT NULL DEFAULT 'USD',
    notify_domain VARCHAR(255) NOT NULL DEFAULT '',
    sort INTEGER NOT NULL DEFAULT 0,
    enabled BOOLEAN NOT NULL DEFAULT TRUE,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX uq_payments_uuid ON payments (uuid);

CREATE TABLE orders (
    id BIGSERIAL PRIMARY KEY,
    trade_no VARCHAR(64) NOT NULL,
    user_id BIGINT NOT NULL,
    gateway_id BIGINT NOT NULL DEFAULT 0,
    gateway_no VARCHAR(128) NOT NULL DEFAULT '',
    amount BIGINT NOT NULL DEFAULT 0,
    discount DOUBLE PRECISION NOT NULL DEFAULT 1,
    fee BIGINT NOT NULL DEFAULT 0,
    order_amount BIGINT NOT NULL DEFAULT 0,
    order_currency VARCHAR(8) NOT NULL DEFAULT 'USD',
    quota BIGINT NOT NULL DEFAULT 0,
    status VARCHAR(16) NOT NULL DEFAULT 'pending',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX uq_orders_trade_no ON orders (trade_no);
CREATE INDEX idx_orders_user_id ON orders (user_id);
CREATE INDEX idx_orders_status ON orders (status);

CREATE TABLE statistics (
    id BIGSERIAL PRIMARY KEY,
    day BIGINT NOT NULL,
    user_id BIGINT NOT NULL,
    channel_id BIGINT NOT NULL,
    model_name VARCHAR(255) NOT NULL,
    request_count BIGINT NOT NULL DEFAULT 0,
    quota BIGINT NOT NULL DEFAULT 0,
    prompt_tokens BIGINT NOT NULL DEFAULT 0,
    completion_tokens BIGINT NOT NULL DEFAULT 0,
    request_time_ms BIGINT NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX uq_statistics_day_user_id_channel_id_model_name ON statistics (day, user_id, channel_id, model_name);
CREATE INDEX idx_statistics_user_id_day ON statistics (user_id, day);

CREATE TABLE invoices (
    id BIGSERIAL PRIMARY KEY,
    user_id BIGINT NOT NULL,
    month VARCHAR(7) NOT NULL,
    status INTEGER NOT NULL DEFAULT 1,
    quota BIGINT NOT NULL DEFAULT 0,
    request_count BIGINT NOT NULL DEFAULT 0,
    prompt_tokens BIGINT NOT NULL DEFAULT 0,
    completion_tokens BIGINT NOT NULL DEFAULT 0,
    request_time_ms BIGINT NOT NULL DEFAULT 0,
    model_details TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    paid_at BIGINT NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX uq_invoices_user_id_month ON invoices (user_id, month);

CREATE TABLE tasks (
    id BIGSERIAL PRIMARY KEY,
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
    updated_at BIGINT NOT NULL
);
CREATE INDEX idx_tasks_user_id ON tasks (user_id);
CREATE INDEX idx_tasks_platform_task_id ON tasks (platform, task_id);
CREATE INDEX idx_tasks_status ON tasks (status);

CREATE TABLE midjourneys (
    id BIGSERIAL PRIMARY KEY,
    code INTEGER NOT NULL DEFAULT 0,
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
    properties TEXT NOT NULL
);
CREATE INDEX idx_midjourneys_user_id ON midjourneys (user_id);
CREATE INDEX idx_midjourneys_mj_id ON midjourneys (mj_id);
CREATE INDEX idx_midjourneys_status ON midjourneys (status);

CREATE TABLE telegram_menus (
    id BIGSERIAL PRIMARY KEY,
    command VARCHAR(32) NOT NULL,
    description VARCHAR(255) NOT NULL DEFAULT '',
    parse_mode VARCHAR(16) NOT NULL DEFAULT '',
    reply_message TEXT NOT NULL
);
CREATE UNIQUE INDEX uq_telegram_menus_command ON telegram_menus (command);

CREATE TABLE job_locks (
    name VARCHAR(64) NOT NULL PRIMARY KEY,
    holder VARCHAR(64) NOT NULL,
    expires_at BIGINT NOT NULL
);
