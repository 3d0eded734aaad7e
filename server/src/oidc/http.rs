//! The HTTP client `openidconnect` calls the provider through: the
//! webhooks' guarded, bounded client (issue 49 item 3), never one of the
//! library's own, which would read an answer of any size for any time.

use std::future::Future;
use std::pin::Pin;

use openidconnect::{AsyncHttpClient, HttpRequest, HttpResponse};

use crate::resume::{Sent, Webhooks};

/// The provider could not be asked: its address is one the network policy
/// refuses, or it did not answer within the bounds.
#[derive(Debug, thiserror::Error)]
pub enum Unreached {
    /// `--allow-webhook-network` does not admit its address.
    #[error("its address is not one the server may reach (admit it with --allow-webhook-network)")]
    Refused,
    /// No answer in time, or too long a one.
    #[error("no answer in time, or too long a one")]
    Failed,
}

/// The guarded client, as `openidconnect` calls it.
#[derive(Debug, Clone)]
pub struct Http(pub Webhooks);

impl<'c> AsyncHttpClient<'c> for Http {
    type Error = Unreached;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, Unreached>> + Send + 'c>>;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(async move {
            self.0
                .exchange(request, "OpenID provider")
                .await
                .map_err(|sent| match sent {
                    Sent::Refused => Unreached::Refused,
                    Sent::Accepted | Sent::Failed => Unreached::Failed,
                })
        })
    }
}
