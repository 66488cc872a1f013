//! The monitoring plugin: prints the verdict and exits 0/1/2/3.

fn main() {
    storage_security::process::exit_with(storage_security::run::main);
}
