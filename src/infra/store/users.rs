//! The `users` table.

use sqlx::PgPool;

use crate::domain::{Phone, UserId};

/// Returns the user signed in with `phone`, creating them on first sign-in.
pub async fn upsert_by_phone(db: &PgPool, phone: &Phone) -> Result<UserId, sqlx::Error> {
    // The no-op update makes RETURNING yield the existing row on conflict.
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO users (phone) VALUES ($1)
         ON CONFLICT (phone) DO UPDATE SET phone = EXCLUDED.phone
         RETURNING id",
    )
    .bind(phone.as_str())
    .fetch_one(db)
    .await?;
    Ok(UserId::from_db(id))
}

/// Creates many users at once (bench and test set-up); returns their IDs in input order.
#[cfg(feature = "testing")]
pub async fn upsert_many(db: &PgPool, phones: &[Phone]) -> Result<Vec<UserId>, sqlx::Error> {
    let raw: Vec<&str> = phones.iter().map(Phone::as_str).collect();
    let rows: Vec<(i64, String)> = sqlx::query_as(
        "INSERT INTO users (phone) SELECT * FROM UNNEST($1::text[])
         ON CONFLICT (phone) DO UPDATE SET phone = EXCLUDED.phone
         RETURNING id, phone",
    )
    .bind(&raw)
    .fetch_all(db)
    .await?;
    let by_phone: std::collections::HashMap<String, i64> =
        rows.into_iter().map(|(id, p)| (p, id)).collect();
    Ok(raw
        .iter()
        .filter_map(|p| by_phone.get(*p).copied().map(UserId::from_db))
        .collect())
}
