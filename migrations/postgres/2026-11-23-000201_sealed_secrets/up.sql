-- Channel keys and secret settings are now stored sealed (`sealed:v1:` + base64, about 4/3 of
-- the plain length plus 38 characters). TEXT has no practical limit here; only MySQL/MariaDB
-- needs a wider column. Start-up seals the existing plain values (it needs the server secret).
SELECT 1;
