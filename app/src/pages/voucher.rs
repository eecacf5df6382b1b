//! A voucher's page: details, the buy button, and the live status of the order once bought.

use std::time::Duration;

use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

use crate::{
    api::{get_voucher, order_status, Buy},
    pages::home::status_label,
    wire::{format_price, OrderView},
};

/// First poll delay, growth factor and ceiling of the order-status polling.
const POLL_FIRST: Duration = Duration::from_millis(500);
const POLL_MAX: Duration = Duration::from_secs(4);

#[component]
pub fn VoucherPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || {
        params
            .read()
            .get("id")
            .and_then(|s| s.parse::<i64>().ok())
            .unwrap_or(0)
    };
    let voucher = Resource::new(id, get_voucher);
    let buy = ServerAction::<Buy>::new();
    let (order, set_order) = signal(None::<OrderView>);

    // Once an order ID arrives, poll its status until it is final (browser only).
    Effect::new(move |_| {
        if let Some(Ok(order_id)) = buy.value().get() {
            poll(order_id, POLL_FIRST, set_order);
        }
    });

    view! {
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            <ErrorBoundary fallback=|_| view! { <p class="error" role="alert">"This voucher does not exist."</p> }>
                {move || Suspend::new(async move {
                    voucher.await.map(|v| {
                        let vid = v.id;
                        view! {
                            <section class="panel" data-testid="voucher" data-status=v.status.clone()>
                                <h1>{v.title.clone()}</h1>
                                <span class=format!("badge badge-{}", v.status)>{status_label(&v.status)}</span>
                                <p class="price">{format_price(v.price_cents)}</p>
                                <p>{v.description.clone()}</p>
                                <p data-testid="remaining">{format!("{} of {} left", v.remaining, v.stock)}</p>
                                <button class="primary" data-testid="buy"
                                    disabled=move || buy.pending().get()
                                    on:click=move |_| { buy.dispatch(Buy { voucher_id: vid }); }>
                                    "Buy now"
                                </button>
                            </section>
                        }
                    })
                })}
            </ErrorBoundary>
        </Suspense>
        <div aria-live="polite" class="order-status" data-testid="order-status">
            {move || match buy.value().get() {
                Some(Err(e)) => view! { <p class="error" data-testid="buy-error" data-code=e.code()>{e.to_string()}</p> }.into_any(),
                Some(Ok(order_id)) => {
                    let status = move || order.get().map(|o| o.status).unwrap_or_else(|| "queued".into());
                    view! {
                        <p>"Order " <code data-testid="order-id">{order_id}</code> " is "
                            <strong data-testid="order-state">{status}</strong></p>
                    }.into_any()
                }
                None => ().into_any(),
            }}
        </div>
    }
}

/// Polls `order_id` after `delay`, backing off by half each time, until the status is final.
fn poll(order_id: String, delay: Duration, set_order: WriteSignal<Option<OrderView>>) {
    set_timeout(
        move || {
            leptos::task::spawn_local(async move {
                let next = (delay * 3 / 2).min(POLL_MAX);
                match order_status(order_id.clone()).await {
                    Ok(view) => {
                        let done = view.status != "queued";
                        set_order.set(Some(view));
                        if !done {
                            poll(order_id, next, set_order);
                        }
                    }
                    Err(_) => poll(order_id, next, set_order),
                }
            });
        },
        delay,
    );
}
