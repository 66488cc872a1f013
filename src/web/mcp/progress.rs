//! The progress of one `tools/call`, written as server-sent events the moment it happens.

use super::*;

/// Where the progress notifications of one `tools/call` go: nowhere (no progress token, or a
/// client that does not accept SSE), or written as server-sent events the moment the scan
/// changes state, on the connection of the call.
pub(super) struct Progress<'a> {
    /// The progress token, and the connection the events go to.
    stream: Option<(Value, &'a mut dyn Write)>,
    /// The client went away: the wait ends (the scan itself runs on).
    pub(super) gone: bool,
    last_write: Instant,
}

/// An SSE comment sent while nothing changes, so that proxies keep the stream open and a
/// client that left is noticed.
pub(super) const HEARTBEAT: Duration = Duration::from_secs(15);

impl<'a> Progress<'a> {
    pub(super) fn new(stream: Option<(Value, &'a mut dyn Write)>) -> Progress<'a> {
        Progress {
            stream,
            gone: false,
            last_write: Instant::now(),
        }
    }

    pub(super) fn note(&mut self, progress: u64, total: u64, message: String) {
        if let Some((token, _)) = &self.stream {
            let event = json!({
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {
                    "progressToken": token,
                    "progress": progress,
                    "total": total,
                    "message": message,
                },
            });
            self.send(&event);
        }
    }

    /// One `message` event; a failed write marks the client gone.
    pub(super) fn send(&mut self, message: &Value) {
        self.write(format!("event: message\ndata: {message}\n\n").as_bytes());
    }

    pub(super) fn heartbeat(&mut self) {
        if self.last_write.elapsed() >= HEARTBEAT {
            self.write(b": waiting\n\n");
        }
    }

    pub(super) fn write(&mut self, bytes: &[u8]) {
        if let Some((_, out)) = self.stream.as_mut()
            && !self.gone
        {
            self.gone = out.write_all(bytes).and_then(|()| out.flush()).is_err();
            self.last_write = Instant::now();
        }
    }
}
