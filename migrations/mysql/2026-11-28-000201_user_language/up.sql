-- The language a user reads the console in (zh_CN, zh_HK, en or ja; empty: the site's
-- Language setting): e-mails to the user are written in it.
ALTER TABLE users ADD COLUMN language VARCHAR(16) NOT NULL DEFAULT '';
