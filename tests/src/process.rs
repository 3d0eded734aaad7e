//! The `clarify` binary in a process of its own on a SQLite file, for the
//! benchmarks that measure what a client sees across a real socket (and
//! the process's own memory).

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A running `clarify serve`.
#[derive(Debug)]
pub struct ServerProcess {
    child: Child,
    dir: PathBuf,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
}

impl ServerProcess {
    /// Starts `binary` (a benchmark's `env!("CARGO_BIN_EXE_clarify-under-test")`)
    /// on a fresh SQLite file, prefixed by the words of `wrap` (a profiler,
    /// say), and waits for its "listening on" line.
    ///
    /// # Panics
    /// When the binary cannot start or does not say where it listens.
    #[must_use]
    pub fn start(binary: &str, wrap: &str) -> Self {
        Self::start_in(binary, wrap, fresh_dir())
    }

    /// Starts `binary` on the SQLite file `clarify.db` in `dir` (seeded
    /// beforehand, say), which it removes when stopped.
    ///
    /// # Panics
    /// As [`ServerProcess::start`].
    #[must_use]
    pub fn start_in(binary: &str, wrap: &str, dir: PathBuf) -> Self {
        Self::start_with(binary, wrap, dir, &[])
    }

    /// [`ServerProcess::start_in`] with more flags for `clarify serve`.
    ///
    /// # Panics
    /// As [`ServerProcess::start`].
    #[must_use]
    pub fn start_with(binary: &str, wrap: &str, dir: PathBuf, flags: &[&str]) -> Self {
        let url = database_url(&dir);
        Self::spawn(binary, wrap, &url, dir, flags)
    }

    /// `binary` serving the database at `database_url` (another server's:
    /// a replica in a process of its own, to be killed) with `flags`.
    ///
    /// # Panics
    /// As [`ServerProcess::start`].
    #[must_use]
    pub fn start_on(binary: &str, database_url: &str, flags: &[&str]) -> Self {
        Self::spawn(binary, "", database_url, fresh_dir(), flags)
    }

    fn spawn(binary: &str, wrap: &str, database_url: &str, dir: PathBuf, flags: &[&str]) -> Self {
        let mut words: Vec<String> = wrap.split_whitespace().map(str::to_owned).collect();
        words.push(binary.to_owned());
        let mut child = Command::new(&words[0])
            .args(&words[1..])
            .args(["serve", "--listen", "127.0.0.1:0", "--database-url"])
            .arg(database_url)
            .args(flags)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start clarify");
        // A profiler in `wrap` may speak first; the server's line is the
        // one that says where it listens.
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        while out.read_line(&mut line).unwrap() > 0 && !line.starts_with("listening on ") {
            line.clear();
        }
        let url = line
            .trim_start_matches("listening on ")
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_owned();
        assert!(url.starts_with("http://"), "clarify said {line:?}");
        // What it says next (each channel's state under the listening
        // line) is read and dropped: a closed pipe would end it at its
        // next line.
        std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
        Self { child, dir, url }
    }

    /// Its process id.
    #[must_use]
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its resident set, in KiB.
    #[must_use]
    pub fn rss_kib(&self) -> u64 {
        rss_kib(self.child.id())
    }

    /// Kills it with SIGKILL, a crash: nothing given up, nothing flushed.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        remove(&self.dir);
    }

    /// Stops it with SIGTERM (so a profiler wrapping it writes its report)
    /// and removes its files.
    pub fn stop(mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
        remove(&self.dir);
    }
}

/// A new empty directory for a server's database.
///
/// # Panics
/// When it cannot be created.
#[must_use]
pub fn fresh_dir() -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let dir = std::env::temp_dir().join(format!("clarify-bench-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The database URL of the file a server started in `dir` uses.
#[must_use]
pub fn database_url(dir: &Path) -> String {
    format!("sqlite://{}", dir.join("clarify.db").display())
}

/// POSTs `body` to the API path `path` of the server at `url` (with
/// `token`, if any) and reads the JSON answer.
///
/// # Panics
/// When the request fails or the answer is not JSON.
pub async fn post_json(
    http: &reqwest::Client,
    url: &str,
    path: &str,
    token: Option<&str>,
    body: &serde_json::Value,
) -> serde_json::Value {
    let mut request = http.post(format!("{url}/api/v1{path}")).json(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request.send().await.unwrap().json().await.unwrap()
}

/// A new task titled `title` and a session on it, through the API of the
/// server at `url`; the session's agent token.
///
/// # Panics
/// As [`post_json`].
pub async fn agent_session(http: &reqwest::Client, url: &str, title: &str) -> String {
    let task = post_json(
        http,
        url,
        "/tasks",
        None,
        &serde_json::json!({"title": title}),
    )
    .await;
    let path = format!("/tasks/{}/sessions", task["id"].as_str().unwrap());
    let session = post_json(http, url, &path, None, &serde_json::json!({})).await;
    session["agent_token"].as_str().unwrap().to_owned()
}

fn remove(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
}

/// The resident set of process `pid`, in KiB (0 when unknown).
#[must_use]
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Waits until the resident set has stopped growing (the server has taken
/// every waiter in), then for the allocator's decay (jemalloc gives back
/// what it freed over 10 s, in a background thread), and returns it: what
/// the server holds once the arrivals are over, not their wake.
/// `WAITERS_DECAY=0` skips that wait (the test command's smoke).
pub async fn settled_rss(pid: u32) -> u64 {
    let decay = crate::bench::setting("WAITERS_DECAY", 12);
    let grown = stable_rss(pid).await;
    if decay == 0 {
        return grown;
    }
    tokio::time::sleep(std::time::Duration::from_secs(decay as u64)).await;
    stable_rss(pid).await
}

/// The resident set once it has stopped changing.
async fn stable_rss(pid: u32) -> u64 {
    let mut last = rss_kib(pid);
    loop {
        tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
        let now = rss_kib(pid);
        if now.abs_diff(last) * 200 < last.max(1) {
            return now;
        }
        last = now;
    }
}
