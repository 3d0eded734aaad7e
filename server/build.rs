//! Compiles `clarify-web` to wasm, runs wasm-bindgen and binaryen's
//! `wasm-opt` on it (from `web/node_modules`, or installed from npm into
//! `OUT_DIR` on a newcomer's first build), then packs the
//! overlay's files into `OUT_DIR/web` for `src/web_assets.rs` to embed:
//! content-hashed names, gzip and brotli copies, and the table `assets.rs`
//! (DESIGN.md "Building the web overlay").

#[path = "build/assets.rs"]
mod assets;

use std::{
    env,
    ffi::OsString,
    fs,
    io::{self, Write as _},
    path::{Path, PathBuf},
    process::{Command, ExitCode, Stdio},
};

use wasm_bindgen_cli_support::Bindgen;

const SKIP_VAR: &str = "CLARIFY_SKIP_WEB_BUILD";
/// Set (by the test command) to fail the build when wasm-opt is missing,
/// rather than serve a bigger module.
const REQUIRE_OPT_VAR: &str = "CLARIFY_REQUIRE_WASM_OPT";
const WASM_TARGET: &str = "wasm32-unknown-unknown";
const PROFILE: &str = "wasm-release";
/// `-Oz` minus what makes the module compress worse: inlining and merging
/// similar functions shrink the raw file but cost more after gzip or
/// brotli, which is what is sent (measured: -Oz alone 225.1 / 177.0 KB,
/// these 197.9 / 160.3 KB, none 206.1 / 165.5 KB, gzip / brotli); then the
/// features rustc's wasm32 target emits, which wasm-opt must accept.
const WASM_OPT_FLAGS: &[&str] = &[
    "-Oz",
    "--skip-pass=merge-similar-functions",
    "--always-inline-max-function-size=0",
    "--flexible-inline-max-function-size=0",
    "--one-caller-inline-max-function-size=0",
    "--enable-bulk-memory",
    "--enable-nontrapping-float-to-int",
    "--enable-sign-ext",
    "--enable-mutable-globals",
    "--enable-reference-types",
    "--enable-multivalue",
    "--strip-debug",
    "--strip-producers",
];

type Result<T, E = Box<dyn std::error::Error>> = std::result::Result<T, E>;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Cargo shows a failed build script's stderr verbatim; a panic
            // would bury the child's errors under a backtrace.
            let _ = writeln!(io::stderr(), "error: building the web overlay failed: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let manifest_dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").ok_or("CARGO_MANIFEST_DIR unset")?);
    let workspace = manifest_dir
        .parent()
        .ok_or("server/ has no parent")?
        .to_path_buf();
    let out_web = PathBuf::from(env::var_os("OUT_DIR").ok_or("OUT_DIR unset")?).join("web");

    for path in [
        "web/src",
        "web/Cargo.toml",
        "core/src",
        "core/Cargo.toml",
        "Cargo.lock",
        // Profiles and workspace dependency versions live here.
        "Cargo.toml",
        "rust-toolchain.toml",
        "server/assets",
        "server/build",
        // binaryen's version (the wasm-opt used) is pinned here.
        "web/package.json",
        "web/package-lock.json",
    ] {
        println!("cargo:rerun-if-changed={}", workspace.join(path).display());
    }
    println!("cargo:rerun-if-env-changed={SKIP_VAR}");
    println!("cargo:rerun-if-env-changed={REQUIRE_OPT_VAR}");
    let assets_dir = manifest_dir.join("assets");

    fs::create_dir_all(&out_web)?;

    if env::var_os(SKIP_VAR).is_some() {
        println!(
            "cargo:warning={SKIP_VAR} is set: the web overlay is NOT built and the binary serves empty assets"
        );
        assets::write(&out_web, &assets_dir, Vec::new(), Vec::new())?;
        return Ok(());
    }

    ensure_wasm_target()?;
    let wasm = build_wasm(&workspace)?;
    Bindgen::new()
        .input_path(&wasm)
        .web(true)?
        // The library defaults to omitting `new URL('…_bg.wasm', import.meta.url)`
        // (the CLI does not); without it `init()` has no module to fetch.
        .omit_default_module_path(false)
        .typescript(false)
        .generate(&out_web)
        .map_err(|e| format!("wasm-bindgen on {}: {e:#}", wasm.display()))?;
    let bound = out_web.join("clarify_web_bg.wasm");
    let out_dir = out_web.parent().ok_or("OUT_DIR has no parent")?;
    let optimized = match wasm_opt(&workspace, out_dir) {
        Some(wasm_opt) => {
            optimize(&wasm_opt, &bound)?;
            true
        }
        None if env::var_os(REQUIRE_OPT_VAR).is_some() => {
            return Err(format!(
                "{REQUIRE_OPT_VAR} is set and wasm-opt is missing: run `npm ci --prefix web`"
            )
            .into());
        }
        None => false,
    };
    let module = assets::write(
        &out_web,
        &assets_dir,
        fs::read(out_web.join("clarify_web.js"))?,
        fs::read(&bound)?,
    )?;
    println!(
        "cargo:warning=overlay wasm {}: {} B raw, {} B gzip, {} B brotli{}",
        module.path,
        module.raw,
        module.gzip,
        module.brotli,
        if optimized {
            " (wasm-opt -Oz)"
        } else {
            " (NOT optimized: wasm-opt needs npm)"
        }
    );
    Ok(())
}

/// binaryen's `wasm-opt`: the one `npm ci --prefix web` installed (the test
/// command does), else one installed from npm into `out_dir` by this build
/// (once: it stays for later builds), so that `cargo run` alone serves
/// the overlay the test command measures. `None` without npm or offline:
/// the overlay then works, only some per cent bigger.
fn wasm_opt(workspace: &Path, out_dir: &Path) -> Option<PathBuf> {
    let installed = workspace.join("web/node_modules/.bin/wasm-opt");
    if installed.is_file() {
        return Some(installed);
    }
    let npm_dir = out_dir.join("npm");
    let ours = npm_dir.join("node_modules/.bin/wasm-opt");
    if ours.is_file() {
        return Some(ours);
    }
    if env::var_os("CARGO_NET_OFFLINE").is_some_and(|v| v == "true") {
        return None;
    }
    let copied = fs::create_dir_all(&npm_dir).is_ok()
        && ["package.json", "package-lock.json"]
            .iter()
            .all(|f| fs::copy(workspace.join("web").join(f), npm_dir.join(f)).is_ok());
    if !copied {
        return None;
    }
    // The lockfile pins binaryen 132 (Debian's 108 breaks the module).
    let ran = Command::new("npm")
        .args([
            "ci",
            "--no-audit",
            "--no-fund",
            "--fetch-retries=1",
            "--fetch-timeout=20000",
        ])
        .current_dir(&npm_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    match ran {
        Ok(output) if output.status.success() && ours.is_file() => Some(ours),
        Ok(output) => {
            println!(
                "cargo:warning=npm could not install binaryen's wasm-opt ({}); the overlay is served unoptimized",
                String::from_utf8_lossy(&output.stderr)
                    .lines()
                    .last()
                    .unwrap_or_default()
            );
            None
        }
        // No npm on this machine: nothing to say beyond the size line.
        Err(_) => None,
    }
}

/// Runs binaryen's `wasm-opt -Oz` on `module` in place.
fn optimize(wasm_opt: &Path, module: &Path) -> Result<()> {
    let output = Command::new(wasm_opt)
        .args(WASM_OPT_FLAGS)
        .arg(module)
        .arg("-o")
        .arg(module)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", wasm_opt.display()))?;
    if !output.status.success() {
        return Err(format!(
            "wasm-opt failed ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    Ok(())
}

/// Makes sure the wasm target's standard library is there, so that
/// `cargo run` alone works on a fresh machine. `rust-toolchain.toml` lists
/// the target, but a toolchain installed before it (or with
/// `RUSTUP_AUTO_INSTALL=0`) lacks it; adding it only completes that toolchain.
fn ensure_wasm_target() -> Result<()> {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| OsString::from("rustc"));
    let libdir = Command::new(rustc)
        .args(["--print", "target-libdir", "--target", WASM_TARGET])
        .output()
        .map_err(|e| format!("cannot run rustc: {e}"))?;
    if Path::new(String::from_utf8_lossy(&libdir.stdout).trim()).is_dir() {
        return Ok(());
    }
    println!("cargo:warning=installing the {WASM_TARGET} target: rustup target add {WASM_TARGET}");
    let added = Command::new("rustup")
        .args(["target", "add", WASM_TARGET])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    match added {
        Ok(output) if output.status.success() => Ok(()),
        Ok(output) => Err(format!(
            "the {WASM_TARGET} target is missing and `rustup target add {WASM_TARGET}` failed; \
             run it yourself, or set {SKIP_VAR}=1 to build the server without the overlay.\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
        .into()),
        Err(e) => Err(format!(
            "the {WASM_TARGET} target is missing and rustup cannot be run ({e}): install the \
             target for this toolchain, or set {SKIP_VAR}=1 to build the server without the overlay"
        )
        .into()),
    }
}

/// Runs a plain child `cargo build` of `clarify-web` and returns the `.wasm`.
fn build_wasm(workspace: &Path) -> Result<PathBuf> {
    // The outer cargo holds the lock on its own target dir for the whole
    // build, so sharing it would deadlock.
    let target_dir = workspace.join("target").join("web");
    let cargo = env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));

    let mut command = Command::new(cargo);
    command
        .arg("build")
        .args(["-p", "clarify-web", "--lib"])
        .args(["--target", WASM_TARGET])
        .args(["--profile", PROFILE])
        // Leptos's type-erased components: less generic code per view
        // (measured: 3.3 KB gzip less).
        .args([
            "--config",
            "target.wasm32-unknown-unknown.rustflags=[\"--cfg\", \"erase_components\"]",
        ])
        .arg("--target-dir")
        .arg(&target_dir)
        .arg("--manifest-path")
        .arg(workspace.join("Cargo.toml"))
        .current_dir(workspace)
        .stdin(Stdio::null())
        // Anything on our stdout would be parsed as `cargo:` directives.
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (key, _) in env::vars_os() {
        if confuses_child_cargo(&key.to_string_lossy()) {
            command.env_remove(&key);
        }
    }

    let output = command
        .output()
        .map_err(|e| format!("cannot run cargo for the wasm build: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "`cargo build -p clarify-web --target {WASM_TARGET} --profile {PROFILE}` failed ({}); \
             set {SKIP_VAR}=1 to build the server without the overlay.\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }

    let wasm = target_dir
        .join(WASM_TARGET)
        .join(PROFILE)
        .join("clarify_web.wasm");
    if !wasm.is_file() {
        return Err(format!("the wasm build succeeded but {} is missing", wasm.display()).into());
    }
    Ok(wasm)
}

/// Variables the outer cargo set for this build script (or that configure
/// the outer build), which the child must not inherit: host-only flags would
/// break the wasm build, and a stray jobserver or target dir would tie the
/// child to the outer build.
fn confuses_child_cargo(key: &str) -> bool {
    const EXACT: &[&str] = &[
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTDOCFLAGS",
        "CARGO_ENCODED_RUSTDOCFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTC_WRAPPER",
        "RUSTC_LINKER",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "CARGO_BUILD_TARGET_DIR",
        "CARGO_BUILD_RUSTFLAGS",
        "CARGO_MAKEFLAGS",
        "MAKEFLAGS",
        "MFLAGS",
        "CARGO_PRIMARY_PACKAGE",
        "CARGO_MANIFEST_DIR",
        "CARGO_MANIFEST_PATH",
        "CARGO_MANIFEST_LINKS",
        "CARGO_CRATE_NAME",
        "OUT_DIR",
        "NUM_JOBS",
        "PROFILE",
        "OPT_LEVEL",
        "DEBUG",
        "TARGET",
        "HOST",
    ];
    const PREFIXES: &[&str] = &["CARGO_PKG_", "CARGO_CFG_", "CARGO_FEATURE_", "DEP_"];
    EXACT.contains(&key) || PREFIXES.iter().any(|p| key.starts_with(p))
}
