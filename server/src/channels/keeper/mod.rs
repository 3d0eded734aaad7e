//! What keeps each channel's connection (issue 48): its state as one
//! machine ([`link`]), what it is doing for the people running the server
//! ([`status`]), and the lease for a connection a service allows once per
//! bot ([`lease`]).

pub mod lease;
pub mod link;
#[cfg(test)]
mod link_model;
pub mod status;

pub use lease::{Fence, LEASE, hold};
pub use link::{Event, Link};
pub use status::{Keeper, Statuses};
