//! What the two openings are judged by: the bots' shares, arrival × winning, the verdict.

use std::time::Duration;

use super::{Arrival, Member, Outcome};

/// Among those taking part, Pearson's correlation of arrival rank (1 first) with winning
/// (1 won): negative when the early win. Ties in arrival get their average rank.
pub(super) fn rank_correlation(arrivals: &[Arrival]) -> f64 {
    let arrivals: Vec<(Duration, bool)> = arrivals
        .iter()
        .filter(|a| a.took_part)
        .map(|a| (a.sent, a.won))
        .collect();
    let n = arrivals.len();
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by_key(|i| arrivals[*i].0);
    let mut ranks = vec![0.0; n];
    let mut k = 0;
    while k < n {
        let mut j = k;
        while j + 1 < n && arrivals[idx[j + 1]].0 == arrivals[idx[k]].0 {
            j += 1;
        }
        let avg = (k + j) as f64 / 2.0 + 1.0;
        for t in &idx[k..=j] {
            ranks[*t] = avg;
        }
        k = j + 1;
    }
    let wins: Vec<f64> = arrivals
        .iter()
        .map(|(_, w)| f64::from(u8::from(*w)))
        .collect();
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len().max(1) as f64;
    let (mr, mw) = (mean(&ranks), mean(&wins));
    let cov: f64 = ranks
        .iter()
        .zip(&wins)
        .map(|(r, w)| (r - mr) * (w - mw))
        .sum();
    let var_r: f64 = ranks.iter().map(|r| (r - mr).powi(2)).sum();
    let var_w: f64 = wins.iter().map(|w| (w - mw).powi(2)).sum();
    if var_r == 0.0 || var_w == 0.0 {
        return 0.0;
    }
    cov / (var_r * var_w).sqrt()
}

/// The bots' shares in one opening.
pub(super) struct Shares {
    pub(super) taking_part: usize,
    pub(super) winners: usize,
    pub(super) bots_taking_part: f64,
    pub(super) bots_winning: f64,
    /// The standard error of the bots' share of the winners were winners drawn fairly from
    /// those taking part.
    pub(super) sigma: f64,
}

impl Shares {
    pub(super) fn of(members: &[Member], arrivals: &[Arrival]) -> Self {
        let count = |f: &dyn Fn(&Member, &Arrival) -> bool| {
            members
                .iter()
                .zip(arrivals)
                .filter(|(m, a)| f(m, a))
                .count()
        };
        let taking_part = count(&|_, a| a.took_part);
        let winners = count(&|_, a| a.won);
        let bots_taking_part =
            count(&|m, a| m.bot && a.took_part) as f64 / taking_part.max(1) as f64;
        let bots_winning = count(&|m, a| m.bot && a.won) as f64 / winners.max(1) as f64;
        let sigma = (bots_taking_part * (1.0 - bots_taking_part) / winners.max(1) as f64).sqrt();
        Self {
            taking_part,
            winners,
            bots_taking_part,
            bots_winning,
            sigma,
        }
    }
}

/// Entries refused as too late (`409`, the draw had started) and entries that failed otherwise
/// (no answer, or any other status).
pub(super) fn refusals(arrivals: &[Arrival]) -> (usize, usize) {
    let closed = arrivals.iter().filter(|a| a.status == Some(409)).count();
    let failed = arrivals
        .iter()
        .filter(|a| !matches!(a.status, Some(202 | 409)))
        .count();
    (closed, failed)
}

/// The targets: in the draw, the bots' share of the winners within 4σ of their share of the
/// entrants (a fair draw misses it once in 16,000 runs), the correlation of arrival with winning within 4/√n of 0 among the entrants, every
/// unit won when at least `stock` entered, and no entry lost to an error. (Humans whose entry
/// lands after the draw's start are refused, as they would be; on a slow machine there are more
/// of them, which moves the bots' share of the entrants, not the draw's fairness.)
pub(super) fn verdict(members: &[Member], draw: &Outcome, stock: usize) -> String {
    let s = Shares::of(members, &draw.arrivals);
    let r = rank_correlation(&draw.arrivals);
    let r_bound = 4.0 / (s.taking_part.max(1) as f64).sqrt();
    let (_, failed) = refusals(&draw.arrivals);
    let filled = s.winners == stock.min(s.taking_part);
    let fair = (s.bots_winning - s.bots_taking_part).abs() <= 4.0 * s.sigma && r.abs() <= r_bound;
    format!(
        "{}: in the draw the bots won {:.1} % of the units for {:.1} % of the {} entrants (4σ = {:.1} %), arrival × winning r = {r:+.3} (bound ±{r_bound:.3}); {} winners for {stock} units; {failed} entries failed.",
        if fair && filled && failed == 0 { "Targets met" } else { "MISSED" },
        s.bots_winning * 100.0,
        s.bots_taking_part * 100.0,
        s.taking_part,
        4.0 * s.sigma * 100.0,
        s.winners,
    )
}
