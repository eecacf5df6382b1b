//! The seckill server.
//!
//! `server` (or `server serve`) migrates the database, preloads live vouchers into Redis,
//! starts the order worker and serves the UI and the REST API until SIGINT/SIGTERM.
//! `server migrate` only applies the migrations.

use anyhow::Context;
use seckill::Config;

// glibc's malloc/free were a fifth of the server's CPU under the rush (BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<()> {
    // Before the runtime's threads start and the heap grows (see server/src/memory.rs).
    let pages = server::memory::small_pages();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,sqlx=warn,tower_http=warn".into()),
        )
        .init();
    if let Err(e) = pages {
        tracing::warn!(error = %e, "transparent huge pages stay on: a sale's opening pays for the heap's growth in 2 MB pages");
    }
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?
        .block_on(run())
}

async fn run() -> anyhow::Result<()> {
    let config = Config::from_env().context("invalid configuration")?;
    match std::env::args().nth(1).as_deref() {
        None | Some("serve") => {
            let settings = server::Settings::from_env().context("invalid configuration")?;
            server::Application::build(config, settings)
                .await?
                .run_until_stopped()
                .await
        }
        Some("migrate") => {
            let core = seckill::Core::connect(config).await?;
            core.migrate().await?;
            tracing::info!("migrations applied");
            Ok(())
        }
        Some(other) => anyhow::bail!("unknown command {other:?}; use `serve` or `migrate`"),
    }
}
