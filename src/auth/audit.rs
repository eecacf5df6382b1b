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

/// An admin's action on `target` and how it ended (`done`, or the refusal's words): a line in
/// the log and a row of `admin_actions`, which the admins' page reads. A row that cannot be
/// written (PostgreSQL out of reach, which the action itself mostly needed too) is said at WARN
/// beside the line; the action stands.
pub async fn admin_action<T, E: Display>(
    core: &Core,
    actor: UserId,
    action: &'static str,
    target: impl Display,
    outcome: &Result<T, E>,
) {
    let target = target.to_string();
    let refusal = match outcome {
        Ok(_) => {
            tracing::info!(target: "audit", %actor, action, %target, "done");
            None
        }
        Err(e) => {
            tracing::info!(target: "audit", %actor, action, %target, refusal = %e, "refused");
            Some(e.to_string())
        }
    };
    if let Err(e) = store::audit::record(&core.db, actor, action, &target, refusal.as_deref()).await
    {
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
