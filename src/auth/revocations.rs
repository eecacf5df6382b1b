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
//! `SECKILL_REVOCATION_RELOAD_MS`, the bound for a message lost without a resubscription.
//! Entries leave the lists once no session they could refuse is alive.

use std::{
    collections::HashMap,
    sync::{PoisonError, RwLock},
};

use redis::AsyncCommands;

use sqlx::PgPool;

use crate::{
    auth::token::Claims,
    domain::UserId,
    infra::{backend::Backend, keys::Keys, redis_conn::Redis, store},
};

/// What this instance knows to be revoked.
#[derive(Default)]
pub struct Revocations {
    sessions: RwLock<HashMap<String, i64>>,
    cut_offs: RwLock<HashMap<UserId, i64>>,
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
    /// merged (each store first drops the entries that refuse nothing any more). A store that
    /// cannot be read leaves what is known here in place, and what the other holds is added to
    /// it: a sign-out one store alone took is never forgotten by a reload that missed that
    /// store. An error only when neither could be read.
    /// `session_ttl`: how long a session lives (a cut-off older than that refuses nothing).
    pub async fn reload(
        &self,
        db: &PgPool,
        (redis, keys): (&Redis, &Keys),
        session_ttl: std::time::Duration,
    ) -> Result<(), Backend> {
        let ttl = i64::try_from(session_ttl.as_millis()).unwrap_or(i64::MAX);
        let in_redis = redis_lists(redis, keys, ttl).await;
        // Pruning by this machine's clock: a skew of seconds only keeps a row a little longer
        // or drops one that refuses nothing (an expired session is refused by its expiry).
        let now = chrono::Utc::now().timestamp_millis();
        let in_db = store::revocations::alive(db, now, now.saturating_sub(ttl)).await;
        let (sessions, cut_offs, whole) = match (in_db, in_redis) {
            (Err(db_error), Err(redis_error)) => {
                tracing::warn!(error = %redis_error, "reading the revoked sessions from Redis");
                return Err(db_error.into());
            }
            (Ok((s, c)), Err(e)) => {
                tracing::warn!(error = %e, "reading the revoked sessions from Redis; PostgreSQL's read");
                (s, c, false)
            }
            (Err(e), Ok((s, c))) => {
                tracing::warn!(error = %e, "reading the revoked sessions from PostgreSQL; Redis's read");
                (s, c, false)
            }
            (Ok((mut s, mut c)), Ok((rs, rc))) => {
                s.extend(rs);
                c.extend(rc);
                (s, c, true)
            }
        };
        let mut known_sessions = self
            .sessions
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let mut known_cut_offs = self
            .cut_offs
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        if whole {
            known_sessions.clear();
            known_cut_offs.clear();
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

/// Both lists as Redis holds them, after dropping the entries that refuse nothing (by Redis's
/// clock): signed-out sessions (ID, expiry) and cut-offs (user, cut-off).
async fn redis_lists(
    redis: &Redis,
    keys: &Keys,
    ttl_ms: i64,
) -> Result<(Vec<(String, i64)>, Vec<(UserId, i64)>), Backend> {
    let mut redis = redis.clone();
    let now = now_ms(&mut redis).await?;
    let oldest_alive = now.saturating_sub(ttl_ms);
    let (sessions_key, users_key) = (keys.revoked_sessions(), keys.revoked_users());
    let _: () = redis
        .zrembyscore(&sessions_key, "-inf", format!("({now}"))
        .await?;
    let _: () = redis
        .zrembyscore(&users_key, "-inf", format!("({oldest_alive}"))
        .await?;
    let sessions: Vec<(String, i64)> = redis.zrange_withscores(&sessions_key, 0, -1).await?;
    let users: Vec<(i64, i64)> = redis.zrange_withscores(&users_key, 0, -1).await?;
    Ok((
        sessions,
        users
            .into_iter()
            .map(|(user, cut_off)| (UserId::from_db(user), cut_off))
            .collect(),
    ))
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
