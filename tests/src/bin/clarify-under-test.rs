//! The `clarify` binary, built inside the test crate so that process-level
//! tests (kill -9, restart) can find it through `CARGO_BIN_EXE_*`. It is the
//! same entry point as `server/src/main.rs`.

fn main() -> std::process::ExitCode {
    clarify_server::cli::main()
}
