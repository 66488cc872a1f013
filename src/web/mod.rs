//! The public scan API (`check-storage-scanner web`): anyone submits an instance and reads its
//! grade. Submissions go through the limits and the target guard into a [`store::Store`]
//! (SQLite embedded, Redis shared), workers scan them with the plugin's pipeline, and the
//! records expire. See `shared/DESIGN.md`, "The servers".

pub mod admin;
pub mod api;
pub mod discovery;
pub mod export;
pub mod limits;
pub mod lookups;
pub mod mcp;
pub mod pages;
pub mod pdf;
pub mod routes;
pub mod schema;
pub mod server;
pub mod store;
pub mod submission;
pub mod visitor;
pub mod worker;

#[cfg(test)]
mod tests;
