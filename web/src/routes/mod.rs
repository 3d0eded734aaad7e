//! The pages, chosen from the URL path (the server serves the same page at
//! every one of them).

mod inbox;
mod login;
mod session;
mod tasks;

pub use inbox::InboxPage;
pub use login::LoginPage;
pub use session::{SessionPage, TaskPage};

/// A page the app can show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `/`: the inbox, then the tasks.
    Inbox,
    Task(String),
    Session(String),
    Login,
    NotFound,
}

impl Route {
    /// The route of `path`.
    pub fn parse(path: &str) -> Self {
        let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
        match parts.as_slice() {
            [""] => Self::Inbox,
            ["login"] => Self::Login,
            ["t", id] if !id.is_empty() => Self::Task((*id).to_owned()),
            ["s", id] if !id.is_empty() => Self::Session((*id).to_owned()),
            _ => Self::NotFound,
        }
    }
}
