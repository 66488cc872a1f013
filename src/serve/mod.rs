//! The long-running faces of the scanner: the scan service (`check-storage-scanner serve`) and
//! the metrics exporter (`check-storage-security --prometheus-listen-port`). Both serve on
//! `http` (caps, deadlines, JSON errors, one log line per request) and scan with
//! `crate::scanner`, the plugin's own pipeline.

pub mod clients;
pub mod exporter;
pub mod http;
pub mod occupancy;
pub mod origin;
pub mod reading;
pub mod service;
pub mod signals;

/// What a scanner server says on stderr once it accepts requests: the warnings of its settings
/// (a secret given in clear on the command line), each once, then where it listens, the line
/// service managers and tests wait for.
pub fn announce_listening(warnings: &[String], address: std::net::SocketAddr) {
    let program = crate::settings::options::Program::Scanner.name();
    for warning in warnings {
        eprintln!("{program}: {warning}");
    }
    eprintln!("{program}: listening on http://{address}");
}

/// A mutex of a server, poisoned or not: a holder that panicked leaves consistent data here
/// (every update is one assignment or a count, a collection's insert or removal, or a SQLite
/// transaction that rolls back), so the server keeps serving it.
pub fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
