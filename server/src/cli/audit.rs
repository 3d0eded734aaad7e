//! `clarify audit` (issue 49 item 5): the audit export of a running
//! server, every page of it, to standard output, for an auditor's file.

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::reach::Reach;

/// The export's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One JSON object a line.
    Jsonl,
    /// CSV with one header row.
    Csv,
}

/// Flags of `clarify audit`.
#[derive(Debug, Args)]
pub struct AuditArgs {
    #[command(flatten)]
    pub reach: Reach,
    /// Questions asked at or after this instant (RFC 3339).
    #[arg(long)]
    pub since: Option<String>,
    /// Questions asked before this instant (RFC 3339).
    #[arg(long)]
    pub until: Option<String>,
    /// How to write it.
    #[arg(long, value_enum, default_value_t = Format::Jsonl)]
    pub format: Format,
    /// Bundles fetched a request.
    #[arg(long, default_value_t = 1000, hide = true,
          value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub page_size: u16,
}

/// Runs `clarify audit`: every page, in order; the CSV header once.
pub async fn run(args: AuditArgs) -> ExitCode {
    match export(&args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            let _ = writeln!(std::io::stderr(), "clarify audit: {why}");
            ExitCode::FAILURE
        }
    }
}

async fn export(args: &AuditArgs) -> Result<(), String> {
    let http = reqwest::Client::new();
    let base = format!("{}/api/v1/audit", args.reach.server.trim_end_matches('/'));
    let format = match args.format {
        Format::Jsonl => "jsonl",
        Format::Csv => "csv",
    };
    let limit = args.page_size.to_string();
    let mut cursor = String::new();
    let mut out = std::io::stdout().lock();
    for page in 0.. {
        let mut query = vec![("format", format), ("limit", limit.as_str())];
        for (name, value) in [("since", &args.since), ("until", &args.until)] {
            if let Some(value) = value {
                query.push((name, value.as_str()));
            }
        }
        if !cursor.is_empty() {
            query.push(("cursor", cursor.as_str()));
        }
        let mut request = http.get(&base).query(&query);
        if let Some(token) = args.reach.token() {
            request = request.bearer_auth(token);
        }
        let response = request
            .send()
            .await
            .map_err(|_| format!("cannot reach {}", args.reach.server))?;
        let status = response.status();
        let next = response
            .headers()
            .get(crate::http::audit::NEXT_CURSOR)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let body = response
            .text()
            .await
            .map_err(|e| format!("the export broke off: {e}"))?;
        if !status.is_success() {
            return Err(format!("the server answered {status}: {}", body.trim()));
        }
        // Each CSV page repeats the header; the file has it once.
        let body = match (args.format, page) {
            (Format::Csv, 1..) => body.split_once('\n').map_or("", |(_, rest)| rest),
            _ => body.as_str(),
        };
        out.write_all(body.as_bytes())
            .map_err(|e| format!("cannot write: {e}"))?;
        if next.is_empty() {
            return Ok(());
        }
        cursor = next;
    }
    Ok(())
}
