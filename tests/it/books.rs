//! The books out (issue #55): an export longer than one batch comes out whole, once, in order,
//! read a batch at a time after the last row.

use chrono::{Duration, Utc};
use futures::{StreamExt, TryStreamExt};
use seckill::{books, domain::Period, sale};
use sqlx::PgPool;

use crate::common::{admin, core, drain, users, voucher};

#[sqlx::test]
async fn an_export_of_two_full_batches_comes_out_whole_once_and_in_order(db: PgPool) {
    let core = core(db, &[]).await;
    // Exactly two batches of 1,000: the third read finds nothing and the file ends.
    let n = 2_000;
    let v = voucher(&core, n as i64, 5, 3_600).await;
    let shoppers = users(&core, n).await;
    let bought: Vec<_> = futures::stream::iter(shoppers)
        .map(|u| {
            let core = core.clone();
            async move { sale::buy(&core, u, v).await.expect("admitted") }
        })
        .buffer_unordered(64)
        .collect()
        .await;
    while drain(&core).await.written > 0 {}
    let now = Utc::now();
    let period = Period::parse(
        Some(&(now - Duration::hours(1)).to_rfc3339()),
        Some(&(now + Duration::hours(1)).to_rfc3339()),
        |day| Some(day.and_hms_opt(0, 0, 0)?.and_utc()),
    )
    .expect("period");
    let chunks: Vec<bytes::Bytes> = books::orders_csv(&core, &admin(&core).await, period)
        .await
        .expect("export")
        .try_collect()
        .await
        .expect("every batch");
    assert!(chunks.len() >= 2, "written as read, not at once");
    let text = String::from_utf8(chunks.concat()).expect("utf-8");
    let mut lines = text.split_terminator("\r\n");
    assert_eq!(lines.next(), Some(books::ORDER_COLUMNS.join(",").as_str()));
    let ids: Vec<i64> = lines
        .map(|l| {
            l.split(',')
                .next()
                .expect("id")
                .parse()
                .expect("an order ID")
        })
        .collect();
    assert_eq!(ids.len(), n);
    let mut expected: Vec<i64> = bought.iter().map(|o| o.get() as i64).collect();
    expected.sort_unstable();
    assert_eq!(ids, expected, "each order once, oldest first");
}
