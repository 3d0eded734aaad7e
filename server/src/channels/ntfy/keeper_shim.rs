//! A stand-in for the channels' connection keeper until it lands (same
//! names and shapes as `channels::keeper`); replaced by it.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::db::Db;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    Opened,
    Failed,
    Dropped,
}

#[derive(Debug, Clone, Default)]
pub struct Keeper {
    failed: bool,
}

impl Keeper {
    pub fn on(&mut self, event: Event) {
        self.failed = !matches!(event, Event::Opened);
    }

    pub async fn pause(&self, shutdown: &CancellationToken) -> bool {
        let wait = Duration::from_millis(if self.failed { 200 } else { 100 });
        tokio::select! {
            () = tokio::time::sleep(wait) => true,
            () = shutdown.cancelled() => false,
        }
    }
}

static CURSORS: LazyLock<Mutex<HashMap<String, String>>> = LazyLock::new(Mutex::default);

#[derive(Debug, Clone)]
pub struct Fence {
    pub name: String,
}

impl Fence {
    pub async fn cursor(&self, _db: &Db) -> sqlx::Result<Option<String>> {
        Ok(CURSORS.lock().unwrap().get(&self.name).cloned())
    }

    pub async fn set_cursor(&self, _db: &Db, value: &str) -> sqlx::Result<bool> {
        CURSORS
            .lock()
            .unwrap()
            .insert(self.name.clone(), value.to_owned());
        Ok(true)
    }
}

pub async fn hold<F, Fut>(
    _db: Db,
    name: String,
    _ttl: Duration,
    keeper: Keeper,
    shutdown: CancellationToken,
    mut body: F,
) where
    F: FnMut(Fence, CancellationToken) -> Fut + Send,
    Fut: std::future::Future<Output = ()> + Send,
{
    let _ = Arc::new(());
    loop {
        body(Fence { name: name.clone() }, shutdown.child_token()).await;
        if !keeper.pause(&shutdown).await {
            return;
        }
    }
}
