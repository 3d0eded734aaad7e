//! A JSON body extractor whose rejections use the API's error shape, naming
//! the field serde could not read (`answers[0].custom_text: invalid type…`).

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use serde::de::DeserializeOwned;

use super::error::Error;

/// Like [`axum::Json`], but rejected with `{"error": …}`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Json<T>(pub T);

impl<T, S> FromRequest<S> for Json<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = Error;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(value)) => Ok(Self(value)),
            Err(rejection) => Err(rejection_error(&rejection)),
        }
    }
}

fn rejection_error(rejection: &JsonRejection) -> Error {
    let message = match rejection {
        // axum's text for these says what serde said, with the field's path.
        JsonRejection::JsonDataError(e) => format!(
            "invalid request body: {}",
            e.body_text()
                .trim_start_matches("Failed to deserialize the JSON body into the target type: ")
        ),
        JsonRejection::JsonSyntaxError(_) => "invalid request body: not valid JSON".to_owned(),
        JsonRejection::MissingJsonContentType(_) => {
            "invalid request body: expected Content-Type: application/json".to_owned()
        }
        _ if rejection.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE => {
            "request body too large".to_owned()
        }
        _ => "invalid request body".to_owned(),
    };
    Error::Status(rejection.status(), message)
}
