//! Fault drills: real faults during a rush, then the invariants. Each drill runs a paced rush
//! (shoppers arriving over a few seconds, retrying through failures, as real clients do) against
//! a release server in a child process, and in the middle of it:
//!
//! - **server**: `kill -9` of the server, three times, each restarted on its port (its queue
//!   consumer resumes its own pending entries);
//! - **postgres**: PostgreSQL stopped (fast shutdown) for 30 s, then started;
//! - **redis**: `kill -9` of Redis, started again a second later from its AOF, the server asking
//!   for `SECKILL_DURABILITY=fsync`: under `everysec` Redis answers writes it has not handed to
//!   the kernel yet whenever its last fsync is still running (a busy disk), and a kill then loses
//!   them (design.md decision 10). Redis comes back with the local services' own `everysec`,
//!   which the server must set to `always` again;
//! - **after the rush** ([`aftercare`]): a third of the buyers cancel, a third pay, a third
//!   never pay, while the server is killed twice; the extended I1 at quiescence.
//!
//! Then every returned order ID must be final within 10 s of the recovery (or of the rush's
//! end, when the rush outlasts the fault), and I1–I4 must hold. The stores are the project's
//! local services (`scripts/services.sh`, which the drills drive), so the drills refuse to run
//! against any other.

mod aftercare;
pub mod failover;
mod local;
mod sales_check;
pub(crate) mod shoppers;

use std::{sync::Arc, time::Duration};

use anyhow::bail;
use tokio::time::Instant;

use self::{
    local::{appendfsync, local_services_only, redis_answers, services, set_appendfsync},
    shoppers::Arrival,
};
use crate::{
    report::Report,
    rush::{measure, process::Server, Scenario},
    scratch::Scratch,
    Options,
};

#[derive(Debug, Clone, Copy)]
enum Fault {
    KillServer,
    StopPostgres,
    KillRedis,
    KillAfterTheRush,
}

impl Fault {
    const ALL: [Self; 3] = [Self::KillServer, Self::StopPostgres, Self::KillRedis];

    fn describe(self) -> &'static str {
        match self {
            Self::KillServer => "server killed with kill -9 three times during the rush",
            Self::StopPostgres => "PostgreSQL stopped for 30 s during the rush",
            Self::KillRedis => {
                "Redis (SECKILL_DURABILITY=fsync) killed with kill -9 and restarted from its AOF and its own setting (everysec)"
            }
            Self::KillAfterTheRush => {
                "after the rush: a third cancel, a third pay, a third never pay (4 s deadline); server killed with kill -9 twice meanwhile"
            }
        }
    }
}

/// How long PostgreSQL stays down.
const PG_OUTAGE: Duration = Duration::from_secs(30);
/// Every returned order ID must be final this soon after the recovery.
const FINAL_WITHIN: Duration = Duration::from_secs(10);

/// What one drill saw.
struct Drilled {
    fault: Fault,
    sc: Scenario,
    answers: shoppers::Answers,
    /// (what, seconds) of each recovery step.
    recovery: Vec<(String, f64)>,
    /// From the recovery to the last order final.
    final_after: Option<f64>,
    violations: Vec<String>,
}

pub async fn run(options: &Options) -> anyhow::Result<()> {
    local_services_only()?;
    let mut drilled = Vec::new();
    for fault in Fault::ALL {
        println!("drill: {}", fault.describe());
        drilled.push(drill(options, fault).await?);
    }
    println!("drill: {}", Fault::KillAfterTheRush.describe());
    let scratch = Scratch::new("drill").await?;
    let after = aftercare::run(options, &scratch).await;
    scratch.cleanup().await?;
    drilled.push(after?);
    let broken: Vec<String> = drilled
        .iter()
        .flat_map(|d| {
            d.violations
                .iter()
                .map(move |v| format!("{:?}: {v}", d.fault))
        })
        .collect();
    publish(options, &drilled)?;
    if !broken.is_empty() {
        bail!("invariants broken: {}", broken.join("; "));
    }
    Ok(())
}

async fn drill(options: &Options, fault: Fault) -> anyhow::Result<Drilled> {
    let scratch = Scratch::new("drill").await?;
    let result = drill_on(options, fault, &scratch).await;
    // A drill that failed half-way may have left a store down.
    services("redis-start")?;
    services("pg-start")?;
    if matches!(fault, Fault::KillRedis) {
        // The local services' own setting again, for what runs after the drill.
        redis_answers(&scratch).await?;
        set_appendfsync(&scratch, "everysec").await?;
    }
    scratch.cleanup().await?;
    result
}

async fn drill_on(options: &Options, fault: Fault, scratch: &Scratch) -> anyhow::Result<Drilled> {
    let (shoppers, stock, rush_secs) = if options.quick {
        (3_000, 2_000, 4.0)
    } else {
        (6_000, 4_000, 6.0)
    };
    let sc = Scenario {
        shoppers: options.shoppers.unwrap_or(shoppers),
        stock: options.stock.unwrap_or(stock),
        conns: options.conns.unwrap_or(50),
        rate: None,
    };
    let Opened {
        mut server,
        port,
        tokens,
        voucher,
        client,
    } = open_sale(scratch, &server_env(scratch, fault), &sc).await?;

    let started = Instant::now();
    let rush = tokio::spawn(shoppers::buy_all(
        client.clone(),
        server.base.clone(),
        voucher,
        tokens.clone(),
        Arrival {
            conns: sc.conns,
            pace: Duration::from_secs_f64(sc.conns as f64 * rush_secs / sc.shoppers as f64),
            deadline: started + Duration::from_secs(120),
        },
    ));
    let mut recovery = Vec::new();
    tokio::time::sleep_until(started + Duration::from_secs(1)).await;
    match fault {
        Fault::KillServer => {
            for k in 1..=3 {
                server.kill9();
                let down = Instant::now();
                server = Server::start_on(&server_env(scratch, fault), port).await?;
                recovery.push((format!("kill {k} → healthy"), down.elapsed().as_secs_f64()));
                tokio::time::sleep(Duration::from_millis(700)).await;
            }
        }
        Fault::StopPostgres => {
            services("pg-stop")?;
            tokio::time::sleep(PG_OUTAGE).await;
            services("pg-start")?;
        }
        Fault::KillRedis => {
            services("redis-kill")?;
            tokio::time::sleep(Duration::from_secs(1)).await;
            services("redis-start")?;
        }
        Fault::KillAfterTheRush => bail!("the drill after the rush runs on its own (aftercare)"),
    }
    let recovered = Instant::now();
    // This process's own connections saw the fault too: the first command after a drop reports
    // it, then the connection manager reconnects.
    redis_answers(scratch).await?;
    if !matches!(fault, Fault::KillServer) {
        recovery.push((
            "store back → server healthy".into(),
            healthy_after(&client, &server.base).await?,
        ));
    }
    recovery.push((
        "→ queue caught up".into(),
        caught_up_after(&client, &server.base, recovered).await?,
    ));
    let answers = rush.await??;
    let due = recovered.max(Instant::now()) + FINAL_WITHIN;
    let mut violations = Vec::new();
    let statuses = match measure::poll_until(
        &client,
        &server.base,
        &tokens,
        &answers.admitted,
        sc.conns,
        due,
    )
    .await
    {
        Ok(s) => s,
        Err(e) => {
            violations.push(format!(
                "I3: not final within {FINAL_WITHIN:?} of recovery: {e}"
            ));
            Default::default()
        }
    };
    let final_after = violations
        .is_empty()
        .then(|| recovered.elapsed().as_secs_f64());
    if matches!(fault, Fault::KillRedis) {
        let now = appendfsync(scratch).await?;
        if now != "always" {
            violations.push(format!(
                "the restarted Redis still has appendfsync {now}: the server did not set fsync again"
            ));
        }
    }
    server.stop();
    if answers.gave_up > 0 {
        violations.push(format!("{} shoppers never got an answer", answers.gave_up));
    }
    violations.extend(answers.internal_errors());
    violations.extend(
        measure::check_invariants(scratch, voucher, &sc, &answers.admitted, &statuses).await?,
    );
    Ok(Drilled {
        fault,
        sc,
        answers,
        recovery,
        final_after,
        violations,
    })
}

/// The server's variables: the scratch deployment's, and for the Redis kill the durability
/// that promises to lose nothing acknowledged when Redis dies.
fn server_env(scratch: &Scratch, fault: Fault) -> Vec<(String, String)> {
    let mut env = scratch.env.clone();
    if matches!(fault, Fault::KillRedis) {
        env.push(("SECKILL_DURABILITY".into(), "fsync".into()));
    }
    env
}

/// A drill's stage: the release server on the scratch deployment, the shoppers' sessions, a
/// sale that has just opened, and a client that gives up on a request after 5 s.
struct Opened {
    server: Server,
    port: u16,
    tokens: Arc<Vec<String>>,
    voucher: seckill::domain::VoucherId,
    client: reqwest::Client,
}

/// Starts the server with `env`, signs `sc.shoppers` shoppers in and opens a sale of
/// `sc.stock` a second later.
async fn open_sale(
    scratch: &Scratch,
    env: &[(String, String)],
    sc: &Scenario,
) -> anyhow::Result<Opened> {
    let server = Server::start(env).await?;
    let port = server.port();
    let users = scratch.users(sc.shoppers).await?;
    let tokens = Arc::new(scratch.sessions(&users).await?);
    let voucher = scratch
        .voucher(sc.stock, chrono::Duration::milliseconds(1_000))
        .await?;
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()?;
    Ok(Opened {
        server,
        port,
        tokens,
        voucher,
        client,
    })
}

/// Seconds from `since` until the worker has caught up: `/api/health` reports the oldest
/// queued order younger than half a second (or none). 30 s at most.
async fn caught_up_after(
    client: &reqwest::Client,
    base: &str,
    since: Instant,
) -> anyhow::Result<f64> {
    while since.elapsed() < Duration::from_secs(30) {
        if let Ok(r) = client.get(format!("{base}/api/health")).send().await {
            let body: serde_json::Value = r.json().await.unwrap_or_default();
            let lag = &body["worker"]["oldest_queued_ms"];
            if lag.is_null() && body["redis"] == true || lag.as_u64().is_some_and(|ms| ms < 500) {
                return Ok(since.elapsed().as_secs_f64());
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bail!("the order queue had not caught up 30 s after the recovery")
}

/// Seconds until `/api/health` answers 200 again (30 s at most).
async fn healthy_after(client: &reqwest::Client, base: &str) -> anyhow::Result<f64> {
    let from = Instant::now();
    while from.elapsed() < Duration::from_secs(30) {
        if let Ok(r) = client.get(format!("{base}/api/health")).send().await {
            if r.status().is_success() {
                return Ok(from.elapsed().as_secs_f64());
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bail!("the server was not healthy 30 s after the store came back")
}

fn publish(options: &Options, drilled: &[Drilled]) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    let mut json = Vec::new();
    for d in drilled {
        let a = &d.answers;
        let recovery = d
            .recovery
            .iter()
            .map(|(what, s)| format!("{what} {s:.2} s"))
            .collect::<Vec<_>>()
            .join(", ");
        rows.push((
            d.fault.describe().to_owned(),
            format!(
                "{} shoppers, stock {}: {} admitted, refusals {:?}, {} retried requests (5xx {:?}); {recovery}; every order final {} after recovery; I1–I4 {}",
                d.sc.shoppers,
                d.sc.stock,
                a.admitted.len(),
                a.refused,
                a.retries,
                a.server_errors,
                d.final_after.map_or("NOT".to_owned(), |s| format!("{s:.2} s")),
                if d.violations.is_empty() { "hold".to_owned() } else { format!("BROKEN: {}", d.violations.join("; ")) },
            ),
        ));
        json.push(serde_json::json!({
            "fault": format!("{:?}", d.fault),
            "shoppers": d.sc.shoppers,
            "stock": d.sc.stock,
            "admitted": a.admitted.len(),
            "refused": a.refused,
            "retries": a.retries,
            "recovery_s": d.recovery,
            "final_after_recovery_s": d.final_after,
            "violations": d.violations,
        }));
    }
    Report {
        name: if options.quick {
            "drills-quick"
        } else {
            "drills"
        },
        title: format!(
            "Fault drills{}",
            if options.quick { " (quick)" } else { "" }
        ),
        rows,
        notes: Vec::new(),
        json: serde_json::Value::Array(json),
    }
    .publish(options)
}
