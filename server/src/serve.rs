//! The accept loop: every connection gets a header-read timeout (a slow or idle client is
//! closed), the number of connections is capped, and shutdown lets in-flight requests finish.
//!
//! `axum::serve` sets none of these; hyper's own connection builder does, given a timer.

use std::{sync::Arc, time::Duration};

use axum::{body::Body, Router};
use hyper::body::Incoming;
use hyper_util::{
    rt::{TokioExecutor, TokioIo, TokioTimer},
    server::{conn::auto::Builder, graceful::GracefulShutdown},
    service::TowerToHyperService,
};
use seckill::config::HttpConfig;
use tokio::{net::TcpListener, sync::Semaphore};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// How long shutdown waits for open connections to finish their requests.
const DRAIN: Duration = Duration::from_secs(30);

/// Serves `router` on `listener` until `shutdown`, then drains open connections.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: &HttpConfig,
    shutdown: CancellationToken,
) {
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        // hyper starts this clock whenever it waits for a request head, so it bounds a
        // trickling head and an idle keep-alive connection alike.
        .header_read_timeout(limits.header_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(limits.header_timeout)
        .keep_alive_timeout(limits.header_timeout);
    let builder = Arc::new(builder);
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let graceful = GracefulShutdown::new();
    loop {
        // At the cap, stop accepting: new connections wait in the kernel's backlog.
        let permit = tokio::select! {
            () = shutdown.cancelled() => break,
            p = slots.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
        };
        let accepted = tokio::select! {
            () = shutdown.cancelled() => break,
            a = listener.accept() => a,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors and the like: pause rather than spin.
                tracing::warn!(error = %e, "accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(
            router
                .clone()
                .map_request(|req: http::Request<Incoming>| req.map(Body::new)),
        );
        let builder = builder.clone();
        let conn = builder
            .serve_connection_with_upgrades(TokioIo::new(stream), service)
            .into_owned();
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    if tokio::time::timeout(DRAIN, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("open connections did not finish within {DRAIN:?}");
    }
}
