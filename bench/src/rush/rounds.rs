//! More rushes after the first on the same server, each followed by its own `GET /api/live`
//! ceiling: the ratio of the two, taken pair by pair and read as a median. On two cores shared
//! with the load generator, the same server's `/api/live` measured 24,000/s and 38,000/s minutes
//! apart (BENCHMARKS.md, issue #53), so one pair says little; pairs taken one after the other
//! move together with the machine, and their median is the figure a target is read against.
//! Each round is a sale of its own (the same shoppers, the same stock, opening shortly), and
//! its invariants are checked like the first's.

use anyhow::bail;
use tokio::time::Instant;

use super::{
    fire, measure,
    setup::{self, Stage},
    Scenario,
};
use crate::scratch::Scratch;

/// One rush and the `/api/live` ceiling measured right after it.
#[derive(Debug, Clone, Copy)]
pub struct Pair {
    pub buys_per_sec: f64,
    pub live_per_sec: f64,
    pub p99_ms: f64,
    /// The ceiling's own p99, same connections: the floor of the rush's.
    pub live_p99_ms: f64,
}

impl Pair {
    pub fn ratio(&self) -> f64 {
        self.buys_per_sec / self.live_per_sec
    }
}

/// Runs `rounds` more sales on `stage`'s server; every admitted order is followed to final and
/// each sale's invariants must hold.
pub async fn further(
    stage: &Stage,
    sc: &Scenario,
    scratch: &Scratch,
    rounds: usize,
) -> anyhow::Result<Vec<Pair>> {
    let base = &stage.server.base;
    let mut pairs = Vec::with_capacity(rounds);
    for round in 2..rounds + 2 {
        let (voucher, begins) = setup::sale(scratch, sc.stock).await?;
        setup::sleep_until(begins).await;
        let started = Instant::now();
        let fired = fire::fire_all(&stage.client, base, voucher, &stage.tokens, sc.conns).await?;
        let buys_per_sec = sc.shoppers as f64 / started.elapsed().as_secs_f64();
        // As in the first round: every ID to final, then the ceiling.
        let statuses = measure::poll_all(
            &stage.client,
            base,
            &stage.tokens,
            &fired.admitted,
            sc.conns,
        )
        .await?;
        let ceiling = fire::live_ceiling(&stage.client, base, &stage.tokens, sc.conns).await?;
        let broken =
            measure::check_invariants(scratch, voucher, sc, &fired.admitted, &statuses).await?;
        if !broken.is_empty() {
            bail!("round {round}: invariants broken: {}", broken.join("; "));
        }
        let pair = Pair {
            buys_per_sec,
            live_per_sec: ceiling.per_sec,
            p99_ms: fired.latency.value_at_quantile(0.99) as f64 / 1e3,
            live_p99_ms: ceiling.p99_ms,
        };
        println!(
            "round {round}: {:.0} buys/s, GET /api/live {:.0}/s, ratio {:.2}, p99 {:.1} ms (GET /api/live's {:.1} ms)",
            pair.buys_per_sec,
            pair.live_per_sec,
            pair.ratio(),
            pair.p99_ms,
            pair.live_p99_ms
        );
        pairs.push(pair);
    }
    Ok(pairs)
}

/// The median of `values` (the mean of the middle two for an even count); `None` when empty.
pub fn median(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn the_median_is_the_middle_value_or_the_mean_of_the_middle_two() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![0.7]), Some(0.7));
        assert_eq!(median(vec![0.9, 0.5, 0.7]), Some(0.7));
        assert_eq!(median(vec![0.8, 0.5, 0.7, 0.9]), Some(0.75));
    }
}
