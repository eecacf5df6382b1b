//! [`transcript`]: a draw as anyone may check it (`GET /api/vouchers/{id}/draw`), each part
//! published as soon as it is fixed: the commitment and the beacon round from creation, the
//! entrant list's root and leaves from the close (before the round exists), and the seed, the
//! ranking, the winners and the moves from the draw. The rules that recompute it are
//! `domain::fair`.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use redis::AsyncCommands;

pub use crate::domain::fair::{BeaconView, Move, RankedLeaf, Transcript};
use crate::{
    domain::{fair, VoucherId},
    infra::store,
    Core,
};

use super::{
    draw_sale,
    memory::{ClosedLeaves, Revealed},
    DrawError,
};

enum Fixed {
    Drawn(Arc<Revealed>),
    /// Not drawn yet: the transcript without its leaves, and the closed list's leaves once
    /// closed (kept apart: a large list is serialized once, not once per request).
    Undrawn(Box<Transcript>, Option<Arc<ClosedLeaves>>),
}

/// `voucher`'s transcript, its moves read now.
pub async fn transcript(core: &Core, voucher: VoucherId) -> Result<Transcript, DrawError> {
    match fixed(core, voucher).await? {
        Fixed::Undrawn(mut t, leaves) => {
            t.leaves = leaves.map(|l| hex_leaves(&l.sorted));
            Ok(*t)
        }
        Fixed::Drawn(r) => {
            let mut t = r.transcript.clone();
            t.moves = Some(moves(core, voucher).await?);
            Ok(t)
        }
    }
}

/// `voucher`'s transcript as JSON, in parts to send one after the other: a drawn one's body
/// from memory, then its moves read now; a closed one's facts, then its leaves from memory.
pub async fn transcript_json(
    core: &Core,
    voucher: VoucherId,
) -> Result<Vec<bytes::Bytes>, DrawError> {
    match fixed(core, voucher).await? {
        Fixed::Undrawn(t, None) => Ok(vec![json(&t).into()]),
        Fixed::Undrawn(t, Some(leaves)) => {
            let mut head = json(&t);
            // `{…}` without its brace: the leaves follow.
            head.pop();
            Ok(vec![
                head.into(),
                bytes::Bytes::from_static(b",\"leaves\":"),
                leaves.json(),
                bytes::Bytes::from_static(b"}"),
            ])
        }
        Fixed::Drawn(r) => {
            let moves = moves(core, voucher).await?;
            let mut tail = b",\"moves\":".to_vec();
            tail.extend(json(&moves));
            tail.push(b'}');
            Ok(vec![r.head.clone(), tail.into()])
        }
    }
}

/// A draw's facts without its lists: what the check page says before any script runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    pub commitment: String,
    pub entrants: i64,
    pub beacon: Option<BeaconView>,
    pub entries_root: Option<String>,
    pub seed: Option<String>,
    pub stock: Option<i64>,
    /// The sale ended before its start: no draw ran (its committed secret is published).
    pub never_drawn: bool,
}

impl Facts {
    fn of(t: &Transcript) -> Self {
        Self {
            commitment: t.commitment.clone(),
            entrants: t.entrants,
            beacon: t.beacon.clone(),
            entries_root: t.entries_root.clone(),
            seed: t.seed.clone(),
            stock: t.stock,
            never_drawn: t.committed_seed.is_some() && t.seed.is_none(),
        }
    }
}

/// `voucher`'s [`Facts`], read as its transcript is, without copying its leaves or ranking.
pub async fn facts(core: &Core, voucher: VoucherId) -> Result<Facts, DrawError> {
    Ok(match fixed(core, voucher).await? {
        Fixed::Undrawn(t, _) => Facts::of(&t),
        Fixed::Drawn(r) => Facts::of(&r.transcript),
    })
}

fn hex_leaves(leaves: &[fair::Hash]) -> Vec<String> {
    leaves.iter().map(hex::encode).collect()
}

/// Text, numbers and times with string keys: serde_json cannot fail on them.
fn json<T: serde::Serialize>(value: &T) -> Vec<u8> {
    serde_json::to_vec(value)
        .unwrap_or_else(|e| unreachable!("a transcript always serializes: {e}"))
}

async fn fixed(core: &Core, voucher: VoucherId) -> Result<Fixed, DrawError> {
    let (v, committed) = draw_sale(core, voucher).await?;
    if let Some(drawn) = core.draw_reveals.get(&voucher) {
        return Ok(Fixed::Drawn(drawn));
    }
    let row = store::draws::get(&core.db, voucher)
        .await?
        .ok_or(DrawError::NotADraw)?;
    // Before the close, Redis's count (the log's own comes with the leaves).
    let entrants = match row.closed {
        Some(_) => 0,
        None => {
            let mut redis = core.redis.clone();
            redis.scard(core.keys.voucher(voucher).entries).await?
        }
    };
    let ended_before_start = v.window.ends_at() <= Utc::now() && row.closed.is_none();
    let mut t = Transcript {
        voucher_id: voucher.get(),
        commitment: hex::encode(row.commitment),
        entries_open_at: v.opening.entries_open_at().unwrap_or(v.window.begins_at()),
        closes_at: v.window.begins_at(),
        beacon: row.beacon.as_ref().map(|b| BeaconView {
            url: b.url.clone(),
            chain_hash: b.chain_hash.clone(),
            round: b.round,
            planned_round: b.planned,
        }),
        entrants,
        closed_at: None,
        entries_root: None,
        leaves: None,
        witness: None,
        receipt_key: fair::ReceiptKeyView::of(&committed.receipt_key),
        committed_seed: ended_before_start.then(|| hex::encode(committed.seed.expose())),
        randomness: None,
        seed: None,
        stock: None,
        ranking: None,
        winners: None,
        moves: None,
        drawn_at: None,
    };
    let mut closed_leaves = None;
    if let Some((closed_at, root)) = row.closed {
        let leaves = leaves(core, voucher).await?;
        t.entrants = i64::try_from(leaves.sorted.len()).unwrap_or(i64::MAX);
        t.closed_at = Some(closed_at);
        t.entries_root = Some(hex::encode(root));
        closed_leaves = Some(leaves);
        t.witness = row.witness.as_ref().map(|w| fair::WitnessView {
            tsa: w.tsa.clone(),
            at: w.at,
            token: hex::encode(&w.token),
        });
    }
    if let (Some(drawn), Some((drawn_at, _))) = (&row.drawn, row.recorded) {
        // One reading of the ranking at a time; whoever waited finds it made.
        let _one = core.draw_loading.lock().await;
        if let Some(drawn) = core.draw_reveals.get(&voucher) {
            return Ok(Fixed::Drawn(drawn));
        }
        t.leaves = closed_leaves.map(|l| hex_leaves(&l.sorted));
        reveal(
            core,
            voucher,
            &mut t,
            drawn,
            drawn_at,
            committed.seed.expose(),
        )
        .await?;
        let mut head = json(&t);
        // `{…}` without its brace: the moves follow.
        head.pop();
        let revealed = Arc::new(Revealed {
            transcript: t,
            head: head.into(),
        });
        core.draw_reveals.insert(voucher, Arc::clone(&revealed));
        return Ok(Fixed::Drawn(revealed));
    }
    Ok(Fixed::Undrawn(Box::new(t), closed_leaves))
}

/// The closed log's leaves sorted ascending (kept in memory: they never change once closed;
/// one reading at a time, whoever waited finds it made).
pub(super) async fn leaves(
    core: &Core,
    voucher: VoucherId,
) -> Result<Arc<ClosedLeaves>, DrawError> {
    if let Some(leaves) = core.draw_leaves.get(&voucher) {
        return Ok(leaves);
    }
    let _one = core.draw_loading.lock().await;
    if let Some(leaves) = core.draw_leaves.get(&voucher) {
        return Ok(leaves);
    }
    let mut leaves: Vec<fair::Hash> = store::draw_log::entrants(&core.db, voucher)
        .await?
        .into_iter()
        .map(|(_, l)| l)
        .collect();
    leaves.sort_unstable();
    let leaves = Arc::new(ClosedLeaves::new(leaves));
    core.draw_leaves.insert(voucher, Arc::clone(&leaves));
    Ok(leaves)
}

async fn reveal(
    core: &Core,
    voucher: VoucherId,
    t: &mut Transcript,
    drawn: &store::draws::DrawnRow,
    drawn_at: DateTime<Utc>,
    committed: &fair::Hash,
) -> Result<(), DrawError> {
    let ranking = store::draws::ranking(&core.db, voucher).await?;
    let winners = usize::try_from(drawn.winners).unwrap_or(0);
    t.committed_seed = Some(hex::encode(committed));
    t.randomness = Some(hex::encode(&drawn.randomness));
    t.seed = Some(hex::encode(drawn.seed));
    t.stock = Some(drawn.stock);
    t.winners = Some(
        ranking
            .iter()
            .take(winners)
            .map(|(l, _)| hex::encode(l))
            .collect(),
    );
    t.ranking = Some(
        ranking
            .iter()
            .zip(1..)
            .map(|((leaf, key), rank)| RankedLeaf {
                rank,
                leaf: hex::encode(leaf),
                key: hex::encode(key),
            })
            .collect(),
    );
    t.drawn_at = Some(drawn_at);
    Ok(())
}

/// `voucher`'s moves as recorded (`store::draws::record_moves`): read, never recomputed.
async fn moves(core: &Core, voucher: VoucherId) -> Result<Vec<Move>, DrawError> {
    Ok(store::draws::recorded_moves(&core.db, voucher)
        .await?
        .into_iter()
        .map(step)
        .collect())
}

/// A recorded move as the transcript publishes it.
pub(super) fn step(m: store::draws::RecordedMove) -> Move {
    Move {
        leaf: hex::encode(m.leaf),
        reason: m.reason,
        at: m.moved_at,
        recorded_at: Some(m.recorded_at),
        hash: hex::encode(m.hash),
    }
}
