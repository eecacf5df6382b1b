//! [`check`]: a drawn transcript recomputed from itself alone. The beacon round's signature is
//! not checked here (no I/O, no BLS): the command-line verifier fetches and verifies it, and
//! compares its randomness with the transcript's.

use super::{commitment, draw_seed, hash_from_hex, merkle_root, move_hash, rank, Hash, Transcript};

/// What does not hold, the first found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Mismatch {
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
    #[error("the randomness is not hex")]
    Randomness,
    #[error("the seed recomputes as {0}, not as published")]
    Seed(String),
    #[error("rank {rank}: {what}")]
    Ranking { rank: usize, what: String },
    #[error("the winners are not the first {0} of the ranking")]
    Winners(usize),
    #[error("move {index}: {what}")]
    Move { index: usize, what: String },
}

/// What a check established.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub entrants: usize,
    pub winners: usize,
    pub moves: usize,
}

fn need<'a>(v: Option<&'a String>, name: &'static str) -> Result<&'a String, Mismatch> {
    v.ok_or(Mismatch::NotDrawn(name))
}

fn hex32(field: &str, text: &str) -> Result<Hash, Mismatch> {
    hash_from_hex(text).ok_or_else(|| Mismatch::NotHex(field.to_owned()))
}

/// Recomputes `t`: the commitment, the root over the sorted leaves, the seed, every key and
/// rank, the winners (the first `min(stock, entrants)` ranks) and the moves' chain (each move to
/// an entrant ranked after the winners and after the move before it).
pub fn check(t: &Transcript) -> Result<Checked, Mismatch> {
    let (committed, leaves, root) = committed_list(t)?;
    let randomness = hex::decode(need(t.randomness.as_ref(), "randomness")?)
        .map_err(|_| Mismatch::Randomness)?;
    let seed = draw_seed(t.voucher_id, &committed, &root, &randomness);
    if Some(hex::encode(seed)) != t.seed {
        return Err(Mismatch::Seed(hex::encode(seed)));
    }
    let ranked: Vec<Hash> = ranking(t, &seed, &leaves)?;
    let stock = usize::try_from(t.stock.ok_or(Mismatch::NotDrawn("stock"))?).unwrap_or(0);
    let winners = t.winners.as_ref().ok_or(Mismatch::NotDrawn("winners"))?;
    let due = stock.min(ranked.len());
    let first: Vec<String> = ranked.iter().take(due).map(hex::encode).collect();
    if *winners != first {
        return Err(Mismatch::Winners(due));
    }
    let moves = t.moves.as_deref().unwrap_or_default();
    chain(moves, &seed, &ranked, due)?;
    Ok(Checked {
        entrants: leaves.len(),
        winners: due,
        moves: moves.len(),
    })
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

/// The moves' chain from `seed`, each to an entrant ranked after the `due` winners and after
/// the move before it.
fn chain(moves: &[super::Move], seed: &Hash, ranked: &[Hash], due: usize) -> Result<(), Mismatch> {
    let mut previous = *seed;
    let mut after = due;
    for (index, m) in moves.iter().enumerate() {
        let fail = |what: String| Mismatch::Move { index, what };
        let leaf =
            hex32("a move's leaf", &m.leaf).map_err(|_| fail("its leaf is not hex".into()))?;
        match ranked.iter().position(|l| *l == leaf) {
            Some(r) if r >= after => after = r + 1,
            Some(r) => return Err(fail(format!("to rank {}, not after rank {after}", r + 1))),
            None => return Err(fail("to a leaf not in the list".into())),
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
mod tests {
    use super::super::MoveReason;
    use super::*;
    use crate::fair::{Move, RankedLeaf};

    /// A drawn transcript made by the rules, with `n` leaves and `stock` units.
    fn drawn(n: u8, stock: i64) -> Transcript {
        use sha2::Digest;
        let committed = [3u8; 32];
        let mut leaves: Vec<Hash> = (0..n).map(|i| sha2::Sha256::digest([i]).into()).collect();
        leaves.sort_unstable();
        let root = merkle_root(&leaves);
        let seed = draw_seed(9, &committed, &root, &[7, 7]);
        let ranked = rank(&seed, &leaves);
        let due = usize::try_from(stock).unwrap_or(0).min(leaves.len());
        let at = chrono::DateTime::from_timestamp(1_800_000_000, 0).expect("time");
        Transcript {
            voucher_id: 9,
            commitment: hex::encode(commitment(&committed)),
            entries_open_at: at,
            closes_at: at,
            beacon: None,
            entrants: i64::from(n),
            closed_at: Some(at),
            entries_root: Some(hex::encode(root)),
            leaves: Some(leaves.iter().map(hex::encode).collect()),
            committed_seed: Some(hex::encode(committed)),
            randomness: Some("0707".into()),
            seed: Some(hex::encode(seed)),
            stock: Some(stock),
            ranking: Some(
                ranked
                    .iter()
                    .zip(1..)
                    .map(|((l, k), rank)| RankedLeaf {
                        rank,
                        leaf: hex::encode(l),
                        key: hex::encode(k),
                    })
                    .collect(),
            ),
            winners: Some(ranked[..due].iter().map(|(l, _)| hex::encode(l)).collect()),
            moves: Some(Vec::new()),
            drawn_at: Some(at),
        }
    }

    #[test]
    fn a_transcript_made_by_the_rules_checks() {
        assert_eq!(
            check(&drawn(20, 5)),
            Ok(Checked {
                entrants: 20,
                winners: 5,
                moves: 0
            })
        );
        assert_eq!(check(&drawn(3, 5)).map(|c| c.winners), Ok(3));
    }

    #[test]
    fn each_kind_of_tampering_is_named() {
        let mut t = drawn(10, 2);
        t.commitment = "00".repeat(32);
        assert_eq!(check(&t), Err(Mismatch::Commitment));

        let mut t = drawn(10, 2);
        t.leaves.as_mut().expect("leaves").pop();
        t.entrants = 9;
        assert!(
            matches!(check(&t), Err(Mismatch::Root { .. })),
            "an entrant dropped"
        );

        let mut t = drawn(10, 2);
        t.randomness = Some("0708".into());
        assert!(matches!(check(&t), Err(Mismatch::Seed(_))), "another round");

        let mut t = drawn(10, 2);
        t.ranking.as_mut().expect("ranking").swap(0, 1);
        assert!(matches!(check(&t), Err(Mismatch::Ranking { rank: 1, .. })));

        let mut t = drawn(10, 2);
        let third = t.ranking.as_ref().expect("ranking")[2].leaf.clone();
        t.winners.as_mut().expect("winners")[1] = third;
        assert_eq!(check(&t), Err(Mismatch::Winners(2)), "a winner swapped");
    }

    #[test]
    fn moves_chain_from_the_seed_down_the_ranking() {
        let mut t = drawn(10, 2);
        let seed = hash_from_hex(t.seed.as_deref().expect("seed")).expect("hex");
        let ranking = t.ranking.clone().expect("ranking");
        let leaf = |r: usize| hash_from_hex(&ranking[r].leaf).expect("hex");
        let first = move_hash(&seed, &leaf(2), MoveReason::Unpaid);
        let second = move_hash(&first, &leaf(4), MoveReason::Added);
        let at = t.closes_at;
        t.moves = Some(vec![
            Move {
                leaf: ranking[2].leaf.clone(),
                reason: MoveReason::Unpaid,
                at,
                hash: hex::encode(first),
            },
            Move {
                leaf: ranking[4].leaf.clone(),
                reason: MoveReason::Added,
                at,
                hash: hex::encode(second),
            },
        ]);
        assert_eq!(check(&t).map(|c| c.moves), Ok(2));
        let mut reordered = t.clone();
        reordered.moves.as_mut().expect("moves").swap(0, 1);
        assert!(matches!(
            check(&reordered),
            Err(Mismatch::Move { index: 0, .. })
        ));
        let mut dropped = t.clone();
        dropped.moves.as_mut().expect("moves").remove(0);
        assert!(matches!(
            check(&dropped),
            Err(Mismatch::Move { index: 0, .. })
        ));
        let mut to_a_winner = t;
        to_a_winner.moves.as_mut().expect("moves")[0].leaf = ranking[0].leaf.clone();
        assert!(matches!(
            check(&to_a_winner),
            Err(Mismatch::Move { index: 0, .. })
        ));
    }
}
