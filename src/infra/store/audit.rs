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
    pub refusal: Option<String>,
}

/// Records an action; `refusal` when it was refused.
pub async fn record(
    db: &PgPool,
    actor: UserId,
    action: &str,
    target: &str,
    refusal: Option<&str>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO admin_actions (actor, action, target, refusal) VALUES ($1, $2, $3, $4)",
    )
    .bind(actor.get())
    .bind(action)
    .bind(target)
    .bind(refusal)
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
        "SELECT a.id, a.at, a.actor, u.phone, a.action, a.target, a.refusal
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
