//! The `clarify` binary: everything, the runtime included, lives in the
//! library (`clarify_server::cli::main` says why).

fn main() -> std::process::ExitCode {
    clarify_server::cli::main()
}
