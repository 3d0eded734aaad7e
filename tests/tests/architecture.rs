//! The shape of the code, checked on its sources: one claim and one active
//! rule (P1, L2a), a domain layer that knows nothing of HTTP or MCP, no
//! import circles between the server's modules, small source files in
//! every crate (issue 15).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, with its text.
fn sources(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                found.push((path, text));
            }
        }
    }
    found.sort();
    found
}

fn server_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/src")
}

/// The text without `//` comments, so that prose naming a module is not an
/// import of it.
fn code(text: &str) -> String {
    text.lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn p1_there_is_one_claim_and_one_active_rule() {
    let files = sources(&server_src());
    let all: Vec<String> = files.iter().map(|(_, t)| t.clone()).collect();
    let count = |needle: &str| all.iter().map(|s| s.matches(needle).count()).sum::<usize>();
    // The claim is the one write of the `responding` state: the word, in any
    // spelling (`"responding"`, `'responding'`, `Status::Responding`,
    // `.as_str()` of it), appears in the server's code once, in the claim.
    let claims: Vec<String> = files
        .iter()
        .flat_map(|(path, text)| {
            let code = code(text).to_lowercase();
            let at = path.display().to_string();
            (0..code.matches("responding").count()).map(move |_| at.clone())
        })
        .collect();
    assert!(
        claims.len() == 1 && claims[0].ends_with("db/clarification/claim.rs"),
        "exactly one statement claims (moves rows to responding): {claims:?}"
    );
    assert_eq!(
        count("clarification_status IN ('', 'pending')"),
        1,
        "exactly one statement of the active rule"
    );
    let migrations = Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/migrations");
    for backend in ["sqlite", "postgres"] {
        for entry in std::fs::read_dir(migrations.join(backend)).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            assert!(
                !text.contains("clarification_resolutions"),
                "no second claim table"
            );
        }
    }
}

#[test]
fn the_domain_layer_imports_no_http_or_mcp() {
    for (path, text) in sources(&server_src().join("lifecycle")) {
        let code = code(&text);
        for adapter in ["axum", "rmcp", "crate::http", "http::", "StatusCode"] {
            assert!(
                !code.contains(adapter),
                "{} uses {adapter}: the domain must not know its adapters",
                path.display()
            );
        }
    }
}

/// The outbound adapters left the domain (issue 45 design step, issue 48
/// item 3): the lifecycle holds the `Outbound` port, never a channel, so
/// it neither imports `crate::channels` nor names a channel's module (the
/// webhook sender, ntfy, Slack, Telegram lived in `lifecycle/notify/`).
#[test]
fn the_domain_imports_no_channel() {
    let lifecycle = server_src().join("lifecycle");
    assert!(
        !lifecycle.join("notify").exists(),
        "the channels live in server/src/channels/"
    );
    for (path, text) in sources(&lifecycle) {
        let code = code(&text);
        assert!(
            !crate_paths(&code).contains("channels") && !code.contains("channels::"),
            "{} imports the channels: the domain sees only its port",
            path.display()
        );
        for channel in [
            "notify::",
            "ntfy::",
            "slack::",
            "telegram::",
            "discord::",
            "chat::",
        ] {
            assert!(
                !code.contains(channel),
                "{} names {channel}: a channel belongs in server/src/channels/",
                path.display()
            );
        }
    }
}

/// The first segment of every `crate::` path in `code`, groups included:
/// `crate::db::x` and `crate::{db::{a, b}, auth}` name `db` and `auth`.
fn crate_paths(code: &str) -> BTreeSet<String> {
    let ident = |text: &str| -> String {
        text.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        let Some(group) = rest.strip_prefix('{') else {
            found.insert(ident(rest));
            continue;
        };
        // Items at the group's own depth, each after `{` or a comma.
        let mut depth = 0;
        let mut start = true;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => start = true,
                c if start && !c.is_whitespace() => {
                    found.insert(ident(&group[i..]));
                    start = false;
                }
                _ => {}
            }
        }
    }
    found
}

#[test]
fn imports_are_read_through_groups() {
    let code =
        "use crate::{db::{a, b}, auth::Caller};\nuse crate::clock;\nlet x = crate::ids::new_id();";
    let found: Vec<String> = crate_paths(code).into_iter().collect();
    assert_eq!(found, ["auth", "clock", "db", "ids"]);
}

/// The server's top-level modules and the others each one imports.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = server_src();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let tops: BTreeSet<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.trim_end_matches(".rs").to_owned()
        })
        .filter(|name| name != "lib" && name != "main")
        .collect();
    for (path, text) in sources(&src) {
        let relative = path.strip_prefix(&src).unwrap();
        let module = relative
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = module.trim_end_matches(".rs").to_owned();
        if !tops.contains(&module) {
            continue;
        }
        let code = code(&text);
        let imports = graph.entry(module.clone()).or_default();
        for first in crate_paths(&code) {
            // An item of the crate root is one of lib.rs's re-exports: a
            // module reaching its neighbours through them would hide an
            // import from this graph (`crate::AppState` once hid that the
            // adapters depend on what `app` assembles).
            assert!(
                tops.contains(&first) && !code.contains(&format!("crate::{first}(")),
                "{} imports crate::{first}: import it from its own module",
                path.display()
            );
            if first != module {
                imports.insert(first);
            }
        }
    }
    graph
}

#[test]
fn the_server_modules_import_each_other_without_circles() {
    let graph = module_graph();
    assert!(graph.len() > 8, "read the modules: {graph:?}");
    assert!(
        graph["lifecycle"].contains("db"),
        "the graph sees imports: {graph:?}"
    );
    // Depth-first search for a path back to where it started.
    fn reaches(
        graph: &BTreeMap<String, BTreeSet<String>>,
        from: &str,
        to: &str,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        graph
            .get(from)
            .into_iter()
            .flatten()
            .any(|next| next == to || (seen.insert(next.clone()) && reaches(graph, next, to, seen)))
    }
    for (module, imports) in &graph {
        for import in imports {
            assert!(
                !reaches(&graph, import, module, &mut BTreeSet::new()),
                "{module} imports {import}, which leads back to {module}: {graph:?}"
            );
        }
    }
}

#[test]
fn no_source_file_exceeds_400_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for crate_src in ["server/src", "core/src", "web/src", "tests/src"] {
        let found = sources(&root.join(crate_src));
        assert!(!found.is_empty(), "read {crate_src}");
        for (path, text) in found {
            let lines = text.lines().count();
            assert!(lines <= 400, "{} has {lines} lines", path.display());
        }
    }
}

/// How many methods a type may gather in its inherent `impl` blocks
/// across the server: `Lifecycle` had grown to 96 over 23 files before it
/// was split into services (issue 45's design step), each one a concept.
const METHODS_PER_TYPE: usize = 40;

#[test]
fn no_type_gathers_more_than_forty_methods() {
    let mut methods: BTreeMap<String, usize> = BTreeMap::new();
    for (_, text) in sources(&server_src()) {
        let code = code(&text);
        let mut current: Option<String> = None;
        for line in code.lines() {
            if let Some(rest) = line.strip_prefix("impl ") {
                // `impl Type {` only: trait impls and generics' bounds are
                // the trait's methods, not the type's own.
                current = rest
                    .strip_suffix(" {")
                    .filter(|name| !name.contains(' ') && !name.contains('<'))
                    .map(str::to_owned);
            } else if line.starts_with('}') {
                current = None;
            } else if let Some(name) = &current {
                let item = line.trim_start_matches(' ');
                let item = item
                    .strip_prefix("pub(super) ")
                    .or_else(|| item.strip_prefix("pub(crate) "))
                    .or_else(|| item.strip_prefix("pub "))
                    .unwrap_or(item);
                let item = item.strip_prefix("async ").unwrap_or(item);
                if line.starts_with("    ") && !line.starts_with("     ") && item.starts_with("fn ")
                {
                    *methods.entry(name.clone()).or_default() += 1;
                }
            }
        }
    }
    assert!(
        methods.contains_key("Resolving"),
        "read the impl blocks: {methods:?}"
    );
    for (name, count) in methods {
        assert!(
            count <= METHODS_PER_TYPE,
            "{name} has {count} methods: split it by the use cases a reader would look for"
        );
    }
}

#[test]
fn the_browser_declares_no_wire_type_of_its_own() {
    let web = Path::new(env!("CARGO_MANIFEST_DIR")).join("../web/src");
    for (path, text) in sources(&web) {
        // A draft kept in the tab's sessionStorage is the page's own state.
        if path.ends_with("overlay/draft.rs") {
            continue;
        }
        let derives_serde = code(&text)
            .lines()
            .any(|line| line.contains("derive(") && line.contains("Serialize"));
        assert!(
            !derives_serde,
            "{} declares a (de)serialized type: the wire's types are clarify_core::api's",
            path.display()
        );
    }
}
