//! Scale-out: the rush through HAProxy over 3 instances on a 3-master Redis Cluster, beside one
//! instance on one Redis node in the same run, then the same 3 instances with one killed by
//! `kill -9` mid-rush. Three sales on three different masters share the shoppers. Each round
//! reports buys/s and latency, the admission script's calls per Redis node, requests per
//! instance (HAProxy's stats), orders written per instance (its `/metrics`), the drain rate,
//! and I1–I4 per sale; the drill also the time until every returned order was final (the dead
//! instance's pending entries reclaimed by the others). On 2 cores this shows the load spread
//! and what the extra hops cost, not linear scaling.
//!
//! | file | job |
//! | --- | --- |
//! | `haproxy.rs` | HAProxy in front of the instances, its stats |
//! | `nodes.rs` | which master holds a sale, script calls per node |

mod count;
mod haproxy;
pub(crate) mod nodes;

use count::{difference, list, requests, tally, written_by, Rush};

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use anyhow::{bail, Context};
use chrono::Utc;
use futures::StreamExt;
use hdrhistogram::Histogram;
use seckill::domain::VoucherId;

use crate::{
    report::{self, Report},
    rush::{measure, process::Server, setup, Scenario},
    scratch::Scratch,
    Options,
};
pub(crate) use haproxy::Haproxy;

/// Sales in each round, each on its own master when on a cluster.
pub(crate) const SALES: usize = 3;

struct Shape {
    shoppers: usize,
    stock: usize,
    conns: usize,
}

/// What one round measured.
struct Round {
    label: &'static str,
    buys_per_sec: f64,
    latency: Histogram<u64>,
    outcomes: BTreeMap<String, u64>,
    admitted: usize,
    masters: Vec<String>,
    evalsha: BTreeMap<String, u64>,
    requests: BTreeMap<String, u64>,
    written_by: Vec<(String, String)>,
    drain_rate: f64,
    fire_secs: f64,
    /// The drill: seconds from the kill until every returned order was final.
    final_after_kill: Option<f64>,
    /// Returned order IDs that reached a final status.
    finals: usize,
    violations: Vec<String>,
}

pub async fn run(options: &Options) -> anyhow::Result<()> {
    let cluster = std::env::var("SECKILL_CLUSTER_URL").context(
        "SECKILL_CLUSTER_URL is not set: scripts/bench.sh scaleout starts a local cluster \
         (scripts/cluster.sh redis-start) and sets it",
    )?;
    let single = std::env::var("REDIS_URL")
        .unwrap_or_else(|_| seckill::config::DEFAULT_REDIS_URL.to_owned());
    let (shoppers, stock, conns) = if options.quick {
        (3_000, 300, 60)
    } else {
        (50_000, 6_000, 600)
    };
    let shape = Shape {
        shoppers: options.shoppers.unwrap_or(shoppers),
        stock: options.stock.unwrap_or(stock),
        conns: options.conns.unwrap_or(conns),
    };
    println!(
        "scaleout: {} shoppers over {SALES} sales of {} units, {} connections",
        shape.shoppers,
        shape.stock / SALES,
        shape.conns
    );
    let one = round("one instance, one Redis node", &single, 1, None, &shape).await?;
    let three = round(
        "3 instances, HAProxy, 3-master cluster",
        &cluster,
        3,
        None,
        &shape,
    )
    .await?;
    let kill_after = Duration::from_secs_f64(three.fire_secs / 3.0);
    let drill = round(
        "3 instances, one killed (kill -9) mid-rush",
        &cluster,
        3,
        Some(kill_after),
        &shape,
    )
    .await?;
    let broken: Vec<String> = [&one, &three, &drill]
        .iter()
        .flat_map(|r| {
            r.violations
                .iter()
                .map(move |v| format!("{}: {v}", r.label))
        })
        .collect();
    publish(options, &shape, &[one, three, drill])?;
    if !broken.is_empty() {
        bail!("invariants broken: {}", broken.join("; "));
    }
    Ok(())
}

async fn round(
    label: &'static str,
    redis_url: &str,
    instances: usize,
    kill_after: Option<Duration>,
    shape: &Shape,
) -> anyhow::Result<Round> {
    round_with(label, redis_url, instances, kill_after, shape, &[]).await
}

/// A one-shot rush without faults on `redis_url` through 3 instances with `extra` settings:
/// buys/s and the latency's (p50, p99) in ms, and the invariants broken (none expected).
pub(crate) async fn plain_rush(
    label: &'static str,
    redis_url: &str,
    (shoppers, stock, conns): (usize, usize, usize),
    extra: &[(&str, &str)],
) -> anyhow::Result<(f64, f64, f64, Vec<String>)> {
    let shape = Shape {
        shoppers,
        stock,
        conns,
    };
    let r = round_with(label, redis_url, 3, None, &shape, extra).await?;
    let ms = |q: f64| r.latency.value_at_quantile(q) as f64 / 1_000.0;
    Ok((r.buys_per_sec, ms(0.5), ms(0.99), r.violations))
}

async fn round_with(
    label: &'static str,
    redis_url: &str,
    instances: usize,
    kill_after: Option<Duration>,
    shape: &Shape,
    extra: &[(&str, &str)],
) -> anyhow::Result<Round> {
    let scratch = Scratch::on_redis("scaleout", redis_url).await?;
    let result = round_on(label, &scratch, instances, kill_after, shape, extra).await;
    scratch.cleanup().await?;
    result
}

async fn round_on(
    label: &'static str,
    scratch: &Scratch,
    instances: usize,
    kill_after: Option<Duration>,
    shape: &Shape,
    extra: &[(&str, &str)],
) -> anyhow::Result<Round> {
    let core = &scratch.core;
    let (mut servers, lb, base) = start_fleet_with(scratch, instances, extra).await?;
    let per_sale_stock = shape.stock / SALES;
    let (sales, masters) = place_sales(scratch, per_sale_stock).await?;
    let per_sale = shoppers_per_sale(scratch, shape.shoppers).await?;
    let client = setup::load_client(shape.conns)?;
    futures::stream::iter(0..shape.conns)
        .map(|_| client.get(format!("{base}/api/live")).send())
        .buffer_unordered(shape.conns)
        .for_each(|_| async {})
        .await;
    let evalsha_before = nodes::evalsha_calls(core).await?;
    let requests_before = requests(lb.as_ref()).await?;
    let latest = seckill::testing::store::vouchers::get(&core.db, sales[SALES - 1])
        .await?
        .context("voucher")?
        .window
        .begins_at();
    tokio::time::sleep((latest - Utc::now()).to_std().unwrap_or_default()).await;

    let conns_each = (shape.conns / SALES).max(1);
    let rush = Rush {
        client: &client,
        base: &base,
        sales: &sales,
        per_sale: &per_sale,
        conns_each,
    };
    let (fired, killed_at, fire_secs) = rush.run(servers.last_mut(), kill_after).await?;
    let mut statuses = Vec::new();
    for (f, t) in fired.iter().zip(&per_sale) {
        statuses.push(measure::poll_all(&client, &base, t, &f.admitted, shape.conns).await?);
    }
    let final_after_kill = killed_at.map(|at| at.elapsed().as_secs_f64());
    let written_by = written_by(&client, &servers).await?;
    let evalsha_after = nodes::evalsha_calls(core).await?;
    let requests_after = requests(lb.as_ref()).await?;
    for s in &mut servers {
        s.stop();
    }
    drop(lb);

    let sc = Scenario {
        shoppers: 0,
        stock: per_sale_stock,
        conns: conns_each,
        rate: None,
    };
    let tally = tally(scratch, &sales, &fired, &per_sale, &statuses, sc).await?;
    let drain = measure::drain_of(scratch, &sales).await?;
    Ok(Round {
        label,
        buys_per_sec: shape.shoppers as f64 / fire_secs,
        latency: tally.latency,
        outcomes: tally.outcomes,
        admitted: tally.admitted,
        masters,
        evalsha: difference(&evalsha_before, evalsha_after),
        requests: difference(&requests_before, requests_after),
        written_by,
        drain_rate: drain.rate,
        fire_secs,
        final_after_kill,
        finals: statuses.iter().map(BTreeMap::len).sum(),
        violations: tally.violations,
    })
}

/// `instances` servers with `extra` settings, behind HAProxy when there are several; the
/// address shoppers use.
pub(crate) async fn start_fleet_with(
    scratch: &Scratch,
    instances: usize,
    extra: &[(&str, &str)],
) -> anyhow::Result<(Vec<Server>, Option<Haproxy>, String)> {
    let mut env = scratch.env.clone();
    env.extend(
        extra
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    // A dead instance's pending orders are taken over after 2 s (default 30 s).
    env.push(("SECKILL_RECLAIM_IDLE_MS".into(), "2000".into()));
    let mut servers = Vec::new();
    for _ in 0..instances {
        servers.push(Server::start(&env).await?);
    }
    let lb = if instances > 1 {
        Some(Haproxy::start(&servers.iter().map(Server::port).collect::<Vec<_>>()).await?)
    } else {
        None
    };
    let base = lb
        .as_ref()
        .map_or_else(|| servers[0].base.clone(), |l| l.base.clone());
    Ok((servers, lb, base))
}

/// [`SALES`] sales on distinct masters (any on one node), opening together shortly; and their
/// masters.
pub(crate) async fn place_sales(
    scratch: &Scratch,
    stock: usize,
) -> anyhow::Result<(Vec<VoucherId>, Vec<String>)> {
    let core = &scratch.core;
    let opens_in = chrono::Duration::seconds(3);
    let mut sales: Vec<VoucherId> = Vec::new();
    let mut masters: Vec<String> = Vec::new();
    for _ in 0..64 {
        if sales.len() == SALES {
            break;
        }
        let v = scratch.voucher(stock, opens_in).await?;
        let master = nodes::master_of_voucher(core, v).await?;
        if core.redis.is_cluster() && masters.contains(&master) {
            continue;
        }
        sales.push(v);
        masters.push(master);
    }
    if sales.len() < SALES {
        bail!("could not place {SALES} sales on distinct masters");
    }
    Ok((sales, masters))
}

/// `shoppers` signed in, dealt out to the sales in turn: one session token list per sale.
pub(crate) async fn shoppers_per_sale(
    scratch: &Scratch,
    shoppers: usize,
) -> anyhow::Result<Vec<Arc<Vec<String>>>> {
    let users = scratch.users(shoppers).await?;
    let tokens = scratch.sessions(&users).await?;
    Ok((0..SALES)
        .map(|j| Arc::new(tokens.iter().skip(j).step_by(SALES).cloned().collect()))
        .collect())
}

fn publish(options: &Options, shape: &Shape, rounds: &[Round]) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    let mut json = Vec::new();
    for r in rounds {
        let p = |q: f64| report::ms(r.latency.value_at_quantile(q));
        rows.push((
            format!("**{}**: buys/s", r.label),
            format!(
                "{:.0} ({:.2} s for {} shoppers)",
                r.buys_per_sec, r.fire_secs, shape.shoppers
            ),
        ));
        rows.push(("  latency".into(), report::latency_row(&r.latency)));
        rows.push(("  outcomes".into(), list(r.outcomes.clone())));
        rows.push(("  sales' masters".into(), r.masters.join(", ")));
        rows.push((
            "  admission calls per Redis node".into(),
            list(r.evalsha.clone()),
        ));
        if !r.requests.is_empty() {
            rows.push((
                "  requests per instance (HAProxy)".into(),
                list(r.requests.clone()),
            ));
        }
        rows.push((
            "  orders written per instance".into(),
            list(r.written_by.clone()),
        ));
        rows.push((
            "  drain (orders/s written)".into(),
            format!("{:.0}", r.drain_rate),
        ));
        if let Some(s) = r.final_after_kill {
            rows.push((
                "  every returned order final, after the kill".into(),
                format!(
                    "{s:.2} s ({} of {} returned orders final, {} lost)",
                    r.finals,
                    r.admitted,
                    r.admitted - r.finals
                ),
            ));
        }
        rows.push((
            "  I1–I4 per sale".into(),
            if r.violations.is_empty() {
                "hold".into()
            } else {
                r.violations.join("; ")
            },
        ));
        json.push(serde_json::json!({
            "label": r.label, "buys_per_sec": r.buys_per_sec, "p50_ms": p(0.5), "p99_ms": p(0.99),
            "outcomes": r.outcomes, "admitted": r.admitted, "masters": r.masters,
            "evalsha_per_node": r.evalsha, "requests_per_instance": r.requests,
            "written_per_instance": r.written_by, "drain_per_sec": r.drain_rate,
            "final_after_kill_secs": r.final_after_kill, "violations": r.violations,
        }));
    }
    let ratio = rounds[1].buys_per_sec / rounds[0].buys_per_sec;
    Report {
        name: "scaleout",
        title: "Scale-out: 3 instances behind HAProxy on a 3-master Redis Cluster".into(),
        rows,
        notes: vec![format!(
            "3 instances on the cluster reach {ratio:.2}× one instance on one node, in the same \
             run on this machine (every process shares its 2 cores: the figure shows the spread \
             and the cost of the HAProxy and cluster hops, not scaling)."
        )],
        json: serde_json::json!({ "rounds": json, "ratio_three_to_one": ratio }),
    }
    .publish(options)
}
