//! The accept loop: every connection gets a header-read timeout (a slow or idle client is
//! closed) and a write timeout (a client that stops reading is closed), the number of
//! connections is capped, every request learns its client's address ([`ClientAddr`]), and
//! shutdown lets in-flight requests finish.
//!
//! `axum::serve` sets none of these; hyper's own connection builder does, given a timer. The
//! connections are HTTP/1.1 only: hyper-util's HTTP/1-or-2 builder reads for an HTTP/2 preface
//! before hyper's HTTP/1 timer exists, so a client that connects and sends nothing was never
//! timed out (measured: 1,000 silent connections still open after the timeout), and browsers
//! speak HTTP/2 only over TLS, which a proxy in front terminates.

use std::{sync::Arc, time::Duration};

use crate::{client::TrustedProxies, settings::HttpConfig, write_timeout::WriteTimeout};
use axum::{body::Body, Router};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::{
    rt::{TokioIo, TokioTimer},
    server::graceful::GracefulShutdown,
    service::TowerToHyperService,
};
use tokio::{net::TcpListener, sync::Semaphore};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;
use webapi::http::ClientAddr;

/// How long shutdown waits for open connections to finish their requests, and then for the
/// background jobs to stop.
pub const DRAIN: Duration = Duration::from_secs(30);

/// Serves `router` on `listener` until `shutdown`, then drains open connections.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: &HttpConfig,
    trusted: TrustedProxies,
    shutdown: CancellationToken,
) {
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        // hyper starts this clock whenever it waits for a request head, so it bounds a silent
        // or trickling client and an idle keep-alive connection alike.
        .header_read_timeout(limits.header_timeout);
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
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors and the like: pause rather than spin.
                tracing::warn!(error = %e, "accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let trusted = trusted.clone();
        let service = TowerToHyperService::new(router.clone().map_request(
            move |mut req: http::Request<Incoming>| {
                let client = trusted.client_of(peer.ip(), req.headers());
                req.extensions_mut().insert(ClientAddr(client));
                req.map(Body::new)
            },
        ));
        let builder = builder.clone();
        let io = TokioIo::new(WriteTimeout::new(stream, limits.write_timeout));
        let conn = graceful.watch(builder.serve_connection(io, service));
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
