DROP TABLE orders;
DROP TABLE payment_gateways;

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
