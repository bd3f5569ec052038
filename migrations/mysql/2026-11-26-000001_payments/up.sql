-- Online top-up: payment gateways configured by administrators and the orders users place
-- through them. Money is kept as decimal text ("69.35") so that every backend stores exactly
-- what was computed; amounts in USD are whole numbers. config is sealed JSON (it holds the
-- merchant key). An order's status: 1 pending, 2 paid, 3 expired, 4 failed.
-- The initial schema's payments and orders tables (floating-point fees, never written to by any
-- release) are replaced.
DROP TABLE orders;
DROP TABLE payments;

CREATE TABLE payment_gateways (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    uuid VARCHAR(64) NOT NULL,
    name VARCHAR(64) NOT NULL,
    gateway_type VARCHAR(32) NOT NULL,
    icon VARCHAR(255) NOT NULL DEFAULT '',
    enabled BOOLEAN NOT NULL DEFAULT TRUE,
    fixed_fee VARCHAR(32) NOT NULL DEFAULT '0',
    percent_fee VARCHAR(32) NOT NULL DEFAULT '0',
    currency VARCHAR(8) NOT NULL,
    notify_domain VARCHAR(255) NOT NULL DEFAULT '',
    sort BIGINT NOT NULL DEFAULT 0,
    config TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE KEY uq_payment_gateways_uuid (uuid)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_unicode_ci;

CREATE TABLE orders (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    trade_no VARCHAR(64) NOT NULL,
    user_id BIGINT NOT NULL,
    gateway_id BIGINT NOT NULL,
    gateway_no VARCHAR(128) NOT NULL DEFAULT '',
    amount BIGINT NOT NULL,
    discount VARCHAR(32) NOT NULL,
    fee VARCHAR(32) NOT NULL,
    order_amount VARCHAR(32) NOT NULL,
    currency VARCHAR(8) NOT NULL,
    quota BIGINT NOT NULL,
    status INT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    paid_at BIGINT NOT NULL DEFAULT 0,
    UNIQUE KEY uq_orders_trade_no (trade_no),
    KEY idx_orders_user_id_id (user_id, id),
    KEY idx_orders_status_expires_at (status, expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_unicode_ci;
