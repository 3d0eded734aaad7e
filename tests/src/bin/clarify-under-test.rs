//! The `clarify` binary, built inside the test crate so that process-level
//! tests (kill -9, restart) can find it through `CARGO_BIN_EXE_*`. It is the
//! same entry point as `server/src/main.rs`.

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
