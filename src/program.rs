//! The program itself, as others see it: its name and the `User-Agent` of every request it
//! sends. At the bottom of the crate, so any layer (the probes, webhooks, self-update) can
//! name itself without reaching up into the settings.

/// The product's name: the plugin's program, the package, the configuration directories.
pub const PROGRAM: &str = "check-storage-security";

/// The `User-Agent` of every request the programs send: `check-storage-security/0.1.0`.
pub fn user_agent() -> String {
    format!("{PROGRAM}/{}", env!("CARGO_PKG_VERSION"))
}
