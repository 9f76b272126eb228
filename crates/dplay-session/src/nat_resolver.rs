//! The NAT resolver of MC-DPLNAT, sans-IO: the [`ResolverServer`] that tells a host the public
//! address its queries come from (MC-DPLNAT 3.2), and the [`ResolverClient`] a host runs to
//! learn it (MC-DPLNAT 3.3).
//!
//! Both take datagrams and `now` in and give datagrams and deadlines out, like [`crate::Session`].
//! The messages are `dplay_wire::dp8::path_test`'s NAT_RESOLVER_QUERY and NAT_RESOLVER_RESPONSE.

mod client;
mod server;

pub use client::{MAX_TRIES, RETRY_INTERVAL, ResolverClient, ResolverOutcome};
pub use server::{MAX_USER_DATA, ResolverLimits, ResolverServer, ResolverStats, UserString};

#[cfg(test)]
mod tests;
