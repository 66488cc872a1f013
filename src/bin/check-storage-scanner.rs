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

/// The subcommands of the spec.
const SUBCOMMANDS: [&str; 4] = ["scan", "serve", "configure", "review-waivers"];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let asked_for_help = args.is_empty() || args.iter().any(|a| a == "-h" || a == "--help");
    if asked_for_help {
        print!("{USAGE}");
        std::process::exit(0);
    }
    // The monitoring line comes first: a core reads line 1.
    let shown: String = args[0].chars().take(40).collect();
    if SUBCOMMANDS.contains(&args[0].as_str()) {
        println!("UNKNOWN: subcommand {shown:?} is not available in this version yet");
    } else {
        println!(
            "UNKNOWN: unknown subcommand {shown:?}; use one of {} (see -h)",
            SUBCOMMANDS.join(", ")
        );
    }
    print!("{USAGE}");
    std::process::exit(3);
}
