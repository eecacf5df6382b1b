//! Before the rush: the release server started on a scratch database, shoppers signed in, a
//! sale that opens shortly, and every connection warmed as browsers would have loaded the page.

use std::{sync::Arc, time::Duration};

use anyhow::Context;
use chrono::{DateTime, Utc};
use futures::StreamExt;
use seckill::domain::VoucherId;

use super::{
    process::{Profiler, Server},
    Scenario,
};
use crate::{scratch::Scratch, Options};

/// The shoppers' HTTP client: `conns` keep-alive connections, no Nagle delay.
pub fn load_client(conns: usize) -> anyhow::Result<reqwest::Client> {
    Ok(reqwest::Client::builder()
        .pool_max_idle_per_host(conns)
        .tcp_nodelay(true)
        .timeout(Duration::from_secs(30))
        .build()?)
}

/// A sale of `stock` units that opens shortly (the shoppers are already waiting), and when it
/// opens.
pub async fn sale(scratch: &Scratch, stock: usize) -> anyhow::Result<(VoucherId, DateTime<Utc>)> {
    let voucher = scratch
        .voucher(stock, chrono::Duration::milliseconds(1_500))
        .await?;
    let begins = seckill::testing::store::vouchers::get(&scratch.core.db, voucher)
        .await?
        .context("voucher")?
        .window
        .begins_at();
    Ok((voucher, begins))
}

/// Sleeps until `at`.
pub async fn sleep_until(at: DateTime<Utc>) {
    let wait = (at - Utc::now()).to_std().unwrap_or_default();
    tokio::time::sleep(wait).await;
}

/// Everything a rush needs, ready.
pub struct Stage {
    pub server: Server,
    pub client: reqwest::Client,
    /// One session token per shopper.
    pub tokens: Arc<Vec<String>>,
    pub voucher: VoucherId,
    begins: DateTime<Utc>,
    profiler: Option<Profiler>,
}

impl Stage {
    /// Starts the server, signs the shoppers in, creates the sale and warms the connections.
    pub async fn prepare(
        options: &Options,
        sc: &Scenario,
        scratch: &Scratch,
    ) -> anyhow::Result<Self> {
        let server = Server::start(&scratch.env).await?;
        let users = scratch.users(sc.shoppers).await?;
        let tokens = Arc::new(scratch.sessions(&users).await?);
        let (voucher, begins) = sale(scratch, sc.stock).await?;
        let client = load_client(sc.conns)?;
        // Not measured: one request per connection, so the rush measures buying, not handshakes.
        futures::stream::iter(0..sc.conns)
            .map(|_| client.get(format!("{}/api/health", server.base)).send())
            .buffer_unordered(sc.conns)
            .for_each(|_| async {})
            .await;
        // After the warm-up (each `/api/health` reads both stores): the profile is the rush's.
        let profiler = if options.profile {
            Some(Profiler::start(server.pid())?)
        } else {
            None
        };
        Ok(Self {
            server,
            client,
            tokens,
            voucher,
            begins,
            profiler,
        })
    }

    /// Sleeps until the sale opens.
    pub async fn wait_for_opening(&self) {
        sleep_until(self.begins).await;
    }

    /// Stops the profiler, if one runs; returns the top of its report.
    pub fn stop_profiler(&mut self) -> anyhow::Result<Vec<String>> {
        match self.profiler.take() {
            Some(p) => p.stop(),
            None => Ok(Vec::new()),
        }
    }
}
