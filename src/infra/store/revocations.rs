//! `revoked_sessions` and `revoked_users`: the durable copy of the sign-outs (decision 30),
//! which every instance reloads beside Redis's lists.

use sqlx::PgPool;

use crate::domain::UserId;

/// Records session `id` signed out; it refuses nothing after `expires_ms`.
pub async fn record_session(db: &PgPool, id: &str, expires_ms: i64) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO revoked_sessions (session_id, expires_ms) VALUES ($1, $2)
         ON CONFLICT (session_id)
         DO UPDATE SET expires_ms = EXCLUDED.expires_ms, seq = nextval('revocation_seq')
         WHERE EXCLUDED.expires_ms > revoked_sessions.expires_ms",
    )
    .bind(id)
    .bind(expires_ms)
    .execute(db)
    .await?;
    Ok(())
}

/// Records many signed-out sessions (ID, expiry) at once, in one statement: a reload's copy
/// of what only Redis held (all of Redis's lists, the first time this version starts).
pub async fn record_sessions(db: &PgPool, sessions: &[(String, i64)]) -> Result<(), sqlx::Error> {
    let (ids, expiries): (Vec<&str>, Vec<i64>) =
        sessions.iter().map(|(id, e)| (id.as_str(), *e)).unzip();
    sqlx::query(
        "INSERT INTO revoked_sessions (session_id, expires_ms)
         SELECT * FROM UNNEST($1::text[], $2::int8[])
         ON CONFLICT (session_id)
         DO UPDATE SET expires_ms = EXCLUDED.expires_ms, seq = nextval('revocation_seq')
         WHERE EXCLUDED.expires_ms > revoked_sessions.expires_ms",
    )
    .bind(&ids)
    .bind(&expiries)
    .execute(db)
    .await?;
    Ok(())
}

/// Records many cut-offs (user, cut-off) at once, in one statement.
pub async fn record_cut_offs(db: &PgPool, cut_offs: &[(UserId, i64)]) -> Result<(), sqlx::Error> {
    let (users, times): (Vec<i64>, Vec<i64>) = cut_offs.iter().map(|(u, c)| (u.get(), *c)).unzip();
    sqlx::query(
        "INSERT INTO revoked_users (user_id, cut_off_ms)
         SELECT * FROM UNNEST($1::int8[], $2::int8[])
         ON CONFLICT (user_id)
         DO UPDATE SET cut_off_ms = EXCLUDED.cut_off_ms, seq = nextval('revocation_seq')
         WHERE EXCLUDED.cut_off_ms > revoked_users.cut_off_ms",
    )
    .bind(&users)
    .bind(&times)
    .execute(db)
    .await?;
    Ok(())
}

/// Records every session of `user` issued at or before `cut_off_ms` signed out (a later
/// cut-off only: a repeat never moves it back).
pub async fn record_cut_off(db: &PgPool, user: UserId, cut_off_ms: i64) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO revoked_users (user_id, cut_off_ms) VALUES ($1, $2)
         ON CONFLICT (user_id)
         DO UPDATE SET cut_off_ms = EXCLUDED.cut_off_ms, seq = nextval('revocation_seq')
         WHERE EXCLUDED.cut_off_ms > revoked_users.cut_off_ms",
    )
    .bind(user.get())
    .bind(cut_off_ms)
    .execute(db)
    .await?;
    Ok(())
}

/// Sign-outs as PostgreSQL holds them: signed-out sessions (ID, expiry), cut-offs (user,
/// cut-off), and the highest row number among them (`revocation_seq`; 0 when none).
pub type Rows = (Vec<(String, i64)>, Vec<(UserId, i64)>, i64);

/// The sign-outs that still refuse something, after dropping those that refuse nothing: the
/// sessions expired before `now_ms`, the cut-offs before `oldest_alive_ms` (no session issued
/// then is alive).
pub async fn alive(db: &PgPool, now_ms: i64, oldest_alive_ms: i64) -> Result<Rows, sqlx::Error> {
    sqlx::query("DELETE FROM revoked_sessions WHERE expires_ms < $1")
        .bind(now_ms)
        .execute(db)
        .await?;
    sqlx::query("DELETE FROM revoked_users WHERE cut_off_ms < $1")
        .bind(oldest_alive_ms)
        .execute(db)
        .await?;
    recorded_after(db, 0).await
}

/// The sign-outs recorded (or moved later) after row number `seq`: what a reload that read up
/// to `seq` has not seen (a caller starts a little lower: a row numbered before the last one
/// seen may commit after it).
pub async fn recorded_after(db: &PgPool, seq: i64) -> Result<Rows, sqlx::Error> {
    let sessions: Vec<(String, i64, i64)> =
        sqlx::query_as("SELECT session_id, expires_ms, seq FROM revoked_sessions WHERE seq > $1")
            .bind(seq)
            .fetch_all(db)
            .await?;
    let users: Vec<(i64, i64, i64)> =
        sqlx::query_as("SELECT user_id, cut_off_ms, seq FROM revoked_users WHERE seq > $1")
            .bind(seq)
            .fetch_all(db)
            .await?;
    let highest = sessions
        .iter()
        .map(|r| r.2)
        .chain(users.iter().map(|r| r.2))
        .max()
        .unwrap_or(0);
    Ok((
        sessions.into_iter().map(|(id, e, _)| (id, e)).collect(),
        users
            .into_iter()
            .map(|(u, c, _)| (UserId::from_db(u), c))
            .collect(),
        highest,
    ))
}
