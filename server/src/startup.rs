//! Building and running the application: router, background tasks, graceful shutdown.

use std::net::SocketAddr;

use anyhow::Context;
use app::{shell, App};
use axum::{
    middleware,
    routing::{any, get},
    Router,
};
use leptos::{config::LeptosOptions, prelude::provide_context};
use leptos_axum::{generate_route_list, AxumRouteListing, LeptosRoutes};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use seckill::{catalog, Config, Core};
use tokio::net::TcpListener;
use tokio_util::{sync::CancellationToken, task::TaskTracker};

use crate::{
    body::{self, BodyRules},
    client::TrustedProxies,
    origin::{self, SiteOrigins},
    page_cache, refusals, rest, safety,
    screen::{self, BodyLimit},
    serve,
    settings::Settings,
    state::AppState,
    static_files,
    streams::StreamSlots,
};

/// A built application, bound to its port and ready to serve.
pub struct Application {
    listener: TcpListener,
    /// `/metrics`, on a listener of its own (`SECKILL_METRICS_ADDR`).
    metrics: Option<(TcpListener, Router)>,
    router: Router,
    core: Core,
    settings: Settings,
    shutdown: CancellationToken,
    tasks: TaskTracker,
}

impl Application {
    /// Connects, migrates, preloads live vouchers, starts the background jobs and binds the
    /// listener (port 0 picks a free port: tests use that).
    pub async fn build(config: Config, settings: Settings) -> anyhow::Result<Self> {
        Self::build_with(Core::connect(config).await?, settings).await
    }

    /// Like [`Application::build`] on an existing [`Core`] (tests bring their own database).
    pub async fn build_with(core: Core, settings: Settings) -> anyhow::Result<Self> {
        let addr = settings.site_addr;
        safety::check(&core.config, &settings)?;
        app::time::set_shop_zone(settings.time_zone);
        app::money::set_shop_currency(core.config.payments.currency.clone());
        prepare_stores(&core).await?;
        let listener = TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding {addr}"))?;
        let origins = SiteOrigins::new(&settings.public_origins, listener.local_addr()?);
        tracing::info!(origins = %origins.list(), "requests that change something are taken from these origins only");
        let options = leptos_options(addr)?;
        let pkg = std::path::Path::new(&*options.site_root).join(&*options.site_pkg_dir);
        let assets = static_files::Assets::load(&pkg)
            .with_context(|| format!("reading the site's static files in {}", pkg.display()))?;
        let (files, bytes) = assets.footprint();
        tracing::info!(files, bytes, dir = %pkg.display(), "static files in memory");
        let (router, state) = router(&core, &settings, origins, options, assets);
        let metrics = match settings.metrics_addr {
            Some(at) => {
                let listener = TcpListener::bind(at)
                    .await
                    .with_context(|| format!("binding {at} for /metrics (SECKILL_METRICS_ADDR)"))?;
                if !at.ip().is_loopback() {
                    tracing::warn!(%at, "/metrics is served on an address other than loopback");
                }
                let metrics = Router::new()
                    .route("/metrics", get(rest::metrics))
                    .with_state(state);
                Some((listener, metrics))
            }
            None => None,
        };
        let shutdown = CancellationToken::new();
        let tasks = TaskTracker::new();
        seckill::jobs::spawn_all(&core, &tasks, &shutdown)
            .await
            .context("starting the background jobs")?;
        Ok(Self {
            listener,
            metrics,
            router,
            core,
            settings,
            shutdown,
            tasks,
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// Where `/metrics` is served, if anywhere.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics
            .as_ref()
            .and_then(|(listener, _)| listener.local_addr().ok())
    }

    /// A token that stops the application when cancelled (tests; signals do it in production).
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    pub fn core(&self) -> &Core {
        &self.core
    }

    /// Serves until SIGINT/SIGTERM or the shutdown token: in-flight requests finish, then the
    /// background tasks drain (the worker settles the batch in hand).
    pub async fn run_until_stopped(self) -> anyhow::Result<()> {
        let addr = self.local_addr();
        tracing::info!("listening on http://{addr}");
        println!("seckill is serving on http://{addr}");
        let shutdown = self.shutdown.clone();
        tokio::spawn(signals(shutdown.clone()));
        if let Some((listener, router)) = self.metrics {
            if let Ok(at) = listener.local_addr() {
                tracing::info!("metrics on http://{at}/metrics");
            }
            let (limits, shutdown) = (self.settings.http.clone(), shutdown.clone());
            self.tasks.spawn(async move {
                serve::serve(
                    listener,
                    router,
                    &limits,
                    TrustedProxies::default(),
                    shutdown,
                )
                .await;
            });
        }
        serve::serve(
            self.listener,
            self.router,
            &self.settings.http,
            TrustedProxies::new(self.settings.trusted_proxies.clone()),
            shutdown.clone(),
        )
        .await;
        shutdown.cancel();
        self.tasks.close();
        let jobs = tokio::time::timeout(serve::DRAIN, self.tasks.wait());
        let (jobs, owned) = tokio::join!(jobs, self.core.stop_background(serve::DRAIN));
        if jobs.is_err() || !owned {
            tracing::warn!(after = ?serve::DRAIN, "background tasks did not stop in time");
        }
        tracing::info!("stopped");
        Ok(())
    }
}

/// Migrations, the durability check against Redis, and every live voucher preloaded.
async fn prepare_stores(core: &Core) -> anyhow::Result<()> {
    core.migrate().await?;
    core.check_durability()
        .await
        .context("checking Redis against SECKILL_DURABILITY")?;
    let loaded = catalog::preload_live(core, chrono::Utc::now())
        .await
        .context("preloading live vouchers")?;
    tracing::info!(vouchers = loaded, "live vouchers preloaded");
    Ok(())
}

/// Leptos's options (`Cargo.toml`'s metadata, overridden by `LEPTOS_*` variables), serving on
/// `addr`, with the static files' hashed names when a release build wrote them.
fn leptos_options(addr: SocketAddr) -> anyhow::Result<LeptosOptions> {
    let mut options = leptos::config::get_configuration(None)
        .context("leptos configuration")?
        .leptos_options;
    options.site_addr = addr;
    if let Some(bundle) = static_files::hashed_bundle(&options) {
        tracing::info!(%bundle, "static files under hashed names");
        options.output_name = bundle.into();
    }
    Ok(options)
}

/// The whole router: static files, the REST API, the Leptos pages and their 404 page, behind
/// the page cache, compression, refusals, body limits, tracing and the request screen; and the
/// state the metrics listener shares.
fn router(
    core: &Core,
    settings: &Settings,
    origins: SiteOrigins,
    options: LeptosOptions,
    assets: static_files::Assets,
) -> (Router, AppState) {
    let metrics = metrics_handle();
    let streams = StreamSlots::new(settings.http.streams_per_client);
    let cookie = origins.session_cookie();
    let state = AppState::new(options.clone(), core.clone(), metrics, streams, cookie);
    let with_core = {
        let core = core.clone();
        move || {
            provide_context(core.clone());
            provide_context(cookie);
        }
    };
    // The Leptos pages; a draw sale's page loads its own bundle, so it is marked before it
    // renders (a route layer: the API, static files and the 404 page never pass through it).
    let pages = Router::new()
        .leptos_routes_with_context(&state, routes(), with_core.clone(), {
            let options = options.clone();
            move || shell(options.clone())
        })
        .route_layer(middleware::from_fn_with_state(
            core.clone(),
            crate::page_sets::mark,
        ));
    let app = Router::new()
        // The site's static files from memory, precompressed, with conditional requests
        // (304s); the fallback below serves anything else under the site root.
        .nest_service(
            &format!("/{}", options.site_pkg_dir),
            static_files::router(assets),
        )
        .route("/draw-check.js", get(draw_check_script))
        .route("/lang", get(crate::localize::switch))
        .route("/api", any(rest::not_found))
        .route("/api/", any(rest::not_found))
        .nest("/api", rest::router().0)
        .merge(pages)
        // Static files, else the app's 404 page (which needs the core for its header).
        .fallback(leptos_axum::file_and_error_handler_with_context::<
            AppState,
            _,
        >(with_core, shell));
    (
        layers(app.with_state(state.clone()), core, settings, origins),
        state,
    )
}

/// The "Check this draw" page's script (`server/assets/draw-check.js`): plain JavaScript over
/// Web Crypto, a second implementation of the draw's rules beside the shop's Rust.
async fn draw_check_script() -> impl axum::response::IntoResponse {
    (
        [
            (
                axum::http::header::CONTENT_TYPE,
                "text/javascript; charset=utf-8",
            ),
            (axum::http::header::CACHE_CONTROL, "public, max-age=300"),
        ],
        include_str!("../assets/draw-check.js"),
    )
}

/// The layers around the whole router, innermost first, wrapped once: every request passes
/// through them, whatever it matched. Not `Router::layer`, which wraps each route's boxed
/// service in each layer, so that every request cloned a chain of boxes per layer (buys/s
/// 5-8% higher without it: BENCHMARKS.md, "The rush, sale by sale").
fn layers(app: Router, core: &Core, settings: &Settings, origins: SiteOrigins) -> Router {
    use tower::Layer;
    let http = &settings.http;
    let app = middleware::from_fn_with_state(
        page_cache::PageCache::new(core.clone(), settings.page_ttl, origins.session_cookie()),
        page_cache::pages,
    )
    .layer(app);
    // HTML not already encoded (signed-in pages; shared ones come gzipped from the page cache).
    // Not the JSON of the buy path, not streams, not static files (precompressed).
    let app = page_cache::compression().layer(app);
    let app = middleware::from_fn(refusals::refusal_status).layer(app);
    let app = middleware::from_fn_with_state(
        BodyRules {
            deadline: http.body_timeout,
            max_bytes: http.max_body_bytes,
        },
        body::whole_body,
    )
    .layer(app);
    // A 5xx here is a store out of reach (503) or an internal error, which the code that
    // produced it has logged with its cause; one line per request at WARN is enough.
    let app = tower_http::trace::TraceLayer::new_for_http()
        .on_failure(tower_http::trace::DefaultOnFailure::new().level(tracing::Level::WARN))
        .layer(app);
    // Before any body is read: a forged request is refused whole.
    let app = middleware::from_fn_with_state(origins, origin::same_site_only).layer(app);
    // Errors in the request's language, the refusals above included.
    let app = middleware::from_fn(crate::localize::errors).layer(app);
    let app =
        middleware::from_fn_with_state(BodyLimit(http.max_body_bytes), screen::screen).layer(app);
    Router::new().fallback_service(app)
}

/// The process's metrics recorder, installed by the first application; every later one in the
/// same process (tests) renders the same figures.
fn metrics_handle() -> Option<PrometheusHandle> {
    static HANDLE: std::sync::OnceLock<Option<PrometheusHandle>> = std::sync::OnceLock::new();
    HANDLE
        .get_or_init(|| PrometheusBuilder::new().install_recorder().ok())
        .clone()
}

async fn signals(shutdown: CancellationToken) {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => tracing::info!("SIGINT: shutting down"),
        () = term => tracing::info!("SIGTERM: shutting down"),
        () = shutdown.cancelled() => {}
    }
    shutdown.cancel();
}

/// The app's routes, listed once per process. Listing runs the app with every resource's load
/// suppressed by a flag that is process-wide (leptos_server's `SuppressResourceLoad`), and a
/// resource first polled while it is up stays pending for good (leptos issue #4773): a second
/// instance started in the same process while the first renders a page would hang that page.
/// One test run did (`/orders` never answered while other tests started their instances).
fn routes() -> Vec<AxumRouteListing> {
    static ROUTES: std::sync::LazyLock<Vec<AxumRouteListing>> =
        std::sync::LazyLock::new(|| generate_route_list(App));
    ROUTES.clone()
}
