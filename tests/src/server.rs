//! [`TestServer`]: a real server bound to 127.0.0.1:0 in this process, with
//! a database of its own and a shutdown channel; replicas of it.

use std::net::SocketAddr;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::client::Api;
use crate::database::TestDatabase;
use crate::receiver::Receiver;

mod apart;
mod people;
mod rows;

pub use rows::{insert_session, insert_task};

/// A running server. Dropping it shuts the server down.
#[derive(Debug)]
pub struct TestServer {
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<std::io::Result<()>>>,
    client: reqwest::Client,
    database: Arc<TestDatabase>,
    config: clarify_server::Config,
    db: clarify_server::db::Db,
    hub: clarify_server::events::Events,
    /// The runtime of a server started apart (see `apart.rs`), if it is.
    runtime: Option<tokio::runtime::Runtime>,
}

impl TestServer {
    /// A server with auth off. Binds 127.0.0.1:0 first, so the server is
    /// reachable the moment this returns: no sleeping, no polling.
    ///
    /// # Panics
    /// When the database or the listener cannot be opened.
    pub async fn start() -> Self {
        Self::start_with(clarify_server::Config::default()).await
    }

    /// A server started with `config` (auth on, a CORS origin, …).
    ///
    /// # Panics
    /// When the database or the listener cannot be opened.
    pub async fn start_with(config: clarify_server::Config) -> Self {
        Self::start_on(Arc::new(TestDatabase::create().await), config).await
    }

    /// A server with auth on (`--auth`), the rest as by default.
    ///
    /// # Panics
    /// As [`TestServer::start`].
    pub async fn start_with_auth() -> Self {
        Self::start_with(clarify_server::Config {
            auth: true,
            ..clarify_server::Config::default()
        })
        .await
    }

    /// Another replica on this server's database, started as this one was:
    /// what several `clarify` processes behind a load balancer are.
    ///
    /// # Panics
    /// As [`TestServer::start`].
    pub async fn replica(&self) -> Self {
        Self::start_on(self.database.clone(), self.config.clone()).await
    }

    /// Another server on this server's database, started with `config`
    /// (a restart with other flags, say).
    ///
    /// # Panics
    /// As [`TestServer::start`].
    pub async fn replica_with(&self, config: clarify_server::Config) -> Self {
        Self::start_on(self.database.clone(), config).await
    }

    /// A server started with `config` on `listener`, bound beforehand by
    /// a test that must name its address first (an identity provider's
    /// redirect URI, issue 49 item 3).
    ///
    /// # Panics
    /// As [`TestServer::start`].
    pub async fn start_bound(listener: TcpListener, config: clarify_server::Config) -> Self {
        let database = Arc::new(TestDatabase::create().await);
        Self::start_listening(database, config, listener).await
    }

    async fn start_on(database: Arc<TestDatabase>, config: clarify_server::Config) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        Self::start_listening(database, config, listener).await
    }

    async fn start_listening(
        database: Arc<TestDatabase>,
        config: clarify_server::Config,
        listener: TcpListener,
    ) -> Self {
        let db = clarify_server::db::Db::connect(database.url())
            .await
            .expect("open database");
        let addr = listener.local_addr().expect("bound address");
        // As `clarify serve` does: links in notices lead to where it listens.
        let mut config = config;
        config
            .public_url
            .get_or_insert_with(|| format!("http://{addr}"));
        let state = clarify_server::AppState::new(db.clone(), config.clone())
            .await
            .expect("state");
        let (shutdown, signal) = oneshot::channel::<()>();
        let hub = state.events.clone();
        let task = tokio::spawn(clarify_server::serve(listener, state, async move {
            let _ = signal.await;
        }));
        Self {
            addr,
            shutdown: Some(shutdown),
            task: Some(task),
            client: reqwest::Client::new(),
            database,
            config,
            db,
            hub,
            runtime: None,
        }
    }

    /// The API as an unauthenticated caller.
    #[must_use]
    pub fn api(&self) -> Api<'_> {
        Api::new(self, None)
    }

    /// The API as the holder of `token`.
    #[must_use]
    pub fn as_token(&self, token: &str) -> Api<'_> {
        Api::new(self, Some(token.to_owned()))
    }

    /// POSTs JSON to an `/api/v1` path without a token.
    pub async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        self.api().post(path, body).await
    }

    /// GETs an `/api/v1` path without a token.
    pub async fn get(&self, path: &str) -> (u16, Value) {
        self.api().get(path).await
    }

    /// Answers or rejects `pending_id` over REST without a token.
    pub async fn respond(&self, pending_id: &str, body: &Value) -> (u16, Value) {
        self.api().respond(pending_id, body).await
    }

    /// Creates a task and a session (no token) whose agent `receiver`
    /// resumes; see [`Api::session`].
    pub async fn session_resumed_by(&self, receiver: &Receiver) -> (String, String, String) {
        self.session(Some(json!({"webhook_url": receiver.url()})))
            .await
    }

    /// Creates a task and a session without a token; see [`Api::session`].
    pub async fn session(&self, resume: Option<Value>) -> (String, String, String) {
        self.api().session(resume).await
    }

    /// Asks `questions` on `session_id` as its agent; returns the pending id.
    ///
    /// # Panics
    /// When the API refuses.
    pub async fn ask(&self, session_id: &str, agent_token: &str, questions: Value) -> String {
        self.as_token(agent_token).ask(session_id, questions).await
    }

    /// Asks `questions` as a new session's agent, expiring after `expires`
    /// seconds when given; returns (pending id, task id, agent token).
    ///
    /// # Panics
    /// When the API refuses.
    pub async fn ask_expiring(
        &self,
        questions: Value,
        expires: Option<u64>,
    ) -> (String, String, String) {
        let (task, session, agent) = self.session(None).await;
        let mut body = json!({"session_id": session, "questions": questions});
        if let Some(seconds) = expires {
            body["expires_in_seconds"] = json!(seconds);
        }
        let (status, asked) = self
            .as_token(&agent)
            .post("/clarification/request", &body)
            .await;
        assert_eq!(status, 201, "{asked}");
        let pending = asked["pending_id"].as_str().expect("pending_id").to_owned();
        (pending, task, agent)
    }

    /// The absolute URL of `path` on this server.
    #[must_use]
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The server's event hub, for tests that must publish more than the
    /// API can in reasonable time (a flood that outruns a slow socket).
    #[must_use]
    pub fn event_hub(&self) -> &clarify_server::events::Events {
        &self.hub
    }

    /// The server's own database, for tests that plant legacy rows or
    /// faults the API cannot produce.
    #[must_use]
    pub fn db(&self) -> &clarify_server::db::Db {
        &self.db
    }

    /// Rewrites the stored metadata of `pending_id`'s questions with `edit`,
    /// in Rust rather than SQL so it reads the same on both backends: for
    /// planting legacy rows the API cannot produce.
    ///
    /// # Panics
    /// On database errors.
    pub async fn edit_metadata(
        &self,
        pending_id: &str,
        edit: impl Fn(&mut serde_json::Map<String, Value>),
    ) {
        let rows: Vec<(String, String)> =
            sqlx::query_as("SELECT id, metadata FROM task_session_messages WHERE pending_id = $1")
                .bind(pending_id)
                .fetch_all(self.db.pool())
                .await
                .expect("read metadata");
        for (id, metadata) in rows {
            let mut value: Value = serde_json::from_str(&metadata).expect("JSON metadata");
            edit(value.as_object_mut().expect("an object"));
            self.db
                .write(async |c| {
                    sqlx::query("UPDATE task_session_messages SET metadata = $1 WHERE id = $2")
                        .bind(value.to_string())
                        .bind(id)
                        .execute(c)
                        .await
                })
                .await
                .expect("write metadata");
        }
    }

    /// Runs `sql` (one statement, `$1` bound to `param`) through the
    /// server's writer, as a test's setup or fault.
    ///
    /// # Panics
    /// When it fails.
    pub async fn write_sql(&self, sql: &'static str, param: &str) {
        self.db
            .write(async |c| sqlx::query(sql).bind(param).execute(c).await)
            .await
            .expect("a test's write");
    }

    /// The database this server (and its replicas) runs on.
    #[must_use]
    pub fn database(&self) -> &TestDatabase {
        &self.database
    }

    /// What `/healthz` says of each channel's connection (issue 48 item 4):
    /// `{"telegram": {"state": "connected", "mode": "polling", "down": false}}`.
    ///
    /// # Panics
    /// When `/healthz` does not answer JSON.
    pub async fn channels(&self) -> Value {
        let health: Value = self
            .client
            .get(self.url("/healthz"))
            .send()
            .await
            .expect("healthz")
            .json()
            .await
            .expect("healthz answers JSON");
        health["channels"].clone()
    }

    /// An HTTP client for this server.
    #[must_use]
    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// Stops the server, waits until it has finished, and starts it again
    /// on the same database with the same configuration (on a new port).
    ///
    /// # Panics
    /// As [`TestServer::stop`] and [`TestServer::start`].
    pub async fn restart(self) -> Self {
        self.restart_after(async {}).await
    }

    /// [`TestServer::restart`], running `meanwhile` while it is down: what
    /// a peer sends while Clarify is down (issue 48).
    ///
    /// # Panics
    /// As [`TestServer::restart`].
    pub async fn restart_after(self, meanwhile: impl std::future::Future<Output = ()>) -> Self {
        let (database, config) = (self.database.clone(), self.config.clone());
        self.stop().await;
        meanwhile.await;
        Self::start_on(database, config).await
    }

    /// Stops the server and, once it has finished, starts it again on the
    /// same database, configuration and port: a restart as a client that
    /// keeps the server's URL sees it (its connections drop meanwhile).
    ///
    /// # Panics
    /// As [`TestServer::restart`], or when the port cannot be bound again.
    pub async fn restart_in_place(self) -> Self {
        let (database, config, addr) = (self.database.clone(), self.config.clone(), self.addr);
        self.stop().await;
        // The old listener is closed; tokio's listeners set SO_REUSEADDR,
        // so the port binds again at once.
        let listener = TcpListener::bind(addr).await.expect("bind the same port");
        Self::start_listening(database, config, listener).await
    }

    /// Stops the server and waits until it has finished.
    ///
    /// # Panics
    /// When the server task failed.
    pub async fn stop(mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.expect("server task").expect("server ran");
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}
