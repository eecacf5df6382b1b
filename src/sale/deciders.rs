//! How each kind of batched request is decided ([`Decide`] for the lanes of `lanes.rs`): buys by
//! `lua/admit.lua` ([`Admissions`]), a draw's entries by `lua/enter.lua` and then one insert into
//! PostgreSQL's entry log ([`Entries`]).

use std::{collections::HashMap, sync::Arc};

use tokio_util::{sync::CancellationToken, task::TaskTracker};

use super::lanes::{Decide, Lanes, Replicated};
use super::{
    refusals::{Refusal, Refusals},
    sold_out::{Known, SoldOutBuyers},
};
use crate::{
    config::AdmissionConfig,
    domain::{OrderId, UserId, VoucherId},
    infra::backend::Backend,
    infra::durability::ReplicaWait,
    infra::keys::Keys,
    infra::redis_conn::Redis,
    infra::scripts::{self, AdmissionOutcome, EntryOutcome},
    infra::store::draw_log::{self, LoggedEntry},
};

/// A batch's call failed: every buy in it gets this, shared.
pub type AdmitResult = Result<AdmissionOutcome, Backend>;

/// Buys: `lua/admit.lua`, unless the sale refuses everyone by the time the batch leaves.
pub struct Admit {
    keys: Keys,
    attempts_per_second: u32,
    memory: Refused,
}

/// What this instance remembers of the sales that refuse everyone (the same memory
/// [`crate::sale::buy`] answers new buys from).
pub struct Refused {
    pub refusals: Arc<Refusals>,
    pub buyers: Arc<SoldOutBuyers>,
}

impl Refused {
    /// The outcomes of a batch on a sale this instance knows refuses everyone, without the
    /// script: the buys that were already queued in the lane when the sale sold out (issue #53:
    /// they went to the script 64 a call, behind one another, and made the rush's tail). A
    /// shopper holding an order on the sale still learns it: from the buyers in memory, else
    /// from one `HMGET` for the batch (which also starts reading them).
    async fn answer(
        &self,
        redis: &mut Redis,
        keys: &Keys,
        voucher: VoucherId,
        users: &[UserId],
        refusal: Refusal,
    ) -> Result<Vec<AdmissionOutcome>, Backend> {
        let refused = match refusal {
            Refusal::SoldOut => AdmissionOutcome::SoldOut,
            Refusal::Ended => AdmissionOutcome::Ended,
        };
        let known: Vec<Known> = users
            .iter()
            .map(|u| self.buyers.lookup(voucher, *u))
            .collect();
        let unknown: Vec<i64> = users
            .iter()
            .zip(&known)
            .filter(|(_, k)| **k == Known::Unknown)
            .map(|(u, _)| u.get())
            .collect();
        let mut asked = Vec::new().into_iter();
        if !unknown.is_empty() {
            self.buyers.read_later((&*redis, keys), voucher);
            let held: Vec<Option<String>> = redis::cmd("HMGET")
                .arg(keys.voucher(voucher).buyers)
                .arg(&unknown)
                .query_async(redis)
                .await?;
            asked = held.into_iter();
        }
        Ok(known
            .into_iter()
            .map(|k| match k {
                Known::Bought(order) => AdmissionOutcome::AlreadyBought(order),
                Known::NotBought => refused,
                Known::Unknown => asked
                    .next()
                    .flatten()
                    .and_then(|hex| OrderId::from_redis_hex(&hex).ok())
                    .map_or(refused, AdmissionOutcome::AlreadyBought),
            })
            .collect())
    }
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
        if let Some(refusal) = self.memory.refusals.get(&voucher) {
            return self
                .memory
                .answer(redis, &self.keys, voucher, users, refusal)
                .await;
        }
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
        memory: Refused,
        config: AdmissionConfig,
        owner: (TaskTracker, CancellationToken),
    ) -> Arc<Self> {
        Lanes::with(
            redis,
            replicated,
            Admit {
                keys,
                attempts_per_second,
                memory,
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
