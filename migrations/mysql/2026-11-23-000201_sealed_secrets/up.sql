-- Channel keys and secret settings are now stored sealed (`sealed:v1:` + base64, about 4/3 of
-- the plain length plus 38 characters): TEXT (65,535 bytes) could hold a plain value whose
-- sealed form does not fit. Start-up seals the existing plain values (it needs the server secret).
ALTER TABLE channels MODIFY `key` MEDIUMTEXT NOT NULL;
ALTER TABLE options MODIFY value MEDIUMTEXT NOT NULL;
