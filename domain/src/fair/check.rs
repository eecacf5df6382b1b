//! [`check`]: a drawn transcript recomputed from itself and what the caller read beside it (the
//! voucher asked about, its published stock and end, the beacon chain's clock). No I/O, no BLS:
//! the command-line verifier fetches and verifies the round's signature, compares its randomness
//! with the transcript's, and passes the chain's clock it read from the relay.

use chrono::{DateTime, Utc};

use super::chain::{self, BeaconCheck, Timing};
pub use super::witness::Witnessed;
use super::{commitment, draw_seed, hash_from_hex, merkle_root, move_hash, rank, Hash, Transcript};

/// What does not hold, the first found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Mismatch {
    #[error("this is voucher {published}'s transcript, not voucher {asked}'s")]
    Voucher { asked: i64, published: i64 },
    #[error("the transcript has no {0} yet: the draw has not run")]
    NotDrawn(&'static str),
    #[error("{0} is not 32 bytes of hex")]
    NotHex(String),
    #[error("the committed seed does not hash to the commitment")]
    Commitment,
    #[error("the leaves are not sorted ascending and distinct (at {0})")]
    Unsorted(usize),
    #[error("{entrants} entrants published, {leaves} leaves")]
    Entrants { entrants: i64, leaves: usize },
    #[error("the leaves' Merkle root is {computed}, not the published {published}")]
    Root { computed: String, published: String },
    #[error("the draw names no beacon round: its randomness rests on the shop alone")]
    NoBeacon,
    #[error("the draw names round 0, which does not exist (rounds start at 1)")]
    RoundZero,
    #[error("the round was moved from {planned} to {round}: a moved round must come later")]
    MovedBack { planned: u64, round: u64 },
    #[error("round {round}, named at creation, was emitted at {emitted}, before the entries closed at {closes_at}")]
    NamedBeforeStart {
        round: u64,
        emitted: DateTime<Utc>,
        closes_at: DateTime<Utc>,
    },
    #[error("the round named at creation is {named}, but the rules name {expected} (the first emitted the commit margin after the entries close)")]
    NotNamed { named: u64, expected: u64 },
    #[error("the round named at creation, {planned}, was emitted at {emitted}, after the close at {closed_at}: it had no reason to be moved")]
    NeedlessMove {
        planned: u64,
        emitted: DateTime<Utc>,
        closed_at: DateTime<Utc>,
    },
    #[error("round {round} was emitted at {emitted}, before the close at {closed_at}: its randomness could be known before the list was committed")]
    BeforeClose {
        round: u64,
        emitted: DateTime<Utc>,
        closed_at: DateTime<Utc>,
    },
    #[error("the round was moved to {round}, but the rules name {expected} (the first emitted the commit margin after the close)")]
    MovedElsewhere { round: u64, expected: u64 },
    #[error("the randomness is not hex")]
    Randomness,
    #[error("the transcript publishes randomness but names no beacon round")]
    RandomnessWithoutBeacon,
    #[error("the seed recomputes as {0}, not as published")]
    Seed(String),
    #[error("rank {rank}: {what}")]
    Ranking { rank: usize, what: String },
    #[error(
        "the draw had {drawn} units, fewer than the {published} the voucher published before it"
    )]
    StockBelow { drawn: i64, published: i64 },
    #[error("the draw had {drawn} units, more than the {published} the voucher published since")]
    StockAbove { drawn: i64, published: i64 },
    #[error("the winners are not the first {0} of the ranking")]
    Winners(usize),
    #[error("the winners are not the first ranks of the ranking (at most {0}: the sale ended before the draw was recorded)")]
    WinnersCut(usize),
    #[error("move {index}: {what}")]
    Move { index: usize, what: String },
    #[error("the outside timestamp: {0}")]
    Witness(String),
}

/// The voucher's `stock` (`GET /api/vouchers/{id}`) as the caller read it. It counts every unit
/// the sale offered (the initial stock and every top-up, sold or not), so it only ever grows; the
/// draw's `stock` is what it was when the draw opened, just after the close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StockSeen {
    /// Read before the entries closed (`closes_at`): the draw had at least these (a top-up
    /// after the read counts at the draw).
    Before(i64),
    /// Read after the close: the draw had at most these (a top-up after the draw counts here).
    After(i64),
    /// Read both before the close and since.
    Between { before: i64, after: i64 },
}

/// What the shop published about the sale itself, as the caller read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sale {
    /// The voucher asked about.
    pub voucher_id: i64,
    pub stock: StockSeen,
    /// The voucher's `ends_at`.
    pub ends_at: DateTime<Utc>,
}

/// What a check established.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub entrants: usize,
    pub winners: usize,
    pub moves: usize,
    /// How far the beacon round's timing was checked.
    pub timing: Timing,
    /// The sale ended before the draw was recorded: the winners are the ranks it admitted
    /// before its end (none when the round came after it), fewer than the units.
    pub cut_short: bool,
    /// What the outside timestamp of the committed list established (its signature aside).
    pub witness: Witnessed,
}

fn need<'a>(v: Option<&'a String>, name: &'static str) -> Result<&'a String, Mismatch> {
    v.ok_or(Mismatch::NotDrawn(name))
}

fn hex32(field: &str, text: &str) -> Result<Hash, Mismatch> {
    hash_from_hex(text).ok_or_else(|| Mismatch::NotHex(field.to_owned()))
}

/// Checks `t` as the transcript of `sale`'s voucher: the commitment, the root over the sorted
/// leaves, the beacon round (one is named; a moved one comes later; with the chain's clock,
/// emitted after the close), the seed, every key and rank, the stock against the published one,
/// the winners (the first `min(stock, entrants)` ranks, or fewer of them when the sale ended
/// before the draw was recorded) and the moves' chain (each to the entrant ranked next after the
/// winners and the move before, before the sale's end).
pub fn check(t: &Transcript, sale: &Sale, beacon: &BeaconCheck) -> Result<Checked, Mismatch> {
    if t.voucher_id != sale.voucher_id {
        return Err(Mismatch::Voucher {
            asked: sale.voucher_id,
            published: t.voucher_id,
        });
    }
    let (committed, leaves, root) = committed_list(t)?;
    let closed_at = t.closed_at.ok_or(Mismatch::NotDrawn("close time"))?;
    let timing = chain::rounds(t, closed_at, beacon)?;
    let witness = super::witness::check(t, &root, beacon)?;
    let randomness = need(t.randomness.as_ref(), "randomness")?;
    let randomness = match t.beacon {
        Some(_) => hex32("the randomness", randomness)?.to_vec(),
        None if randomness.is_empty() => Vec::new(),
        None => return Err(Mismatch::RandomnessWithoutBeacon),
    };
    let seed = draw_seed(t.voucher_id, &committed, &root, &randomness);
    if Some(hex::encode(seed)) != t.seed {
        return Err(Mismatch::Seed(hex::encode(seed)));
    }
    let ranked: Vec<Hash> = ranking(t, &seed, &leaves)?;
    let drawn = t.stock.ok_or(Mismatch::NotDrawn("stock"))?;
    stock(drawn, sale.stock)?;
    let drawn_at = t.drawn_at.ok_or(Mismatch::NotDrawn("draw time"))?;
    let winners = t.winners.as_ref().ok_or(Mismatch::NotDrawn("winners"))?;
    let due = usize::try_from(drawn).unwrap_or(0).min(ranked.len());
    let first: Vec<String> = ranked.iter().take(due).map(hex::encode).collect();
    let ended = drawn_at >= sale.ends_at;
    let cut_short = if *winners == first {
        false
    } else if ended && first.starts_with(winners) {
        true
    } else if ended {
        return Err(Mismatch::WinnersCut(due));
    } else {
        return Err(Mismatch::Winners(due));
    };
    let moves = t.moves.as_deref().unwrap_or_default();
    chained_moves(moves, &seed, &ranked, winners.len(), sale.ends_at)?;
    Ok(Checked {
        entrants: leaves.len(),
        winners: winners.len(),
        moves: moves.len(),
        timing,
        cut_short,
        witness,
    })
}

/// The draw's `stock` against the voucher's as read.
fn stock(drawn: i64, seen: StockSeen) -> Result<(), Mismatch> {
    let (before, after) = match seen {
        StockSeen::Before(b) => (Some(b), None),
        StockSeen::After(a) => (None, Some(a)),
        StockSeen::Between { before, after } => (Some(before), Some(after)),
    };
    match (before, after) {
        (Some(published), _) if drawn < published => Err(Mismatch::StockBelow { drawn, published }),
        (_, Some(published)) if drawn > published => Err(Mismatch::StockAbove { drawn, published }),
        _ => Ok(()),
    }
}

/// The committed secret against its commitment, and the leaves (sorted, distinct, as many as
/// the entrants) against their root.
fn committed_list(t: &Transcript) -> Result<(Hash, Vec<Hash>, Hash), Mismatch> {
    let committed = hex32(
        "committed_seed",
        need(t.committed_seed.as_ref(), "committed seed")?,
    )?;
    if hex::encode(commitment(&committed)) != t.commitment {
        return Err(Mismatch::Commitment);
    }
    let leaves = t.leaves.as_ref().ok_or(Mismatch::NotDrawn("leaves"))?;
    let leaves: Vec<Hash> = leaves
        .iter()
        .map(|l| hex32("a leaf", l))
        .collect::<Result<_, _>>()?;
    if let Some(at) = leaves.windows(2).position(|w| w[0] >= w[1]) {
        return Err(Mismatch::Unsorted(at + 1));
    }
    if usize::try_from(t.entrants).ok() != Some(leaves.len()) {
        return Err(Mismatch::Entrants {
            entrants: t.entrants,
            leaves: leaves.len(),
        });
    }
    let root = merkle_root(&leaves);
    let published = need(t.entries_root.as_ref(), "entries root")?;
    if hex::encode(root) != *published {
        return Err(Mismatch::Root {
            computed: hex::encode(root),
            published: published.clone(),
        });
    }
    Ok((committed, leaves, root))
}

/// The published ranking against the leaves ranked under `seed`; the leaves in rank order.
fn ranking(t: &Transcript, seed: &Hash, leaves: &[Hash]) -> Result<Vec<Hash>, Mismatch> {
    let ranked = rank(seed, leaves);
    let published = t.ranking.as_ref().ok_or(Mismatch::NotDrawn("ranking"))?;
    if published.len() != ranked.len() {
        return Err(Mismatch::Ranking {
            rank: published.len().min(ranked.len()) + 1,
            what: format!("{} ranked, {} leaves", published.len(), ranked.len()),
        });
    }
    for (i, ((leaf, key), p)) in ranked.iter().zip(published).enumerate() {
        let what = if p.rank != i64::try_from(i + 1).unwrap_or(-1) {
            format!("numbered {}", p.rank)
        } else if p.leaf != hex::encode(leaf) {
            format!(
                "leaf {} published, {} recomputed",
                p.leaf,
                hex::encode(leaf)
            )
        } else if p.key != hex::encode(key) {
            format!("key {} published, {} recomputed", p.key, hex::encode(key))
        } else {
            continue;
        };
        return Err(Mismatch::Ranking { rank: i + 1, what });
    }
    Ok(ranked.into_iter().map(|(leaf, _)| leaf).collect())
}

/// The moves' chain from `seed`: each to the entrant ranked next (the first after the `winners`,
/// then the one after the move before; an entrant whose order failed is a move too, as the unit
/// went to them), given before the sale's end.
fn chained_moves(
    moves: &[super::Move],
    seed: &Hash,
    ranked: &[Hash],
    winners: usize,
    ends_at: DateTime<Utc>,
) -> Result<(), Mismatch> {
    let mut previous = *seed;
    let mut next = winners;
    for (index, m) in moves.iter().enumerate() {
        let fail = |what: String| Mismatch::Move { index, what };
        let leaf =
            hex32("a move's leaf", &m.leaf).map_err(|_| fail("its leaf is not hex".into()))?;
        match ranked.iter().position(|l| *l == leaf) {
            Some(r) if r == next => next = r + 1,
            Some(r) if next == ranked.len() => {
                return Err(fail(format!(
                    "to rank {}, but every entrant was reached before it",
                    r + 1
                )))
            }
            Some(r) => {
                return Err(fail(format!(
                    "to rank {}, not to rank {}, the next",
                    r + 1,
                    next + 1
                )))
            }
            None => return Err(fail("to a leaf not in the list".into())),
        }
        if m.at >= ends_at {
            return Err(fail(format!(
                "given at {}, once the sale had ended at {ends_at}",
                m.at
            )));
        }
        previous = move_hash(&previous, &leaf, m.reason);
        if hex::encode(previous) != m.hash {
            return Err(fail(format!(
                "its hash recomputes as {}",
                hex::encode(previous)
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
