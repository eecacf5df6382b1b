//! The islands' calls: the shop's REST API (`/api/…`, design.md §5) through the browser's
//! `fetch`, JSON both ways, errors read back as [`AppError`]. The shoppers' bundle carries no
//! server-function client (design.md decision 36): each form stays a plain form posting to its
//! server function without JavaScript, and with it the island sends the same request here.
//! Browser only: the server renders islands but never runs their handlers.

use serde::{de::DeserializeOwned, Serialize};

use crate::error::AppError;

/// `GET path`, its JSON answer.
pub async fn get<T: DeserializeOwned>(path: &str) -> Result<T, AppError> {
    call("GET", path, None).await
}

/// `POST path` without a body, its JSON answer.
pub async fn post<T: DeserializeOwned>(path: &str) -> Result<T, AppError> {
    call("POST", path, None).await
}

/// `POST path` with `body` as JSON, its JSON answer.
pub async fn post_json<T: DeserializeOwned>(
    path: &str,
    body: &impl Serialize,
) -> Result<T, AppError> {
    #[cfg(feature = "hydrate")]
    let json = serde_json::to_string(body).map_err(|e| AppError::Transport(e.to_string()))?;
    #[cfg(not(feature = "hydrate"))]
    let json = {
        let _ = body;
        String::new()
    };
    call("POST", path, Some(json)).await
}

#[cfg(feature = "hydrate")]
async fn call<T: DeserializeOwned>(
    method: &str,
    path: &str,
    body: Option<String>,
) -> Result<T, AppError> {
    use wasm_bindgen::{JsCast, JsValue};
    use wasm_bindgen_futures::JsFuture;

    // A failure of the browser's own (offline, a dropped connection): retried where it counts.
    fn transport(e: JsValue) -> AppError {
        let why = e.as_string().unwrap_or_else(|| format!("{e:?}"));
        // For a developer, in the console; the page says it in its own language.
        leptos::logging::error!("a request did not get through: {why}");
        AppError::Transport(why)
    }

    let init = web_sys::RequestInit::new();
    init.set_method(method);
    let headers = web_sys::Headers::new().map_err(transport)?;
    headers
        .set("accept", "application/json")
        .map_err(transport)?;
    if let Some(json) = &body {
        headers
            .set("content-type", "application/json")
            .map_err(transport)?;
        init.set_body(&JsValue::from_str(json));
    }
    init.set_headers(&headers);
    let request = web_sys::Request::new_with_str_and_init(path, &init).map_err(transport)?;
    let answer = JsFuture::from(leptos::prelude::window().fetch_with_request(&request))
        .await
        .map_err(transport)?;
    let response: web_sys::Response = answer.dyn_into().map_err(transport)?;
    let text = JsFuture::from(response.text().map_err(transport)?)
        .await
        .map_err(transport)?
        .as_string()
        .unwrap_or_default();
    if response.ok() {
        return serde_json::from_str(&text).map_err(|e| AppError::Transport(e.to_string()));
    }
    let retry_after = response
        .headers()
        .get("retry-after")
        .ok()
        .flatten()
        .and_then(|s| s.trim().parse().ok());
    Err(refusal(response.status(), &text, retry_after))
}

#[cfg(not(feature = "hydrate"))]
async fn call<T: DeserializeOwned>(
    method: &str,
    path: &str,
    body: Option<String>,
) -> Result<T, AppError> {
    let _ = (method, path, body);
    Err(AppError::Unavailable)
}

/// An error answer: the API's `{"error","message"[,"fields"]}`, or (a proxy's page, a body
/// cut short) what its status says.
#[cfg(feature = "hydrate")]
fn refusal(status: u16, body: &str, retry_after: Option<u64>) -> AppError {
    #[derive(serde::Deserialize)]
    struct Wire {
        error: String,
        message: String,
        #[serde(default)]
        fields: std::collections::BTreeMap<String, String>,
    }
    match serde_json::from_str::<Wire>(body) {
        Ok(w) => {
            let mut fields = domain::FieldErrors::default();
            for (name, message) in &w.fields {
                fields.push(name, message.as_str());
            }
            AppError::from_wire(&w.error, &w.message, fields, retry_after)
        }
        Err(_) if status == 429 => AppError::RateLimited,
        Err(_) if status >= 500 => AppError::Unavailable,
        Err(_) => AppError::Transport(format!("HTTP {status}")),
    }
}
