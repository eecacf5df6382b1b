//! [`AppState`]: what every handler can reach.

use axum::extract::FromRef;
use leptos::config::LeptosOptions;
use metrics_exporter_prometheus::PrometheusHandle;
use seckill::Core;

/// The router's state: Leptos's options, the core handles and the metrics recorder.
#[derive(Clone, FromRef)]
pub struct AppState {
    pub leptos_options: LeptosOptions,
    pub core: Core,
    pub metrics: Option<PrometheusHandle>,
}
