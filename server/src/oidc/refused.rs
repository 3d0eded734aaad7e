//! Why a sign-in through the provider was refused, said to the person in
//! words that name what failed and leak nothing of the server (issue 49
//! item 3).

/// A sign-in refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// No sign-in was started in this browser, or it took too long.
    #[error(
        "state: no sign-in was started in this browser, or it took longer than 10 minutes; start again"
    )]
    NoPending,
    /// The `state` sent back is not the one this browser was given.
    #[error("state: does not match the sign-in this browser started; start again")]
    State,
    /// The provider said the person did not sign in (`error=` on the way back).
    #[error("the provider did not sign you in; start again")]
    Denied,
    /// The way back carried no code.
    #[error("code: missing")]
    NoCode,
    /// The way back named another issuer (RFC 9207 `iss`).
    #[error("iss: the answer came from another provider")]
    Issuer,
    /// The provider refused the code: used already, expired, or not ours.
    #[error("code: the provider refused it (used already or expired); start again")]
    Code,
    /// The provider's token answer held no ID token.
    #[error("id_token: the provider sent none")]
    NoIdToken,
    /// The ID token was made for another client.
    #[error("id_token: made for another client (aud)")]
    Audience,
    /// The ID token is not signed by the provider's keys.
    #[error("id_token: not signed by the provider's keys")]
    Signature,
    /// The ID token's nonce is not this sign-in's.
    #[error("id_token: the nonce is not this sign-in's")]
    Nonce,
    /// The ID token has expired.
    #[error("id_token: expired")]
    Expired,
    /// The ID token names another issuer, or is otherwise not valid.
    #[error("id_token: not valid for this server")]
    Invalid,
    /// The provider cannot be reached now.
    #[error("the identity provider cannot be reached now; try again later")]
    Unreachable,
    /// As many sign-ins as the server lets wait on the provider at once
    /// are waiting.
    #[error("too many sign-ins are waiting on the identity provider; try again in a moment")]
    Busy,
}

impl Refused {
    /// Whether the fault is the provider's being away (502), not the
    /// request's (400).
    #[must_use]
    pub fn is_unreachable(self) -> bool {
        matches!(self, Self::Unreachable)
    }
}
