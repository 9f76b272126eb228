//! Session message tests: the spec's byte examples, rejections, snapshots and properties.

mod examples;
mod rejects;
mod snapshots;
mod strategies;
