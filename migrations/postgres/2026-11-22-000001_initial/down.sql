-- Switchboard initial schema, revert (PostgreSQL).
-- Drops every table created by up.sql, in reverse order (indexes go with their tables).

DROP TABLE IF EXISTS job_locks;
DROP TABLE IF EXISTS telegram_menus;
DROP TABLE IF EXISTS midjourneys;
DROP TABLE IF EXISTS tasks;
DROP TABLE IF EXISTS invoices;
DROP TABLE IF EXISTS statistics;
DROP TABLE IF EXISTS orders;
DROP TABLE IF EXISTS payments;
DROP TABLE IF EXISTS model_owners;
DROP TABLE IF EXISTS prices;
DROP TABLE IF EXISTS user_groups;
DROP TABLE IF EXISTS logs;
DROP TABLE IF EXISTS redemptions;
DROP TABLE IF EXISTS abilities;
DROP TABLE IF EXISTS channels;
DROP TABLE IF EXISTS tokens;
DROP TABLE IF EXISTS options;
DROP TABLE IF EXISTS verification_codes;
DROP TABLE IF EXISTS sessions;
DROP TABLE IF EXISTS users;
