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
//! (re)subscribes, and [`crate::jobs::revocations`] reloads them every
//! `SECKILL_REVOCATION_RELOAD_MS`, the bound for a message lost without a resubscription. A
//! reload that reads both stores gives each what only the other held. Entries leave the lists
//! once no session they could refuse is alive (PostgreSQL's ten minutes later).

use std::{
    collections::HashMap,
    sync::{
        atomic::{AtomicU64, Ordering},
        PoisonError, RwLock,
    },
};

use sqlx::PgPool;

use super::revocation_stores::{
    copy_to_db, copy_to_redis, db_lists, merge, missing, redis_lists, refusing_at,
};
use crate::{
    auth::token::Claims,
    domain::UserId,
    infra::{backend::Backend, keys::Keys, redis_conn::Redis},
};

/// What this instance knows to be revoked.
#[derive(Default)]
pub struct Revocations {
    sessions: RwLock<HashMap<String, i64>>,
    cut_offs: RwLock<HashMap<UserId, i64>>,
    /// Bumped by every revocation applied here: a reload whose reads began before one does not
    /// replace what is known (it may not have read it yet), it adds to it.
    applied: AtomicU64,
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

/// One revocation, as it travels on the channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revoked {
    /// A session signed out: its ID, and its expiry (after which it is refused anyway).
    Session { id: String, expires_ms: i64 },
    /// Every session of a user issued at or before `cut_off_ms`.
    User { user: UserId, cut_off_ms: i64 },
}

impl Revoked {
    /// `s <session> <expires>` or `u <user> <cut-off>`.
    pub fn to_message(&self) -> String {
        match self {
            Self::Session { id, expires_ms } => format!("s {id} {expires_ms}"),
            Self::User { user, cut_off_ms } => format!("u {user} {cut_off_ms}"),
        }
    }

    pub fn from_message(text: &str) -> Option<Self> {
        let mut parts = text.split(' ');
        let (Some(kind), Some(who), Some(ms), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        let ms = ms.parse().ok()?;
        match kind {
            "s" => Some(Self::Session {
                id: who.to_owned(),
                expires_ms: ms,
            }),
            "u" => Some(Self::User {
                user: who.parse().ok()?,
                cut_off_ms: ms,
            }),
            _ => None,
        }
    }
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
        self.applied.fetch_add(1, Ordering::AcqRel);
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

    /// Replaces what this instance knows with the sign-outs PostgreSQL and Redis hold now,
    /// merged (the later expiry, the later cut-off; each store first drops what refuses
    /// nothing any more), and gives each store what only the other held: a sign-out one store
    /// alone took (the other out of reach then, or Redis's lists from before PostgreSQL kept
    /// them) is in both after the next reload that reads both. A store that cannot be read
    /// (with [`Need::Either`]) leaves what is known here in place, the other's entries added.
    /// `session_ttl`: how long a session lives (a cut-off older than that refuses nothing).
    pub async fn reload(
        &self,
        db: &PgPool,
        (redis, keys): (&Redis, &Keys),
        session_ttl: std::time::Duration,
        need: Need,
    ) -> Result<(), Backend> {
        let ttl = i64::try_from(session_ttl.as_millis()).unwrap_or(i64::MAX);
        let applied = self.applied.load(Ordering::Acquire);
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
        let (merged, whole) = match (in_db, in_redis) {
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
                (merged, true)
            }
            (Err(db_error), Err(redis_error)) => {
                tracing::warn!(error = %db_error, "reading the revoked sessions from PostgreSQL");
                return Err(redis_error);
            }
            (Ok(lists), Err(e)) => {
                tracing::warn!(error = %e, "reading the revoked sessions from Redis; PostgreSQL's read");
                (lists, false)
            }
            (Err(e), Ok((lists, _))) => {
                tracing::warn!(error = %e, "reading the revoked sessions from PostgreSQL; Redis's read");
                (lists, false)
            }
        };
        let (sessions, cut_offs) = merged;
        let mut known_sessions = self
            .sessions
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let mut known_cut_offs = self
            .cut_offs
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        // Replaced only when both stores were read and nothing was applied meanwhile (a
        // sign-out applied here after the reads began may not be in them yet).
        if whole && self.applied.load(Ordering::Acquire) == applied {
            *known_sessions = sessions;
            *known_cut_offs = cut_offs;
            return Ok(());
        }
        for (id, expires_ms) in sessions {
            let kept = known_sessions.entry(id).or_insert(expires_ms);
            *kept = (*kept).max(expires_ms);
        }
        for (user, cut_off) in cut_offs {
            let kept = known_cut_offs.entry(user).or_insert(cut_off);
            *kept = (*kept).max(cut_off);
        }
        Ok(())
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

/// Redis's clock, in ms: one clock for every instance's cut-offs and expiries.
pub(crate) async fn now_ms(redis: &mut Redis) -> Result<i64, Backend> {
    let (secs, micros): (i64, i64) = redis::cmd("TIME").query_async(redis).await?;
    Ok(secs * 1_000 + micros / 1_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revocations_travel_as_text_and_back() {
        for r in [
            Revoked::Session {
                id: "0123456789abcdef0123456789abcdef".into(),
                expires_ms: 42,
            },
            Revoked::User {
                user: UserId::from_db(9),
                cut_off_ms: 1_700_000_000_000,
            },
        ] {
            assert_eq!(Revoked::from_message(&r.to_message()), Some(r));
        }
        for bad in [
            "",
            "s",
            "s x",
            "x a 1",
            "u notanumber 1",
            "s a 1 extra",
            "s a b",
        ] {
            assert_eq!(Revoked::from_message(bad), None, "{bad:?}");
        }
    }

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
}
