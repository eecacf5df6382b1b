//! The admin console's figures: the vouchers with their live counts, a page at a time, and one
//! voucher's sales over time.

use chrono::{DateTime, TimeZone, Utc};

use crate::{
    catalog::{self, VoucherState},
    domain::{OrderCounts, ReminderCounts, SaleCursor, SaleQuery, Voucher, VoucherId},
    infra::{backend::Backend, store},
    Core,
};

/// A voucher with where each of its units is.
#[derive(Debug, Clone)]
pub struct VoucherCounts {
    /// The voucher, Redis's stock left and the orders queued (admitted, not yet written).
    pub state: VoucherState,
    /// Its written orders and payments, from PostgreSQL.
    pub counts: OrderCounts,
    /// A draw whose list is committed and whose ranking is not recorded: the round it waits for.
    pub awaiting_round: Option<u64>,
    /// Its reminders asked, sent and failed.
    pub reminders: ReminderCounts,
}

/// The newest vouchers first, each with its counts: the catalog's listing (one query, one
/// Redis pipeline, which also reads the dead letters) and one query of tallies.
pub async fn overview(core: &Core, limit: i64) -> Result<Vec<VoucherCounts>, Backend> {
    let states = catalog::list_counted(core, limit).await?;
    with_tallies(core, states).await
}

/// `vouchers`, each with its counts read now.
async fn counts_of(core: &Core, vouchers: Vec<Voucher>) -> Result<Vec<VoucherCounts>, Backend> {
    let states = catalog::counted(core, vouchers).await?;
    with_tallies(core, states).await
}

async fn with_tallies(
    core: &Core,
    states: Vec<VoucherState>,
) -> Result<Vec<VoucherCounts>, Backend> {
    if states.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<VoucherId> = states.iter().map(|s| s.voucher.id).collect();
    let tallies = store::sales::tallies(&core.db, &ids).await?;
    let awaiting = store::draws::awaiting_rounds(&core.db, &ids).await?;
    let reminded = store::reminders::tallies(&core.db, &ids).await?;
    Ok(states
        .into_iter()
        .zip(tallies)
        .map(|(state, counts)| VoucherCounts {
            awaiting_round: awaiting.get(&state.voucher.id).copied(),
            reminders: reminded.get(&state.voucher.id).copied().unwrap_or_default(),
            state,
            counts,
        })
        .collect())
}

/// Which rows the console shows: the sales a query finds (a page after its cursor), or the page
/// that starts at a voucher (the one just created or being managed, so its row is on screen).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowsAsked {
    Query(SaleQuery),
    Holding(VoucherId),
}

/// Rows on one page of the console: each costs Redis and PostgreSQL reads at every refresh.
pub const ROWS_PER_PAGE: i64 = 25;

/// What the console shows: one page of the sales with their counts, one voucher's sales over
/// time, and whether orders are being written.
#[derive(Debug, Clone)]
pub struct Dashboard {
    pub rows: Vec<VoucherCounts>,
    /// The place the rows start after (`None`: the newest), which a refresh asks for again.
    pub at: Option<SaleCursor>,
    /// Where the older page starts (`None`: these are the oldest).
    pub next: Option<SaleCursor>,
    /// The charted voucher and its series (`None` before its first written order).
    pub chart: Option<(VoucherId, Option<SalesSeries>)>,
    /// The charted voucher's title (it may be on another page than the rows).
    pub chart_title: String,
    /// The age of the oldest queued order, when it is past `SECKILL_STALL_AFTER_MS`.
    pub stalled_for: Option<std::time::Duration>,
}

/// The console: the rows `rows` asks for (the whole history, newest first, a keyset page at a
/// time), each with its counts, and the sales of `chart` when it is a voucher, else of the
/// newest voucher on the page that sold something, else of the page's first.
pub async fn dashboard(
    core: &Core,
    chart: Option<VoucherId>,
    rows: RowsAsked,
    now: DateTime<Utc>,
) -> Result<Dashboard, Backend> {
    let query = match rows {
        RowsAsked::Query(q) => q,
        RowsAsked::Holding(id) => SaleQuery {
            // Just after the voucher in the order: its row comes first.
            after: catalog::get(core, id).await?.map(|v| SaleCursor {
                begins_at: v.voucher.window.begins_at(),
                id: v.voucher.id.get().saturating_add(1),
            }),
            limit: ROWS_PER_PAGE,
            ..SaleQuery::default()
        },
    };
    let found = catalog::find(core, &query, now).await?;
    let vouchers = found.vouchers.into_iter().map(|v| v.voucher).collect();
    let rows = counts_of(core, vouchers).await?;
    let asked = match chart {
        Some(id) => match rows.iter().find(|r| r.state.voucher.id == id) {
            Some(r) => Some(r.state.voucher.clone()),
            None => catalog::get(core, id).await?.map(|v| v.voucher),
        },
        None => None,
    };
    let chosen = asked
        .or_else(|| {
            rows.iter()
                .find(|r| r.counts.written + r.state.queued > 0)
                .map(|r| r.state.voucher.clone())
        })
        .or_else(|| rows.first().map(|r| r.state.voucher.clone()));
    let (chart, chart_title) = match chosen {
        Some(v) => (Some((v.id, series_of(core, &v, now).await?)), v.title),
        None => (None, String::new()),
    };
    let stalled_for = crate::jobs::order_writer::oldest_queued_age(core)
        .await?
        .filter(|age| *age > core.config.worker.stall_after);
    Ok(Dashboard {
        rows,
        at: query.after,
        next: found.next,
        chart,
        chart_title,
        stalled_for,
    })
}

/// Orders written per interval of admission time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SalesSeries {
    /// Where bucket 0 starts.
    pub start: DateTime<Utc>,
    /// Width of every bucket.
    pub bucket_secs: i64,
    /// Orders admitted in each bucket, zeros included.
    pub counts: Vec<i64>,
}

/// At most this many buckets: enough for a readable chart on a phone.
pub const MAX_BUCKETS: i64 = 60;

/// Bucket widths people read easily, in seconds.
const WIDTHS: [i64; 17] = [
    1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1_800, 3_600, 7_200, 21_600, 43_200, 86_400,
];

/// The narrowest readable width that fits `span_secs` in [`MAX_BUCKETS`] buckets (wider
/// than a day for spans of months).
pub fn bucket_width(span_secs: i64) -> i64 {
    let span = span_secs.max(1);
    WIDTHS
        .into_iter()
        .find(|w| (span + w - 1) / w <= MAX_BUCKETS)
        .unwrap_or_else(|| (span + MAX_BUCKETS - 1) / MAX_BUCKETS)
}

#[cfg(feature = "testing")]
/// `voucher`'s written orders over time, from its first admission to its last or to `now`
/// while the sale is still open; `None` before its first order.
pub async fn sales_series(
    core: &Core,
    voucher: VoucherId,
    now: DateTime<Utc>,
) -> Result<Option<SalesSeries>, Backend> {
    match store::vouchers::get(&core.db, voucher).await? {
        Some(v) => series_of(core, &v, now).await,
        None => Ok(None),
    }
}

/// [`sales_series`] of a voucher already read.
async fn series_of(
    core: &Core,
    v: &Voucher,
    now: DateTime<Utc>,
) -> Result<Option<SalesSeries>, Backend> {
    let voucher = v.id;
    let Some((first, last)) = store::sales::admission_span(&core.db, voucher).await? else {
        return Ok(None);
    };
    let end = last.max(now.min(v.window.ends_at()));
    let width = bucket_width(end.timestamp() - first.timestamp() + 1);
    let start_secs = first.timestamp().div_euclid(width) * width;
    let start = Utc.timestamp_opt(start_secs, 0).single().unwrap_or(first);
    let buckets = (end.timestamp() - start_secs) / width + 1;
    let mut counts = vec![0; usize::try_from(buckets).unwrap_or(0)];
    for (bucket, n) in store::sales::admitted_per_bucket(&core.db, voucher, start, width).await? {
        if let Some(slot) = usize::try_from(bucket).ok().and_then(|b| counts.get_mut(b)) {
            *slot = n;
        }
    }
    Ok(Some(SalesSeries {
        start,
        bucket_secs: width,
        counts,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flash_sale_of_a_few_seconds_gets_one_second_buckets() {
        assert_eq!(bucket_width(1), 1);
        assert_eq!(bucket_width(0), 1);
        assert_eq!(bucket_width(60), 1);
        assert_eq!(bucket_width(61), 2);
    }

    #[test]
    fn widths_grow_so_that_no_chart_has_more_than_sixty_bars() {
        for span in [1, 59, 61, 119, 121, 3_600, 86_400, 7 * 86_400, 400 * 86_400] {
            let w = bucket_width(span);
            assert!((span + w - 1) / w <= MAX_BUCKETS, "span {span} width {w}");
        }
        assert_eq!(bucket_width(3_600), 60);
        assert_eq!(bucket_width(86_400), 1_800);
        assert_eq!(bucket_width(30 * 86_400), 43_200);
        assert_eq!(bucket_width(400 * 86_400), 576_000);
    }
}
