//! The shopper's orders: the list, and one order's page, which follows its status until it is
//! final (by polling with JavaScript, by refreshing itself without).

use std::time::Duration;

use domain::{OrderId, OrderStatus};
use leptos::prelude::*;
use leptos_router::{components::Redirect, hooks::use_params_map};

use crate::{
    api::{get_order, my_orders, order_status},
    components::{sign_in_path, ErrorNote, When},
    error::AppError,
    wire::{OrderDetail, OrderView},
};

/// First delay and ceiling of the status polling; each wait is 1.5 times the last.
const POLL_FIRST: Duration = Duration::from_millis(500);
const POLL_MAX: Duration = Duration::from_secs(4);

/// Polls `order_id` until its status is final, writing each answer into `order`; stops when
/// the page that owns `order` is gone. Browser only.
pub fn follow(order_id: OrderId, order: RwSignal<Option<OrderView>>) {
    poll_after(order_id, POLL_FIRST, order);
}

fn poll_after(order_id: OrderId, delay: Duration, order: RwSignal<Option<OrderView>>) {
    set_timeout(
        move || {
            if order.is_disposed() {
                return;
            }
            leptos::task::spawn_local(async move {
                let next = (delay * 3 / 2).min(POLL_MAX);
                let done = match order_status(order_id.to_string()).await {
                    Ok(view) => {
                        let done = view.status.is_final();
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
                    poll_after(order_id, next, order);
                }
            });
        },
        delay,
    );
}

/// The live line "Order N is <status>", announced to screen readers as it changes.
#[component]
pub fn OrderProgress(order_id: OrderId, order: RwSignal<Option<OrderView>>) -> impl IntoView {
    let status = move || {
        order
            .get()
            .map_or(OrderStatus::Queued, |o| o.status)
            .as_str()
    };
    let sentence = move || order.get().map(|o| o.status.sentence());
    let href = format!("/orders/{order_id}");
    view! {
        <div class="order-progress" data-testid="order-progress" data-status=status>
            <p>
                "Order " <a href=href data-testid="order-link"><code data-testid="order-id">{order_id.to_string()}</code></a>
                " is " <strong data-testid="order-state" class=move || format!("state state-{}", status())>{status}</strong>
            </p>
            <p class="hint">{sentence}</p>
        </div>
    }
}

/// `/orders/:id`: one order, followed until final.
#[component]
pub fn OrderPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.read().get("id").unwrap_or_default();
    let detail = Resource::new(id, get_order);
    view! {
        <Suspense fallback=|| view! { <p class="loading">"Loading your order…"</p> }>
            {move || Suspend::new(async move {
                match detail.await {
                    Ok(d) => view! { <OrderCard detail=d/> }.into_any(),
                    Err(AppError::Unauthenticated) => {
                        view! { <Redirect path=sign_in_path(&format!("/orders/{}", id()))/> }.into_any()
                    }
                    // Someone else's order answers exactly like an unknown one (I7): 404.
                    Err(AppError::NotFound) => view! {
                        {crate::components::set_page_status(404)}
                        <leptos_meta::Title text="Order not found"/>
                        <section class="panel" data-testid="order-not-found">
                            <h1>"Order not found"</h1>
                            <p>"There is no order with this number in your account."</p>
                            <p><a href="/orders">"Your orders"</a></p>
                        </section>
                    }.into_any(),
                    Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn OrderCard(detail: OrderDetail) -> impl IntoView {
    let OrderDetail {
        order: view,
        voucher_title,
    } = detail;
    let order_id = view.order_id;
    let voucher_href = format!("/vouchers/{}", view.voucher_id);
    let created_at = view.created_at;
    let pending = !view.status.is_final();
    let order = RwSignal::new(Some(view));
    // Effects run in the browser only: the server renders the status it has.
    Effect::new(move |_| {
        if pending {
            follow(order_id, order);
        }
    });
    view! {
        <leptos_meta::Title text=format!("Order {order_id}")/>
        <section class="panel" data-testid="order">
            <h1>{voucher_title.clone()}</h1>
            // Without JavaScript the page reloads itself until the status is final; a browser
            // running scripts ignores the tag and polls instead.
            {pending.then(|| view! { <noscript inner_html=r#"<meta http-equiv="refresh" content="1">"#></noscript> })}
            <div aria-live="polite" data-testid="order-status">
                <OrderProgress order_id order/>
            </div>
            <dl class="facts">
                <dt>"Voucher"</dt>
                <dd><a href=voucher_href>{voucher_title}</a></dd>
                <dt>"Ordered at"</dt>
                <dd><When at=created_at/></dd>
            </dl>
            <p><a href="/orders">"All your orders"</a></p>
        </section>
    }
}

/// `/orders`: the shopper's orders, newest first.
#[component]
pub fn MyOrdersPage() -> impl IntoView {
    let orders = Resource::new(|| (), |_| my_orders());
    view! {
        <leptos_meta::Title text="My orders"/>
        <h1>"My orders"</h1>
        <Suspense fallback=|| view! { <p class="loading">"Loading your orders…"</p> }>
            {move || Suspend::new(async move {
                match orders.await {
                    Ok(list) if list.is_empty() => view! {
                        <p class="empty" data-testid="no-orders">"No orders yet. " <a href="/">"See what is on sale"</a></p>
                    }.into_any(),
                    Ok(list) => view! {
                        <ul class="order-list" data-testid="order-list">
                            {list.into_iter().map(|d| view! { <OrderRow detail=d/> }).collect_view()}
                        </ul>
                    }.into_any(),
                    Err(AppError::Unauthenticated) => view! { <Redirect path=sign_in_path("/orders")/> }.into_any(),
                    Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn OrderRow(detail: OrderDetail) -> impl IntoView {
    let o = detail.order;
    let status = o.status.as_str();
    view! {
        <li class="order-row" data-testid="order-row" data-status=status>
            <a href=format!("/orders/{}", o.order_id) class="order-title">{detail.voucher_title}</a>
            <span class=format!("state state-{status}") title=o.status.sentence()>{status}</span>
            <span class="order-meta"><code>{o.order_id.to_string()}</code> " · " <When at=o.created_at/></span>
        </li>
    }
}

#[cfg(test)]
mod tests {
    use domain::FailureReason;

    use super::*;

    #[test]
    fn a_failed_order_reads_as_a_sentence_not_a_code() {
        let failed = OrderStatus::Failed {
            reason: FailureReason::DeadLetter { deliveries: 5 },
        };
        assert!(!failed.sentence().contains("dead_letter"));
        assert!(failed.is_final() && !OrderStatus::Queued.is_final());
    }
}
