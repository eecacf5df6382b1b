//! The `draws` and `draw_entries` tables: a draw sale's committed secret, its beacon round, the
//! entrant list's root once closed (`draw_log.rs`) and, once drawn, its seed and ranking
//! (design.md decisions 34 and 42).

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};

use crate::domain::{OrderId, UserId, VoucherId};

mod due;
mod moves;
pub use due::{
    awaiting_draw, awaiting_rounds, overdue, recorded_ending_after, unrecorded, unwitnessed,
};
pub use moves::{move_of, record_moves, recorded_moves, RecordedMove};

/// A draw as PostgreSQL holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrawRow {
    /// The secret committed at creation (`committed_seed` once revealed).
    pub seed: [u8; 32],
    pub commitment: [u8; 32],
    /// The public key its receipts are signed with (fixed at creation).
    pub receipt_key: Option<[u8; 32]>,
    /// When the ranking was recorded, with how many entrants.
    pub recorded: Option<(DateTime<Utc>, i64)>,
    pub beacon: Option<BeaconRound>,
    /// When the log closed, with its root.
    pub closed: Option<(DateTime<Utc>, [u8; 32])>,
    /// The close's outside timestamp, once had.
    pub witness: Option<WitnessRow>,
    /// Once drawn: the round's randomness, the seed, the units at the draw, the ranks the draw
    /// itself reached.
    pub drawn: Option<DrawnRow>,
}

/// The beacon round a draw waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BeaconRound {
    pub url: String,
    pub chain_hash: String,
    pub round: u64,
    /// The round named at creation, when a late close moved it.
    pub planned: Option<u64>,
}

/// An RFC 3161 authority's timestamp of the committed list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WitnessRow {
    pub tsa: String,
    /// The `TimeStampToken`, DER.
    pub token: Vec<u8>,
    /// The time the token states.
    pub at: DateTime<Utc>,
}

/// What the draw fixed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrawnRow {
    pub randomness: Vec<u8>,
    pub seed: [u8; 32],
    pub stock: i64,
    pub winners: i64,
}

fn bytes32(raw: Vec<u8>) -> Result<[u8; 32], sqlx::Error> {
    raw.try_into()
        .map_err(|_| sqlx::Error::Decode("a draw's seed, commitment or tag is not 32 bytes".into()))
}

/// Stores a new draw sale's secret, its commitment and the beacon round it names, in the
/// transaction that creates the voucher.
pub async fn insert(
    conn: &mut PgConnection,
    voucher: VoucherId,
    seed: &[u8; 32],
    commitment: &[u8; 32],
    receipt_key: &[u8; 32],
    beacon: Option<&BeaconRound>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO draws (voucher_id, seed, commitment, receipt_key, beacon_url,
                            beacon_chain_hash, beacon_round)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(voucher.get())
    .bind(seed.as_slice())
    .bind(commitment.as_slice())
    .bind(receipt_key.as_slice())
    .bind(beacon.map(|b| b.url.as_str()))
    .bind(beacon.map(|b| b.chain_hash.as_str()))
    .bind(beacon.and_then(|b| i64::try_from(b.round).ok()))
    .execute(conn)
    .await?;
    Ok(())
}

/// Records the close's outside timestamp, unless one was recorded first (by another instance).
pub async fn witness(db: &PgPool, voucher: VoucherId, w: &WitnessRow) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE draws SET witness_tsa = $2, witness_token = $3, witnessed_at = $4
         WHERE voucher_id = $1 AND closed_at IS NOT NULL AND witness_token IS NULL",
    )
    .bind(voucher.get())
    .bind(&w.tsa)
    .bind(&w.token)
    .bind(w.at)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Names `key` as the receipt key of every draw created before receipts named theirs (the key
/// that signed them until then); returns how many.
pub async fn adopt_receipt_key(db: &PgPool, key: &[u8; 32]) -> Result<u64, sqlx::Error> {
    let done = sqlx::query("UPDATE draws SET receipt_key = $1 WHERE receipt_key IS NULL")
        .bind(key.as_slice())
        .execute(db)
        .await?;
    Ok(done.rows_affected())
}

#[derive(sqlx::FromRow)]
struct Row {
    seed: Vec<u8>,
    commitment: Vec<u8>,
    receipt_key: Option<Vec<u8>>,
    drawn_at: Option<DateTime<Utc>>,
    entrants: Option<i32>,
    beacon_url: Option<String>,
    beacon_chain_hash: Option<String>,
    beacon_round: Option<i64>,
    planned_round: Option<i64>,
    closed_at: Option<DateTime<Utc>>,
    entries_root: Option<Vec<u8>>,
    randomness: Option<Vec<u8>>,
    draw_seed: Option<Vec<u8>>,
    stock_at_draw: Option<i32>,
    winners: Option<i32>,
    witness_tsa: Option<String>,
    witness_token: Option<Vec<u8>>,
    witnessed_at: Option<DateTime<Utc>>,
}

/// `voucher`'s draw, if it is a draw sale.
pub async fn get(db: &PgPool, voucher: VoucherId) -> Result<Option<DrawRow>, sqlx::Error> {
    let row: Option<Row> = sqlx::query_as(
        "SELECT seed, commitment, receipt_key, drawn_at, entrants, beacon_url, beacon_chain_hash,
                beacon_round, planned_round, closed_at, entries_root, randomness, draw_seed,
                stock_at_draw, winners, witness_tsa, witness_token, witnessed_at
         FROM draws WHERE voucher_id = $1",
    )
    .bind(voucher.get())
    .fetch_optional(db)
    .await?;
    row.map(|r| {
        let beacon = match (r.beacon_url, r.beacon_chain_hash, r.beacon_round) {
            (Some(url), Some(chain_hash), Some(round)) => Some(BeaconRound {
                url,
                chain_hash,
                round: u64::try_from(round).unwrap_or(0),
                planned: r.planned_round.and_then(|p| u64::try_from(p).ok()),
            }),
            _ => None,
        };
        let closed = match (r.closed_at, r.entries_root) {
            (Some(at), Some(root)) => Some((at, bytes32(root)?)),
            _ => None,
        };
        let drawn = match (r.drawn_at, r.draw_seed) {
            (Some(_), Some(seed)) => Some(DrawnRow {
                randomness: r.randomness.unwrap_or_default(),
                seed: bytes32(seed)?,
                stock: r.stock_at_draw.map_or(0, i64::from),
                winners: r.winners.map_or(0, i64::from),
            }),
            _ => None,
        };
        Ok(DrawRow {
            seed: bytes32(r.seed)?,
            commitment: bytes32(r.commitment)?,
            receipt_key: r.receipt_key.map(bytes32).transpose()?,
            recorded: r.drawn_at.zip(r.entrants.map(i64::from)),
            beacon,
            closed,
            witness: match (r.witness_tsa, r.witness_token, r.witnessed_at) {
                (Some(tsa), Some(token), Some(at)) => Some(WitnessRow { tsa, token, at }),
                _ => None,
            },
            drawn,
        })
    })
    .transpose()
}

/// What a draw fixed, to record.
#[derive(Debug)]
pub struct Drawn<'a> {
    /// (user, leaf, key), rank 0 first.
    pub ranking: &'a [(UserId, [u8; 32], [u8; 32])],
    pub randomness: &'a [u8],
    pub seed: [u8; 32],
    pub stock: i64,
    /// The draw's own winners (`run.rs`).
    pub winners: i64,
    /// The sale's end, when it stopped the draw's admissions: the record is dated no earlier.
    pub not_before: Option<DateTime<Utc>>,
}

/// Records `voucher`'s draw once: `false` when it was recorded before (another instance, or
/// this one before a crash), and then nothing is written.
pub async fn record(
    db: &PgPool,
    voucher: VoucherId,
    drawn: &Drawn<'_>,
) -> Result<bool, sqlx::Error> {
    let ranking = drawn.ranking;
    const CHUNK: usize = 10_000;
    let mut tx = db.begin().await?;
    let open: Option<bool> =
        sqlx::query_scalar("SELECT drawn_at IS NULL FROM draws WHERE voucher_id = $1 FOR UPDATE")
            .bind(voucher.get())
            .fetch_optional(&mut *tx)
            .await?;
    if open != Some(true) {
        return Ok(false);
    }
    for (n, chunk) in ranking.chunks(CHUNK).enumerate() {
        let first = i32::try_from(n * CHUNK).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
        let users: Vec<i64> = chunk.iter().map(|(u, _, _)| u.get()).collect();
        let leaves: Vec<Vec<u8>> = chunk.iter().map(|(_, l, _)| l.to_vec()).collect();
        let keys: Vec<Vec<u8>> = chunk.iter().map(|(_, _, k)| k.to_vec()).collect();
        sqlx::query(
            "INSERT INTO draw_entries (voucher_id, rank, user_id, leaf, tag)
             SELECT $1, $2 + ord::int - 1, u, l, k
             FROM unnest($3::bigint[], $4::bytea[], $5::bytea[]) WITH ORDINALITY AS e(u, l, k, ord)",
        )
        .bind(voucher.get())
        .bind(first)
        .bind(&users)
        .bind(&leaves)
        .bind(&keys)
        .execute(&mut *tx)
        .await?;
    }
    let entrants = i32::try_from(ranking.len()).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
    let int = |n: i64| i32::try_from(n).map_err(|e| sqlx::Error::Encode(Box::new(e)));
    sqlx::query(
        "UPDATE draws SET drawn_at = greatest(now(), $7), entrants = $2, randomness = $3,
                draw_seed = $4, stock_at_draw = $5, winners = $6
         WHERE voucher_id = $1",
    )
    .bind(voucher.get())
    .bind(entrants)
    .bind(drawn.randomness)
    .bind(drawn.seed.as_slice())
    .bind(int(drawn.stock.max(0))?)
    .bind(int(drawn.winners)?)
    .bind(drawn.not_before)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(true)
}

/// `user`'s rank in `voucher`'s recorded ranking (0 first).
pub async fn rank_of(
    db: &PgPool,
    voucher: VoucherId,
    user: UserId,
) -> Result<Option<i64>, sqlx::Error> {
    let rank: Option<i32> =
        sqlx::query_scalar("SELECT rank FROM draw_entries WHERE voucher_id = $1 AND user_id = $2")
            .bind(voucher.get())
            .bind(user.get())
            .fetch_optional(db)
            .await?;
    Ok(rank.map(i64::from))
}

/// The user IDs of ranks `from` .. `from + n` of `voucher`'s recorded ranking, in rank order.
pub async fn ranks(
    db: &PgPool,
    voucher: VoucherId,
    from: i64,
    n: i64,
) -> Result<Vec<UserId>, sqlx::Error> {
    let users: Vec<i64> = sqlx::query_scalar(
        "SELECT user_id FROM draw_entries WHERE voucher_id = $1 AND rank >= $2
         ORDER BY rank LIMIT $3",
    )
    .bind(voucher.get())
    .bind(from)
    .bind(n)
    .fetch_all(db)
    .await?;
    Ok(users.into_iter().map(UserId::from_db).collect())
}

/// `voucher`'s recorded ranking as published: (leaf, key), rank order.
pub async fn ranking(
    db: &PgPool,
    voucher: VoucherId,
) -> Result<Vec<([u8; 32], [u8; 32])>, sqlx::Error> {
    let rows: Vec<(Option<Vec<u8>>, Vec<u8>)> =
        sqlx::query_as("SELECT leaf, tag FROM draw_entries WHERE voucher_id = $1 ORDER BY rank")
            .bind(voucher.get())
            .fetch_all(db)
            .await?;
    rows.into_iter()
        .map(|(leaf, key)| Ok((bytes32(leaf.unwrap_or_default())?, bytes32(key)?)))
        .collect()
}

/// A recorded draw's cursor (one past the last rank whose entrant ever held an order of the
/// sale) and entrants, inside the caller's snapshot; `None` for a draw not recorded (or a
/// first-come sale).
pub async fn recorded_cursor(
    conn: &mut PgConnection,
    voucher: VoucherId,
) -> Result<Option<(i64, i64)>, sqlx::Error> {
    let row: Option<(Option<i32>, Option<i32>)> = sqlx::query_as(
        "SELECT d.entrants,
                (SELECT max(e.rank) + 1 FROM draw_entries e
                 JOIN orders o ON o.voucher_id = e.voucher_id AND o.user_id = e.user_id
                 WHERE e.voucher_id = d.voucher_id)
         FROM draws d WHERE d.voucher_id = $1 AND d.drawn_at IS NOT NULL",
    )
    .bind(voucher.get())
    .fetch_optional(conn)
    .await?;
    Ok(row.and_then(|(entrants, cursor)| {
        let entrants = i64::from(entrants?);
        Some((cursor.map_or(0, i64::from), entrants))
    }))
}

/// `user`'s latest order on `voucher`, whatever its status (a winner's order cancelled since is
/// still the one the draw gave).
pub async fn latest_order(
    db: &PgPool,
    voucher: VoucherId,
    user: UserId,
) -> Result<Option<OrderId>, sqlx::Error> {
    let id: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM orders WHERE voucher_id = $1 AND user_id = $2 ORDER BY id DESC LIMIT 1",
    )
    .bind(voucher.get())
    .bind(user.get())
    .fetch_optional(db)
    .await?;
    id.map(|id| OrderId::from_db(id).map_err(|e| sqlx::Error::Decode(Box::new(e))))
        .transpose()
}
