//! The audit trail: one line per sign-in, refused sign-in and admin action, at INFO under the
//! `audit` target (so an operator can route it apart: `RUST_LOG=audit=info`), naming the actor,
//! the action and its target. Phones appear masked; codes and tokens never. An admin's action
//! is also a row of `admin_actions`, which the admins read on `/admin/actions` (issue #55).

use std::fmt::Display;

pub use crate::infra::store::audit::ActionRow;
use crate::{
    domain::UserId,
    infra::{backend::Backend, store},
    Core,
};

/// Whether an admin's action that did not happen was refused or failed: a refusal is the
/// admin's or the sale's reason (a sale that has ended, a field out of range), named by the
/// error code the API answers, which the admins' page says in its reader's language; a failure
/// is the shop's (a store out of reach, another instance holding the sale), said as such.
pub trait ActionError: Display {
    /// The refusal's API error code; `None` for a failure.
    fn refusal_code(&self) -> Option<&'static str>;
}

impl<E: ActionError> ActionError for &E {
    fn refusal_code(&self) -> Option<&'static str> {
        (*self).refusal_code()
    }
}

impl ActionError for Backend {
    fn refusal_code(&self) -> Option<&'static str> {
        None
    }
}

/// An admin's action on `target` and how it ended (done, refused or failed): a line in the log
/// and a row of `admin_actions`, which the admins' page reads. A row that cannot be written
/// (PostgreSQL out of reach, which the action itself mostly needed too) is said at WARN beside
/// the line; the action stands.
pub async fn admin_action<T, E: ActionError>(
    core: &Core,
    actor: UserId,
    action: &'static str,
    target: impl Display,
    outcome: &Result<T, E>,
) {
    let target = target.to_string();
    let words = outcome.as_ref().err().map(ToString::to_string);
    let recorded = match (outcome, &words) {
        (Err(e), Some(words)) => match e.refusal_code() {
            Some(code) => {
                tracing::info!(target: "audit", %actor, action, %target, refusal = %words, code, "refused");
                store::audit::Recorded::Refused(code, words)
            }
            None => {
                tracing::info!(target: "audit", %actor, action, %target, error = %words, "failed");
                store::audit::Recorded::Failed(words)
            }
        },
        _ => {
            tracing::info!(target: "audit", %actor, action, %target, "done");
            store::audit::Recorded::Done
        }
    };
    if let Err(e) = store::audit::record(&core.db, actor, action, &target, recorded).await {
        tracing::warn!(%actor, action, %target, error = %e, "an admin's action not recorded in admin_actions");
    }
}

/// Actions an admins' page shows at a time.
pub const ACTIONS_PER_PAGE: i64 = 50;

/// One page of the admins' actions, newest first.
#[derive(Debug, Clone)]
pub struct ActionsPage {
    pub actions: Vec<ActionRow>,
    /// The `before` of the next (older) page, when there is one.
    pub next: Option<i64>,
}

/// The actions before the one numbered `before` (the newest when `None`).
pub async fn actions(core: &Core, before: Option<i64>) -> Result<ActionsPage, Backend> {
    let mut actions = store::audit::before(&core.db, before, ACTIONS_PER_PAGE + 1).await?;
    let more = actions.len() as i64 > ACTIONS_PER_PAGE;
    actions.truncate(ACTIONS_PER_PAGE as usize);
    let next = more.then(|| actions.last().map(|a| a.id)).flatten();
    Ok(ActionsPage { actions, next })
}
