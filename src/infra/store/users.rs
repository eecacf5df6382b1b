//! The `users` table.

use sqlx::PgPool;

use crate::domain::{CountryCode, Phone, UserId};

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

/// Phones stored before they were kept in E.164 (decision 26) are rewritten in that form, read
/// in `country`; returns how many were, and how many were left as they were because the same
/// handset has since signed in under its E.164 form (that older account can no longer be
/// signed into; its orders stay where they are).
pub async fn rewrite_legacy_phones(
    db: &PgPool,
    country: CountryCode,
) -> Result<(u64, u64), sqlx::Error> {
    let legacy: Vec<(i64, String)> =
        sqlx::query_as("SELECT id, phone FROM users WHERE phone NOT LIKE '+%'")
            .fetch_all(db)
            .await?;
    let (mut rewritten, mut left) = (0, 0);
    for (id, raw) in legacy {
        let Ok(phone) = Phone::parse(&raw, country) else {
            left += 1;
            continue;
        };
        let updated = sqlx::query(
            "UPDATE users SET phone = $2 WHERE id = $1
             AND NOT EXISTS (SELECT 1 FROM users WHERE phone = $2)",
        )
        .bind(id)
        .bind(phone.as_str())
        .execute(db)
        .await;
        match updated {
            Ok(done) if done.rows_affected() == 1 => rewritten += 1,
            Ok(_) => left += 1,
            // Taken between the check and the write by a sign-in under the new form.
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => left += 1,
            Err(e) => return Err(e),
        }
    }
    Ok((rewritten, left))
}
