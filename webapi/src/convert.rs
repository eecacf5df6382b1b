//! Core values into wire types (the server functions and the REST handlers alike).

use chrono::Utc;
use seckill::{
    catalog::{console, VoucherNow},
    sale,
};

use crate::wire::{
    ChartView, ConsoleRow, ConsoleView, OrderView, SalesSeriesView, StockNow, VoucherView,
};

/// A sale's live figures as pages follow them (pushed on its stream, asked for without one),
/// with the server's clock now.
pub fn stock_now(live: Option<seckill::catalog::LiveSale>) -> StockNow {
    StockNow {
        remaining: live.map(|l| l.remaining),
        ends_at: live.map(|l| l.ends_at),
        entrants: live.map_or(0, |l| l.entrants),
        server_time: Utc::now(),
    }
}

pub fn voucher(s: VoucherNow) -> VoucherView {
    VoucherView {
        stock: s.voucher.total_stock(),
        status: s.voucher.status(s.remaining, Utc::now()),
        id: s.voucher.id,
        title: s.voucher.title,
        description: s.voucher.description,
        price_cents: s.voucher.price_cents,
        remaining: s.remaining,
        window: s.voucher.window,
        opening: s.voucher.opening,
    }
}

/// A shopper's standing in a draw, for the wire.
pub fn entry(s: seckill::draw::Standing) -> crate::wire::EntryView {
    crate::wire::EntryView {
        state: s.state,
        receipt: s.receipt.map(receipt),
        proof: s.proof.map(|p| crate::wire::ProofView {
            index: p.index,
            tree_size: p.tree_size,
            path: p.path,
        }),
        order_id: s.order_id,
        rank: s.rank,
        moved: s.moved.map(|m| crate::wire::MoveView {
            seq: m.seq,
            reason: m.step.reason.as_str().to_owned(),
            at: m.step.at,
            recorded_at: m.step.recorded_at.unwrap_or(m.step.at),
            hash: m.step.hash,
        }),
        entrants: s.entrants,
        draw_at: s.draw_at,
    }
}

/// A draw entry's receipt, for the wire.
pub fn receipt(r: seckill::draw::Receipt) -> crate::wire::ReceiptView {
    crate::wire::ReceiptView {
        voucher_id: r.voucher_id.get(),
        leaf: r.leaf,
        salt: r.salt,
        entered_at: r.entered_at,
        key_id: r.key_id,
        signature: r.signature,
    }
}

/// The instant a form's `datetime-local` field means, read in the shop's `zone` (the zone every
/// page shows its times in), as RFC 3339. Unparsable text goes through as typed, so the core's
/// validation names the field; a wall-clock time the zone skips (a DST gap) too.
pub fn instant<Tz: chrono::TimeZone>(local: &str, zone: &Tz) -> String
where
    Tz::Offset: std::fmt::Display,
{
    let local = local.trim();
    ["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S"]
        .iter()
        .find_map(|f| chrono::NaiveDateTime::parse_from_str(local, f).ok())
        .and_then(|t| zone.from_local_datetime(&t).earliest())
        .map_or_else(|| local.to_owned(), |t| t.to_rfc3339())
}

pub fn console_row(c: console::VoucherCounts) -> ConsoleRow {
    ConsoleRow {
        redis_stock: c.state.redis_stock,
        queued: c.state.queued,
        counts: c.counts,
        dead_lettered: c.state.dead_lettered,
        awaiting_round: c.awaiting_round,
        reminders: c.reminders,
        voucher: voucher(VoucherNow {
            remaining: c.state.remaining,
            voucher: c.state.voucher,
        }),
    }
}

pub fn dashboard(d: console::Dashboard) -> ConsoleView {
    let chart = d.chart.map(|(id, series)| ChartView {
        voucher_id: id,
        title: d.chart_title,
        series: series.map(self::series),
    });
    ConsoleView {
        rows: d.rows.into_iter().map(console_row).collect(),
        at: d.at,
        next: d.next,
        chart,
        stalled_secs: d.stalled_for.map(|age| age.as_secs()),
    }
}

pub fn series(s: console::SalesSeries) -> SalesSeriesView {
    SalesSeriesView {
        start: s.start,
        bucket_secs: s.bucket_secs,
        counts: s.counts,
    }
}

pub fn order(v: sale::OrderView) -> OrderView {
    OrderView {
        order_id: v.order,
        voucher_id: v.voucher,
        status: v.status,
        created_at: v.created_at,
    }
}

/// A payment as the admin's listing shows it: a dispute open or lost says so first.
pub fn payment_row(
    p: &seckill::orders::refund_order::PaymentListed,
) -> crate::payments::PaymentRow {
    use seckill::orders::refund_order::PaymentState as S;
    let state = if matches!(p.dispute.as_deref(), Some("open" | "lost")) {
        "disputed"
    } else {
        match p.state {
            S::Open => "open",
            S::Paid => "paid",
            S::Closed => "closed",
            S::Flagged => "flagged",
            S::RefundDue => "refund_owed",
            S::RefundFailed => "refund_failed",
            S::Refunded => "refunded",
        }
    };
    crate::payments::PaymentRow {
        payment_id: p.session.clone(),
        order_id: p.order.to_string(),
        voucher_id: p.voucher.get(),
        amount_cents: p.amount_cents,
        currency: p.currency.clone(),
        state: state.to_owned(),
        provider_ref: p.payment_ref.clone(),
        updated_at: p.updated_at,
    }
}

/// A page of sales found as the wire says it.
pub fn sales(found: seckill::catalog::Found) -> crate::sales::SalesView {
    crate::sales::SalesView {
        vouchers: found.vouchers.into_iter().map(voucher).collect(),
        next: found.next.map(|c| c.to_string()),
    }
}

/// A page of the admins' actions as the wire says it.
pub fn actions(page: seckill::auth::audit::ActionsPage) -> crate::actions::ActionsView {
    crate::actions::ActionsView {
        actions: page
            .actions
            .into_iter()
            .map(|a| crate::actions::ActionView {
                id: a.id,
                at: a.at,
                actor_id: a.actor,
                actor_phone: seckill::domain::Phone::try_from(a.phone.as_str())
                    .map_or_else(|_| "?".to_owned(), |p| p.masked()),
                action: a.action,
                target: a.target,
                outcome: a.outcome,
                code: a.code,
                refusal: a.refusal,
            })
            .collect(),
        next: page.next,
    }
}
