//! `fake-drand <port>`: a drand chain (quicknet's scheme, 3 s rounds) as a process on 127.0.0.1,
//! for the production-mode server of the browser journeys (`scripts/e2e.sh`). Prints the shop's
//! settings for it as `VAR=value` lines, then serves until SIGTERM or Ctrl-C.

use anyhow::Context;
use fakes::drand::{FakeDrand, Scheme};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    fakes::init_logs();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [port] = args.as_slice() else {
        anyhow::bail!("usage: fake-drand <port>");
    };
    let port: u16 = port.parse().context("the port")?;
    let fake = FakeDrand::start_on(port, Scheme::Quicknet, 3, b"fake-drand").await?;
    println!("SECKILL_DRAND_URL={}", fake.url());
    println!("SECKILL_DRAND_CHAIN_HASH={}", fake.chain_hash());
    println!("SECKILL_DRAND_PUBLIC_KEY={}", fake.public_key());
    tracing::info!(url = %fake.url(), "fake drand listening");
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    Ok(())
}
