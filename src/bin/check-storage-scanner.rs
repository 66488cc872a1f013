//! The scan service entry point. Its subcommands (scan, serve, configure, review-waivers) are
//! not available in this version yet; it prints its usage and exits UNKNOWN.

const USAGE: &str = "\
check-storage-scanner - runs the storage security scanner once or as a local caching service

Usage:
  check-storage-scanner scan <host>                  print the full result document as JSON
  check-storage-scanner serve [--port N] [--listen ADDR] [--token TOKEN]
  check-storage-scanner configure
  check-storage-scanner review-waivers --result <file>

None of these subcommands is available in this version yet; use check-storage-security.
";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let asked_for_help = args.is_empty() || args.iter().any(|a| a == "-h" || a == "--help");
    print!("{USAGE}");
    if !asked_for_help {
        println!(
            "UNKNOWN: subcommand {:?} is not available in this version yet",
            args[0]
        );
    }
    std::process::exit(if asked_for_help { 0 } else { 3 });
}
