//! Every integration test, as modules of one test binary: the shared support (`tests/support`:
//! the fake instance, servers, certificates, the programs' runners) is built and linked once,
//! not once per test file. Each module is one former test file; nextest still runs every test
//! in a process of its own, so tests that set process-wide state do not meet.

#[path = "../support/mod.rs"]
mod support;

mod all_addresses;
mod attacks;
mod baseline;
mod check_ids;
mod ci_step;
mod completions;
mod deb_package;
mod debug_ports;
mod dns;
mod dnssec;
mod docs_links;
mod exporter;
mod fake_fleet;
mod fake_instance_selftest;
mod feed_cache;
mod findings;
mod fleet;
mod format_json;
mod format_junit_xsd;
mod format_metrics;
mod format_sarif_junit;
mod guard;
mod hostile_parsers;
mod icinga2;
mod json_schema;
pub(crate) mod layering;
mod lean_bodies;
mod light_scan;
mod manual;
mod multi_host;
mod ocis;
mod operator_files;
mod plugin;
mod policy;
mod refresh_data;
mod review_waivers;
mod scanner_cli;
mod secrets;
mod self_update;
mod service;
mod snippets;
mod store_redis;
mod store_sqlite;
mod time_budget;
mod tls_extra;
mod upgrade_rehearsal;
mod verify;
mod waivers;
mod web_api;
mod web_discovery;
mod web_mcp;
mod web_mcp_clients;
mod web_pages;
mod web_pdf;
mod web_redis;
mod web_waivers;
mod web_webmcp;
mod webhooks;
mod why_changed;
mod wizard;
