//! [`check`] against honest transcripts made by the rules, and against each kind of tampering.

use chrono::{DateTime, Duration, Utc};

use super::*;
use crate::fair::{BeaconView, Chain, Move, MoveReason, RankedLeaf};

mod rounds;

const VOUCHER: i64 = 9;
const CHAIN: Chain = Chain {
    genesis_time: 1_799_990_000,
    period: 3,
};
const MARGIN: Duration = Duration::seconds(5);

fn at(secs: i64, millis: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(secs, 0).expect("time") + Duration::milliseconds(millis)
}

/// The entries close (the sale's start), the close itself a moment after, the sale's end.
fn closes_at() -> DateTime<Utc> {
    at(1_800_000_000, 0)
}

fn ends_at() -> DateTime<Utc> {
    at(1_800_003_600, 0)
}

fn timed() -> BeaconCheck {
    BeaconCheck::Timed {
        chain: CHAIN,
        margin: Some(MARGIN),
    }
}

fn sale(stock: i64) -> Sale {
    Sale {
        voucher_id: VOUCHER,
        stock: StockSeen::Before(stock),
        ends_at: ends_at(),
    }
}

/// A drawn transcript made by the rules, with `n` leaves and `stock` units, closed
/// `close_after_ms` after the entries closed; the round is the named one, or the one a late
/// close names (with `planned_round`).
fn drawn_closing(n: u8, stock: i64, close_after_ms: i64) -> Transcript {
    use sha2::Digest;
    let committed = [3u8; 32];
    let mut leaves: Vec<Hash> = (0..n).map(|i| sha2::Sha256::digest([i]).into()).collect();
    leaves.sort_unstable();
    let root = merkle_root(&leaves);
    let closed_at = closes_at() + Duration::milliseconds(close_after_ms);
    let named = CHAIN.named_round(closes_at(), MARGIN);
    let (round, planned_round) = if CHAIN.emitted_by(named, closed_at) {
        (CHAIN.round_after_close(closed_at, MARGIN), Some(named))
    } else {
        (named, None)
    };
    let randomness = [7u8; 32];
    let seed = draw_seed(VOUCHER, &committed, &root, &randomness);
    let ranked = rank(&seed, &leaves);
    let due = usize::try_from(stock).unwrap_or(0).min(leaves.len());
    Transcript {
        voucher_id: VOUCHER,
        commitment: hex::encode(commitment(&committed)),
        entries_open_at: closes_at() - Duration::hours(1),
        closes_at: closes_at(),
        beacon: Some(BeaconView {
            url: "https://api.drand.sh".into(),
            chain_hash: "52db".into(),
            round,
            planned_round,
        }),
        receipt_key: crate::fair::ReceiptKeyView::of(&[3; 32]),
        witness: None,
        entrants: i64::from(n),
        closed_at: Some(closed_at),
        entries_root: Some(hex::encode(root)),
        leaves: Some(leaves.iter().map(hex::encode).collect()),
        committed_seed: Some(hex::encode(committed)),
        randomness: Some(hex::encode(randomness)),
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
        drawn_at: Some(CHAIN.emitted_at(round) + Duration::milliseconds(300)),
    }
}

fn drawn(n: u8, stock: i64) -> Transcript {
    drawn_closing(n, stock, 200)
}

/// `t` with moves to the entrants of `ranks` (0 first), chained from its seed.
fn with_moves(mut t: Transcript, ranks: &[usize]) -> Transcript {
    let seed = hash_from_hex(t.seed.as_deref().expect("seed")).expect("hex");
    let ranking = t.ranking.clone().expect("ranking");
    let mut previous = seed;
    let reasons = [MoveReason::Unpaid, MoveReason::Added, MoveReason::Cancelled];
    t.moves = Some(
        ranks
            .iter()
            .zip(reasons.iter().cycle())
            .map(|(&r, &reason)| {
                let leaf = hash_from_hex(&ranking[r].leaf).expect("hex");
                previous = move_hash(&previous, &leaf, reason);
                Move {
                    leaf: ranking[r].leaf.clone(),
                    reason,
                    at: closes_at() + Duration::minutes(5),
                    recorded_at: Some(closes_at() + Duration::minutes(5)),
                    hash: hex::encode(previous),
                }
            })
            .collect(),
    );
    t
}

#[test]
fn honest_transcripts_check() {
    let c = check(&drawn(20, 5), &sale(5), &timed()).expect("checks");
    assert_eq!(
        c,
        Checked {
            entrants: 20,
            winners: 5,
            moves: 0,
            timing: Timing::Checked { pinned: true },
            cut_short: false,
            witness: crate::fair::Witnessed::Absent,
        }
    );
    assert_eq!(
        check(&drawn(3, 5), &sale(5), &timed()).map(|c| c.winners),
        Ok(3)
    );
    let moved = with_moves(drawn(10, 2), &[2, 3, 4]);
    assert_eq!(check(&moved, &sale(2), &timed()).map(|c| c.moves), Ok(3));
    // Without the margin the rounds are bounded by the chain's clock; without the clock, not
    // checked, and the result says so.
    let unpinned = BeaconCheck::Timed {
        chain: CHAIN,
        margin: None,
    };
    let timing = |b: &BeaconCheck| check(&moved, &sale(2), b).map(|c| c.timing);
    assert_eq!(timing(&unpinned), Ok(Timing::Checked { pinned: false }));
    assert_eq!(timing(&BeaconCheck::Untimed), Ok(Timing::NotChecked));
}

#[test]
fn the_stock_may_differ_from_a_reading_only_by_top_ups_between_it_and_the_draw() {
    let t = drawn(10, 4);
    let with = |stock: StockSeen| Sale { stock, ..sale(4) };
    assert!(
        check(&t, &with(StockSeen::Before(3)), &timed()).is_ok(),
        "a top-up after the read"
    );
    assert!(
        check(&t, &with(StockSeen::After(6)), &timed()).is_ok(),
        "a top-up after the draw"
    );
    let between = StockSeen::Between {
        before: 4,
        after: 4,
    };
    assert!(check(&t, &with(between), &timed()).is_ok());
    assert_eq!(
        check(&t, &with(StockSeen::Before(5)), &timed()),
        Err(Mismatch::StockBelow {
            drawn: 4,
            published: 5
        })
    );
    assert_eq!(
        check(&t, &with(StockSeen::After(3)), &timed()),
        Err(Mismatch::StockAbove {
            drawn: 4,
            published: 3
        })
    );
    // Fewer units drawn, fewer winners: still refused.
    let fewer = drawn(10, 3);
    assert!(matches!(
        check(
            &fewer,
            &with(StockSeen::Between {
                before: 4,
                after: 4
            }),
            &timed()
        ),
        Err(Mismatch::StockBelow { .. })
    ));
}

#[test]
fn a_draw_recorded_after_the_sale_ended_may_have_fewer_winners_and_no_other_may() {
    let mut t = drawn(10, 4);
    t.winners.as_mut().expect("winners").truncate(1);
    assert_eq!(check(&t, &sale(4), &timed()), Err(Mismatch::Winners(4)));
    let ended = Sale {
        ends_at: t.drawn_at.expect("drawn"),
        ..sale(4)
    };
    assert_eq!(
        check(&t, &ended, &timed()).map(|c| (c.winners, c.cut_short)),
        Ok((1, true))
    );
    t.winners = Some(Vec::new());
    assert_eq!(
        check(&t, &ended, &timed()).map(|c| c.winners),
        Ok(0),
        "the round came after"
    );
    let third = t.ranking.as_ref().expect("ranking")[2].leaf.clone();
    t.winners = Some(vec![third]);
    assert_eq!(check(&t, &ended, &timed()), Err(Mismatch::WinnersCut(4)));
}

#[test]
fn another_vouchers_transcript_is_refused() {
    let t = drawn(10, 2);
    let other = Sale {
        voucher_id: 10,
        ..sale(2)
    };
    assert_eq!(
        check(&t, &other, &timed()),
        Err(Mismatch::Voucher {
            asked: 10,
            published: VOUCHER
        })
    );
}

#[test]
fn each_kind_of_tampering_is_named() {
    let ok = |t: &Transcript| check(t, &sale(2), &timed());
    let mut t = drawn(10, 2);
    t.commitment = "00".repeat(32);
    assert_eq!(ok(&t), Err(Mismatch::Commitment));

    let mut t = drawn(10, 2);
    t.leaves.as_mut().expect("leaves").pop();
    t.entrants = 9;
    assert!(
        matches!(ok(&t), Err(Mismatch::Root { .. })),
        "an entrant dropped"
    );

    let mut t = drawn(10, 2);
    t.randomness = Some("08".repeat(32));
    assert!(matches!(ok(&t), Err(Mismatch::Seed(_))), "other randomness");
    t.randomness = Some("0707".into());
    assert!(
        matches!(ok(&t), Err(Mismatch::NotHex(_))),
        "not a drand randomness"
    );

    let mut t = drawn(10, 2);
    t.ranking.as_mut().expect("ranking").swap(0, 1);
    assert!(matches!(ok(&t), Err(Mismatch::Ranking { rank: 1, .. })));

    let mut t = drawn(10, 2);
    let third = t.ranking.as_ref().expect("ranking")[2].leaf.clone();
    t.winners.as_mut().expect("winners")[1] = third;
    assert_eq!(ok(&t), Err(Mismatch::Winners(2)), "a winner swapped");
}

#[test]
fn moves_go_to_the_next_entrant_by_rank_and_no_other() {
    let ok = |t: &Transcript| check(t, &sale(2), &timed());
    let skip = |ranks: &[usize]| ok(&with_moves(drawn(10, 2), ranks));
    assert!(skip(&[2, 3]).is_ok());
    let is_move = |r: Result<Checked, Mismatch>, at: usize| matches!(r, Err(Mismatch::Move { index, .. }) if index == at);
    assert!(is_move(skip(&[3]), 0), "rank 3 skipped");
    assert!(is_move(skip(&[2, 4]), 1), "rank 4 skipped");
    assert!(is_move(skip(&[0]), 0), "to a winner");
    assert!(is_move(skip(&[2, 2]), 1), "twice to one entrant");
    assert!(
        skip(&(2..10).collect::<Vec<_>>()).is_ok(),
        "every entrant reached"
    );
    let mut past = (2..10).collect::<Vec<_>>();
    past.push(5);
    assert!(is_move(skip(&past), 8), "after every entrant was reached");

    let t = with_moves(drawn(10, 2), &[2, 3]);
    let mut reordered = t.clone();
    reordered.moves.as_mut().expect("moves").swap(0, 1);
    assert!(is_move(ok(&reordered), 0));
    let mut dropped = t.clone();
    dropped.moves.as_mut().expect("moves").remove(0);
    assert!(is_move(ok(&dropped), 0));
    let mut rehashed = t.clone();
    rehashed.moves.as_mut().expect("moves")[1].reason = MoveReason::Refunded;
    assert!(is_move(ok(&rehashed), 1));
    let mut after_the_end = t;
    after_the_end.moves.as_mut().expect("moves")[1].at = ends_at();
    assert!(is_move(ok(&after_the_end), 1));
}
