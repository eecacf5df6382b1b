//! The admin console's figures against the real Redis and PostgreSQL: every unit of a sale is
//! counted where it is (Redis stock, queued, written, refused, dead-lettered), and the sales
//! series adds up to the orders written.

use crate::common::*;
use chrono::Utc;
use seckill::{
    catalog,
    catalog::console::{self, RowsAsked, ROWS_PER_PAGE},
    domain::{OrderId, SaleQuery, ORDER_EPOCH_UNIX},
    jobs::order_writer::Worker,
    sale,
};
use sqlx::PgPool;

#[sqlx::test]
async fn every_unit_is_counted_where_it_is(db: PgPool) {
    let core = core(db, &[]).await;
    let u = users(&core, 3).await;
    let v = voucher(&core, 10, 60, 3600).await;
    let other = voucher(&core, 4, -60, 3600).await;
    for user in &u {
        sale::buy(&core, *user, v).await.expect("admitted");
    }
    // A user PostgreSQL does not know: its insert fails until the worker gives up on it.
    let ghost = seckill::domain::UserId::try_from(987_654_321).expect("id");
    sale::buy(&core, ghost, v).await.expect("admitted");

    let before = console::overview(&core, 50).await.expect("overview");
    let row = before
        .iter()
        .find(|c| c.state.voucher.id == v)
        .expect("listed");
    assert_eq!(row.state.redis_stock, Some(6));
    assert_eq!(row.state.queued, 4);
    assert_eq!(
        (
            row.counts.written,
            row.counts.failed,
            row.state.dead_lettered
        ),
        (0, 0, 0)
    );
    assert_eq!(
        catalog::live(&core, v)
            .await
            .expect("GET")
            .map(|l| l.remaining),
        Some(6)
    );
    let untouched = before
        .iter()
        .find(|c| c.state.voucher.id == other)
        .expect("listed");
    assert_eq!(untouched.state.redis_stock, Some(4));
    assert_eq!(untouched.state.queued, 0);

    // PostgreSQL already holds a written order of u[2] (as after Redis lost the buyer set): the
    // worker refuses the queued one as already bought.
    plant_order(&core, v, u[2], Utc::now(), 4_000_000_000).await;
    let mut w = Worker::new(core.clone(), "w").await.expect("worker");
    let mut dead = 0;
    for _ in 0..20 {
        dead += w.drain().await.expect("drain").dead_lettered;
        if dead > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    assert_eq!(dead, 1);

    let after = console::overview(&core, 50).await.expect("overview");
    let row = after
        .iter()
        .find(|c| c.state.voucher.id == v)
        .expect("listed");
    assert_eq!(row.state.queued, 0);
    assert_eq!(row.counts.written, 3, "u[0], u[1] and the planted order");
    assert_eq!(row.counts.failed, 1);
    assert_eq!(row.state.dead_lettered, 1);
    // Both the dead letter's unit and the refused duplicate's went back.
    assert_eq!(row.state.redis_stock, Some(8));

    let series = console::sales_series(&core, v, Utc::now())
        .await
        .expect("series")
        .expect("has orders");
    assert_eq!(series.counts.iter().sum::<i64>(), 3, "the written orders");
    assert_eq!(series.bucket_secs, 1);
    assert!(series.start <= Utc::now());
    assert!(
        console::sales_series(&core, other, Utc::now())
            .await
            .expect("series")
            .is_none(),
        "no orders, no series"
    );
}

#[sqlx::test]
async fn the_series_spreads_orders_over_buckets_by_admission_time(db: PgPool) {
    let core = core(db, &[]).await;
    let v = voucher(&core, 100, 600, 3600).await;
    let u = users(&core, 6).await;
    // Orders admitted 300 s ago, 299 s ago and now: 301 seconds in 10 s buckets.
    let now = Utc::now();
    for (i, user) in u.iter().enumerate() {
        let ago = match i {
            0 | 1 => 300,
            2 => 299,
            _ => 0,
        };
        plant_order(
            &core,
            v,
            *user,
            now - chrono::Duration::seconds(ago),
            i as u32 + 1,
        )
        .await;
    }
    let s = console::sales_series(&core, v, now)
        .await
        .expect("series")
        .expect("has orders");
    assert_eq!(s.bucket_secs, 10, "301 s cut into at most 60 buckets");
    assert_eq!(s.counts.iter().sum::<i64>(), 6);
    assert!(s.counts.len() <= 60);
    assert!(
        s.counts[0] >= 2,
        "the first bucket holds the first orders: {:?}",
        s.counts
    );
    assert_eq!(
        *s.counts.last().expect("last"),
        3,
        "the last bucket holds the last three"
    );
}

/// Writes an order straight into PostgreSQL, admitted at `at` (set-up, not under test).
async fn plant_order(
    core: &seckill::Core,
    v: seckill::domain::VoucherId,
    user: seckill::domain::UserId,
    at: chrono::DateTime<Utc>,
    sequence: u32,
) {
    let seconds = u32::try_from(at.timestamp() - ORDER_EPOCH_UNIX).expect("after 2022");
    let id = OrderId::from_parts(seconds, sequence).expect("id");
    sqlx::query(
        "INSERT INTO orders (id, voucher_id, user_id, admitted_at, pay_by)
         VALUES ($1, $2, $3, $4, now() + interval '15 minutes')",
    )
    .bind(id.as_i64())
    .bind(v.get())
    .bind(user.get())
    .bind(id.issued_at())
    .execute(&core.db)
    .await
    .expect("insert order");
}

#[sqlx::test]
async fn the_dashboard_charts_the_asked_voucher_else_the_newest_that_sold(db: PgPool) {
    let core = core(db, &[]).await;
    let empty = console::dashboard(&core, None, first_page(), Utc::now())
        .await
        .expect("dashboard");
    assert!(empty.rows.is_empty() && empty.chart.is_none());

    let u = users(&core, 1).await;
    let sold = voucher(&core, 5, 120, 3600).await;
    let unsold = voucher(&core, 5, 60, 3600).await; // newer (opens later), nothing sold
    sale::buy(&core, u[0], sold).await.expect("admitted");
    drain(&core).await;

    let d = console::dashboard(&core, None, first_page(), Utc::now())
        .await
        .expect("dashboard");
    assert_eq!(
        d.rows.first().map(|r| r.state.voucher.id),
        Some(unsold),
        "newest first"
    );
    let (id, series) = d.chart.expect("a chart");
    assert_eq!(id, sold, "the newest voucher that sold something");
    assert_eq!(series.expect("series").counts.iter().sum::<i64>(), 1);

    let d = console::dashboard(&core, Some(unsold), first_page(), Utc::now())
        .await
        .expect("dashboard");
    assert_eq!(
        d.chart.map(|(id, s)| (id, s.is_none())),
        Some((unsold, true))
    );

    let unknown = seckill::domain::VoucherId::try_from(987_654).expect("id");
    let d = console::dashboard(&core, Some(unknown), first_page(), Utc::now())
        .await
        .expect("dashboard");
    assert_eq!(
        d.chart.map(|(id, _)| id),
        Some(sold),
        "an unknown voucher falls back"
    );
}

#[sqlx::test]
async fn the_console_shows_a_page_of_rows_the_one_holding_a_new_voucher_and_charts_any(db: PgPool) {
    let core = core(db, &[]).await;
    let u = users(&core, 1).await;
    // One more than a page; each opens a second after the one before, so the first created is
    // the oldest and lands alone on the second page.
    let mut made = Vec::new();
    for i in 0..=ROWS_PER_PAGE {
        let opened_secs_ago = 600 - i;
        made.push(voucher(&core, 5, opened_secs_ago, 3600).await);
    }
    let oldest = made[0];
    let newest = *made.last().expect("made");
    sale::buy(&core, u[0], oldest).await.expect("admitted");
    drain(&core).await;

    let first = console::dashboard(&core, None, first_page(), Utc::now())
        .await
        .expect("dashboard");
    let per_page = usize::try_from(ROWS_PER_PAGE).expect("small");
    assert_eq!(first.rows.len(), per_page);
    assert_eq!(
        (first.at, first.next.is_some()),
        (None, true),
        "the newest page, an older one after"
    );
    assert_eq!(first.rows[0].state.voucher.id, newest, "newest first");
    assert!(first.rows.iter().all(|r| r.state.voucher.id != oldest));
    // Nothing on this page sold: the chart is of the page's first row.
    assert_eq!(first.chart.as_ref().map(|(id, _)| *id), Some(newest));

    // The older page, by keyset: the oldest alone, and no page after it.
    let older = console::dashboard(
        &core,
        None,
        RowsAsked::Query(SaleQuery {
            after: first.next,
            ..first_query()
        }),
        Utc::now(),
    )
    .await
    .expect("dashboard");
    let ids: Vec<_> = older.rows.iter().map(|r| r.state.voucher.id).collect();
    assert_eq!((ids, older.next), (vec![oldest], None));

    // The page holding a voucher (a new one, or the one being managed) starts at its row.
    let holding = console::dashboard(&core, None, RowsAsked::Holding(oldest), Utc::now())
        .await
        .expect("dashboard");
    let ids: Vec<_> = holding.rows.iter().map(|r| r.state.voucher.id).collect();
    assert_eq!(ids, vec![oldest]);
    assert_eq!(holding.rows[0].counts.written, 1);

    // A voucher on another page is still charted, with its title.
    let d = console::dashboard(&core, Some(oldest), first_page(), Utc::now())
        .await
        .expect("dashboard");
    let (id, series) = d.chart.expect("a chart");
    assert_eq!(id, oldest);
    assert_eq!(series.expect("series").counts.iter().sum::<i64>(), 1);
    assert_eq!(d.chart_title, "Test voucher");
    assert_eq!(d.rows.len(), per_page);
}

/// The console's rows with nothing searched: every sale, newest first.
fn first_query() -> SaleQuery {
    SaleQuery {
        limit: ROWS_PER_PAGE,
        ..SaleQuery::default()
    }
}

fn first_page() -> RowsAsked {
    RowsAsked::Query(first_query())
}
