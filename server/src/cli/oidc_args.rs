//! `clarify serve`'s flags for sign-in with the team's OpenID provider
//! (issue 49 item 3), and the checks that they make sense together.

use clap::Args;

use crate::oidc::{CALLBACK_PATH, Settings};

/// The provider browsers sign in with, besides pasting a token.
#[derive(Args, Debug, Clone, Default)]
pub struct OidcArgs {
    /// Let people sign in with this OpenID Connect provider (its issuer
    /// URL); needs --auth, --public-url and --oidc-client-id. Register
    /// PUBLIC_URL/api/v1/auth/oidc/callback as the redirect URI; the client
    /// secret is read from CLARIFY_OIDC_CLIENT_SECRET only.
    #[arg(long, value_name = "URL", env = "CLARIFY_OIDC_ISSUER")]
    pub oidc_issuer: Option<String>,

    /// This server's client id at the --oidc-issuer.
    #[arg(long, value_name = "ID", env = "CLARIFY_OIDC_CLIENT_ID")]
    pub oidc_client_id: Option<String>,
}

impl OidcArgs {
    /// The provider's settings, `None` when no issuer is given; the secret
    /// is `CLARIFY_OIDC_CLIENT_SECRET`'s (never a flag: flags show in the
    /// process list).
    ///
    /// # Errors
    /// A message naming what is missing.
    pub fn settings(
        &self,
        auth: bool,
        public_url: Option<&str>,
    ) -> Result<Option<Settings>, String> {
        let Some(issuer) = self.oidc_issuer.clone().filter(|i| !i.is_empty()) else {
            if self.oidc_client_id.is_some() {
                return Err("--oidc-client-id needs --oidc-issuer".into());
            }
            return Ok(None);
        };
        if !auth {
            return Err(
                "--oidc-issuer needs --auth: signing in is for servers that know their users"
                    .into(),
            );
        }
        let Some(public_url) = public_url.filter(|u| !u.is_empty()) else {
            return Err(format!(
                "--oidc-issuer needs --public-url: the provider sends browsers back to PUBLIC_URL{CALLBACK_PATH}"
            ));
        };
        let client_id = self
            .oidc_client_id
            .clone()
            .filter(|id| !id.is_empty())
            .ok_or(
                "--oidc-issuer needs --oidc-client-id: this server's client id at the provider",
            )?;
        let client_secret = std::env::var("CLARIFY_OIDC_CLIENT_SECRET")
            .ok()
            .filter(|s| !s.is_empty())
            .map(crate::ids::Secret);
        Ok(Some(Settings {
            issuer,
            client_id,
            client_secret,
            redirect_uri: format!("{}{CALLBACK_PATH}", public_url.trim_end_matches('/')),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::OidcArgs;

    #[test]
    fn the_redirect_uri_is_the_public_url_and_the_callback_path() {
        let args = OidcArgs {
            oidc_issuer: Some("https://id.example.com".into()),
            oidc_client_id: Some("clarify".into()),
        };
        for public in ["https://c.example.com", "https://c.example.com/"] {
            let settings = args.settings(true, Some(public)).unwrap().unwrap();
            assert_eq!(
                settings.redirect_uri,
                "https://c.example.com/api/v1/auth/oidc/callback"
            );
        }
        assert!(OidcArgs::default().settings(false, None).unwrap().is_none());
        let orphan = OidcArgs {
            oidc_client_id: Some("clarify".into()),
            ..OidcArgs::default()
        };
        assert_eq!(
            orphan.settings(true, None).unwrap_err(),
            "--oidc-client-id needs --oidc-issuer"
        );
    }
}
