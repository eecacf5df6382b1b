//! Signed sessions revoked before their expiry (design.md decision 30), held in memory by every
//! instance so that verifying a session needs no store.
//!
//! Two lists: sessions signed out (session ID → its expiry, ms) and users signed out everywhere
//! (user ID → the cut-off, ms: a session of theirs issued at or before it is refused), each in
//! PostgreSQL (`revoked_sessions`, `revoked_users`: what a failover or a Redis rebuilt empty
//! cannot forget) and in Redis (a sorted set each: what instances of the version before read).
//! A revocation is written to both (one store taking it is enough), applied to this instance at
//! once and `PUBLISH`ed on `seckill:revoked`; every instance's subscription
//! ([`crate::jobs::stock_back`]) applies it and reloads the lists, merged, whenever it
//! (re)subscribes, and [`crate::jobs::revocations`] reads PostgreSQL's rows recorded since its
//! last read every `SECKILL_REVOCATION_RELOAD_MS`, the bound for a message lost without a
//! resubscription, and both stores in full every `SECKILL_REVOCATION_FULL_RELOAD_MS`. A
//! reload that reads both stores gives each what only the other held, and adds to what is known
//! here, never replaces it. Entries leave the stores once no session they could refuse is
//! alive (PostgreSQL's ten minutes later; a cut-off after 90 days at least, whatever the
//! lifetime), and this instance's memory by its own clock and session lifetime.

use std::{
    collections::HashMap,
    sync::{
        atomic::{AtomicI64, Ordering},
        PoisonError, RwLock,
    },
};

use sqlx::PgPool;

use super::revocation_stores::{
    copy_to_db, copy_to_redis, db_lists, db_lists_after, merge, missing, redis_lists, refusing_at,
};
pub use super::revoked::Revoked;
use crate::{
    auth::token::Claims,
    domain::UserId,
    infra::{backend::Backend, keys::Keys, redis_conn::Redis},
};

/// How far below the highest row number read the periodic read starts again: a row is
/// numbered when its statement runs and seen when it commits, so a row numbered just before
/// one a read saw may commit after that read. Re-reading the last thousand numbers (each a
/// few dozen bytes) finds it at the next read, whatever committed in between, up to a
/// thousand sign-outs in one commit's time.
const RECENT_LOOKBACK: i64 = 1_000;

/// What this instance knows to be revoked.
#[derive(Default)]
pub struct Revocations {
    sessions: RwLock<HashMap<String, i64>>,
    cut_offs: RwLock<HashMap<UserId, i64>>,
    /// The highest `revocation_seq` read from PostgreSQL: [`Self::reload_recent`] reads the
    /// rows after it.
    db_seen: AtomicI64,
}

/// How much a reload needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Start-up: both stores, so a Redis still loading its dataset is waited for (its error is
    /// passed on) rather than read as holding nothing.
    Both,
    /// Every later reload: either store; one that cannot be read is read next time.
    Either,
}

impl Revocations {
    /// Whether the session `claims` describe was revoked, as far as this instance knows.
    pub fn refuses(&self, claims: &Claims) -> bool {
        let signed_out = self
            .sessions
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(&claims.session);
        signed_out
            || self
                .cut_offs
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .get(&claims.user)
                // At or before: a session issued in the cut-off's own millisecond may have
                // existed when the sign-out was asked (Redis's clock counts in ms).
                .is_some_and(|cut_off| claims.issued_ms <= *cut_off)
    }

    /// Applies one revocation here.
    pub fn apply(&self, revoked: &Revoked) {
        match revoked {
            Revoked::Session { id, expires_ms } => {
                self.sessions
                    .write()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(id.clone(), *expires_ms);
            }
            Revoked::User { user, cut_off_ms } => {
                let mut cut_offs = self
                    .cut_offs
                    .write()
                    .unwrap_or_else(PoisonError::into_inner);
                let kept = cut_offs.entry(*user).or_insert(*cut_off_ms);
                *kept = (*kept).max(*cut_off_ms);
            }
        }
    }

    /// Adds to what this instance knows the sign-outs PostgreSQL and Redis hold now, merged
    /// (the later expiry, the later cut-off; each store first drops what refuses nothing any
    /// more), gives each store what only the other held, then forgets here what refuses
    /// nothing here any more ([`Self::forget_ended`]). A sign-out one store alone took (the
    /// other out of reach then, or Redis's lists from before PostgreSQL kept them) is in both
    /// after the next reload that reads both. A store that cannot be read (with
    /// [`Need::Either`]) is read next time. Nothing a store lacks is forgotten here: a
    /// sign-out known here stays until it refuses nothing, whatever a store lost meanwhile
    /// (a failover before it was copied) and whichever of two overlapping reloads ends last.
    /// `session_ttl`: how long a session lives.
    pub async fn reload(
        &self,
        db: &PgPool,
        (redis, keys): (&Redis, &Keys),
        session_ttl: std::time::Duration,
        need: Need,
    ) -> Result<(), Backend> {
        let ttl = i64::try_from(session_ttl.as_millis()).unwrap_or(i64::MAX);
        // Both stores at once: one out of reach costs its timeout once, not before the other.
        let (in_db, in_redis) =
            tokio::join!(db_lists(db, redis, ttl), redis_lists(redis, keys, ttl));
        // At start-up, Redis's error first: a Redis loading its dataset is waited for.
        let (in_db, in_redis) = match need {
            Need::Both => {
                let in_redis = in_redis?;
                (Ok(in_db?), Ok(in_redis))
            }
            Need::Either => (in_db, in_redis),
        };
        if let Ok((_, seq)) = &in_db {
            self.db_seen.fetch_max(*seq, Ordering::AcqRel);
        }
        let in_db = in_db.map(|(lists, _)| lists);
        let found = match (in_db, in_redis) {
            (Ok(in_db), Ok((in_redis, redis_now))) => {
                let merged = merge(&in_db, &in_redis);
                let to_db = missing(&in_db, &merged);
                let to_redis = refusing_at(missing(&in_redis, &merged), redis_now, ttl);
                let (wrote_db, wrote_redis) = tokio::join!(
                    copy_to_db(db, &to_db),
                    copy_to_redis(redis, keys, &to_redis)
                );
                if let Err(e) = wrote_db {
                    tracing::warn!(error = %e, "copying Redis's revocations to PostgreSQL; the next reload tries again");
                }
                if let Err(e) = wrote_redis {
                    tracing::warn!(error = %e, "copying PostgreSQL's revocations to Redis; the next reload tries again");
                }
                merged
            }
            (Err(db_error), Err(redis_error)) => {
                tracing::warn!(error = %db_error, "reading the revoked sessions from PostgreSQL");
                return Err(redis_error);
            }
            (Ok(lists), Err(e)) => {
                tracing::warn!(error = %e, "reading the revoked sessions from Redis; PostgreSQL's read");
                lists
            }
            (Err(e), Ok((lists, _))) => {
                tracing::warn!(error = %e, "reading the revoked sessions from PostgreSQL; Redis's read");
                lists
            }
        };
        let now = chrono::Utc::now().timestamp_millis();
        self.add(&found, now, ttl);
        self.forget_ended(now, ttl);
        Ok(())
    }

    /// Adds to what this instance knows the sign-outs PostgreSQL recorded since the last read
    /// (by row number: an indexed read of what is new, not of every sign-out), then forgets
    /// what refuses nothing here. Redis is not read: [`Self::reload`] reads both stores in
    /// full, less often, for what only Redis took (PostgreSQL out of reach then, or an
    /// instance of the version before).
    pub async fn reload_recent(
        &self,
        db: &PgPool,
        session_ttl: std::time::Duration,
    ) -> Result<(), Backend> {
        let ttl = i64::try_from(session_ttl.as_millis()).unwrap_or(i64::MAX);
        let after = self
            .db_seen
            .load(Ordering::Acquire)
            .saturating_sub(RECENT_LOOKBACK);
        let (found, seq) = db_lists_after(db, after).await?;
        let now = chrono::Utc::now().timestamp_millis();
        self.add(&found, now, ttl);
        self.db_seen.fetch_max(seq, Ordering::AcqRel);
        self.forget_ended(now, ttl);
        Ok(())
    }

    /// Adds `found` to what is known, but what refuses nothing here at `now_ms` (the stores
    /// keep cut-offs longer than this instance's sessions live). What is new or later is
    /// picked out under the read locks (which keep every request's check going), and only that
    /// is written: a reload of many sign-outs holds the write locks for the few that changed.
    fn add(
        &self,
        (sessions, cut_offs): &super::revocation_stores::Lists,
        now_ms: i64,
        ttl_ms: i64,
    ) {
        let oldest_alive = now_ms.saturating_sub(ttl_ms);
        add_where(&self.sessions, sessions, |expires_ms| expires_ms >= now_ms);
        add_where(&self.cut_offs, cut_offs, |cut_off_ms| {
            cut_off_ms >= oldest_alive
        });
    }

    /// Forgets what refuses nothing at `now_ms` by this instance's clock, the one
    /// [`crate::auth`] checks a session's end by: a signed-out session past its expiry, a
    /// cut-off more than `ttl_ms` (this instance's session lifetime) ago, since no session
    /// issued by then still lives here.
    pub fn forget_ended(&self, now_ms: i64, ttl_ms: i64) {
        let oldest_alive = now_ms.saturating_sub(ttl_ms);
        forget_where(&self.sessions, |expires_ms| expires_ms < now_ms);
        forget_where(&self.cut_offs, |cut_off_ms| cut_off_ms < oldest_alive);
    }

    /// Revocations known here (tests, health).
    pub fn len(&self) -> usize {
        self.sessions
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
            + self
                .cut_offs
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Adds to `known` the entries of `found` that `refuse` keeps and `known` lacks or holds
/// earlier: picked out under the read lock, each written under the write lock as the later of
/// the two (a revocation applied between the locks may have moved it later still).
fn add_where<K: Clone + Eq + std::hash::Hash>(
    known: &RwLock<HashMap<K, i64>>,
    found: &HashMap<K, i64>,
    refuse: impl Fn(i64) -> bool,
) {
    let new: Vec<(K, i64)> = {
        let known = known.read().unwrap_or_else(PoisonError::into_inner);
        found
            .iter()
            .filter(|(k, ms)| refuse(**ms) && known.get(*k).is_none_or(|had| had < *ms))
            .map(|(k, ms)| (k.clone(), *ms))
            .collect()
    };
    if new.is_empty() {
        return;
    }
    let mut known = known.write().unwrap_or_else(PoisonError::into_inner);
    for (k, ms) in new {
        let kept = known.entry(k).or_insert(ms);
        *kept = (*kept).max(ms);
    }
}

/// Removes the entries of `known` whose time `ended` says refuses nothing any more: found
/// under the read lock, each checked again under the write lock (a revocation applied between
/// the two may have moved it later).
fn forget_where<K: Clone + Eq + std::hash::Hash>(
    known: &RwLock<HashMap<K, i64>>,
    ended: impl Fn(i64) -> bool,
) {
    let gone: Vec<K> = known
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .filter(|(_, ms)| ended(**ms))
        .map(|(k, _)| k.clone())
        .collect();
    if gone.is_empty() {
        return;
    }
    let mut known = known.write().unwrap_or_else(PoisonError::into_inner);
    for k in gone {
        if known.get(&k).is_some_and(|ms| ended(*ms)) {
            known.remove(&k);
        }
    }
}

/// Redis's clock, in ms: one clock for every instance's cut-offs and expiries.
pub(crate) async fn now_ms(redis: &mut Redis) -> Result<i64, Backend> {
    let (secs, micros): (i64, i64) = redis::cmd("TIME").query_async(redis).await?;
    Ok(secs * 1_000 + micros / 1_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_off_refuses_sessions_issued_up_to_it_only() {
        let r = Revocations::default();
        let claims = |user: i64, issued_ms: i64| Claims {
            session: format!("{user:032x}"),
            user: UserId::from_db(user),
            phone: crate::domain::Phone::try_from("+8613900000001").expect("phone"),
            issued_ms,
            expires_ms: issued_ms + 1_000,
        };
        r.apply(&Revoked::User {
            user: UserId::from_db(1),
            cut_off_ms: 100,
        });
        assert!(r.refuses(&claims(1, 99)));
        assert!(
            r.refuses(&claims(1, 100)),
            "issued in the cut-off's millisecond"
        );
        assert!(!r.refuses(&claims(1, 101)), "issued after the cut-off");
        assert!(!r.refuses(&claims(2, 99)), "another user");
        // An older cut-off arriving late never moves it back.
        r.apply(&Revoked::User {
            user: UserId::from_db(1),
            cut_off_ms: 50,
        });
        assert!(r.refuses(&claims(1, 99)));
        r.apply(&Revoked::Session {
            id: format!("{:032x}", 2),
            expires_ms: 5_000,
        });
        assert!(r.refuses(&claims(2, 99)), "that session signed out");
    }

    #[test]
    fn only_what_refuses_nothing_here_is_forgotten() {
        let r = Revocations::default();
        for (id, expires_ms) in [("ended", 99), ("ends-now", 100)] {
            r.apply(&Revoked::Session {
                id: id.into(),
                expires_ms,
            });
        }
        for (user, cut_off_ms) in [(1, 59), (2, 60)] {
            r.apply(&Revoked::User {
                user: UserId::from_db(user),
                cut_off_ms,
            });
        }
        // At 100 with sessions of 40 ms: a session that ended at 99, and every session issued
        // by 59, is refused by its end already; the entries at the boundary are kept.
        r.forget_ended(100, 40);
        let sessions = r.sessions.read().unwrap_or_else(PoisonError::into_inner);
        let cut_offs = r.cut_offs.read().unwrap_or_else(PoisonError::into_inner);
        assert_eq!(sessions.keys().collect::<Vec<_>>(), ["ends-now"]);
        assert_eq!(
            cut_offs.keys().copied().collect::<Vec<_>>(),
            [UserId::from_db(2)]
        );
    }
}
