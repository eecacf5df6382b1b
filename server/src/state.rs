//! [`AppState`]: what every handler can reach.

use std::sync::Arc;

use axum::extract::FromRef;
use leptos::config::LeptosOptions;
use metrics_exporter_prometheus::PrometheusHandle;
use seckill::Core;

use webapi::http::SessionCookie;

use crate::streams::StreamSlots;

/// The router's state: Leptos's options, the core handles and the metrics recorder. One shared
/// allocation: axum clones the state into every request.
#[derive(Clone)]
pub struct AppState(Arc<Parts>);

/// What an [`AppState`] holds.
pub struct Parts {
    pub leptos_options: LeptosOptions,
    pub core: Core,
    pub metrics: Option<PrometheusHandle>,
    pub streams: StreamSlots,
    /// The session cookie's form (secure when the shop is served over HTTPS only).
    pub cookie: SessionCookie,
}

impl AppState {
    pub fn new(
        leptos_options: LeptosOptions,
        core: Core,
        metrics: Option<PrometheusHandle>,
        streams: StreamSlots,
        cookie: SessionCookie,
    ) -> Self {
        Self(Arc::new(Parts {
            leptos_options,
            core,
            metrics,
            streams,
            cookie,
        }))
    }
}

impl std::ops::Deref for AppState {
    type Target = Parts;

    fn deref(&self) -> &Parts {
        &self.0
    }
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos_options.clone()
    }
}

impl FromRef<AppState> for Core {
    fn from_ref(state: &AppState) -> Self {
        state.core.clone()
    }
}

impl FromRef<AppState> for StreamSlots {
    fn from_ref(state: &AppState) -> Self {
        state.streams.clone()
    }
}

impl FromRef<AppState> for SessionCookie {
    fn from_ref(state: &AppState) -> Self {
        state.cookie
    }
}
