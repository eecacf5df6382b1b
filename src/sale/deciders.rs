//! How each kind of batched request is decided ([`Decide`] for the lanes of `lanes.rs`): buys by
//! `lua/admit.lua` ([`Admissions`]), a draw's entries by `lua/enter.lua` and then one insert into
//! PostgreSQL's entry log ([`Entries`]).

use std::{collections::HashMap, sync::Arc};

use tokio_util::{sync::CancellationToken, task::TaskTracker};

use super::lanes::{Decide, Lanes, Replicated};
use crate::{
    config::AdmissionConfig,
    domain::{UserId, VoucherId},
    infra::backend::Backend,
    infra::durability::ReplicaWait,
    infra::keys::Keys,
    infra::redis_conn::Redis,
    infra::scripts::{self, AdmissionOutcome, EntryOutcome},
    infra::store::draw_log::{self, LoggedEntry},
};

/// A batch's call failed: every buy in it gets this, shared.
pub type AdmitResult = Result<AdmissionOutcome, Backend>;

/// Buys: `lua/admit.lua`.
pub struct Admit {
    keys: Keys,
    attempts_per_second: u32,
}

impl Decide for Admit {
    type Outcome = AdmissionOutcome;
    const NAME: &'static str = "admission";

    async fn decide(
        &self,
        redis: &mut Redis,
        voucher: VoucherId,
        users: &[UserId],
        wait: Option<ReplicaWait>,
    ) -> Result<Vec<AdmissionOutcome>, Backend> {
        scripts::admit_batch(
            redis,
            &self.keys,
            voucher,
            users,
            self.attempts_per_second,
            wait,
        )
        .await
    }
}

/// A draw's entries: `lua/enter.lua` decides (the window by the Redis clock, the duplicate
/// check), then the batch's admitted entries are logged in PostgreSQL in one statement; an
/// entry is answered only once its log row is committed.
pub struct Enter {
    keys: Keys,
    db: sqlx::PgPool,
}

/// An entry decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryDecision {
    /// In the draw's log (`new`: logged by this request); `entrants` as Redis counts them.
    Logged {
        entry: LoggedEntry,
        entrants: i64,
        new: bool,
    },
    /// Refused by the script (or, as `Closed`, by the log closed meanwhile).
    Refused(EntryOutcome),
}

impl Decide for Enter {
    type Outcome = EntryDecision;
    const NAME: &'static str = "entry";

    async fn decide(
        &self,
        redis: &mut Redis,
        voucher: VoucherId,
        users: &[UserId],
        wait: Option<ReplicaWait>,
    ) -> Result<Vec<EntryDecision>, Backend> {
        let outcomes =
            scripts::enter_batch(redis, &self.keys.voucher(voucher), users, wait).await?;
        // Entered before counts too: the first request's insert may have failed after Redis
        // took it (the shopper was answered 503 and tries again), so it is logged now.
        let admitted: Vec<UserId> = users
            .iter()
            .zip(&outcomes)
            .filter(|(_, o)| {
                matches!(
                    o,
                    EntryOutcome::Entered { .. } | EntryOutcome::AlreadyEntered { .. }
                )
            })
            .map(|(u, _)| *u)
            .collect();
        let mut logged: HashMap<UserId, LoggedEntry> = draw_log::log(&self.db, voucher, &admitted)
            .await?
            .into_iter()
            .map(|e| (e.user, e))
            .collect();
        Ok(users
            .iter()
            .zip(outcomes)
            .map(|(user, outcome)| match outcome {
                EntryOutcome::Entered { entrants } | EntryOutcome::AlreadyEntered { entrants } => {
                    match logged.remove(user) {
                        Some(entry) => EntryDecision::Logged {
                            new: matches!(outcome, EntryOutcome::Entered { .. }),
                            entry,
                            entrants,
                        },
                        // The log closed between the script and the insert.
                        None => EntryDecision::Refused(EntryOutcome::Closed),
                    }
                }
                refused => EntryDecision::Refused(refused),
            })
            .collect())
    }
}

/// The buys' lanes.
pub type Admissions = Lanes<Admit>;
/// The entries' lanes.
pub type Entries = Lanes<Enter>;

impl Admissions {
    pub fn new(
        redis: Redis,
        replicated: Option<Arc<Replicated>>,
        keys: Keys,
        attempts_per_second: u32,
        config: AdmissionConfig,
        owner: (TaskTracker, CancellationToken),
    ) -> Arc<Self> {
        Lanes::with(
            redis,
            replicated,
            Admit {
                keys,
                attempts_per_second,
            },
            config,
            owner,
        )
    }

    /// Decides `user`'s purchase of `voucher`, in a batch with the buys for it arriving
    /// meanwhile. Must run inside a Tokio runtime (lanes are tasks).
    pub async fn admit(self: &Arc<Self>, voucher: VoucherId, user: UserId) -> AdmitResult {
        self.submit(voucher, user).await
    }
}

impl Entries {
    pub fn new(
        db: sqlx::PgPool,
        redis: Redis,
        replicated: Option<Arc<Replicated>>,
        keys: Keys,
        config: AdmissionConfig,
        owner: (TaskTracker, CancellationToken),
    ) -> Arc<Self> {
        Lanes::with(redis, replicated, Enter { keys, db }, config, owner)
    }

    /// Decides `user`'s entry into `voucher`'s draw, in a batch with the entries arriving
    /// meanwhile, and logs it.
    pub async fn enter(
        self: &Arc<Self>,
        voucher: VoucherId,
        user: UserId,
    ) -> Result<EntryDecision, Backend> {
        self.submit(voucher, user).await
    }
}
