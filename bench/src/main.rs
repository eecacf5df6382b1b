//! `bench`: the benchmarks, kept apart from the tests. Run it through `scripts/bench.sh`, which
//! installs what is missing, starts the local services and builds the release server first.
//!
//! ```text
//! bench rush [--quick] [--shoppers N] [--stock N] [--conns N] [--rate R] [--profile]
//!                         (`--rate R`: open loop, R buys offered per second at fixed
//!                         intervals, latency from each buy's scheduled time)
//!     sale day over real HTTP against a release server; checks invariants I1–I4
//! bench core [--quick]   admissions/s of the Lua script (batched lanes vs one call per buy)
//!                        and the order worker's drain rate into PostgreSQL
//! bench lock [--quick]   acquire+release pairs/s (uncontended, 50 contenders), wake-up latency
//! bench drill [--quick]  fault drills: kill -9 of the server (×3), PostgreSQL stopped 30 s,
//!                        Redis killed and restarted from its AOF, each during a rush; I1–I4
//! bench failover [--quick]  kill -9 of a Redis master mid-rush (3 instances, HAProxy, a
//!                        cluster with replicas, SECKILL_DURABILITY=replicated; the full run
//!                        also everysec); needs SECKILL_CLUSTER_URL of a cluster with replicas
//! bench scaleout [--quick]  3 instances behind HAProxy on a 3-master Redis Cluster beside one
//!                        instance on one node, then a kill -9 of one instance mid-rush
//!                        (needs SECKILL_CLUSTER_URL; scripts/bench.sh scaleout starts one)
//! bench watchers [--quick]  10,000 open sale pages on one server: CPU and memory with the
//!                        push stream, then polling
//! bench pages [--quick] [--conns N]  pages anonymous and signed in, the JSON API and a static
//!                        file, closed loop; a cold visit's weight over the wire
//! bench reminders [--quick]  100,000 reminders (2,000 quick) through a relay stand-in that takes
//!                        N a second and fails 1 in 50, two instances, one killed with kill -9
//! bench sales [--quick]  100,000 sales (10,000 quick): the console's and the REST API's pages,
//!                        newest to oldest by cursor, and searches by title, one at a time
//! bench draw [--quick] [--shoppers N] [--stock N] [--conns N]  the same crowd (a tenth bots
//!                        firing at the opening millisecond) meets a first-come opening, then a
//!                        draw: the bots' share of the winners, arrival × winning, time to admit
//!                        and write every winner, entries/s against GET /api/live
//! bench payments [--quick] [--shoppers N] [--stock N] [--conns N]  a rush's orders paid
//!                        through a Stripe stand-in that fails every 10th call, loses, repeats
//!                        and delays webhooks; I1–I4 and M1–M3 at the end, the time from a
//!                        payment to "paid", refunds made and refused, units held past deadline
//! bench all [--quick]    lock, core, rush, pages and watchers in turn
//! ```
//! A full run appends its figures to BENCHMARKS.md; every run writes JSON to
//! `target/bench/<name>.json`. `--no-record` leaves BENCHMARKS.md alone.

mod corebench;
mod draw;
mod drill;
mod lockbench;
mod pages;
mod payments;
mod reminders;
mod report;
mod rush;
mod sales;
mod scaleout;
mod scratch;
mod watchers;

use anyhow::{bail, Context};

/// Command-line options shared by the benchmarks.
#[derive(Debug, Clone)]
pub struct Options {
    pub quick: bool,
    pub record: bool,
    pub profile: bool,
    pub shoppers: Option<usize>,
    pub stock: Option<usize>,
    pub conns: Option<usize>,
    /// Open loop: buys offered per second at fixed intervals (`--rate`), latency measured from
    /// each buy's scheduled time.
    pub rate: Option<usize>,
    /// Rush, closed loop: how many sales in a row, each rush followed by its `/api/live`
    /// ceiling (`--rounds`; 5 on a full run, 1 on a quick one).
    pub rounds: Option<usize>,
    /// The command line, as it goes into BENCHMARKS.md.
    pub command: String,
}

impl Options {
    fn parse(args: &[String]) -> anyhow::Result<Self> {
        let mut o = Self {
            quick: false,
            record: true,
            profile: false,
            shoppers: None,
            stock: None,
            conns: None,
            rate: None,
            rounds: None,
            command: format!("scripts/bench.sh {}", args.join(" ")),
        };
        let mut it = args.iter().skip(1);
        while let Some(a) = it.next() {
            let mut number = |name: &str| -> anyhow::Result<usize> {
                let v = it.next().with_context(|| format!("{name} needs a value"))?;
                let n: usize = v
                    .parse()
                    .with_context(|| format!("{name}: {v:?} is not a number"))?;
                if n == 0 {
                    bail!("{name} must be positive");
                }
                Ok(n)
            };
            match a.as_str() {
                "--quick" => o.quick = true,
                "--no-record" => o.record = false,
                "--profile" => o.profile = true,
                "--shoppers" => o.shoppers = Some(number("--shoppers")?),
                "--stock" => o.stock = Some(number("--stock")?),
                "--conns" => o.conns = Some(number("--conns")?),
                "--rate" => o.rate = Some(number("--rate")?),
                "--rounds" => o.rounds = Some(number("--rounds")?),
                other => bail!("unknown option {other:?}\n{USAGE}"),
            }
        }
        // Quick runs are smoke tests: they check, they do not publish figures.
        if o.quick {
            o.record = false;
        }
        Ok(o)
    }
}

const USAGE: &str =
    "usage: bench <rush|core|lock|drill|failover|scaleout|watchers|pages|sales|reminders|draw|payments|all> [--quick] [--no-record] [--profile] \
                     [--shoppers N] [--stock N] [--conns N] [--rate buys/s (rush: open loop)] [--rounds N (rush: sales in a row)]";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = args.first() else {
        bail!("{USAGE}");
    };
    let options = Options::parse(&args)?;
    match cmd.as_str() {
        "rush" => rush::run(&options).await,
        "core" => corebench::run(&options).await,
        "lock" => lockbench::run(&options).await,
        "drill" => drill::run(&options).await,
        "failover" => drill::failover::run(&options).await,
        "scaleout" => scaleout::run(&options).await,
        "watchers" => watchers::run(&options).await,
        "pages" => pages::run(&options).await,
        "sales" => sales::run(&options).await,
        "reminders" => reminders::run(&options).await,
        "draw" => draw::run(&options).await,
        "payments" => payments::run(&options).await,
        "all" => {
            lockbench::run(&options).await?;
            corebench::run(&options).await?;
            rush::run(&options).await?;
            pages::run(&options).await?;
            watchers::run(&options).await
        }
        other => bail!("unknown benchmark {other:?}\n{USAGE}"),
    }
}
