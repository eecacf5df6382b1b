//! Phones stored before they were kept in E.164 (decision 26) are rewritten at start-up, in the
//! configured country; an account whose handset has since signed in under its E.164 form is
//! left as it was.

use crate::common::*;
use sqlx::PgPool;

async fn phone_of(db: &PgPool, id: i64) -> String {
    sqlx::query_scalar("SELECT phone FROM users WHERE id = $1")
        .bind(id)
        .fetch_one(db)
        .await
        .expect("user")
}

async fn insert(db: &PgPool, phone: &str) -> i64 {
    sqlx::query_scalar("INSERT INTO users (phone) VALUES ($1) RETURNING id")
        .bind(phone)
        .fetch_one(db)
        .await
        .expect("insert")
}

#[sqlx::test]
async fn legacy_phones_are_rewritten_in_e164_once(db: PgPool) {
    let legacy = insert(&db, "13900000077").await;
    let international = insert(&db, "+447911123456").await;
    // The same handset twice: the E.164 account is the one sign-in finds from now on.
    let older = insert(&db, "13900000088").await;
    let newer = insert(&db, "+8613900000088").await;
    let core = core(db.clone(), &[]).await;
    core.migrate().await.expect("migrate");
    assert_eq!(phone_of(&db, legacy).await, "+8613900000077");
    assert_eq!(phone_of(&db, international).await, "+447911123456");
    assert_eq!(phone_of(&db, older).await, "13900000088", "left as it was");
    assert_eq!(phone_of(&db, newer).await, "+8613900000088");
    // Once is enough: a second start changes nothing.
    core.migrate().await.expect("migrate again");
    assert_eq!(phone_of(&db, legacy).await, "+8613900000077");
}

#[sqlx::test]
async fn the_configured_country_reads_the_legacy_numbers(db: PgPool) {
    let legacy = insert(&db, "07911 123456").await;
    let core = core(db.clone(), &[("SECKILL_DEFAULT_COUNTRY_CODE", "44")]).await;
    core.migrate().await.expect("migrate");
    assert_eq!(phone_of(&db, legacy).await, "+447911123456");
}
