//! A [`TestServer`] on a runtime of its own, which [`TestServer::kill`]
//! ends as a crash ends a process: every task it started (the server, its
//! sweeps, a channel's connection and the lease it holds) stops where it
//! is, and nothing is released or said goodbye (issue 48 item 2: another
//! replica takes a dead holder's lease over once it expires).

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::sync::oneshot;

use super::TestServer;
use crate::database::TestDatabase;

impl TestServer {
    /// Another replica on this server's database, started as this one
    /// was, on a runtime of its own so that it can be killed.
    ///
    /// # Panics
    /// As [`TestServer::start`].
    pub async fn replica_apart(&self) -> Self {
        Self::start_apart_on(self.database.clone(), self.config.clone()).await
    }

    /// A server started with `config` on a new database, on a runtime of
    /// its own so that it can be killed.
    ///
    /// # Panics
    /// As [`TestServer::start`].
    pub async fn start_apart(config: clarify_server::Config) -> Self {
        Self::start_apart_on(Arc::new(TestDatabase::create().await), config).await
    }

    async fn start_apart_on(database: Arc<TestDatabase>, config: clarify_server::Config) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("a non-blocking listener");
        let addr: SocketAddr = listener.local_addr().expect("bound address");
        let mut config = config;
        config
            .public_url
            .get_or_insert_with(|| format!("http://{addr}"));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        let (shutdown, signal) = oneshot::channel::<()>();
        let (url, served, handle) = (
            database.url().to_owned(),
            config.clone(),
            runtime.handle().clone(),
        );
        // Everything the server starts runs on `runtime`, its database
        // connections included (entered from a blocking thread: a runtime
        // is not entered from another's task).
        let state = tokio::task::spawn_blocking(move || {
            handle.block_on(async move {
                let db = clarify_server::db::Db::connect(&url)
                    .await
                    .expect("open database");
                clarify_server::AppState::new(db, served)
                    .await
                    .expect("state")
            })
        })
        .await
        .expect("the server started");
        let hub = state.events.clone();
        let task = runtime.spawn(async move {
            let listener = tokio::net::TcpListener::from_std(listener)?;
            clarify_server::serve(listener, state, async move {
                let _ = signal.await;
            })
            .await
        });
        // The test's own connections, on the test's runtime.
        let db = clarify_server::db::Db::connect(database.url())
            .await
            .expect("open database");
        Self {
            addr,
            shutdown: Some(shutdown),
            task: Some(task),
            client: reqwest::Client::new(),
            database,
            config,
            db,
            hub,
            runtime: Some(runtime),
        }
    }

    /// Ends a server started apart at once, as a crash would: its tasks
    /// are dropped where they wait, its connections closed, and nothing it
    /// holds is released.
    ///
    /// # Panics
    /// For a server not started apart.
    pub fn kill(mut self) {
        let runtime = self.runtime.take().expect("a server started apart");
        runtime.shutdown_background();
        // After the runtime: dropping it would have asked for a shutdown.
        self.shutdown.take();
        self.task.take();
    }
}
