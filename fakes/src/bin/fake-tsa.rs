//! `fake-tsa <port>`: an RFC 3161 timestamping authority (OpenSSL's own, with a key and
//! certificate made at start) as a process on 127.0.0.1, for the production-mode server of the
//! browser journeys (`scripts/e2e.sh`). Prints the shop's setting for it and the authority's
//! certificate as `VAR=value` lines, then serves until SIGTERM or Ctrl-C.

use anyhow::Context;
use fakes::tsa::FakeTsa;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    fakes::init_logs();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [port] = args.as_slice() else {
        anyhow::bail!("usage: fake-tsa <port>");
    };
    let port: u16 = port.parse().context("the port")?;
    let fake = FakeTsa::start_on(port).await?;
    println!("SECKILL_DRAW_TSA_URL={}", fake.url());
    println!("TSA_CERTIFICATE={}", fake.certificate().display());
    tracing::info!(url = %fake.url(), "fake timestamping authority listening");
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    Ok(())
}
