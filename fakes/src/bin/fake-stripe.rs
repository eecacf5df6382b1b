//! `fake-stripe <port> <webhook url> <webhook secret>`: the Stripe stand-in as a process on
//! 127.0.0.1, for the browser journeys (`scripts/e2e.sh`). Stops on SIGTERM or Ctrl-C.

use anyhow::Context;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    fakes::init_logs();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [port, webhook, secret] = args.as_slice() else {
        anyhow::bail!("usage: fake-stripe <port> <webhook url> <webhook secret>");
    };
    let port: u16 = port.parse().context("the port")?;
    let fake = fakes::stripe::FakeStripe::start_on(port, secret).await?;
    fake.set_webhook(webhook);
    tracing::info!(base = %fake.base(), %webhook, "fake Stripe listening");
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    Ok(())
}
