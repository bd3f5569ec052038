DROP TABLE orders;
DROP TABLE payment_gateways;

CREATE TABLE payments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid VARCHAR(64) NOT NULL,
    name VARCHAR(64) NOT NULL,
    "type" VARCHAR(32) NOT NULL,
    icon VARCHAR(512) NOT NULL DEFAULT '',
    config TEXT NOT NULL,
    fixed_fee REAL NOT NULL DEFAULT 0,
    percent_fee REAL NOT NULL DEFAULT 0,
    currency VARCHAR(8) NOT NULL DEFAULT 'USD',
    notify_domain VARCHAR(255) NOT NULL DEFAULT '',
    sort INTEGER NOT NULL DEFAULT 0,
    enabled BOOLEAN NOT NULL DEFAULT TRUE,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX uq_payments_uuid ON payments (uuid);

CREATE TABLE orders (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    trade_no VARCHAR(64) NOT NULL,
    user_id BIGINT NOT NULL,
    gateway_id BIGINT NOT NULL DEFAULT 0,
    gateway_no VARCHAR(128) NOT NULL DEFAULT '',
    amount BIGINT NOT NULL DEFAULT 0,
    discount REAL NOT NULL DEFAULT 1,
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
