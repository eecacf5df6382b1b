//! The islands' calls: the shop's REST API (`/api/…`, design.md §5) through the browser's
//! `fetch`, JSON both ways, errors read back as a [`Refusal`]: the [`AppError`] with the
//! server's own sentence for it (so a bundle carries no catalogue of them). The shoppers' bundle carries no
//! server-function client (design.md decision 36): each form stays a plain form posting to its
//! server function without JavaScript, and with it the island sends the same request here.
//! Browser only: the server renders islands but never runs their handlers.

use serde::{de::DeserializeOwned, Serialize};

use crate::{error::AppError, refusal::Refusal};

/// `GET path`, its JSON answer.
pub async fn get<T: DeserializeOwned>(path: &str) -> Result<T, Refusal> {
    call("GET", path, None).await
}

/// `POST path` without a body, its JSON answer.
pub async fn post<T: DeserializeOwned>(path: &str) -> Result<T, Refusal> {
    call("POST", path, None).await
}

/// `POST path` with `body` as JSON, its JSON answer.
pub async fn post_json<T: DeserializeOwned>(
    path: &str,
    body: &impl Serialize,
) -> Result<T, Refusal> {
    #[cfg(feature = "hydrate")]
    // serde_json's errors are not put in words: their `Display` alone would add 2.5 KB of
    // brotli (float formatting among it) to every bundle.
    let json = serde_json::to_string(body)
        .map_err(|_| Refusal::own(AppError::Transport("a request it could not write".into())))?;
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
) -> Result<T, Refusal> {
    use wasm_bindgen::{JsCast, JsValue};
    use wasm_bindgen_futures::JsFuture;

    // A failure of the browser's own (offline, a dropped connection): retried where it counts.
    fn transport(e: JsValue) -> Refusal {
        let why = e.as_string().unwrap_or_else(|| format!("{e:?}"));
        // For a developer, in the console; the page says it in its own language.
        leptos::logging::error!("a request did not get through: {why}");
        Refusal::own(AppError::Transport(why))
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
        return serde_json::from_str(&text).map_err(|_| {
            leptos::logging::error!("{method} {path}: an answer that is not the API's");
            Refusal::own(AppError::Transport("an answer it could not read".into()))
        });
    }
    Err(refusal(response.status(), &text))
}

#[cfg(not(feature = "hydrate"))]
async fn call<T: DeserializeOwned>(
    method: &str,
    path: &str,
    body: Option<String>,
) -> Result<T, Refusal> {
    let _ = (method, path, body);
    Err(Refusal::own(AppError::Unavailable))
}

/// An error answer: the API's `{"error","message"[,"fields"]}` with the server's sentence, or
/// (a proxy's page, a body cut short) what its status says, in the island's words.
#[cfg(feature = "hydrate")]
fn refusal(status: u16, body: &str) -> Refusal {
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
            let error = AppError::from_wire(&w.error, &w.message, fields);
            Refusal::said(error, w.message)
        }
        Err(_) if status == 429 => Refusal::own(AppError::RateLimited),
        Err(_) if status >= 500 => Refusal::own(AppError::Unavailable),
        Err(_) => Refusal::own(AppError::Transport(format!("HTTP {status}"))),
    }
}
