//! `/admin/payments`: the payments an admin looks at (design.md decision 41), rendered on the
//! server: what needs attention (money that did not match its order, refunds owed or refused,
//! disputes), the paid ones with a **Refund** form each, and the refunded ones. Filters and
//! pages are links and the forms are plain, so it is the same page with JavaScript or without.

use leptos::prelude::*;
use leptos_router::hooks::use_query_map;
use webapi::payments::{state_words, PaymentRow, PaymentsView, FILTERS};

use crate::{
    api::admin::admin_payments,
    components::{ErrorNote, Pager},
    session::AdminOnly,
    time::When,
    wire::format_price,
};

#[component]
pub fn PaymentsPage() -> impl IntoView {
    view! { <AdminOnly><Payments/></AdminOnly> }
}

#[component]
fn Payments() -> impl IntoView {
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
            format!("Order {order} refunded: its money went back and its unit is on sale again.")
        } else {
            format!("Order {order} is cancelled; its refund is owed and not made yet (see below).")
        };
        view! { <p class="notice" role="status" data-testid="refund-notice">{words}</p> }
    });
    view! {
        <leptos_meta::Title text="Payments"/>
        <div class="console-head">
            <h1>"Payments"</h1>
            <a class="button" href="/admin">"Console"</a>
        </div>
        {notice}
        <Suspense fallback=|| view! { <p class="loading">"Loading the payments…"</p> }>
            {move || Suspend::new(async move {
                match data.await {
                    Ok(view) => view! { <Listing view/> }.into_any(),
                    Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn Listing(view: PaymentsView) -> impl IntoView {
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
                    aria-current=current.then_some("page") data-testid=format!("filter-{name}")>{*words}</a>
            }
        })
        .collect_view();
    let body = if rows.is_empty() {
        view! { <p class="empty" data-testid="no-payments">"Nothing here."</p> }.into_any()
    } else {
        let filter = filter.clone();
        view! {
            <div class="table-wrap">
            <table class="counts payments" data-testid="payments">
                <thead>
                    <tr>
                        <th scope="col">"Order"</th>
                        <th scope="col" class="num">"Amount"</th>
                        <th scope="col">"State"</th>
                        <th scope="col">"Provider's reference"</th>
                        <th scope="col">"Changed"</th>
                        <th scope="col"><span class="visually-hidden">"Actions"</span></th>
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
        <nav class="filters" aria-label="Which payments">{tabs}</nav>
        <p data-testid="payments-total">{domain::count(total, "payment", "payments")}</p>
        {body}
        <Pager page pages newer=href(&filter, page.saturating_sub(1).max(1)) older=href(&filter, page + 1)
            label="Pages of payments" newer_text="← Newer" older_text="Older →"/>
    }
}

#[component]
fn Row(r: PaymentRow, filter: String) -> impl IntoView {
    let refundable = r.state == "paid";
    let alert = matches!(
        r.state.as_str(),
        "flagged" | "refund_owed" | "refund_failed" | "disputed"
    );
    view! {
        <tr data-testid="payment-row" data-order=r.order_id.clone() data-state=r.state.clone()>
            <th scope="row" data-label="Order">{r.order_id.clone()}</th>
            <td class="num" data-label="Amount">{format_price(r.amount_cents)} " " {r.currency.to_uppercase()}</td>
            <td data-label="State" class:alert=alert>{state_words(&r.state)}</td>
            <td data-label="Provider's reference"><code>{r.provider_ref.clone().unwrap_or_default()}</code></td>
            <td data-label="Changed"><When at=r.updated_at/></td>
            <td>
                {refundable.then(|| view! {
                    <details data-testid="refund">
                        <summary>"Refund"</summary>
                        <p>"The order is cancelled, its money goes back and its unit goes back on sale."</p>
                        <form method="post" action="/sf/refund_order">
                            <input type="hidden" name="order_id" value=r.order_id.clone()/>
                            <input type="hidden" name="state" value=filter.clone()/>
                            <button type="submit" class="danger" data-testid="confirm-refund">"Refund this order"</button>
                        </form>
                    </details>
                })}
            </td>
        </tr>
    }
}
