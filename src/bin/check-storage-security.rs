//! The monitoring plugin: prints the verdict and exits 0/1/2/3.

use std::io::Write;

fn main() {
    // Nothing a server sends may crash us into a misleading exit code: a panic is UNKNOWN.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("internal error: {info}");
    }));
    let outcome = std::panic::catch_unwind(|| {
        storage_security::run::main(
            std::env::args_os().skip(1),
            &storage_security::settings::secrets::ProcessEnv,
        )
    })
    .unwrap_or_else(|_| storage_security::process::Outcome {
        stdout: "UNKNOWN: internal error (see stderr); please report it\n".to_string(),
        exit_code: 3,
    });
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(outcome.stdout.as_bytes());
    let _ = stdout.flush();
    std::process::exit(outcome.exit_code);
}
