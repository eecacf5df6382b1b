//! The shopper's orders: the list, and one order's page, which follows its status until it is
//! final (by polling with JavaScript, by refreshing itself without). The list is `list.rs`.

mod list;
mod pay;

pub use list::MyOrdersPage;
pub use pay::{seconds_left, server_now, use_pay, PayAction, PayBox, PayNow};

use std::time::Duration;

use domain::{OrderId, OrderStatus};
use leptos::{prelude::*, server_fn::ServerFn};
use leptos_router::{
    components::Redirect,
    hooks::{use_location, use_params_map, use_query_map},
};

use crate::{
    api::orders::{get_order, CancelOrder},
    components::{form_call, CallForm, ErrorNote, Loaded},
    error::AppError,
    refusal::Refusal,
    rest,
    time::{Instant, When},
    url::sign_in_path,
    wire::{OrderDetail, OrderView},
    words::{fill, order_label, order_sentence, t},
};

/// An order queued for longer than this is taking longer than usual (the worker writes one
/// within a second on a healthy shop).
const SLOW_AFTER_SECS: i64 = 5;

/// First delay and ceiling of the status polling; each wait is 1.5 times the last.
const POLL_FIRST: Duration = Duration::from_millis(500);
const POLL_MAX: Duration = Duration::from_secs(4);

/// Cancel on the order page: the order as it is after.
type CancelAction = Action<(), Result<OrderView, Refusal>>;

/// One of the shopper's orders as it is now (`GET /api/orders/{id}`).
async fn order_now(order: OrderId) -> Result<OrderView, Refusal> {
    rest::get(&format!("/api/orders/{order}")).await
}

/// How the order page asks about its order while it follows it.
#[derive(Clone, Copy)]
enum Ask {
    /// The order's status.
    Status,
    /// The shopper is back from the payment page: the provider is asked too (at most every 2 s
    /// per order on the server) if its notification has not come.
    Payment,
}

/// Polls `order_id` until the queue is done with it (written or failed), writing each answer
/// into `order`; stops when the page that owns `order` is gone. Browser only.
pub fn follow(order_id: OrderId, order: RwSignal<Option<OrderView>>) {
    poll_after(
        order_id,
        POLL_FIRST,
        order,
        OrderStatus::is_final,
        Ask::Status,
    );
}

/// Polls `order_id` until nothing can change it any more (paid, cancelled, failed): after its
/// payment deadline, while the sweep cancels it, and after the shopper's return from paying
/// (then also until money that did not match it is known: nothing more comes of that payment).
fn follow_until_settled(order_id: OrderId, order: RwSignal<Option<OrderView>>, ask: Ask) {
    let done_when: fn(OrderStatus) -> bool = match ask {
        Ask::Status => OrderStatus::is_settled,
        Ask::Payment => |s| s.is_settled() || s.payment_mismatch(),
    };
    poll_after(order_id, POLL_FIRST, order, done_when, ask);
}

fn poll_after(
    order_id: OrderId,
    delay: Duration,
    order: RwSignal<Option<OrderView>>,
    done_when: fn(OrderStatus) -> bool,
    ask: Ask,
) {
    set_timeout(
        move || {
            if order.is_disposed() {
                return;
            }
            leptos::task::spawn_local(async move {
                let next = (delay * 3 / 2).min(POLL_MAX);
                let answer = match ask {
                    Ask::Status => order_now(order_id).await,
                    Ask::Payment => {
                        rest::get(&format!("/api/orders/{order_id}?payment=return")).await
                    }
                };
                let done = match answer.map_err(|r| r.error) {
                    Ok(view) => {
                        let done = done_when(view.status);
                        let _ = order.try_set(Some(view));
                        done
                    }
                    // A failed poll (network, restart) is retried; a refusal is final.
                    Err(AppError::Transport(_) | AppError::Unavailable | AppError::Internal(_)) => {
                        false
                    }
                    Err(_) => true,
                };
                if !done && !order.is_disposed() {
                    poll_after(order_id, next, order, done_when, ask);
                }
            });
        },
        delay,
    );
}

/// The live line "Order N: <status>", announced to screen readers as it changes, and a word
/// when an order stays queued for longer than usual.
#[component]
pub fn OrderProgress(order_id: OrderId, order: RwSignal<Option<OrderView>>) -> impl IntoView {
    let status = move || {
        order
            .get()
            .map_or(OrderStatus::Queued, |o| o.status)
            .as_str()
    };
    let t = t();
    let label = move || order_label(t, order.get().map_or(OrderStatus::Queued, |o| o.status));
    // Re-read at each poll: an order queued for longer than usual says so.
    let slow = move || {
        order.get().is_some_and(|o| {
            o.status == OrderStatus::Queued
                && chrono::Utc::now() - o.created_at > chrono::Duration::seconds(SLOW_AFTER_SECS)
        })
    };
    let sentence = move || order.get().map(|o| order_sentence(t, o.status));
    let href = format!("/orders/{order_id}");
    view! {
        <div class="order-progress" data-testid="order-progress" data-status=status>
            <p>
                {t.order_word()} <a href=href data-testid="order-link"><code data-testid="order-id">{order_id.to_string()}</code></a>
                {t.colon()} <strong data-testid="order-state" data-state=status class=move || format!("state state-{}", status())>{label}</strong>
            </p>
            <p class="hint">{sentence}</p>
            {move || slow().then(|| view! {
                <p class="hint slow" data-testid="order-slow">
                    {t.order_slow()}
                </p>
            })}
        </div>
    }
}

/// `/orders/:id`: one order, followed until final. `?payment=return` is the way back from the
/// payment provider's page: the order is followed until the payment is known.
#[component]
pub fn OrderPage() -> impl IntoView {
    let params = use_params_map();
    let query = use_query_map();
    let id = move || params.read().get("id").unwrap_or_default();
    let returning = move || query.read().get("payment").as_deref() == Some("return");
    let detail = Resource::new(move || (id(), returning()), |(id, r)| get_order(id, r));
    let t = t();
    view! {
        <Loaded data=detail loading=t.order_loading()
            ok=move |d: OrderDetail| view! {
                <leptos_meta::Title text=fill(t.order_title(), &[&d.order.order_id])/>
                <OrderCard detail=d returning=returning() rendered_at=chrono::Utc::now().into()/>
            }.into_any()
            handle=order_refusal/>
    }
}

/// The order, followed until final, with its pay and cancel panel: the page's island.
#[cfg_attr(island_order_card, island)]
#[cfg_attr(not(island_order_card), component)]
fn OrderCard(detail: OrderDetail, returning: bool, rendered_at: Instant) -> impl IntoView {
    let now = server_now(rendered_at.0);
    let OrderDetail {
        order: view,
        voucher_title,
    } = detail;
    let order_id = view.order_id;
    let voucher_href = format!("/vouchers/{}", view.voucher_id);
    let created_at = view.created_at;
    let queued = !view.status.is_final();
    // Back from paying while the order still awaits payment: the payment is being confirmed
    // (unless money that did not match it came: the order's sentence says so).
    let checking = returning && view.status.pay_by().is_some() && !view.status.payment_mismatch();
    let order = RwSignal::new(Some(view));
    // Effects run in the browser only: the server renders the status it has.
    Effect::new(move |_| {
        if queued {
            follow(order_id, order);
        } else if checking {
            follow_until_settled(order_id, order, Ask::Payment);
        }
    });
    // Pay (`POST …/pay`) answers where to pay; Cancel (`POST …/cancel`) answers once the order
    // is cancelled, and the order is then read as it is (the deadline may have come first);
    // should that read fail, the shopper's cancellation is what the page shows.
    let pay = use_pay(order_id);
    let cancel: CancelAction = form_call(<CancelOrder as ServerFn>::PATH, move || async move {
        let path = format!("/api/orders/{order_id}/cancel");
        rest::post::<serde::de::IgnoredAny>(&path).await?;
        let before = order
            .get_untracked()
            .ok_or_else(|| Refusal::own(AppError::NotFound))?;
        Ok(order_now(order_id).await.unwrap_or(OrderView {
            status: OrderStatus::Cancelled {
                cancelled_by: domain::Canceller::Shopper,
                refund: domain::Refund::None,
            },
            ..before
        }))
    });
    Effect::new(move |_| {
        if let Some(Ok(now)) = cancel.value().get() {
            order.set(Some(now));
        }
    });
    let status = move || order.get().map_or(OrderStatus::Queued, |o| o.status);
    let error = move || match (pay.value().get(), cancel.value().get()) {
        (Some(Err(e)), _) | (_, Some(Err(e))) => Some(e),
        _ => None,
    };
    let t = t();
    view! {
        <section class="panel" data-testid="order">
            <h1>{voucher_title.clone()}</h1>
            // Without JavaScript the page reloads itself until the status is final (and, back
            // from paying, until the payment is known); a browser running scripts ignores the
            // tag and polls instead.
            {(queued || checking).then(|| view! { <noscript inner_html=r#"<meta http-equiv="refresh" content="1">"#></noscript> })}
            <div aria-live="polite" data-testid="order-status">
                <OrderProgress order_id order/>
                {move || (checking && status().pay_by().is_some() && !status().payment_mismatch()).then(|| view! {
                    <p class="hint" data-testid="payment-checking">
                        {t.order_checking_payment()}
                    </p>
                })}
            </div>
            {move || status().pay_by().map(|pay_by| view! {
                <PayOrCancel order_id pay_by now order pay cancel/>
            })}
            {move || error().map(|e| {
                let code = e.code();
                view! { <div data-testid="order-action-error" data-code=code><ErrorNote error=e/></div> }
            })}
            <dl class="facts">
                <dt>{t.order_voucher()}</dt>
                <dd><a href=voucher_href>{voucher_title}</a></dd>
                <dt>{t.order_ordered_at()}</dt>
                <dd><When at=created_at/></dd>
                {move || status().pay_by().map(|at| view! {
                    <dt>{t.order_pay_by()}</dt>
                    <dd><When at/></dd>
                })}
            </dl>
            <p><a href="/orders">{t.order_all()}</a></p>
        </section>
    }
}

/// Pay now with the time left, and Cancel; past the deadline, the page follows the order until
/// the sweep has cancelled it.
#[component]
fn PayOrCancel(
    order_id: OrderId,
    pay_by: chrono::DateTime<chrono::Utc>,
    now: RwSignal<chrono::DateTime<chrono::Utc>>,
    order: RwSignal<Option<OrderView>>,
    pay: PayAction,
    cancel: CancelAction,
) -> impl IntoView {
    let left = seconds_left(pay_by, now);
    let overdue = Memo::new(move |_| left.get() < 0);
    Effect::new(move |_| {
        if overdue.get() {
            follow_until_settled(order_id, order, Ask::Status);
        }
    });
    let t = t();
    view! {
        <div class="pay-box" data-testid="pay-box">
            <PayNow order_id left pay busy=Signal::derive(move || cancel.pending().get())/>
            <CallForm to={<CancelOrder as ServerFn>::PATH} send=move || { cancel.dispatch(()); }>
                <input type="hidden" name="order_id" value=order_id.to_string()/>
                <button type="submit" data-testid="cancel" disabled=move || pay.pending().get() || cancel.pending().get()>
                    {move || if cancel.pending().get() { t.order_cancelling() } else { t.order_cancel() }}
                </button>
            </CallForm>
        </div>
    }
}

/// unknown one (I7), a 404 page.
fn order_refusal(e: &AppError) -> Option<AnyView> {
    match e {
        AppError::Unauthenticated => {
            let here = use_location().pathname.get_untracked();
            Some(view! { <Redirect path=sign_in_path(&here)/> }.into_any())
        }
        AppError::NotFound => Some(
            view! {
                {crate::components::set_page_status(404)}
                <leptos_meta::Title text=t().order_not_found_title()/>
                <section class="panel" data-testid="order-not-found">
                    <h1>{t().order_not_found_title()}</h1>
                    <p>{t().order_not_found_text()}</p>
                    <p><a href="/orders">{t().order_yours()}</a></p>
                </section>
            }
            .into_any(),
        ),
        _ => None,
    }
}

/// `/orders`: the shopper's orders, newest first.
#[cfg(test)]
mod tests {
    use domain::FailureReason;

    use super::*;

    #[test]
    fn a_failed_order_reads_as_a_sentence_not_a_code() {
        let failed = OrderStatus::Failed {
            reason: FailureReason::DeadLetter { deliveries: 5 },
        };
        assert!(!order_sentence(i18n::Lang::En.texts(), failed).contains("dead_letter"));
        assert!(failed.is_final() && !OrderStatus::Queued.is_final());
    }
}
