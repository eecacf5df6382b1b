//! The `draw_log` table: every entry into a draw, committed before its 202 (design.md decision
//! 42), and the close that commits the entrant list. An entry's insert takes its draw's row
//! `FOR SHARE` and inserts only while the draw is open; the close takes it `FOR UPDATE`, so it
//! waits for the inserts in flight and nothing enters after it.

use chrono::{DateTime, Utc};
use sqlx::PgPool;

use crate::domain::{fair, UserId, VoucherId};

/// One entry as logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedEntry {
    pub user: UserId,
    pub salt: [u8; 16],
    pub leaf: fair::Hash,
    pub entered_at: DateTime<Utc>,
}

fn decode_error(what: &str) -> sqlx::Error {
    sqlx::Error::Decode(format!("a draw log's {what} has the wrong length").into())
}

type Row = (i64, Vec<u8>, Vec<u8>, DateTime<Utc>);

fn entry((user, salt, leaf, entered_at): Row) -> Result<LoggedEntry, sqlx::Error> {
    Ok(LoggedEntry {
        user: UserId::from_db(user),
        salt: salt.try_into().map_err(|_| decode_error("salt"))?,
        leaf: leaf.try_into().map_err(|_| decode_error("leaf"))?,
        entered_at,
    })
}

/// Logs the entries of `users` into `voucher`'s draw, each with a fresh salt unless logged
/// before, while the draw's log is open; then answers every one of them that is logged (a user
/// missing from the answer was refused: the log had closed). One statement each way, whatever
/// the batch's size.
pub async fn log(
    db: &PgPool,
    voucher: VoucherId,
    users: &[UserId],
) -> Result<Vec<LoggedEntry>, sqlx::Error> {
    if users.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<i64> = users.iter().map(|u| u.get()).collect();
    let salts: Vec<[u8; 16]> = users.iter().map(|_| rand::random()).collect();
    let leaves: Vec<Vec<u8>> = users
        .iter()
        .zip(&salts)
        .map(|(u, s)| fair::leaf(voucher.get(), u.get(), s).to_vec())
        .collect();
    let salts: Vec<Vec<u8>> = salts.iter().map(|s| s.to_vec()).collect();
    sqlx::query(
        "WITH open AS (
             SELECT voucher_id FROM draws
             WHERE voucher_id = $1 AND closed_at IS NULL FOR SHARE
         )
         INSERT INTO draw_log (voucher_id, user_id, salt, leaf)
         SELECT open.voucher_id, e.u, e.s, e.l
         FROM open, unnest($2::bigint[], $3::bytea[], $4::bytea[]) AS e(u, s, l)
         ON CONFLICT DO NOTHING",
    )
    .bind(voucher.get())
    .bind(&ids)
    .bind(&salts)
    .bind(&leaves)
    .execute(db)
    .await?;
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT user_id, salt, leaf, entered_at FROM draw_log
         WHERE voucher_id = $1 AND user_id = ANY($2)",
    )
    .bind(voucher.get())
    .bind(&ids)
    .fetch_all(db)
    .await?;
    rows.into_iter().map(entry).collect()
}

/// `user`'s entry into `voucher`'s draw.
pub async fn get(
    db: &PgPool,
    voucher: VoucherId,
    user: UserId,
) -> Result<Option<LoggedEntry>, sqlx::Error> {
    let row: Option<Row> = sqlx::query_as(
        "SELECT user_id, salt, leaf, entered_at FROM draw_log
         WHERE voucher_id = $1 AND user_id = $2",
    )
    .bind(voucher.get())
    .bind(user.get())
    .fetch_optional(db)
    .await?;
    row.map(entry).transpose()
}

/// Every user and leaf of `voucher`'s log (for a restore's duplicate check and the draw).
pub async fn entrants(
    db: &PgPool,
    voucher: VoucherId,
) -> Result<Vec<(UserId, fair::Hash)>, sqlx::Error> {
    let rows: Vec<(i64, Vec<u8>)> =
        sqlx::query_as("SELECT user_id, leaf FROM draw_log WHERE voucher_id = $1")
            .bind(voucher.get())
            .fetch_all(db)
            .await?;
    rows.into_iter()
        .map(|(u, l)| {
            Ok((
                UserId::from_db(u),
                l.try_into().map_err(|_| decode_error("leaf"))?,
            ))
        })
        .collect()
}

/// A closed log: its root over the leaves sorted ascending, the leaves so sorted, and the
/// beacon round the draw waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closed {
    pub closed_at: DateTime<Utc>,
    pub root: fair::Hash,
    pub leaves: Vec<fair::Hash>,
    pub round: Option<u64>,
}

/// Closes `voucher`'s log once (after the inserts in flight) and commits its root; a log closed
/// before answers as it closed. `round_after` names the beacon round for a close that comes
/// after the round named at creation was emitted (an instance late to close): given the close's
/// time, the first round the entrant list is still committed before.
pub async fn close(
    db: &PgPool,
    voucher: VoucherId,
    late: impl Fn(DateTime<Utc>, u64) -> Option<u64>,
) -> Result<Closed, sqlx::Error> {
    let mut tx = db.begin().await?;
    let (closed_at, root, round): (Option<DateTime<Utc>>, Option<Vec<u8>>, Option<i64>) =
        sqlx::query_as(
            "SELECT closed_at, entries_root, beacon_round FROM draws
             WHERE voucher_id = $1 FOR UPDATE",
        )
        .bind(voucher.get())
        .fetch_one(&mut *tx)
        .await?;
    let mut leaves: Vec<fair::Hash> =
        sqlx::query_scalar::<_, Vec<u8>>("SELECT leaf FROM draw_log WHERE voucher_id = $1")
            .bind(voucher.get())
            .fetch_all(&mut *tx)
            .await?
            .into_iter()
            .map(|l| l.try_into().map_err(|_| decode_error("leaf")))
            .collect::<Result<_, _>>()?;
    leaves.sort_unstable();
    let round = round.and_then(|r| u64::try_from(r).ok());
    if let (Some(closed_at), Some(root)) = (closed_at, root) {
        tx.commit().await?;
        return Ok(Closed {
            closed_at,
            root: root.try_into().map_err(|_| decode_error("root"))?,
            leaves,
            round,
        });
    }
    let root = fair::merkle_root(&leaves);
    // The close's time is read once the row's lock is held (`clock_timestamp()`, not the
    // transaction's start, `now()`): a close that waited on the lock cannot be backdated to
    // before the wait.
    let now: DateTime<Utc> = sqlx::query_scalar("SELECT clock_timestamp()")
        .fetch_one(&mut *tx)
        .await?;
    let moved = round.and_then(|r| late(now, r));
    let entrants = i32::try_from(leaves.len()).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
    sqlx::query(
        "UPDATE draws SET closed_at = $2, entries_root = $3, entrants = $4,
                planned_round = CASE WHEN $5::bigint IS NULL THEN NULL ELSE beacon_round END,
                beacon_round = coalesce($5::bigint, beacon_round)
         WHERE voucher_id = $1",
    )
    .bind(voucher.get())
    .bind(now)
    .bind(root.as_slice())
    .bind(entrants)
    .bind(moved.and_then(|r| i64::try_from(r).ok()))
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Closed {
        closed_at: now,
        root,
        leaves,
        round: moved.or(round),
    })
}
