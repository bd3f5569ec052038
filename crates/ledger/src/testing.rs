//! Test support for the books' tests and the API's: a Redis server of the test's own and a slow
//! link to it (feature `testing`). Test support: a failure to start one fails the test, so it
//! panics.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed) + u64::from(std::process::id()) * 1000
}

/// A Redis server of the test's own (AOF on, so that a restart keeps its data) on a free port,
/// which the test may stop and start again (the system's Redis is never touched).
pub struct PrivateRedis {
    child: Option<std::process::Child>,
    pub port: u16,
    dir: std::path::PathBuf,
}

/// Whether the Redis tests can run (`TEST_REDIS_URL` set). Without it they are skipped with a
/// line naming `what`, outside CI only: CI always sets it, so there a missing Redis fails.
pub fn redis_configured(what: &str) -> bool {
    if std::env::var("TEST_REDIS_URL").is_ok_and(|u| !u.is_empty()) {
        return true;
    }
    assert!(
        std::env::var("CI").is_err(),
        "TEST_REDIS_URL must be set in CI"
    );
    println!("TEST_REDIS_URL not set: {what} not run");
    false
}

impl PrivateRedis {
    pub fn start() -> PrivateRedis {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = std::env::temp_dir().join(format!("sb-redis-{}", unique()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut r = PrivateRedis {
            child: None,
            port,
            dir,
        };
        r.up();
        r
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Starts the server (again) on the same port and directory; waits until it answers.
    pub fn up(&mut self) {
        let child = std::process::Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args([
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
            ])
            .arg("--dir")
            .arg(&self.dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("redis-server is needed by this test (apt-get install redis-server)");
        self.child = Some(child);
        let started = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(10),
                "redis did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Holds every client's commands for `how_long` (`CLIENT PAUSE … ALL`), as a stalled Redis
    /// would; they run when the pause ends, which is returned.
    pub async fn pause(&self, how_long: std::time::Duration) -> std::time::Instant {
        let mut admin = redis::Client::open(self.url())
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .unwrap();
        let ends = std::time::Instant::now() + how_long;
        let () = redis::cmd("CLIENT")
            .arg("PAUSE")
            .arg(how_long.as_millis() as u64)
            .arg("ALL")
            .query_async(&mut admin)
            .await
            .unwrap();
        ends
    }

    /// Restarts the server with nothing kept (as one without persistence restarts): every key
    /// is gone.
    pub fn restart_empty(&mut self) {
        self.down();
        let _ = std::fs::remove_dir_all(&self.dir);
        std::fs::create_dir_all(&self.dir).unwrap();
        self.up();
    }

    /// Kills the server (a crash: open connections are dropped, new ones refused).
    pub fn down(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        self.down();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A TCP relay to a local port that holds every reply for `delay` before passing it on: a
/// distant server (Redis in another zone). Every round trip takes at least `delay`; commands
/// sent together (a pipeline) still share one. The delay can be changed while it runs
/// ([`SlowLink::set_delay`]: a server that stalls for a while). Runs on the runtime it is
/// started on, for as long as it is kept.
pub struct SlowLink {
    pub port: u16,
    task: tokio::task::JoinHandle<()>,
    delay_ms: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl SlowLink {
    pub async fn start(target: u16, delay: std::time::Duration) -> SlowLink {
        use std::sync::atomic::{AtomicU64, Ordering};
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let delay_ms = std::sync::Arc::new(AtomicU64::new(delay.as_millis() as u64));
        let delays = delay_ms.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let delays = delays.clone();
                tokio::spawn(async move {
                    let Ok(server) = tokio::net::TcpStream::connect(("127.0.0.1", target)).await
                    else {
                        return;
                    };
                    let (mut from_client, mut to_client) = client.into_split();
                    let (mut from_server, mut to_server) = server.into_split();
                    tokio::spawn(async move {
                        let _ = tokio::io::copy(&mut from_client, &mut to_server).await;
                    });
                    // Replies keep their order, each released `delay` (as it was when the reply
                    // arrived) after it arrived.
                    let (tx, mut rx) =
                        tokio::sync::mpsc::unbounded_channel::<(tokio::time::Instant, Vec<u8>)>();
                    tokio::spawn(async move {
                        while let Some((release, bytes)) = rx.recv().await {
                            tokio::time::sleep_until(release).await;
                            if to_client.write_all(&bytes).await.is_err() {
                                return;
                            }
                        }
                    });
                    let mut buf = vec![0u8; 64 * 1024];
                    while let Ok(n @ 1..) = from_server.read(&mut buf).await {
                        let delay = std::time::Duration::from_millis(delays.load(Ordering::SeqCst));
                        if tx
                            .send((tokio::time::Instant::now() + delay, buf[..n].to_vec()))
                            .is_err()
                        {
                            return;
                        }
                    }
                });
            }
        });
        SlowLink {
            port,
            task,
            delay_ms,
        }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Holds the replies that arrive from now on for `delay` (those held already keep theirs).
    pub fn set_delay(&self, delay: std::time::Duration) {
        self.delay_ms.store(
            delay.as_millis() as u64,
            std::sync::atomic::Ordering::SeqCst,
        );
    }
}

impl Drop for SlowLink {
    fn drop(&mut self) {
        self.task.abort();
    }
}
