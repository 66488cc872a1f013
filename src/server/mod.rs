//! What every server of the crate shares, below the faces that serve (the scan service, the
//! exporter, the public API): the HTTP server (`http`: caps, deadlines, JSON errors, one log
//! line per request, a route table), who a peer counts as (`clients`), the seats they hold
//! (`occupancy`), the reads in progress (`reading`), which pages may make a browser call us
//! (`origin`), stopping on a signal (`signals`), uuids and locks.
//! No face names another: what two of them need is here.

pub mod clients;
pub mod http;
pub mod occupancy;
pub mod origin;
pub mod reading;
pub mod signals;

use std::io::Read;

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

/// A random (version 4) uuid from the kernel's generator: never sequential, never guessable.
pub fn new_uuid() -> Result<String, String> {
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .map_err(|e| format!("cannot read /dev/urandom for a uuid: {e}"))?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    // 8-4-4-4-12 hex digits: the dashes go in from the last.
    let mut uuid = crate::text::hex(&b);
    for at in [20, 16, 12, 8] {
        uuid.insert(at, '-');
    }
    Ok(uuid)
}
