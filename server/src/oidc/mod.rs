//! Sign-in with the team's OpenID provider (issue 49 item 3): the
//! authorization code flow with PKCE (S256), through `openidconnect`.
//! [`Oidc::begin`] makes the way to the provider and what this browser must
//! bring back ([`Pending`]: state, nonce, PKCE verifier); [`Oidc::finish`]
//! checks the way back, exchanges the code with the verifier and verifies
//! the ID token (signature by the provider's keys, `iss`, `aud` = our client
//! id, nonce, expiry), returning who the provider vouches for. The provider
//! is found by discovery at start-up, or at the first sign-in when it could
//! not be reached then; its keys are fetched again when a token names one
//! they lack (rotation), at most once per [`KEYS_REFETCH_EVERY`].

mod http;
mod refused;

use std::sync::Arc;
use std::time::{Duration, Instant};

use openidconnect::core::{
    CoreAuthenticationFlow, CoreClient, CoreJsonWebKeySet, CoreProviderMetadata,
};
use openidconnect::{
    AuthorizationCode, ClaimsVerificationError, ClientId, ClientSecret, CsrfToken,
    EndpointMaybeSet, EndpointNotSet, EndpointSet, IssuerUrl, Nonce, PkceCodeChallenge,
    PkceCodeVerifier, RedirectUrl, RequestTokenError, Scope, SignatureVerificationError,
    TokenResponse as _,
};
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;

pub use http::Unreached;
pub use refused::Refused;

use crate::resume::Webhooks;

/// The path the provider sends the browser back to, under `--public-url`.
pub const CALLBACK_PATH: &str = "/api/v1/auth/oidc/callback";

/// How long a started sign-in may take at the provider.
pub const PENDING_FOR: Duration = Duration::from_secs(600);

/// The least time between two fetches of the provider's keys prompted by
/// tokens naming a key they lack: a stream of forged `kid`s cannot make
/// the server hammer the provider.
pub const KEYS_REFETCH_EVERY: Duration = Duration::from_secs(30);

/// How the provider was configured (`--oidc-issuer`, `--oidc-client-id`,
/// `CLARIFY_OIDC_CLIENT_SECRET`, the redirect under `--public-url`).
#[derive(Clone, Debug)]
pub struct Settings {
    /// The issuer URL, exactly as the provider names itself.
    pub issuer: String,
    /// This server's client id at the provider.
    pub client_id: String,
    /// Its secret; none for a public client (PKCE alone).
    pub client_secret: Option<crate::ids::Secret>,
    /// `--public-url` + [`CALLBACK_PATH`].
    pub redirect_uri: String,
}

/// What the browser must bring back from the provider, carried sealed in a
/// short-lived cookie of its own.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Pending {
    /// The `state` sent to the provider.
    pub state: String,
    /// The nonce the ID token must carry.
    pub nonce: String,
    /// The PKCE verifier whose S256 challenge the provider holds.
    pub verifier: String,
}

/// Who the provider vouches for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// The issuer.
    pub issuer: String,
    /// Its `sub`: the person, for as long as the provider lives.
    pub subject: String,
    /// `preferred_username`, else `email`, else `sub`: a name to show.
    pub name: String,
}

type Client = CoreClient<
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

/// What discovery found, with the keys as last fetched.
struct Found {
    metadata: CoreProviderMetadata,
    /// When a token naming an unknown key last made them fetched again.
    refetched: Option<Instant>,
}

/// The provider, as this server signs people in with it.
pub struct Oidc {
    settings: Settings,
    http: http::Http,
    found: Mutex<Option<Arc<Found>>>,
    /// Code exchanges waiting on the provider: anyone who reaches the port
    /// may start one (a sign-in needs no credential yet), each up to the
    /// client's 10 s, so they are bounded ([`EXCHANGES_AT_ONCE`]).
    exchanges: tokio::sync::Semaphore,
}

/// Code exchanges the server lets wait on the provider at once; beyond, a
/// sign-in is told to try again (429) and token logins go on.
pub const EXCHANGES_AT_ONCE: usize = 16;

impl std::fmt::Debug for Oidc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Oidc")
            .field("issuer", &self.settings.issuer)
            .finish_non_exhaustive()
    }
}

impl Oidc {
    /// The provider of `settings`, reached through `webhooks` (its client
    /// and network policy). Nothing is fetched yet: see [`Oidc::discover`].
    #[must_use]
    pub fn new(settings: Settings, webhooks: Webhooks) -> Self {
        Self {
            settings,
            http: http::Http(webhooks),
            found: Mutex::new(None),
            exchanges: tokio::sync::Semaphore::new(EXCHANGES_AT_ONCE),
        }
    }

    /// The issuer's host, to name the provider on the sign-in link.
    #[must_use]
    pub fn provider_name(&self) -> String {
        reqwest::Url::parse(&self.settings.issuer)
            .ok()
            .and_then(|url| url.host_str().map(str::to_owned))
            .unwrap_or_else(|| self.settings.issuer.clone())
    }

    /// The issuer URL.
    #[must_use]
    pub fn issuer(&self) -> &str {
        &self.settings.issuer
    }

    /// Reads the provider's discovery document and keys, unless already
    /// read.
    ///
    /// # Errors
    /// Why the provider could not be read, in words for the operator.
    pub async fn discover(&self) -> Result<(), String> {
        self.found().await.map(|_| ())
    }

    async fn found(&self) -> Result<Arc<Found>, String> {
        let mut found = self.found.lock().await;
        if let Some(done) = found.as_ref() {
            return Ok(done.clone());
        }
        let issuer = IssuerUrl::new(self.settings.issuer.clone())
            .map_err(|e| format!("--oidc-issuer: not a URL ({e})"))?;
        let metadata = CoreProviderMetadata::discover_async(issuer, &self.http)
            .await
            .map_err(|e| format!("--oidc-issuer: discovery failed: {}", describe(&e)))?;
        let done = Arc::new(Found {
            metadata,
            refetched: None,
        });
        *found = Some(done.clone());
        Ok(done)
    }

    fn client(&self, found: &Found) -> Result<Client, Refused> {
        let redirect =
            RedirectUrl::new(self.settings.redirect_uri.clone()).map_err(|_| Refused::Invalid)?;
        Ok(CoreClient::from_provider_metadata(
            found.metadata.clone(),
            ClientId::new(self.settings.client_id.clone()),
            self.settings
                .client_secret
                .as_ref()
                .map(|s| ClientSecret::new(s.0.clone())),
        )
        .set_redirect_uri(redirect))
    }

    /// The provider's authorization URL for a new sign-in, and what the
    /// browser must bring back.
    ///
    /// # Errors
    /// [`Refused::Unreachable`] when the provider cannot be discovered.
    pub async fn begin(&self) -> Result<(String, Pending), Refused> {
        let found = self.found().await.map_err(|error| {
            tracing::warn!(%error, "OpenID provider");
            Refused::Unreachable
        })?;
        let client = self.client(&found)?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let (url, state, nonce) = client
            .authorize_url(
                CoreAuthenticationFlow::AuthorizationCode,
                CsrfToken::new_random,
                Nonce::new_random,
            )
            .add_scope(Scope::new("profile".into()))
            .add_scope(Scope::new("email".into()))
            .set_pkce_challenge(challenge)
            .url();
        let pending = Pending {
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            verifier: verifier.secret().clone(),
        };
        Ok((url.into(), pending))
    }

    /// Exchanges `code` with `pending`'s verifier and verifies the ID
    /// token; the state was checked by the caller, against the cookie.
    ///
    /// # Errors
    /// [`Refused`], naming what failed.
    pub async fn finish(&self, code: &str, pending: &Pending) -> Result<Identity, Refused> {
        let _exchange = self.exchanges.try_acquire().map_err(|_| Refused::Busy)?;
        let found = self.found().await.map_err(|_| Refused::Unreachable)?;
        let client = self.client(&found)?;
        let answer = client
            .exchange_code(AuthorizationCode::new(code.to_owned()))
            .map_err(|_| Refused::Invalid)?
            .set_pkce_verifier(PkceCodeVerifier::new(pending.verifier.clone()))
            .request_async(&self.http)
            .await
            .map_err(|error| match error {
                RequestTokenError::ServerResponse(_) => Refused::Code,
                other => {
                    tracing::warn!(error = %other, "OpenID provider's token endpoint");
                    Refused::Unreachable
                }
            })?;
        let token = answer.id_token().ok_or(Refused::NoIdToken)?;
        let nonce = Nonce::new(pending.nonce.clone());
        let verified = match token.claims(&client.id_token_verifier(), &nonce) {
            Err(ClaimsVerificationError::SignatureVerification(
                SignatureVerificationError::NoMatchingKey,
            )) => {
                // A key the provider rotated in since the keys were read.
                let found = self.refetch_keys(&found).await?;
                let client = self.client(&found)?;
                let verifier = client.id_token_verifier();
                token
                    .claims(&verifier, &nonce)
                    .map(|claims| identity(&self.settings.issuer, claims))
            }
            other => other.map(|claims| identity(&self.settings.issuer, claims)),
        };
        verified.map_err(|error| {
            tracing::info!(%error, "an ID token refused");
            refusal(&error)
        })
    }

    /// The provider's keys fetched again, unless a token already made them
    /// fetched within [`KEYS_REFETCH_EVERY`] (then those are kept).
    async fn refetch_keys(&self, seen: &Arc<Found>) -> Result<Arc<Found>, Refused> {
        let mut found = self.found.lock().await;
        let current = found.clone().unwrap_or_else(|| seen.clone());
        if current
            .refetched
            .is_some_and(|at| at.elapsed() < KEYS_REFETCH_EVERY)
        {
            return Ok(current);
        }
        let keys = CoreJsonWebKeySet::fetch_async(current.metadata.jwks_uri(), &self.http)
            .await
            .map_err(|error| {
                tracing::warn!(error = %describe(&error), "OpenID provider's keys");
                Refused::Unreachable
            })?;
        let fresh = Arc::new(Found {
            metadata: current.metadata.clone().set_jwks(keys),
            refetched: Some(Instant::now()),
        });
        *found = Some(fresh.clone());
        Ok(fresh)
    }
}

fn identity(issuer: &str, claims: &openidconnect::core::CoreIdTokenClaims) -> Identity {
    let subject = claims.subject().as_str().to_owned();
    let name = claims
        .preferred_username()
        .map(|name| name.as_str().to_owned())
        .or_else(|| claims.email().map(|email| email.as_str().to_owned()))
        .unwrap_or_else(|| subject.clone());
    Identity {
        issuer: issuer.to_owned(),
        subject,
        name,
    }
}

/// What the person is told about a token the verifier refused.
fn refusal(error: &ClaimsVerificationError) -> Refused {
    match error {
        ClaimsVerificationError::InvalidAudience(_) => Refused::Audience,
        ClaimsVerificationError::InvalidNonce(_) => Refused::Nonce,
        ClaimsVerificationError::Expired(_) => Refused::Expired,
        ClaimsVerificationError::SignatureVerification(_) => Refused::Signature,
        _ => Refused::Invalid,
    }
}

/// A discovery error in words for the operator, its cause included.
fn describe(error: &dyn std::error::Error) -> String {
    let mut said = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        said.push_str(": ");
        said.push_str(&inner.to_string());
        cause = inner.source();
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resume::WebhookNetworks;

    /// Anyone who reaches the port may start a code exchange: beyond
    /// [`EXCHANGES_AT_ONCE`] waiting on a provider that does not answer,
    /// the next is refused at once rather than queued.
    #[tokio::test]
    async fn exchanges_waiting_on_the_provider_are_bounded() {
        let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let issuer = format!("http://{}", silent.local_addr().unwrap());
        let oidc = Arc::new(Oidc::new(
            Settings {
                issuer,
                client_id: "clarify".into(),
                client_secret: None,
                redirect_uri: "http://127.0.0.1:1/api/v1/auth/oidc/callback".into(),
            },
            Webhooks::new(WebhookNetworks::open()),
        ));
        let pending = Pending {
            state: "s".into(),
            nonce: "n".into(),
            verifier: "v".repeat(43),
        };
        let mut waiting = Vec::new();
        for _ in 0..EXCHANGES_AT_ONCE {
            let (oidc, pending) = (oidc.clone(), pending.clone());
            waiting.push(tokio::spawn(
                async move { oidc.finish("c", &pending).await },
            ));
        }
        while oidc.exchanges.available_permits() > 0 {
            tokio::task::yield_now().await;
        }
        assert_eq!(oidc.finish("c", &pending).await, Err(Refused::Busy));
        for one in waiting {
            one.abort();
        }
    }
}
