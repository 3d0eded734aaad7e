//! Slack's request signatures (issue 28): the HTTP Request URL mode's
//! presses are signed with the app's signing secret, HMAC-SHA256 over
//! `v0:{timestamp}:{body}`, five minutes at most.

use hmac::{KeyInit as _, Mac as _};

/// The oldest signed request taken, in seconds (Slack's own advice).
pub const MAX_AGE_SECONDS: i64 = 5 * 60;

/// Why a request to the interactions endpoint was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unsigned {
    /// No timestamp, or not a number.
    #[error("X-Slack-Request-Timestamp: missing or not a number")]
    NoTimestamp,
    /// Older (or newer) than five minutes: a replay.
    #[error("X-Slack-Request-Timestamp: more than five minutes away")]
    Stale,
    /// The signature is missing or does not match.
    #[error("X-Slack-Signature: does not match")]
    BadSignature,
}

/// Checks a request Slack signed with `secret` (constant time), and
/// returns the request's replay key: the signature as bytes, `v0=` and
/// lower-case hex, so that the same request with its hex re-cased (or its
/// timestamp written `0…`) is the same key (issue 45 item 7-P3).
///
/// # Errors
/// Which check failed.
pub fn verify(
    secret: &str,
    timestamp: &str,
    body: &[u8],
    signature: &str,
    now_seconds: i64,
) -> Result<String, Unsigned> {
    let at: i64 = timestamp
        .trim()
        .parse()
        .map_err(|_| Unsigned::NoTimestamp)?;
    if (now_seconds - at).abs() > MAX_AGE_SECONDS {
        return Err(Unsigned::Stale);
    }
    let given = signature
        .strip_prefix("v0=")
        .and_then(|hex_text| hex::decode(hex_text).ok())
        .ok_or(Unsigned::BadSignature)?;
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes())
        .map_err(|_| Unsigned::BadSignature)?;
    mac.update(format!("v0:{at}:").as_bytes());
    mac.update(body);
    mac.verify_slice(&given)
        .map_err(|_| Unsigned::BadSignature)?;
    Ok(format!("v0={}", hex::encode(given)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sign(secret: &str, at: i64, body: &str) -> String {
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
        mac.update(format!("v0:{at}:{body}").as_bytes());
        format!("v0={}", hex::encode(mac.finalize().into_bytes()))
    }

    #[test]
    fn only_a_fresh_request_signed_with_the_secret_passes() {
        let body = "payload=%7B%7D";
        let good = sign("s3cret", 1_000, body);
        assert_eq!(
            verify("s3cret", "1000", body.as_bytes(), &good, 1_100),
            Ok(good.clone())
        );
        // One request, however its signature's hex is cased, is one key.
        let shouted = format!("v0={}", good["v0=".len()..].to_uppercase());
        assert_eq!(
            verify("s3cret", "01000", body.as_bytes(), &shouted, 1_100),
            Ok(good.clone())
        );
        assert_eq!(
            verify("other", "1000", body.as_bytes(), &good, 1_100),
            Err(Unsigned::BadSignature)
        );
        assert_eq!(
            verify("s3cret", "1000", b"payload=%7B%7D ", &good, 1_100),
            Err(Unsigned::BadSignature),
            "the raw body is what is signed"
        );
        assert_eq!(
            verify("s3cret", "1000", body.as_bytes(), &good, 1_000 + 301),
            Err(Unsigned::Stale)
        );
        assert_eq!(
            verify("s3cret", "x", body.as_bytes(), &good, 1_000),
            Err(Unsigned::NoTimestamp)
        );
        assert_eq!(
            verify("s3cret", "1000", body.as_bytes(), "v1=00", 1_000),
            Err(Unsigned::BadSignature)
        );
    }
}
