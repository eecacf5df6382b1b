//! The books out (issue #55): an accountant's CSV of the orders admitted in a period and of the
//! payments opened in it, written a batch at a time as they are read (keyset batches, see
//! [`store::books`]), so a year of orders never sits in memory. Amounts in minor units and as a
//! plain number in the currency's major unit; times in RFC 3339, UTC.

mod csv;

use bytes::Bytes;
use chrono::{DateTime, SecondsFormat, Utc};
use futures::StreamExt;

use crate::{
    auth::{audit, Admin},
    domain::{Currency, Period},
    infra::{
        backend::Backend,
        store::{self, books::OrderLine, books::PaymentLine},
    },
    Core,
};

/// Rows read per query.
const BATCH: i64 = 1_000;

/// The orders' columns.
pub const ORDER_COLUMNS: &[&str] = &[
    "order_id",
    "admitted_at",
    "written_at",
    "voucher_id",
    "voucher_title",
    "user_id",
    "status",
    "price_minor",
    "price",
    "currency",
    "paid_at",
    "cancelled_at",
    "cancelled_by",
    "payment_state",
    "dispute",
];

/// The payments' columns.
pub const PAYMENT_COLUMNS: &[&str] = &[
    "payment_id",
    "created_at",
    "updated_at",
    "order_id",
    "voucher_id",
    "attempt",
    "provider",
    "state",
    "amount_minor",
    "amount",
    "currency",
    "provider_ref",
    "dispute",
    "refund_error",
    "mismatch",
];

/// A CSV export: its bytes as they are made; a store failing midway ends it with the error.
pub type Export = futures::stream::BoxStream<'static, Result<Bytes, Backend>>;

/// The orders admitted in `period`, oldest first, for `admin` (an audit line and a row of the
/// admins' actions say who took them). The first batch is read before this returns, so a
/// store out of reach is an error here rather than a cut-short file.
pub async fn orders_csv(core: &Core, admin: &Admin, period: Period) -> Result<Export, Backend> {
    audited(
        core,
        admin,
        "export orders",
        period,
        orders_export(core, period).await,
    )
    .await
}

async fn orders_export(core: &Core, period: Period) -> Result<Export, Backend> {
    let db = core.db.clone();
    let currency = core.config.payments.currency.clone();
    let fetch = move |after| {
        let db = db.clone();
        async move { store::books::orders(&db, period.from(), period.to(), after, BATCH).await }
    };
    let first = fetch(None).await?;
    Ok(export(
        ORDER_COLUMNS,
        first,
        fetch,
        |o: &OrderLine| (o.admitted_at, o.id),
        move |o, out| order_row(o, &currency, out),
    ))
}

/// The payments opened in `period`, oldest first (see [`orders_csv`]).
pub async fn payments_csv(core: &Core, admin: &Admin, period: Period) -> Result<Export, Backend> {
    audited(
        core,
        admin,
        "export payments",
        period,
        payments_export(core, period).await,
    )
    .await
}

async fn payments_export(core: &Core, period: Period) -> Result<Export, Backend> {
    let db = core.db.clone();
    let fetch = move |after| {
        let db = db.clone();
        async move { store::books::payments(&db, period.from(), period.to(), after, BATCH).await }
    };
    let first = fetch(None).await?;
    Ok(export(
        PAYMENT_COLUMNS,
        first,
        fetch,
        |p: &PaymentLine| (p.created_at, p.session_id.clone()),
        payment_row,
    ))
}

/// `export` as it is, once an audit line and a row of the admins' actions say who asked.
async fn audited(
    core: &Core,
    admin: &Admin,
    action: &'static str,
    period: Period,
    export: Result<Export, Backend>,
) -> Result<Export, Backend> {
    // The outcome without the stream itself, which is not `Sync`.
    let outcome = export.as_ref().map(|_| ());
    audit::admin_action(core, admin.user(), action, period, &outcome).await;
    export
}

/// Where an export stands.
enum Step<L, K> {
    /// The header and the first batch, read already.
    Start(Vec<L>),
    /// The next batch starts after this key.
    After(K),
    Done,
}

/// The header, then each batch's rows, until a batch comes back short.
fn export<L, K, F, Fut>(
    columns: &'static [&'static str],
    first: Vec<L>,
    fetch: F,
    key: fn(&L) -> K,
    write: impl Fn(&L, &mut Vec<u8>) + Send + Sync + 'static,
) -> Export
where
    L: Send + 'static,
    K: Send + 'static,
    F: Fn(Option<K>) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Vec<L>, sqlx::Error>> + Send,
{
    let rows = move |batch: &[L], out: &mut Vec<u8>| {
        for line in batch {
            write(line, out);
        }
    };
    let next = move |batch: Vec<L>| -> Step<L, K> {
        match batch.last() {
            Some(last) if batch.len() as i64 == BATCH => Step::After(key(last)),
            _ => Step::Done,
        }
    };
    futures::stream::unfold(
        (Step::Start(first), fetch, rows, next),
        move |(step, fetch, rows, next)| async move {
            let (batch, out) = match step {
                Step::Done => return None,
                Step::Start(batch) => {
                    let mut out = Vec::new();
                    csv::header(&mut out, columns);
                    (batch, out)
                }
                Step::After(after) => match fetch(Some(after)).await {
                    Ok(batch) if batch.is_empty() => return None,
                    Ok(batch) => (batch, Vec::new()),
                    Err(e) => {
                        // The download is cut short (the client sees it incomplete); say why.
                        tracing::warn!(error = %e, "an export stopped: a batch could not be read");
                        return Some((Err(e.into()), (Step::Done, fetch, rows, next)));
                    }
                },
            };
            let mut out = out;
            rows(&batch, &mut out);
            let step = next(batch);
            Some((Ok(Bytes::from(out)), (step, fetch, rows, next)))
        },
    )
    // Fused: a consumer may poll again after the end (the compression layer does), which an
    // unfold answers with a panic.
    .fuse()
    .boxed()
}

fn time(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn order_row(o: &OrderLine, currency: &Currency, out: &mut Vec<u8>) {
    csv::Row::new(out)
        .plain(&o.id.to_string())
        .plain(&time(o.admitted_at))
        .plain(&time(o.written_at))
        .plain(&o.voucher_id.to_string())
        .text(&o.title)
        .plain(&o.user_id.to_string())
        .plain(&o.status)
        .plain(&o.price_cents.to_string())
        .plain(&currency.amount(o.price_cents))
        .plain(currency.as_str())
        .plain(&o.paid_at.map(time).unwrap_or_default())
        .plain(&o.cancelled_at.map(time).unwrap_or_default())
        .maybe(o.cancelled_by.as_deref())
        .maybe(o.payment_state.as_deref())
        .maybe(o.dispute.as_deref())
        .end();
}

fn payment_row(p: &PaymentLine, out: &mut Vec<u8>) {
    let amount = p
        .currency
        .parse::<Currency>()
        .map_or_else(|_| String::new(), |c| c.amount(p.amount_cents));
    csv::Row::new(out)
        .text(&p.session_id)
        .plain(&time(p.created_at))
        .plain(&time(p.updated_at))
        .plain(&p.order_id.to_string())
        .plain(&p.voucher_id.to_string())
        .plain(&p.attempt.to_string())
        .text(&p.provider)
        .plain(&p.state)
        .plain(&p.amount_cents.to_string())
        .plain(&amount)
        .text(&p.currency)
        .maybe(p.payment_ref.as_deref())
        .maybe(p.dispute.as_deref())
        .maybe(p.refund_error.as_deref())
        .maybe(p.mismatch.as_deref())
        .end();
}
