//! The harness for Clarify's black-box tests: a real server bound to
//! 127.0.0.1:0 in this process with a database of its own (SQLite, or
//! PostgreSQL when the run says so, see [`database`]), stopped through a
//! shutdown channel; replicas of it on the same database; an API client that
//! can carry a token; and a real HTTP receiver standing in for an agent's
//! resume webhook.

pub mod database;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::response::IntoResponse as _;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use database::{TestDatabase, testing_postgres};

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

    async fn start_on(database: Arc<TestDatabase>, config: clarify_server::Config) -> Self {
        let db = clarify_server::db::Db::connect(database.url())
            .await
            .expect("open database");
        let state = clarify_server::AppState::new(db.clone(), config.clone())
            .await
            .expect("state");
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("bound address");
        let (shutdown, signal) = oneshot::channel::<()>();
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
        }
    }

    /// A new personal access token for user `name` (created if new).
    ///
    /// # Panics
    /// On database errors.
    pub async fn token(&self, name: &str) -> String {
        clarify_server::auth::tokens::create(&self.db, name, None)
            .await
            .expect("create token")
            .0
    }

    /// The API as an unauthenticated caller.
    #[must_use]
    pub fn api(&self) -> Api<'_> {
        Api {
            server: self,
            token: None,
        }
    }

    /// The API as the holder of `token`.
    #[must_use]
    pub fn as_token(&self, token: &str) -> Api<'_> {
        Api {
            server: self,
            token: Some(token.to_owned()),
        }
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

    /// The absolute URL of `path` on this server.
    #[must_use]
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
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
            sqlx::query("UPDATE task_session_messages SET metadata = $1 WHERE id = $2")
                .bind(value.to_string())
                .bind(id)
                .execute(self.db.pool())
                .await
                .expect("write metadata");
        }
    }

    /// The database this server (and its replicas) runs on.
    #[must_use]
    pub fn database(&self) -> &TestDatabase {
        &self.database
    }

    /// An HTTP client for this server.
    #[must_use]
    pub fn client(&self) -> &reqwest::Client {
        &self.client
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

/// Stores a task named `id` with no workspace, straight into `db` (for
/// benchmarks that build their data below the API).
///
/// # Panics
/// On database errors.
pub async fn insert_task(db: &clarify_server::db::Db, id: &str) {
    let now = clarify_server::clock::now_micros();
    let task = clarify_server::db::tasks::Task {
        id: id.to_owned(),
        workspace_id: String::new(),
        title: "bench".into(),
        description: String::new(),
        created_at: now,
        updated_at: now,
    };
    clarify_server::db::tasks::insert(db.pool(), &task)
        .await
        .expect("insert a task");
}

/// A browser's live event stream (`/api/v1/ws`) on one server.
pub type EventSocket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

impl TestServer {
    /// Opens the live event stream as an unauthenticated browser.
    ///
    /// # Panics
    /// When the upgrade fails.
    pub async fn events(&self) -> EventSocket {
        tokio_tungstenite::connect_async(self.url("/api/v1/ws").replace("http://", "ws://"))
            .await
            .expect("websocket")
            .0
    }
}

/// The next event with `action` on `socket`, skipping others.
///
/// # Panics
/// When the socket closes first.
pub async fn next_event(socket: &mut EventSocket, action: &str) -> Value {
    use futures_util::StreamExt as _;
    loop {
        let frame = socket.next().await.expect("socket open").expect("frame");
        if let tokio_tungstenite::tungstenite::Message::Text(text) = frame {
            let event: Value = serde_json::from_str(&text).expect("JSON event");
            if event["action"] == action {
                return event;
            }
        }
    }
}

/// The REST API as one caller (with a bearer token or none). Every method
/// panics when the request fails at the HTTP level.
#[derive(Debug, Clone)]
pub struct Api<'a> {
    server: &'a TestServer,
    token: Option<String>,
}

impl Api<'_> {
    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let url = self.server.url(&format!("/api/v1{path}"));
        let mut request = self.server.client.request(method, url);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        parse(request.send().await.expect("request")).await
    }

    /// POSTs JSON; returns status and parsed body.
    pub async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        self.send(reqwest::Method::POST, path, Some(body)).await
    }

    /// PATCHes JSON; returns status and parsed body.
    pub async fn patch(&self, path: &str, body: &Value) -> (u16, Value) {
        self.send(reqwest::Method::PATCH, path, Some(body)).await
    }

    /// GETs; returns status and parsed body.
    pub async fn get(&self, path: &str) -> (u16, Value) {
        self.send(reqwest::Method::GET, path, None).await
    }

    /// Answers or rejects `pending_id`.
    pub async fn respond(&self, pending_id: &str, body: &Value) -> (u16, Value) {
        self.post(&format!("/clarification/{pending_id}/respond"), body)
            .await
    }

    /// Creates a task (in `workspace_id`, if any) and a session on it (with
    /// `resume` as its resume target, if any); returns (task id, session id,
    /// agent token).
    ///
    /// # Panics
    /// When the API refuses.
    pub async fn session_in(
        &self,
        workspace_id: &str,
        resume: Option<Value>,
    ) -> (String, String, String) {
        let (status, task) = self
            .post(
                "/tasks",
                &json!({"title": "a task", "workspace_id": workspace_id}),
            )
            .await;
        assert_eq!(status, 201, "{task}");
        let task_id = task["id"].as_str().unwrap().to_owned();
        let body = resume.map_or_else(|| json!({}), |r| json!({"resume": r}));
        let (status, session) = self
            .post(&format!("/tasks/{task_id}/sessions"), &body)
            .await;
        assert_eq!(status, 201, "{session}");
        (
            task_id,
            session["id"].as_str().unwrap().to_owned(),
            session["agent_token"].as_str().unwrap().to_owned(),
        )
    }

    /// [`Api::session_in`] with no workspace.
    pub async fn session(&self, resume: Option<Value>) -> (String, String, String) {
        self.session_in("", resume).await
    }

    /// Asks `questions` on `session_id` (this caller must hold its agent
    /// token); returns the pending id.
    ///
    /// # Panics
    /// When the API refuses.
    pub async fn ask(&self, session_id: &str, questions: Value) -> String {
        let (status, body) = self
            .post(
                "/clarification/request",
                &json!({"session_id": session_id, "questions": questions}),
            )
            .await;
        assert!(status == 201 || status == 200, "{status} {body}");
        body["pending_id"].as_str().unwrap().to_owned()
    }
}

async fn parse(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.expect("body");
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}

/// Serves `app` on 127.0.0.1:0 until the returned sender is dropped.
async fn serve_in_background(app: axum::Router) -> (SocketAddr, oneshot::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (shutdown, signal) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = signal.await;
            })
            .await;
    });
    (addr, shutdown)
}

/// Answers `pending_id` with `racers` concurrent REST calls spread over
/// `servers` in turn, each picking an option and a text of its own; returns
/// every (status, body).
///
/// # Panics
/// When a request fails at the HTTP level.
pub async fn race_answers(
    servers: &[&TestServer],
    pending_id: &str,
    racers: usize,
) -> Vec<(u16, Value)> {
    let mut tasks = Vec::with_capacity(racers);
    for racer in 0..racers {
        let through = servers[racer % servers.len()];
        let client = through.client().clone();
        let url = through.url(&format!("/api/v1/clarification/{pending_id}/respond"));
        let option = if racer % 3 == 0 { "q1_opt1" } else { "q1_opt2" };
        tasks.push(tokio::spawn(async move {
            let body = json!({"answers": [{"question_id": "q1", "selected_options": [option],
                                           "custom_text": format!("racer {racer}")}]});
            let response = client.post(url).json(&body).send().await.expect("request");
            let status = response.status().as_u16();
            (status, response.json::<Value>().await.expect("JSON body"))
        }));
    }
    let mut results = Vec::with_capacity(racers);
    for task in tasks {
        results.push(task.await.expect("racer"));
    }
    results
}

/// R3: exactly one racer claimed; every other got 200 with the winner's answer.
///
/// # Panics
/// When that does not hold.
pub fn assert_exactly_one_winner(results: &[(u16, Value)]) {
    let winners: Vec<&Value> = results
        .iter()
        .filter(|(_, body)| body["claimed"] == true)
        .map(|(_, body)| body)
        .collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    for (status, body) in results {
        assert_eq!(*status, 200, "{body}");
        assert_eq!(
            body["response"]["answers"], winners[0]["response"]["answers"],
            "losers see the winner"
        );
    }
}

/// A resume target for tests: a real HTTP server on 127.0.0.1:0 that
/// records every resume POSTed to `/resume` and refuses those to `/refuse`.
#[derive(Debug)]
pub struct Receiver {
    addr: SocketAddr,
    received: std::sync::Arc<std::sync::Mutex<Vec<Value>>>,
    hanging: std::sync::Arc<tokio::sync::Semaphore>,
    _shutdown: oneshot::Sender<()>,
}

impl Receiver {
    /// Binds and starts the receiver.
    ///
    /// # Panics
    /// When it cannot bind.
    pub async fn start() -> Self {
        use axum::routing::post;
        let received = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = received.clone();
        // One permit per request that reached /hang.
        let hanging = std::sync::Arc::new(tokio::sync::Semaphore::new(0));
        let arrived = hanging.clone();
        let app = axum::Router::new()
            .route(
                "/resume",
                post(move |axum::Json(body): axum::Json<Value>| {
                    let sink = sink.clone();
                    async move {
                        sink.lock().unwrap().push(body);
                        "ok"
                    }
                }),
            )
            .route(
                "/refuse",
                post(|| async { (axum::http::StatusCode::SERVICE_UNAVAILABLE, "no") }),
            )
            .route(
                "/redirect",
                post(|| async {
                    (
                        axum::http::StatusCode::TEMPORARY_REDIRECT,
                        [(axum::http::header::LOCATION, "/resume")],
                    )
                }),
            )
            .route(
                "/hang",
                post(move || {
                    let arrived = arrived.clone();
                    async move {
                        arrived.add_permits(1);
                        std::future::pending::<()>().await;
                    }
                }),
            );
        let (addr, shutdown) = serve_in_background(app).await;
        Self {
            addr,
            received,
            hanging,
            _shutdown: shutdown,
        }
    }

    /// The URL that accepts resumes.
    #[must_use]
    pub fn url(&self) -> String {
        format!("http://{}/resume", self.addr)
    }

    /// A URL that refuses them (503).
    #[must_use]
    pub fn refusing_url(&self) -> String {
        format!("http://{}/refuse", self.addr)
    }

    /// A URL that redirects resumes (307) to the accepting one.
    #[must_use]
    pub fn redirecting_url(&self) -> String {
        format!("http://{}/redirect", self.addr)
    }

    /// The port it listens on (127.0.0.1).
    #[must_use]
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// A URL that takes resumes and never answers.
    #[must_use]
    pub fn hanging_url(&self) -> String {
        format!("http://{}/hang", self.addr)
    }

    /// Waits until a resume has reached the hanging URL.
    ///
    /// # Panics
    /// When the receiver is gone.
    pub async fn wait_for_hanging(&self) {
        self.hanging
            .acquire()
            .await
            .expect("receiver alive")
            .forget();
        self.hanging.add_permits(1);
    }

    /// How many resumes reached the hanging URL.
    #[must_use]
    pub fn hanging_count(&self) -> usize {
        self.hanging.available_permits()
    }

    /// How many resumes were accepted.
    ///
    /// # Panics
    /// When the lock is poisoned.
    #[must_use]
    pub fn count(&self) -> usize {
        self.received.lock().unwrap().len()
    }

    /// The last resume accepted.
    ///
    /// # Panics
    /// When none was.
    #[must_use]
    pub fn last(&self) -> Value {
        self.received
            .lock()
            .unwrap()
            .last()
            .cloned()
            .expect("a resume")
    }
}

/// A round-robin load balancer in front of several replicas: a real HTTP
/// proxy on 127.0.0.1:0 sending each request to the next replica in turn and
/// streaming the answer back (long polls and MCP's event streams included).
#[derive(Debug)]
pub struct RoundRobin {
    addr: SocketAddr,
    _shutdown: oneshot::Sender<()>,
}

struct Backends {
    urls: Vec<String>,
    next: std::sync::atomic::AtomicUsize,
    client: reqwest::Client,
}

impl RoundRobin {
    /// Starts the balancer over `replicas`.
    ///
    /// # Panics
    /// When it cannot bind.
    pub async fn start(replicas: &[&TestServer]) -> Self {
        let backends = Arc::new(Backends {
            urls: replicas.iter().map(|r| r.url("")).collect(),
            next: std::sync::atomic::AtomicUsize::new(0),
            client: reqwest::Client::new(),
        });
        let app = axum::Router::new().fallback(forward).with_state(backends);
        let (addr, shutdown) = serve_in_background(app).await;
        Self {
            addr,
            _shutdown: shutdown,
        }
    }

    /// The absolute URL of `path` behind the balancer.
    #[must_use]
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

async fn forward(
    axum::extract::State(backends): axum::extract::State<Arc<Backends>>,
    request: axum::extract::Request,
) -> axum::response::Response {
    use axum::http::header;
    use std::sync::atomic::Ordering;
    let turn = backends.next.fetch_add(1, Ordering::Relaxed) % backends.urls.len();
    let path = request
        .uri()
        .path_and_query()
        .map_or("/", axum::http::uri::PathAndQuery::as_str)
        .to_owned();
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, usize::MAX).await else {
        return axum::http::StatusCode::BAD_REQUEST.into_response();
    };
    let mut outgoing = backends
        .client
        .request(parts.method, format!("{}{path}", backends.urls[turn]))
        .body(body);
    for (name, value) in &parts.headers {
        if name != header::HOST && name != header::CONTENT_LENGTH {
            outgoing = outgoing.header(name, value);
        }
    }
    let Ok(answer) = outgoing.send().await else {
        return axum::http::StatusCode::BAD_GATEWAY.into_response();
    };
    let mut response = axum::response::Response::builder().status(answer.status());
    for (name, value) in answer.headers() {
        if name != header::TRANSFER_ENCODING && name != header::CONTENT_LENGTH {
            response = response.header(name, value);
        }
    }
    response
        .body(axum::body::Body::from_stream(answer.bytes_stream()))
        .unwrap_or_else(|_| axum::http::StatusCode::BAD_GATEWAY.into_response())
}

/// MCP clients (the official Rust SDK, rmcp) against a test server.
pub mod mcp {
    use std::sync::Arc;

    use rmcp::model::{CallToolRequestParams, CallToolResult, ProgressNotificationParam};
    use rmcp::service::{NotificationContext, RunningService};
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    use rmcp::{ClientHandler, RoleClient, ServiceExt as _};
    use serde_json::Value;

    use super::TestServer;

    /// A client handler that counts progress notifications.
    #[derive(Debug, Clone)]
    pub struct Recorder {
        progress: Arc<tokio::sync::watch::Sender<usize>>,
    }

    impl Default for Recorder {
        fn default() -> Self {
            Self {
                progress: Arc::new(tokio::sync::watch::channel(0).0),
            }
        }
    }

    impl Recorder {
        /// Watches the number of progress notifications received.
        #[must_use]
        pub fn progress_count(&self) -> tokio::sync::watch::Receiver<usize> {
            self.progress.subscribe()
        }
    }

    impl ClientHandler for Recorder {
        async fn on_progress(
            &self,
            _params: ProgressNotificationParam,
            _context: NotificationContext<RoleClient>,
        ) {
            self.progress.send_modify(|n| *n += 1);
        }
    }

    /// A connected client.
    pub type Client = RunningService<RoleClient, Recorder>;

    /// Connects to `path` (`/mcp` or `/mcp/agent`) with `token`, if any.
    ///
    /// # Panics
    /// When the handshake fails.
    pub async fn connect(server: &TestServer, path: &str, token: Option<&str>) -> Client {
        connect_url(&server.url(path), token).await
    }

    /// Connects to the MCP endpoint at `url` with `token`, if any.
    ///
    /// # Panics
    /// When the handshake fails.
    pub async fn connect_url(url: &str, token: Option<&str>) -> Client {
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
        if let Some(token) = token {
            config = config.auth_header(token);
        }
        let transport = StreamableHttpClientTransport::from_config(config);
        Recorder::default()
            .serve(transport)
            .await
            .expect("MCP handshake")
    }

    /// Calls `tool` with `args` (a JSON object).
    ///
    /// # Panics
    /// On a protocol error.
    pub async fn call(client: &Client, tool: &str, args: &Value) -> CallToolResult {
        let arguments = args.as_object().expect("an object").clone();
        client
            .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
            .await
            .expect("tool call")
    }

    /// The structured content of a successful result.
    ///
    /// # Panics
    /// When the result is an error.
    #[must_use]
    pub fn ok(result: &CallToolResult) -> Value {
        assert_ne!(
            result.is_error,
            Some(true),
            "tool error: {:?}",
            result.content
        );
        result
            .structured_content
            .clone()
            .expect("structured content")
    }

    /// The text of an error result.
    ///
    /// # Panics
    /// When the result is not an error.
    #[must_use]
    pub fn err(result: &CallToolResult) -> String {
        assert_eq!(result.is_error, Some(true), "expected an error: {result:?}");
        serde_json::to_value(&result.content).unwrap()[0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// The `pending_id`s on a page of `list_pending_questions_kandev`, in
    /// order.
    ///
    /// # Panics
    /// When the page has no list of bundles with ids.
    #[must_use]
    pub fn pending_ids(page: &Value) -> Vec<String> {
        page["bundles"]
            .as_array()
            .expect("bundles is a list")
            .iter()
            .map(|b| b["pending_id"].as_str().expect("pending_id").to_owned())
            .collect()
    }
}
