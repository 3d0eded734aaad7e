//! The harness for Clarify's black-box tests: a real server bound to
//! 127.0.0.1:0 in this process with a database of its own (SQLite, or
//! PostgreSQL when the run says so, see [`database`]), stopped through a
//! shutdown channel; replicas of it on the same database; an API client that
//! can carry a token; and a real HTTP receiver standing in for an agent's
//! resume webhook.

mod background;
mod balancer;
pub mod bench;
mod chat_fake;
mod client;
pub mod database;
mod discord_fake;
mod discord_gateway;
mod events;
pub mod forms;
pub mod hook;
pub mod mcp;
pub mod metrics;
mod notice_sink;
mod ntfy_fake;
pub mod oidc;
pub mod process;
mod race;
mod receiver;
mod server;
mod slack_socket;
pub mod stdio;
mod telegram_fake;

pub use balancer::RoundRobin;
pub use chat_fake::{
    ApiCall, ChatApis, SLACK_APP_TOKEN, SLACK_TOKEN, TELEGRAM_TOKEN, slack_signed,
};
pub use client::Api;
pub use database::{TestDatabase, testing_postgres};
pub use discord_fake::{DISCORD_SESSION, DISCORD_TOKEN, DiscordCall, DiscordFake};
pub use events::{EventSocket, closed_with, next_event};
pub use notice_sink::{Delivery, NoticeSink, assert_notice_keys};
pub use ntfy_fake::{NtfyFake, Published, Subscription};
pub use race::{assert_exactly_one_winner, race_answers};
pub use receiver::Receiver;
pub use server::{TestServer, insert_session, insert_task};
pub use slack_socket::{ACK_DEADLINE, Ack, SlackSocket};
