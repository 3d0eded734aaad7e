//! The README's command lines cannot rot: every `clarify …` line of its
//! fenced blocks (and `cargo run --release -- …`) is parsed with the real
//! argument parser, without running anything (issue 45 item 5).

use clap::{CommandFactory as _, Parser as _};
use clarify_server::cli::Cli;

const README: &str = include_str!("../../README.md");

/// The README's fenced blocks, each a list of its lines (a line continued
/// with `\` joined to the next) with their line numbers.
fn fenced_blocks() -> Vec<Vec<(usize, String)>> {
    let mut blocks = Vec::new();
    let mut block: Option<Vec<(usize, String)>> = None;
    let mut pending: Option<(usize, String)> = None;
    for (index, line) in README.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            match block.take() {
                Some(done) => blocks.push(done),
                None => block = Some(Vec::new()),
            }
            continue;
        }
        let Some(lines) = block.as_mut() else {
            continue;
        };
        let (number, mut text) = pending.take().unwrap_or((index + 1, String::new()));
        match line.trim_end().strip_suffix('\\') {
            Some(head) => {
                text.push_str(head);
                pending = Some((number, text));
            }
            None => {
                text.push_str(line);
                lines.push((number, text));
            }
        }
    }
    blocks
}

/// The simple commands of a shell line: split at `|`, `&&`, `||` and `;`,
/// each `$(…)`'s command among them; a redirection (`> file`, `2>&1`)
/// is the shell's, not the command's.
fn simple_commands(line: &str) -> Vec<Vec<String>> {
    let (outer, inner) = substitutions(line);
    let words = shlex::split(&outer).unwrap_or_else(|| panic!("not a shell line: {line}"));
    let mut commands = vec![Vec::new()];
    let mut words = words.into_iter();
    while let Some(word) = words.next() {
        if ["|", "&&", "||", ";"].contains(&word.as_str()) {
            commands.push(Vec::new());
        } else if [">", ">>", "<", "2>"].contains(&word.as_str()) {
            words.next();
        } else if word.starts_with("2>") || word.starts_with('>') {
            // `2>&1`, `>file`: nothing of the command's.
        } else if let Some(command) = commands.last_mut() {
            command.push(word);
        }
    }
    commands.extend(inner.iter().flat_map(|i| simple_commands(i)));
    commands.retain(|c| !c.is_empty());
    commands
}

/// `line` with each `$(…)` made the word `x`, and the commands those ran.
/// Quoting starts afresh inside `$(…)`, which a plain split would miss.
fn substitutions(line: &str) -> (String, Vec<String>) {
    let mut outer = String::new();
    let mut inner = Vec::new();
    let mut rest = line;
    while let Some(start) = rest.find("$(") {
        outer.push_str(&rest[..start]);
        let body = &rest[start + 2..];
        let (mut depth, mut quote) = (1, None);
        let end = body
            .char_indices()
            .find_map(|(at, c)| {
                match (quote, c) {
                    (None, '\'' | '"') => quote = Some(c),
                    (Some(q), c) if q == c => quote = None,
                    (None, '(') => depth += 1,
                    (None, ')') => depth -= 1,
                    _ => {}
                }
                (depth == 0).then_some(at)
            })
            .unwrap_or_else(|| panic!("an unclosed $( in {line}"));
        inner.push(body[..end].to_owned());
        outer.push('x');
        rest = &body[end + 1..];
    }
    outer.push_str(rest);
    (outer, inner)
}

/// A command's leading `VAR=value`s and, when it runs `clarify`, its
/// arguments; placeholders (`…`, `$VAR`) made concrete.
fn clarify_args(command: &[String]) -> (Vec<(String, String)>, Option<Vec<String>>) {
    let assignments: Vec<(String, String)> = command.iter().map_while(|w| assignment(w)).collect();
    let command: Vec<&str> = command[assignments.len()..]
        .iter()
        .map(String::as_str)
        .collect();
    let args = match command.as_slice() {
        ["clarify", args @ ..] => args,
        ["cargo", "run", rest @ ..] => rest
            .iter()
            .position(|w| *w == "--")
            .map_or(&[][..], |dash| &rest[dash + 1..]),
        _ => return (assignments, None),
    };
    (
        assignments,
        Some(args.iter().map(|a| concrete(a)).collect()),
    )
}

/// `NAME=value` as a shell assignment reads it.
fn assignment(word: &str) -> Option<(String, String)> {
    let (name, value) = word.split_once('=')?;
    is_variable(name).then(|| (name.to_owned(), concrete(value)))
}

/// The variables a line exports, `export NAME=…` anywhere in it (also
/// inside the text an `eval` runs); a value not written out is `x`.
fn exported(line: &str) -> Vec<(String, String)> {
    line.match_indices("export ")
        .filter_map(|(at, _)| {
            let rest = &line[at + "export ".len()..];
            let word = rest.split([' ', '"', '\'']).next()?;
            let (name, value) = assignment(word)?;
            Some((
                name,
                if value.is_empty() {
                    "x".to_owned()
                } else {
                    value
                },
            ))
        })
        .collect()
}

/// `argv` as the environment `variables` make it: each variable that is a
/// flag's of the subcommand run (`env = …`) given as that flag, unless the
/// line gives the flag itself. Clap would read the test's own environment,
/// so the README's is passed this way.
fn with_environment(mut argv: Vec<String>, variables: &[(String, String)]) -> Vec<String> {
    let root = Cli::command();
    let mut command = &root;
    for word in &argv[1..] {
        match command.find_subcommand(word) {
            Some(sub) if !word.starts_with('-') => command = sub,
            _ => break,
        }
    }
    let mut flags = Vec::new();
    for (name, value) in variables {
        let flag = command
            .get_arguments()
            .find(|a| a.get_env() == Some(std::ffi::OsStr::new(name)))
            .and_then(clap::Arg::get_long);
        if let Some(long) = flag {
            let given = argv.iter().any(|a| {
                a.strip_prefix("--")
                    .is_some_and(|f| f.split('=').next() == Some(long))
            });
            if !given {
                flags.push(format!("--{long}={value}"));
            }
        }
    }
    argv.extend(flags);
    argv
}

fn is_variable(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_uppercase() || c == '_')
}

/// A placeholder made a value: `…` and `$VAR` stand for something the
/// reader fills in.
fn concrete(arg: &str) -> String {
    let arg = arg.replace('…', "x");
    match arg.strip_prefix('$') {
        Some(name) if is_variable(name) => "x".to_owned(),
        _ => arg,
    }
}

/// Issue 45 item 5: `clarify serve --telegram-chat-id -1001234567890`, as
/// the README wrote it, exited with "unexpected argument '-1' found"; every
/// line of the README that runs `clarify` must be one the binary takes.
#[test]
fn every_clarify_line_of_the_readme_parses() {
    let mut parsed = Vec::new();
    let mut refused = Vec::new();
    for block in fenced_blocks() {
        // What a block exports holds for its later lines, as in one shell.
        let mut environment = Vec::new();
        for (number, line) in block {
            for command in simple_commands(&line) {
                let (assignments, args) = clarify_args(&command);
                let Some(args) = args else {
                    continue;
                };
                let variables = [environment.clone(), assignments].concat();
                let argv = std::iter::once("clarify".to_owned()).chain(args).collect();
                match Cli::try_parse_from(with_environment(argv, &variables)) {
                    Ok(_) => parsed.push(number),
                    Err(error) => refused.push(format!("README.md:{number}: {line}\n{error}")),
                }
            }
            environment.extend(exported(&line));
        }
    }
    assert!(refused.is_empty(), "{}", refused.join("\n"));
    // The reading found the README's commands, not nothing: the Telegram
    // line among them, and the one inside `eval "$(…)"`.
    let telegram = line_of("clarify serve --telegram-chat-id");
    let session = line_of("clarify session create");
    assert!(parsed.contains(&telegram), "{parsed:?}");
    assert!(parsed.contains(&session), "{parsed:?}");
    assert!(parsed.len() >= 8, "{parsed:?}");
}

fn line_of(text: &str) -> usize {
    README
        .lines()
        .position(|l| l.contains(text))
        .unwrap_or_else(|| panic!("the README no longer says {text}"))
        + 1
}

/// The reading itself: continued lines, assignments, pipes, `$(…)`.
#[test]
fn the_reader_finds_clarify_where_a_shell_would_run_it() {
    let commands = simple_commands(
        r#"A=1 B=x clarify serve --auth | jq .; eval "$(clarify session create --title 'R 1' | jq -r .x)""#,
    );
    let args: Vec<Vec<String>> = commands.iter().filter_map(|c| clarify_args(c).1).collect();
    assert_eq!(
        args,
        [
            vec!["serve", "--auth"],
            vec!["session", "create", "--title", "R 1"]
        ]
    );
    let cargo = ["cargo", "run", "--release", "--", "token", "list"].map(String::from);
    assert_eq!(clarify_args(&cargo).1.unwrap(), ["token", "list"]);
    let bare = ["cargo", "run", "--release"].map(String::from);
    assert!(clarify_args(&bare).1.unwrap().is_empty());
    assert_eq!(
        exported(r#"eval "$(jq -r '"export T=" + .t')"; export U=postgres://h"#),
        [
            ("T".to_owned(), "x".to_owned()),
            ("U".to_owned(), "postgres://h".to_owned())
        ]
    );
    let argv = ["clarify", "serve", "--auth"].map(String::from).to_vec();
    let variables = [("CLARIFY_AUTH", "true"), ("CLARIFY_LISTEN", "0.0.0.0:1")]
        .map(|(n, v)| (n.to_owned(), v.to_owned()));
    assert_eq!(
        with_environment(argv, &variables),
        ["clarify", "serve", "--auth", "--listen=0.0.0.0:1"]
    );
    assert_eq!(concrete("clk_pat_…"), "clk_pat_x");
    assert_eq!(concrete("$WORKSPACE"), "x");
}

/// A group's negative id is taken, but never a flag for an id: with
/// `$CHAT` empty, `--telegram-chat-id $CHAT --auth` must not start a server
/// without auth, `--auth` read as the chat (review of issue 45 item 5).
#[test]
fn a_negative_chat_id_is_taken_and_a_flag_never_is() {
    let with =
        |args: &[&str]| Cli::try_parse_from(["clarify", "serve"].iter().chain(args).copied());
    assert!(with(&["--telegram-chat-id", "-1001234567890"]).is_ok());
    assert!(with(&["--telegram-chat-id", "--auth"]).is_err());
}
