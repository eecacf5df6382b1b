//! The failover drill (issue #24, design.md decision 32): a Redis Cluster with a replica per
//! master, three instances behind HAProxy, a rush over three sales on three masters; a third of
//! the way in, `kill -9` of the master holding the first sale; its replica is promoted, the old
//! master is started again (it rejoins as a replica and drops what it had not replicated). The
//! shoppers retry 503s and lost replies. Then, per sale: every order answered 202 is written,
//! no shopper holds two orders, remaining + created = stock, and every returned order is final
//! within 10 s of the promotion (I1–I4).
//!
//! Under `SECKILL_DURABILITY=replicated` a broken invariant fails the drill; the full run also
//! drills `everysec` and reports what it lost, as figures.

use std::{sync::Arc, time::Duration};

use anyhow::{bail, Context};
use seckill::domain::VoucherId;
use tokio::time::Instant;

use super::{
    sales_check::{merged, Sales},
    shoppers,
    shoppers::Arrival,
};
use crate::{
    report::{self, Report},
    scaleout::{self, nodes},
    scratch::Scratch,
    Options,
};

/// What one durability setting went through.
struct Round {
    durability: &'static str,
    shoppers: usize,
    stock: usize,
    buys_per_sec: f64,
    answers: shoppers::Answers,
    killed: String,
    promoted_after: f64,
    rejoined_after: f64,
    final_after: Option<f64>,
    violations: Vec<String>,
}

pub async fn run(options: &Options) -> anyhow::Result<()> {
    let cluster = std::env::var("SECKILL_CLUSTER_URL").context(
        "SECKILL_CLUSTER_URL is not set: scripts/bench.sh failover starts a local cluster with \
         replicas (scripts/cluster.sh redis-start --replicas) and sets it",
    )?;
    let settings: &[&'static str] = if options.quick {
        &["replicated"]
    } else {
        &["replicated", "everysec"]
    };
    // Without a fault first (full run): what waiting for a replica costs, alternated twice.
    let mut plain = Vec::new();
    if !options.quick {
        let shape = (
            options.shoppers.unwrap_or(30_000),
            options.stock.unwrap_or(3_000),
            options.conns.unwrap_or(300),
        );
        for durability in ["replicated", "everysec", "replicated", "everysec"] {
            println!("failover bench: a rush without faults, SECKILL_DURABILITY={durability}");
            let (buys, p50, p99, broken) = scaleout::plain_rush(
                "rush",
                &cluster,
                shape,
                &[("SECKILL_DURABILITY", durability)],
            )
            .await?;
            if !broken.is_empty() {
                bail!(
                    "{durability} without faults: invariants broken: {}",
                    broken.join("; ")
                );
            }
            plain.push((durability, shape, buys, p50, p99));
        }
    }
    let mut rounds = Vec::new();
    for durability in settings {
        println!("failover drill: SECKILL_DURABILITY={durability}, kill -9 of a master mid-rush");
        let scratch = Scratch::on_redis("failover", &cluster).await?;
        let round = round_on(options, &scratch, durability).await;
        // The cluster is whole again (the old master rejoined) before the scratch keys go.
        scratch.cleanup().await?;
        rounds.push(round?);
    }
    let broken: Vec<String> = rounds
        .iter()
        .filter(|r| r.durability == "replicated")
        .flat_map(|r| r.violations.iter().cloned())
        .collect();
    publish(options, &plain, &rounds)?;
    if !broken.is_empty() {
        bail!("replicated: invariants broken: {}", broken.join("; "));
    }
    Ok(())
}

async fn round_on(
    options: &Options,
    scratch: &Scratch,
    durability: &'static str,
) -> anyhow::Result<Round> {
    let (shoppers, stock, rush_secs) = if options.quick {
        (1_500, 900, 4.0)
    } else {
        (6_000, 3_600, 6.0)
    };
    let shoppers = options.shoppers.unwrap_or(shoppers);
    let stock = options.stock.unwrap_or(stock);
    let conns = options.conns.unwrap_or(60);
    let (mut servers, lb, base) = scaleout::start_fleet_with(
        scratch,
        3,
        &[
            ("SECKILL_DURABILITY", durability),
            ("SECKILL_REPLICA_WAIT_MS", "500"),
        ],
    )
    .await?;
    let per_sale_stock = stock / scaleout::SALES;
    let (sales, masters) = scaleout::place_sales(scratch, per_sale_stock).await?;
    let per_sale = scaleout::shoppers_per_sale(scratch, shoppers).await?;
    let opens =
        seckill::testing::store::vouchers::get(&scratch.core.db, sales[scaleout::SALES - 1])
            .await?
            .context("voucher")?
            .window
            .begins_at();
    tokio::time::sleep((opens - chrono::Utc::now()).to_std().unwrap_or_default()).await;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()?;

    let started = Instant::now();
    let conns_each = (conns / scaleout::SALES).max(1);
    let rushes: Vec<_> = sales
        .iter()
        .zip(&per_sale)
        .map(|(v, tokens)| {
            tokio::spawn(shoppers::buy_all(
                client.clone(),
                base.clone(),
                *v,
                Arc::clone(tokens),
                Arrival {
                    conns: conns_each,
                    pace: Duration::from_secs_f64(
                        conns_each as f64 * rush_secs / tokens.len().max(1) as f64,
                    ),
                    deadline: started + Duration::from_secs(120),
                },
            ))
        })
        .collect();
    tokio::time::sleep(Duration::from_secs_f64(rush_secs / 3.0)).await;
    let victim = masters[0].clone();
    let node = Node::ask(&victim).await?;
    node.kill9()?;
    let killed = Instant::now();
    let promoted_after = promoted(scratch, sales[0], &victim).await?;
    node.start_again()?;
    let rejoined_after = killed.elapsed().as_secs_f64();
    let promoted_at = killed + Duration::from_secs_f64(promoted_after);

    let mut per_sale_answers = Vec::new();
    for r in rushes {
        per_sale_answers.push(r.await??);
    }
    let fire_secs = started.elapsed().as_secs_f64();
    let checked = Sales {
        scratch,
        client: &client,
        base: &base,
        sales: &sales,
        per_sale: &per_sale,
        stock: per_sale_stock,
        conns: conns_each,
    }
    .check(&per_sale_answers, promoted_at)
    .await?;
    let (violations, final_after) = checked;
    for s in &mut servers {
        s.stop();
    }
    drop(lb);
    let answers = merged(per_sale_answers);
    Ok(Round {
        durability,
        shoppers,
        stock: per_sale_stock * scaleout::SALES,
        buys_per_sec: shoppers as f64 / fire_secs,
        answers,
        killed: victim,
        promoted_after,
        rejoined_after,
        final_after,
        violations,
    })
}

/// The port of a node named `host:port`.
fn port_of(node: &str) -> anyhow::Result<u16> {
    node.rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .with_context(|| format!("no port in {node}"))
}

/// A node's process and directory, asked of the node itself (the cluster may have been started
/// from another checkout).
struct Node {
    addr: String,
    pid: String,
    dir: String,
}

impl Node {
    async fn ask(addr: &str) -> anyhow::Result<Self> {
        let client = redis::Client::open(format!("redis://{addr}/"))?;
        let mut c = client.get_multiplexed_async_connection().await?;
        let info: String = redis::cmd("INFO").arg("server").query_async(&mut c).await?;
        let pid = info
            .lines()
            .find_map(|l| l.strip_prefix("process_id:"))
            .map(|p| p.trim().to_owned())
            .with_context(|| format!("no process_id from {addr}"))?;
        let dir: Vec<String> = redis::cmd("CONFIG")
            .arg("GET")
            .arg("dir")
            .query_async(&mut c)
            .await?;
        let dir = dir
            .get(1)
            .cloned()
            .with_context(|| format!("no dir from {addr}"))?;
        Ok(Self {
            addr: addr.to_owned(),
            pid,
            dir,
        })
    }

    /// `kill -9` of the node.
    fn kill9(&self) -> anyhow::Result<()> {
        let status = std::process::Command::new("kill")
            .args(["-9", &self.pid])
            .status()?;
        if !status.success() {
            bail!("kill -9 {} ({}) failed", self.pid, self.addr);
        }
        Ok(())
    }

    /// `scripts/cluster.sh redis-node-start`: the node starts again from its files and rejoins.
    fn start_again(&self) -> anyhow::Result<()> {
        let status = std::process::Command::new(report::root().join("scripts").join("cluster.sh"))
            .args([
                "redis-node-start",
                &port_of(&self.addr)?.to_string(),
                &self.dir,
            ])
            .status()?;
        if !status.success() {
            bail!("scripts/cluster.sh redis-node-start {} failed", self.addr);
        }
        Ok(())
    }
}

/// Seconds until another node serves `sale`'s slot than `old` (30 s at most).
async fn promoted(scratch: &Scratch, sale: VoucherId, old: &str) -> anyhow::Result<f64> {
    let from = Instant::now();
    while from.elapsed() < Duration::from_secs(30) {
        if let Ok(now) = nodes::master_of_voucher(&scratch.core, sale).await {
            if now != old {
                return Ok(from.elapsed().as_secs_f64());
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!("no replica of {old} was promoted within 30 s")
}

/// A rush without faults: durability, (shoppers, stock, connections), buys/s, p50 and p99 ms.
type Plain = (&'static str, (usize, usize, usize), f64, f64, f64);

fn publish(options: &Options, plain: &[Plain], rounds: &[Round]) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    let mut json = Vec::new();
    for (durability, (shoppers, stock, conns), buys, p50, p99) in plain {
        rows.push((
            format!("no fault, SECKILL_DURABILITY={durability}"),
            format!(
                "{shoppers} shoppers, stock {stock}, {conns} connections, 3 instances: {buys:.0} buys/s, p50 {p50:.1} ms, p99 {p99:.1} ms"
            ),
        ));
        json.push(serde_json::json!({
            "durability": durability, "fault": false, "shoppers": shoppers, "stock": stock,
            "conns": conns, "buys_per_sec": buys, "p50_ms": p50, "p99_ms": p99,
        }));
    }
    for r in rounds {
        let a = &r.answers;
        rows.push((
            format!("SECKILL_DURABILITY={}", r.durability),
            format!(
                "{} shoppers over 3 sales, stock {}: {:.0} buys/s; {} admitted, refusals {:?}, {} retried requests (5xx {:?}); master {} killed, replica promoted after {:.2} s, old master started again at {:.2} s; every order final {} after the promotion; I1–I4 {}",
                r.shoppers,
                r.stock,
                r.buys_per_sec,
                a.admitted.len(),
                a.refused,
                a.retries,
                a.server_errors,
                r.killed,
                r.promoted_after,
                r.rejoined_after,
                r.final_after.map_or("NOT".to_owned(), |s| format!("{s:.2} s")),
                if r.violations.is_empty() { "hold".to_owned() } else { format!("BROKEN: {}", r.violations.join("; ")) },
            ),
        ));
        json.push(serde_json::json!({
            "durability": r.durability,
            "shoppers": r.shoppers,
            "stock": r.stock,
            "buys_per_sec": r.buys_per_sec,
            "admitted": a.admitted.len(),
            "refused": a.refused,
            "retries": a.retries,
            "server_errors": a.server_errors,
            "promoted_after_s": r.promoted_after,
            "final_after_promotion_s": r.final_after,
            "violations": r.violations,
        }));
    }
    Report {
        name: if options.quick {
            "failover-quick"
        } else {
            "failover"
        },
        title: format!(
            "Failover drill: kill -9 of a Redis master mid-rush{}",
            if options.quick { " (quick)" } else { "" }
        ),
        rows,
        notes: Vec::new(),
        json: serde_json::Value::Array(json),
    }
    .publish(options)
}
