//! The wire: every request and response body of the REST API and the
//! events of its WebSocket, as types that both serialize and deserialize.
//! The server answers with them, and the overlay, `clarify ask` and the
//! tests read them, so a field cannot drift between the two ends.
//!
//! Times are RFC 3339 strings, as they travel.

mod notice;
mod requests;
mod resources;
mod views;

pub use notice::{Notice, NoticeAction, NoticeKind, escape_chat};
pub use requests::{
    Ask, Assign, Login, NewSession, NewTask, NewWorkspace, RespondAlike, ResumeTarget,
    SessionPatch, SetWorkspaceNotify,
};
pub use resources::{
    CreatedSession, Me, Message, Messages, Session, SessionView, Sessions, Task, TaskView, Tasks,
    Turn, User, Workspace, WorkspaceNotify, Workspaces,
};
pub use views::{
    Acknowledged, AlikeOutcome, AlikeOutcomes, Asked, BundleView, Event, LoggedIn, MessageEvent,
    Payload, TaskChange,
};
