//! The listing (the home page, the console, `GET /api/vouchers`) shows at most a limit of
//! vouchers, the newest sales first: past the limit the oldest ended sales are left out, never
//! a sale still on, however long ago it began.

use crate::common::*;
use seckill::{catalog, domain::VoucherId};
use sqlx::PgPool;

/// Moves `v`'s window to `begins_secs`..`ends_secs` from now (negative: in the past), behind
/// the shop's back: the rows a shop has after days of sales.
async fn window(db: &PgPool, v: VoucherId, begins_secs: i64, ends_secs: i64) {
    sqlx::query(
        "UPDATE vouchers SET begins_at = now() + make_interval(secs => $2),
                            ends_at = now() + make_interval(secs => $3) WHERE id = $1",
    )
    .bind(v.get())
    .bind(begins_secs as f64)
    .bind(ends_secs as f64)
    .execute(db)
    .await
    .expect("window");
}

#[sqlx::test]
async fn a_sale_still_on_stays_listed_past_the_limit_and_the_oldest_ended_go(db: PgPool) {
    let core = core(db.clone(), &[]).await;
    let long = voucher(&core, 5, 0, 600).await;
    let ended_a = voucher(&core, 5, 0, 600).await;
    let ended_b = voucher(&core, 5, 0, 600).await;
    let upcoming = voucher(&core, 5, 0, 600).await;
    // A week-long sale that began three days ago; two short sales since, both over; one that
    // opens tomorrow.
    window(&db, long, -3 * 86_400, 4 * 86_400).await;
    window(&db, ended_a, -2 * 86_400, -2 * 86_400 + 3_600).await;
    window(&db, ended_b, -86_400, -86_400 + 3_600).await;
    window(&db, upcoming, 86_400, 2 * 86_400).await;

    let ids =
        |list: Vec<catalog::VoucherNow>| list.into_iter().map(|v| v.voucher.id).collect::<Vec<_>>();
    // Everything fits: the newest start first.
    assert_eq!(
        ids(catalog::list(&core, 10).await.expect("list")),
        vec![upcoming, ended_b, ended_a, long]
    );
    // Room for three: the oldest ended sale goes, not the sale still on that began before it.
    assert_eq!(
        ids(catalog::list(&core, 3).await.expect("list")),
        vec![upcoming, ended_b, long]
    );
    assert_eq!(
        ids(catalog::list(&core, 2).await.expect("list")),
        vec![upcoming, long]
    );
}
