//! `/admin/payments`: the payments an admin looks at (design.md decision 41), rendered on the
//! server: what needs attention (money that did not match its order, refunds owed or refused,
//! disputes), the paid ones with a **Refund** form each, and the refunded ones. Filters and
//! pages are links and the forms are plain, so it is the same page with JavaScript or without.

use leptos::prelude::*;
use leptos_router::hooks::use_query_map;
use webapi::payments::{PaymentRow, PaymentsView};

use crate::words::Texts;

/// A filter's words in a catalogue.
type Words = fn(Texts) -> &'static str;

/// The listing's filters: each one's `?state=` and its words.
const FILTERS: [(&str, Words); 3] = [
    ("attention", |t| t.payments_filter_attention()),
    ("paid", |t| t.payments_filter_paid()),
    ("refunded", |t| t.payments_filter_refunded()),
];

/// A payment's amount in its own currency (a payment may be in another than the shop's: a
/// mismatch is flagged for the admins, and shown as it was paid).
fn amount(cents: i64, currency: &str) -> String {
    match currency.parse::<domain::Currency>() {
        Ok(c) => c.format(cents),
        Err(_) => format!("{cents} {currency}"),
    }
}

/// Words for a listed payment's state.
fn payment_state(t: Texts, state: &str) -> &'static str {
    match state {
        "open" => t.payment_open(),
        "paid" => t.payment_paid(),
        "flagged" => t.payment_flagged(),
        "refund_owed" => t.payment_refund_owed(),
        "refund_failed" => t.payment_refund_failed(),
        "refunded" => t.payment_refunded(),
        "disputed" => t.payment_disputed(),
        _ => t.payment_closed(),
    }
}

use crate::{
    api::admin::admin_payments,
    components::{plain_form_error, ErrorNote, Pager},
    session::AdminOnly,
    time::When,
};

#[component]
pub fn PaymentsPage() -> impl IntoView {
    view! { <AdminOnly><Payments/></AdminOnly> }
}

#[component]
fn Payments() -> impl IntoView {
    let t = crate::words::t();
    let query = use_query_map();
    let (state, page, refunded, outcome) = query.with_untracked(|q| {
        (
            q.get("state"),
            q.get("page").map(|p| domain::Page::parse_number(&p)),
            q.get("refunded"),
            q.get("outcome"),
        )
    });
    let data = Resource::new(
        move || (state.clone(), page),
        |(state, page)| admin_payments(state, page),
    );
    let notice = refunded.map(|order| {
        let words = if outcome.as_deref() == Some("refunded") {
            crate::words::fill(t.payments_refunded_notice(), &[&order])
        } else {
            crate::words::fill(t.payments_owed_notice(), &[&order])
        };
        view! { <p class="notice" role="status" data-testid="refund-notice">{words}</p> }
    });
    view! {
        <leptos_meta::Title text=t.payments_title()/>
        <div class="console-head">
            <h1>{t.payments_title()}</h1>
            <a class="button" href="/admin">{t.console_title()}</a>
        </div>
        {notice}
        // A refund the server refused comes back here with its error in the address.
        {plain_form_error("/sf/refund_order").map(|error| view! { <ErrorNote error/> })}
        <Books/>
        <Suspense fallback=move || view! { <p class="loading">{t.payments_loading()}</p> }>
            {move || Suspend::new(async move {
                match data.await {
                    Ok(view) => view! { <Listing view/> }.into_any(),
                    Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// The books out: a plain GET form (with JavaScript or without) for the REST API's CSV exports,
/// the days of this month so far filled in; each button downloads its file.
#[component]
fn Books() -> impl IntoView {
    use chrono::Datelike;
    let t = crate::words::t();
    let today = chrono::Utc::now()
        .with_timezone(&crate::time::shop_offset())
        .date_naive();
    let first = today.with_day(1).unwrap_or(today);
    view! {
        <section class="panel books" data-testid="books">
            <h2>{t.books_heading()}</h2>
            <form method="get" action="/api/admin/orders.csv" class="filters">
                <label>{t.books_from()} " "
                    <input type="date" name="from" required value=first.to_string() data-testid="books-from"/>
                </label>
                <label>{t.books_to()} " "
                    <input type="date" name="to" required value=today.to_string() data-testid="books-to"/>
                </label>
                <button type="submit" class="button" data-testid="books-orders">{t.books_orders()}</button>
                <button type="submit" class="button" formaction="/api/admin/payments.csv"
                    data-testid="books-payments">{t.books_payments()}</button>
            </form>
            <p class="hint">{crate::words::fill(t.books_hint(), &[&crate::time::zone_name(t)])}</p>
        </section>
    }
}

#[component]
fn Listing(view: PaymentsView) -> impl IntoView {
    let t = crate::words::t();
    let PaymentsView {
        rows,
        filter,
        page,
        pages,
        total,
    } = view;
    let href = move |f: &str, p: usize| format!("/admin/payments?state={f}&page={p}");
    let tabs = FILTERS
        .iter()
        .map(|(name, words)| {
            let current = *name == filter;
            view! {
                <a href=href(name, 1) class="button" class:primary=current
                    aria-current=current.then_some("page") data-testid=format!("filter-{name}")>{words(t)}</a>
            }
        })
        .collect_view();
    let body = if rows.is_empty() {
        view! { <p class="empty" data-testid="no-payments">{t.payments_empty()}</p> }.into_any()
    } else {
        let filter = filter.clone();
        view! {
            <div class="table-wrap">
            <table class="counts payments" data-testid="payments">
                <thead>
                    <tr>
                        <th scope="col">{t.payments_col_order()}</th>
                        <th scope="col" class="num">{t.payments_col_amount()}</th>
                        <th scope="col">{t.payments_col_state()}</th>
                        <th scope="col">{t.payments_col_ref()}</th>
                        <th scope="col">{t.payments_col_changed()}</th>
                        <th scope="col"><span class="visually-hidden">{t.col_actions()}</span></th>
                    </tr>
                </thead>
                <tbody>
                    {rows.into_iter().map(|r| view! { <Row r filter=filter.clone()/> }).collect_view()}
                </tbody>
            </table>
            </div>
        }
        .into_any()
    };
    view! {
        <nav class="filters" aria-label=t.payments_filters_label()>{tabs}</nav>
        <p data-testid="payments-total">{crate::words::fill(t.payments_total(), &[&domain::grouped(total)])}</p>
        {body}
        <Pager page pages newer=href(&filter, page.saturating_sub(1).max(1)) older=href(&filter, page + 1)
            label=t.payments_pages_label() newer_text=t.payments_newer() older_text=t.payments_older()/>
    }
}

#[component]
fn Row(r: PaymentRow, filter: String) -> impl IntoView {
    let t = crate::words::t();
    let refundable = r.state == "paid";
    let alert = matches!(
        r.state.as_str(),
        "flagged" | "refund_owed" | "refund_failed" | "disputed"
    );
    view! {
        <tr data-testid="payment-row" data-order=r.order_id.clone() data-state=r.state.clone()>
            <th scope="row" data-label=t.payments_col_order()>{r.order_id.clone()}</th>
            <td class="num" data-label=t.payments_col_amount()>{amount(r.amount_cents, &r.currency)}</td>
            <td data-label=t.payments_col_state() class:alert=alert>{payment_state(t, &r.state)}</td>
            <td data-label=t.payments_col_ref()><code>{r.provider_ref.clone().unwrap_or_default()}</code></td>
            <td data-label=t.payments_col_changed()><When at=r.updated_at/></td>
            <td>
                {refundable.then(|| view! {
                    <details data-testid="refund">
                        <summary>{t.payments_refund()}</summary>
                        <p>{t.payments_refund_text()}</p>
                        <form method="post" action="/sf/refund_order">
                            <input type="hidden" name="order_id" value=r.order_id.clone()/>
                            <input type="hidden" name="state" value=filter.clone()/>
                            <button type="submit" class="danger" data-testid="confirm-refund">{t.payments_refund_now()}</button>
                        </form>
                    </details>
                })}
            </td>
        </tr>
    }
}
