//! The revoked sessions' two homes (decision 30): each store's lists read (after dropping what
//! refuses nothing), merged, and what one lacks given to it. [`super::revocations`] holds
//! them in memory.

use std::collections::HashMap;

use redis::AsyncCommands;
use sqlx::PgPool;

use super::revocations::now_ms;
use crate::{
    domain::UserId,
    infra::{backend::Backend, keys::Keys, redis_conn::Redis, store},
};

/// Signed-out sessions (ID → expiry) and cut-offs (user → cut-off), as one store holds them.
pub(super) type Lists = (HashMap<String, i64>, HashMap<UserId, i64>);

/// How long the stores keep a cut-off at least, whatever the reloading instance's session
/// lifetime: an operator who shortens the lifetime restarts instances one at a time, and the
/// first one restarted must not drop the sign-outs everywhere that those still running with
/// the longer lifetime refuse stolen sessions by (nor those restarted while the change is
/// undone). A cut-off is one row per user who signed out everywhere.
const CUT_OFFS_KEPT_MS: i64 = 90 * 24 * 60 * 60 * 1_000;

/// The oldest cut-off the stores keep at `now_ms` when sessions live `ttl_ms`.
fn oldest_cut_off_kept(now_ms: i64, ttl_ms: i64) -> i64 {
    now_ms.saturating_sub(ttl_ms.max(CUT_OFFS_KEPT_MS))
}

/// Both lists as Redis holds them, after dropping the entries that refuse nothing by Redis's
/// clock, and that clock's time then.
pub(super) async fn redis_lists(
    redis: &Redis,
    keys: &Keys,
    ttl_ms: i64,
) -> Result<(Lists, i64), Backend> {
    let mut redis = redis.clone();
    let now = now_ms(&mut redis).await?;
    let oldest_alive = oldest_cut_off_kept(now, ttl_ms);
    let (sessions_key, users_key) = (keys.revoked_sessions(), keys.revoked_users());
    let _: () = redis
        .zrembyscore(&sessions_key, "-inf", format!("({now}"))
        .await?;
    let _: () = redis
        .zrembyscore(&users_key, "-inf", format!("({oldest_alive}"))
        .await?;
    let sessions: Vec<(String, i64)> = redis.zrange_withscores(&sessions_key, 0, -1).await?;
    let users: Vec<(i64, i64)> = redis.zrange_withscores(&users_key, 0, -1).await?;
    let lists = (
        sessions.into_iter().collect(),
        users
            .into_iter()
            .map(|(user, cut_off)| (UserId::from_db(user), cut_off))
            .collect(),
    );
    Ok((lists, now))
}

/// The entries of `lists` that still refuse something at Redis's `now_ms`: PostgreSQL keeps
/// its rows [`DB_PRUNE_MARGIN_MS`] longer (and this instance refuses by them meanwhile), but
/// one given back to Redis then would be dropped again at its next read, by every instance's
/// reload, every period, for ten minutes.
pub(super) fn refusing_at(mut lists: Lists, now_ms: i64, ttl_ms: i64) -> Lists {
    let oldest_alive = oldest_cut_off_kept(now_ms, ttl_ms);
    lists.0.retain(|_, expires_ms| *expires_ms >= now_ms);
    lists.1.retain(|_, cut_off_ms| *cut_off_ms >= oldest_alive);
    lists
}

/// How long past its last use a row stays in PostgreSQL: rows are dropped by the reloading
/// machine's clock when Redis's cannot be read, and a machine's clock running fast must not
/// drop a row another instance (which checks expiries by its own clock) still refuses by.
const DB_PRUNE_MARGIN_MS: i64 = 10 * 60 * 1_000;

/// PostgreSQL's `undefined_table` and `undefined_column`.
const NOT_MIGRATED: [&str; 2] = ["42P01", "42703"];

/// Both lists as PostgreSQL holds them, after dropping the rows that have refused nothing for
/// [`DB_PRUNE_MARGIN_MS`] (by Redis's clock, the one expiries and cut-offs are in; by this
/// machine's when Redis cannot be read), and the highest row number read.
pub(super) async fn db_lists(
    db: &PgPool,
    redis: &Redis,
    ttl_ms: i64,
) -> Result<(Lists, i64), Backend> {
    let now = match now_ms(&mut redis.clone()).await {
        Ok(now) => now,
        Err(_) => chrono::Utc::now().timestamp_millis(),
    };
    let before = now.saturating_sub(DB_PRUNE_MARGIN_MS);
    read_db(store::revocations::alive(db, before, oldest_cut_off_kept(before, ttl_ms)).await)
}

/// The sign-outs PostgreSQL recorded after row number `seq`, and the highest row number read
/// (0 when none).
pub(super) async fn db_lists_after(db: &PgPool, seq: i64) -> Result<(Lists, i64), Backend> {
    read_db(store::revocations::recorded_after(db, seq).await)
}

fn read_db(read: Result<store::revocations::Rows, sqlx::Error>) -> Result<(Lists, i64), Backend> {
    match read {
        Ok((sessions, users, seq)) => Ok((
            (sessions.into_iter().collect(), users.into_iter().collect()),
            seq,
        )),
        // A database not migrated yet (a new version's connect reads before it migrates) holds
        // none; `Core::migrate` reads again once the tables exist.
        Err(sqlx::Error::Database(e))
            if e.code()
                .is_some_and(|code| NOT_MIGRATED.contains(&code.as_ref())) =>
        {
            Ok((Lists::default(), 0))
        }
        Err(e) => Err(e.into()),
    }
}

/// Both stores' lists as one: the later expiry of a session, the later cut-off of a user.
pub(super) fn merge(a: &Lists, b: &Lists) -> Lists {
    let mut merged = a.clone();
    for (id, expires_ms) in &b.0 {
        let kept = merged.0.entry(id.clone()).or_insert(*expires_ms);
        *kept = (*kept).max(*expires_ms);
    }
    for (user, cut_off) in &b.1 {
        let kept = merged.1.entry(*user).or_insert(*cut_off);
        *kept = (*kept).max(*cut_off);
    }
    merged
}

/// What `merged` holds that `store` lacks or holds earlier.
pub(super) fn missing(store: &Lists, merged: &Lists) -> Lists {
    (
        merged
            .0
            .iter()
            .filter(|(id, e)| store.0.get(*id).is_none_or(|had| had < *e))
            .map(|(id, e)| (id.clone(), *e))
            .collect(),
        merged
            .1
            .iter()
            .filter(|(u, c)| store.1.get(*u).is_none_or(|had| had < *c))
            .map(|(u, c)| (*u, *c))
            .collect(),
    )
}

/// Gives PostgreSQL `lists`, in batches of [`COPY_BATCH`] rows a statement.
pub(super) async fn copy_to_db(
    db: &PgPool,
    (sessions, cut_offs): &Lists,
) -> Result<(), sqlx::Error> {
    // In key order: two instances copying the same rows at once (the first start of a version)
    // lock them in one order, and cannot deadlock each other.
    let mut sessions: Vec<(String, i64)> =
        sessions.iter().map(|(id, e)| (id.clone(), *e)).collect();
    sessions.sort_unstable();
    for batch in sessions.chunks(COPY_BATCH) {
        store::revocations::record_sessions(db, batch).await?;
    }
    let mut cut_offs: Vec<(UserId, i64)> = cut_offs.iter().map(|(u, c)| (*u, *c)).collect();
    cut_offs.sort_unstable_by_key(|(u, _)| u.get());
    for batch in cut_offs.chunks(COPY_BATCH) {
        store::revocations::record_cut_offs(db, batch).await?;
    }
    Ok(())
}

/// Entries per statement or command of a copy to either store.
const COPY_BATCH: usize = 5_000;

pub(super) async fn copy_to_redis(
    redis: &Redis,
    keys: &Keys,
    (sessions, cut_offs): &Lists,
) -> Result<(), redis::RedisError> {
    let mut redis = redis.clone();
    // GT: a later expiry or cut-off only; a member not there is added. In batches: one
    // command of every entry would hold Redis (and every buy) for as long as it takes.
    let sessions: Vec<(&String, &i64)> = sessions.iter().collect();
    for batch in sessions.chunks(COPY_BATCH) {
        let mut add = redis::cmd("ZADD");
        add.arg(keys.revoked_sessions()).arg("GT");
        for (id, expires_ms) in batch {
            add.arg(**expires_ms).arg(*id);
        }
        let _: () = add.query_async(&mut redis).await?;
    }
    let cut_offs: Vec<(&UserId, &i64)> = cut_offs.iter().collect();
    for batch in cut_offs.chunks(COPY_BATCH) {
        let mut add = redis::cmd("ZADD");
        add.arg(keys.revoked_users()).arg("GT");
        for (user, cut_off_ms) in batch {
            add.arg(**cut_off_ms).arg(user.get());
        }
        let _: () = add.query_async(&mut redis).await?;
    }
    Ok(())
}
