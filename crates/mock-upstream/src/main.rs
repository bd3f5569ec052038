//! `mock-upstream`: the OpenAI-compatible fake upstream as a process (SDK tests, benchmarks).
//!
//! - `MOCK_PORT`: port on 127.0.0.1 (default 0: a free one). The first line on stdout is always
//!   `listening on 127.0.0.1:PORT`.
//! - `MOCK_CHUNK_DELAY_MS`: pause between stream chunks (default 0).
//! - `MOCK_RECORD`: `1`/`true` keeps every request in memory (default off).

use std::io::Write as _;
use std::net::TcpListener;

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}

fn main() -> std::io::Result<()> {
    let port: u16 = match std::env::var("MOCK_PORT") {
        Ok(v) if !v.trim().is_empty() => v.trim().parse().map_err(|_| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("MOCK_PORT must be a port number, not {v:?}"),
            )
        })?,
        _ => 0,
    };
    let listener = TcpListener::bind(("127.0.0.1", port))?;
    let addr = listener.local_addr()?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening on {addr}")?;
        out.flush()?;
    }
    let record = env_flag("MOCK_RECORD");
    actix_web::rt::System::new().block_on(switchboard_mock_upstream::run(listener, record))
}
