//! The scanner: `scan <host>`, `serve`, `review-waivers`. Thin: parse, run, exit.

fn main() {
    storage_security::process::exit_with(storage_security::scanner_cli::main);
}
