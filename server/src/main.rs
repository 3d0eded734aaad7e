//! The `clarify` binary: everything, the runtime included, lives in the
//! library (`clarify_server::cli::main` says why).

/// jemalloc, not the system's: a waiting agent holds little, but arriving
/// ones briefly hold more, and glibc's allocator keeps that peak resident
/// (67 KiB per waiting MCP agent at 10,000 against 32 with jemalloc,
/// `tests/benches/waiters.rs`; issue 31 item 3).
#[cfg(unix)]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    clarify_server::cli::main()
}
