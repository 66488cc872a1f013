//! SIGTERM and SIGINT ask a server to stop: it finishes what is in flight, then exits 0 (what
//! systemd and a container runtime expect from `systemctl stop` and `docker stop`).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// A flag set when the process receives SIGTERM or SIGINT. `Err` says why the handlers could
/// not be installed.
pub fn stop_flag() -> Result<Arc<AtomicBool>, String> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(signal, stop.clone())
            .map_err(|e| format!("cannot handle signal {signal}: {e}"))?;
    }
    Ok(stop)
}
