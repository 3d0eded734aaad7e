//! The web overlay's static files, embedded into the binary at build time.
//!
//! `build.rs` compiles `clarify-web` to wasm, runs wasm-bindgen (and
//! wasm-opt), and packs every file with a content hash in its name and
//! gzip and brotli copies; embedding the result keeps the server a single
//! file to deploy. Hashed names never change meaning, so browsers may keep
//! them for a year; the page itself is always revalidated.

use axum::{
    Router,
    extract::Path,
    http::header::{
        ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_SECURITY_POLICY, CONTENT_TYPE,
        VARY,
    },
    http::{HeaderMap, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    routing::get,
};

/// One packed file.
pub struct Asset {
    /// Where it is served, e.g. `/assets/clarify_web_bg-0123456789abcdef.wasm`.
    pub path: &'static str,
    pub content_type: &'static str,
    pub raw: &'static [u8],
    pub gzip: &'static [u8],
    pub brotli: &'static [u8],
}

include!(concat!(env!("OUT_DIR"), "/web/assets.rs"));

/// The overlay page's policy: our own scripts, wasm, styles and API
/// (WebSocket included, which `'self'` covers), nothing else.
pub const PAGE_CSP: &str = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; \
     form-action 'self'; frame-ancestors 'none'";

/// A hashed name's content never changes.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// The page names the current assets, so it must be fetched afresh.
const REVALIDATE: &str = "no-cache";

/// What the page says above everything else, read at each load: a
/// channel that is down (issue 48 item 4), as its status lines.
pub type Banner = std::sync::Arc<dyn Fn() -> Vec<String> + Send + Sync>;

/// Routes for the overlay: the page under every client-side path (with
/// `banner`'s lines above it, and a link to sign in with `provider` when
/// one is configured), and the packed files under `/assets`.
pub fn routes<S>(banner: Banner, provider: Option<&str>) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    let signin: std::sync::Arc<str> = provider.map(signin_link).unwrap_or_default().into();
    let page = move || {
        let banner = banner.clone();
        let signin = signin.clone();
        async move { page(&banner(), &signin) }
    };
    Router::new()
        .route("/", get(page.clone()))
        // Client-side routes: the page decides what to show from the URL.
        .route("/t/{id}", get(page.clone()))
        .route("/s/{id}", get(page.clone()))
        .route("/login", get(page))
        .route("/assets/{name}", get(asset))
}

/// The page, as every client-side path gets it.
pub async fn index() -> Response {
    page(&[], "")
}

/// The link to sign in with the team's identity provider (issue 49 item
/// 3): written by the server like the banner, so the overlay's wasm stays
/// within its budget; the stylesheet shows it only beside the login form.
fn signin_link(provider: &str) -> String {
    format!(
        "<p class=\"oidc-signin\"><a href=\"/api/v1/auth/oidc/start\" data-testid=\"oidc-signin\">\
         Sign in with {}</a></p>",
        html_escape::encode_text(provider)
    )
}

/// The page with `down`'s lines in a banner above the overlay: written by
/// the server, so it costs the overlay's wasm nothing, and seen on every
/// page, the login page included, until the channel is back and the page
/// is loaded again.
fn page(down: &[String], signin: &str) -> Response {
    let headers = [
        (CONTENT_TYPE, "text/html; charset=utf-8"),
        (CACHE_CONTROL, REVALIDATE),
        (CONTENT_SECURITY_POLICY, PAGE_CSP),
    ];
    if down.is_empty() && signin.is_empty() {
        return (headers, INDEX_HTML).into_response();
    }
    if down.is_empty() {
        let body = format!("<body>\n{signin}");
        return (headers, INDEX_HTML.replacen("<body>", &body, 1)).into_response();
    }
    let lines: String = down
        .iter()
        .map(|line| {
            format!(
                "<p class=\"banner offline\">{}</p>",
                html_escape::encode_text(line)
            )
        })
        .collect();
    let banner = format!(
        "<body>\n<div class=\"connection\" role=\"status\" data-testid=\"channels-down\">{lines}</div>{signin}"
    );
    (headers, INDEX_HTML.replacen("<body>", &banner, 1)).into_response()
}

async fn asset(Path(name): Path<String>, headers: HeaderMap) -> Response {
    let path = format!("/assets/{name}");
    let Some(asset) = ASSETS.iter().find(|a| a.path == path) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let accepted = headers
        .get(ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let (encoding, body) = match preferred_encoding(accepted) {
        Encoding::Brotli if !asset.brotli.is_empty() => (Some("br"), asset.brotli),
        Encoding::Brotli | Encoding::Gzip if !asset.gzip.is_empty() => (Some("gzip"), asset.gzip),
        _ => (None, asset.raw),
    };
    let mut response = (
        [
            (CONTENT_TYPE, asset.content_type),
            (CACHE_CONTROL, IMMUTABLE),
            (VARY, "accept-encoding"),
        ],
        body,
    )
        .into_response();
    if let Some(encoding) = encoding {
        response
            .headers_mut()
            .insert(CONTENT_ENCODING, HeaderValue::from_static(encoding));
    }
    response
}

/// A stored encoding the client takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Brotli,
    Gzip,
    Identity,
}

/// The smallest stored encoding `accept_encoding` allows: brotli, then
/// gzip, then none. `q=0` refuses one; `*` stands for any not named.
fn preferred_encoding(accept_encoding: &str) -> Encoding {
    let quality = |wanted: &str| {
        let mut star = None;
        for item in accept_encoding.split(',') {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or_default().trim();
            let q = parts
                .find_map(|p| p.trim().strip_prefix("q="))
                .map_or(Some(1.0), |q| q.trim().parse::<f32>().ok())
                .unwrap_or(0.0);
            if coding.eq_ignore_ascii_case(wanted) {
                return q;
            }
            if coding == "*" {
                star = Some(q);
            }
        }
        star.unwrap_or(0.0)
    };
    if quality("br") > 0.0 {
        Encoding::Brotli
    } else if quality("gzip") > 0.0 {
        Encoding::Gzip
    } else {
        Encoding::Identity
    }
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn a_channel_down_is_said_above_the_page_in_plain_text() {
        let response = super::page(&["<b>slack</b> is not connected".to_owned()], "");
        let body = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        let body = String::from_utf8(body.to_vec()).unwrap();
        assert!(body.contains("role=\"status\""), "{body}");
        assert!(
            body.contains("&lt;b&gt;slack&lt;/b&gt; is not connected"),
            "{body}"
        );
        assert_eq!(super::page(&[], "").status(), axum::http::StatusCode::OK);
    }

    use super::{Encoding, preferred_encoding};

    #[test]
    fn the_smallest_encoding_the_client_takes() {
        assert_eq!(
            preferred_encoding("gzip, deflate, br, zstd"),
            Encoding::Brotli
        );
        assert_eq!(preferred_encoding("gzip"), Encoding::Gzip);
        assert_eq!(preferred_encoding("br;q=0, gzip;q=0.5"), Encoding::Gzip);
        assert_eq!(preferred_encoding("BR"), Encoding::Brotli);
        assert_eq!(preferred_encoding("*"), Encoding::Brotli);
        assert_eq!(preferred_encoding("*;q=0, gzip"), Encoding::Gzip);
        assert_eq!(preferred_encoding(""), Encoding::Identity);
        assert_eq!(preferred_encoding("identity"), Encoding::Identity);
        assert_eq!(preferred_encoding("gzip;q=0"), Encoding::Identity);
    }
}
