//! The admins' actions (`admin_actions`): one row per action, read newest first.

use chrono::{DateTime, Utc};
use sqlx::PgPool;

use crate::domain::UserId;

/// An action as recorded, with its actor's phone.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ActionRow {
    pub id: i64,
    pub at: DateTime<Utc>,
    pub actor: i64,
    pub phone: String,
    pub action: String,
    pub target: String,
    /// `done`, `refused` or `failed`.
    pub outcome: String,
    /// A refusal's API error code (`None` for rows recorded before codes were).
    pub code: Option<String>,
    /// Why it was refused or failed, in English, as the log says it.
    pub refusal: Option<String>,
}

/// How an action ended, as a row records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded<'a> {
    Done,
    /// Refused with this API error code, and these English words.
    Refused(&'static str, &'a str),
    /// Not finished, for this English reason.
    Failed(&'a str),
}

/// Records an action and how it ended.
pub async fn record(
    db: &PgPool,
    actor: UserId,
    action: &str,
    target: &str,
    outcome: Recorded<'_>,
) -> Result<(), sqlx::Error> {
    let (kind, code, words) = match outcome {
        Recorded::Done => ("done", None, None),
        Recorded::Refused(code, words) => ("refused", Some(code), Some(words)),
        Recorded::Failed(words) => ("failed", None, Some(words)),
    };
    sqlx::query(
        "INSERT INTO admin_actions (actor, action, target, outcome, code, refusal)
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(actor.get())
    .bind(action)
    .bind(target)
    .bind(kind)
    .bind(code)
    .bind(words)
    .execute(db)
    .await?;
    Ok(())
}

/// Up to `limit` actions before the one numbered `before` (the newest when `None`), newest
/// first.
pub async fn before(
    db: &PgPool,
    before: Option<i64>,
    limit: i64,
) -> Result<Vec<ActionRow>, sqlx::Error> {
    sqlx::query_as(
        "SELECT a.id, a.at, a.actor, u.phone, a.action, a.target,
                coalesce(a.outcome, CASE WHEN a.refusal IS NULL THEN 'done' ELSE 'refused' END)
                    AS outcome,
                a.code, a.refusal
           FROM admin_actions a JOIN users u ON u.id = a.actor
          WHERE a.id < $1
          ORDER BY a.id DESC
          LIMIT $2",
    )
    .bind(before.unwrap_or(i64::MAX))
    .bind(limit)
    .fetch_all(db)
    .await
}
