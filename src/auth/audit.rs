//! The audit trail: one line per sign-in, refused sign-in and admin action, at INFO under the
//! `audit` target (so an operator can route it apart: `RUST_LOG=audit=info`), naming the actor,
//! the action and its target. Phones appear masked; codes and tokens never.

use std::fmt::Display;

use crate::domain::UserId;

/// An admin's action on `target` and how it ended (`done`, or the refusal's words).
pub fn admin_action<T, E: Display>(
    actor: UserId,
    action: &'static str,
    target: impl Display,
    outcome: &Result<T, E>,
) {
    match outcome {
        Ok(_) => tracing::info!(target: "audit", %actor, action, %target, "done"),
        Err(e) => tracing::info!(target: "audit", %actor, action, %target, refusal = %e, "refused"),
    }
}
