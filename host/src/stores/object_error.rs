//! An object-store client's error as the WIT's `store-error`: its case from the error's kind,
//! its text one line with the error's sources, an XML error body cut down to code and message.

use super::StoreError;

pub(super) fn classify(
    error: object_store::Error,
    location: &str,
    endpoint: &str,
    credentials: &str,
) -> StoreError {
    match error {
        object_store::Error::NotFound { .. } => StoreError::NotFound(location.to_owned()),
        object_store::Error::PermissionDenied { source, .. }
        | object_store::Error::Unauthenticated { source, .. } => StoreError::Denied(format!(
            "{endpoint} refused the credentials from {credentials}: {}",
            chain(source.as_ref())
        )),
        other => {
            let text = chain(&other);
            let lower = text.to_ascii_lowercase();
            let unreachable = [
                "error sending request",
                "connect",
                "dns error",
                "timed out",
                "connection refused",
            ]
            .iter()
            .any(|needle| lower.contains(needle));
            if unreachable {
                StoreError::Unreachable(format!("endpoint {endpoint}: {text}"))
            } else {
                StoreError::Failed(text)
            }
        }
    }
}

/// An error and its sources, in one line.
fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        let more = inner.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = inner.source();
    }
    tidy(&text.replace('\n', " "))
}

/// An S3 or Azure XML error body shortened to its code and message.
fn tidy(text: &str) -> String {
    let field = |name: &str| {
        let open = format!("<{name}>");
        let start = text.find(&open)? + open.len();
        let end = text[start..].find('<')? + start;
        Some(text[start..end].to_owned())
    };
    match (
        text.find("<?xml").or_else(|| text.find("<Error>")),
        field("Code"),
    ) {
        (Some(at), Some(code)) => {
            let message = field("Message").unwrap_or_default();
            format!("{}{code}: {message}", &text[..at])
        }
        _ => text.to_owned(),
    }
}
