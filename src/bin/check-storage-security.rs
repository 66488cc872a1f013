//! The monitoring plugin: prints the verdict and exits 0/1/2/3.

fn main() {
    storage_security::process::bound_malloc_arenas();
    storage_security::process::exit_with_stream(storage_security::run::main);
}
