//! A voucher's page: details, a countdown that turns the buy button on when the sale opens,
//! a live stock bar, and the status of the order once bought.
//!
//! Without JavaScript the buy button is a plain form: the server redirects to the order's page
//! (or back here with the refusal), and the button's state is the server's at render time.

use std::time::Duration;

use domain::{OrderStatus, VoucherStatus};
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

use crate::{
    api::{
        catalog::{get_voucher, voucher_stock},
        orders::{my_order_for, Buy},
    },
    components::ErrorNote,
    error::AppError,
    live::follow_stream,
    pages::{
        home::StockBar,
        orders::{follow, OrderProgress},
    },
    session::Session,
    time::{every, ServerClock, When},
    url::sign_in_path,
    wire::{format_countdown, format_price, OrderView, StockNow, VoucherDetail, VoucherView},
};

/// How often the clock of the countdown ticks.
const TICK: Duration = Duration::from_millis(250);
/// How often the stock is asked for while no stream pushes it: during the sale, and otherwise
/// (until it ends).
const STOCK_DURING_SALE: Duration = Duration::from_secs(2);
const STOCK_OTHERWISE: Duration = Duration::from_secs(10);

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
    let detail = Resource::new(id, get_voucher);
    // The signed-in shopper's order on this sale, rendered on the server (so it holds without
    // JavaScript): a shopper who bought sees their order instead of "Buy now".
    let mine = Resource::new(id, my_order_for);
    let session = Session::get();
    view! {
        <Suspense fallback=|| view! { <p class="loading">"Loading the voucher…"</p> }>
            {move || Suspend::new(async move {
                match detail.await {
                    Ok(d) => {
                        let mine = mine.await.ok().flatten();
                        let signed_in = matches!(session.me.await, Ok(Some(_)));
                        view! { <Sale detail=d mine signed_in/> }.into_any()
                    }
                    Err(crate::error::AppError::NotFound) => view! { <crate::pages::NotFound/> }.into_any(),
                    Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// The button's words in each phase.
fn button_label(phase: VoucherStatus) -> &'static str {
    match phase {
        VoucherStatus::Upcoming => "Not open yet",
        VoucherStatus::OnSale => "Buy now",
        VoucherStatus::SoldOut => "Sold out",
        VoucherStatus::Ended => "Sale ended",
    }
}

/// What a screen reader hears when the sale changes phase in front of the shopper.
fn announcement(phase: VoucherStatus) -> &'static str {
    match phase {
        VoucherStatus::Upcoming => "",
        VoucherStatus::OnSale => "The sale is open: you can buy now.",
        VoucherStatus::SoldOut => "Sold out.",
        VoucherStatus::Ended => "The sale has ended.",
    }
}

#[component]
fn Sale(detail: VoucherDetail, mine: Option<OrderView>, signed_in: bool) -> impl IntoView {
    let VoucherDetail {
        voucher,
        server_time,
    } = detail;
    let id = voucher.id;
    // The time in the page is as old as its load: the browser re-syncs on its first poll.
    let clock = StoredValue::new(ServerClock::synced_to(server_time));
    let now = RwSignal::new(server_time);
    let v = RwSignal::new(voucher);
    let phase = Memo::new(move |_| v.read().status_at(now.get()));

    // The countdown's clock, and the stock (with the clock) while it can still change.
    every(TICK, move || now.set(clock.get_value().now()));
    // When the stock was last heard of (server clock): the page's load counts as one.
    let last_refresh = StoredValue::new(server_time);
    // Figures from the server, pushed or asked for: the stock and an early end.
    let apply = move |s: StockNow, synced: ServerClock| {
        last_refresh.set_value(synced.now());
        let _ = clock.try_update_value(|c| *c = synced);
        if let Some(left) = s.remaining {
            v.try_update(|v| v.remaining = left);
        }
        // An admin may have ended the sale early: the page follows Redis's end.
        if let Some(end) = s.ends_at {
            v.try_update(|v| v.window = v.window.ended_by(end));
        }
    };
    // Whether a stream delivers the figures.
    let pushed = StoredValue::new(false);
    // Asked for, while no stream delivers (the stream refused, dropped, or not yet open).
    let refresh = move || {
        last_refresh.set_value(clock.get_value().now());
        leptos::task::spawn_local(async move {
            let sent = chrono::Utc::now();
            if let Ok(s) = voucher_stock(id.get()).await {
                let synced = ServerClock::from_round_trip(sent, chrono::Utc::now(), s.server_time);
                apply(s, synced);
            }
        });
    };
    // Pushed: the server sends each change of the sale (and nothing while nothing changes);
    // an ended sale has nothing left to send.
    let opened = chrono::Utc::now();
    if phase.get_untracked() != VoucherStatus::Ended {
        follow_stream(
            format!("/api/vouchers/{}/events", id.get()),
            "stock",
            move |s: StockNow| {
                // The first event follows the stream's opening: a round trip to sync the clock
                // by. Later ones keep that clock.
                let synced = if pushed.get_value() {
                    clock.get_value()
                } else {
                    ServerClock::from_round_trip(opened, chrono::Utc::now(), s.server_time)
                };
                pushed.set_value(true);
                apply(s, synced);
            },
            // Down: ask now (this also syncs the clock when the stream never opened), then on
            // the poll's schedule until the browser's reconnection delivers again.
            move || {
                pushed.set_value(false);
                refresh();
            },
        );
    }
    every(Duration::from_secs(1), move || {
        if pushed.get_value() {
            return;
        }
        let period = match phase.get_untracked() {
            VoucherStatus::Ended => return,
            VoucherStatus::OnSale => STOCK_DURING_SALE,
            VoucherStatus::Upcoming | VoucherStatus::SoldOut => STOCK_OTHERWISE,
        };
        let since = clock.get_value().now() - last_refresh.get_value();
        if since.to_std().unwrap_or_default() >= period {
            refresh();
        }
    });

    let buy = ServerAction::<Buy>::new();
    let order = RwSignal::new(None::<OrderView>);
    // The shopper's order on this sale: rendered by the server, then moved by their own buy.
    let held = RwSignal::new(mine.map(|o| (o.order_id, o.status)));
    // One source of truth: an answer moves the stock, the phase and the button together, at
    // once, instead of waiting for the next poll.
    Effect::new(move |_| match buy.value().get() {
        Some(Ok(order_id)) => {
            v.update(|v| v.remaining = (v.remaining - 1).max(0));
            held.set(Some((order_id, OrderStatus::Queued)));
            order.set(None);
            follow(order_id, order);
        }
        Some(Err(AppError::SoldOut)) => v.update(|v| v.remaining = 0),
        Some(Err(AppError::Ended)) => {
            let now = clock.get_value().now();
            v.update(|v| v.window = v.window.ended_by(now));
        }
        Some(Err(AppError::AlreadyBought(order_id))) => {
            held.set(Some((order_id, OrderStatus::Queued)));
            order.set(None);
            follow(order_id, order);
        }
        _ => {}
    });
    // The held order's status follows its progress.
    Effect::new(move |_| {
        if let Some(o) = order.get() {
            held.update(|h| {
                if let Some((id, status)) = h {
                    if *id == o.order_id {
                        *status = o.status;
                    }
                }
            });
        }
    });
    // Keyboard focus goes to the answer (the button it was on may have just turned off), so
    // the next Tab starts from there rather than from the top of the page.
    let answer = NodeRef::<leptos::html::Div>::new();
    Effect::new(move |_| {
        if buy.value().with(Option::is_some) {
            focus(answer);
        }
    });

    let VoucherView {
        title,
        description,
        price_cents,
        window,
        ..
    } = v.get_untracked();
    let (begins_at, ends_at) = (window.begins_at(), window.ends_at());
    view! {
        <leptos_meta::Title text=title.clone()/>
        <section class="panel sale" data-testid="voucher" data-phase=move || phase.get().as_str()>
            <h1>{title}</h1>
            <span class=move || format!("badge badge-{}", phase.get().as_str()) data-testid="phase">
                {move || phase.get().label()}
            </span>
            <p class="price">{format_price(price_cents)}</p>
            {(!description.is_empty()).then(|| view! { <p class="description">{description}</p> })}
            {move || {
                let v = v.read();
                view! { <StockBar remaining=v.remaining stock=v.stock/> }
            }}
            <dl class="facts">
                <dt>"Opens"</dt>
                <dd><When at=begins_at/></dd>
                <dt>"Closes"</dt>
                <dd><When at=ends_at/></dd>
            </dl>
            // The countdown ticks silently; a change of phase is announced once.
            <p class="visually-hidden" aria-live="polite" data-testid="phase-announcement">
                {move || announcement(phase.get())}
            </p>
            <p class="countdown" data-testid="countdown" aria-live="off">
                {move || match phase.get() {
                    VoucherStatus::Upcoming => format!("Opens in {}", format_countdown((begins_at - now.get()).num_seconds() + 1)),
                    VoucherStatus::OnSale => format!("Closes in {}", format_countdown((ends_at - now.get()).num_seconds())),
                    VoucherStatus::SoldOut => "Every unit has been sold.".to_owned(),
                    VoucherStatus::Ended => "This sale is over.".to_owned(),
                }}
            </p>
            {move || match held.get() {
                Some((order_id, status)) => view! {
                    <p class="bought" data-testid="your-order" data-status=status.as_str()>
                        "You bought this: order "
                        <a href=format!("/orders/{order_id}") data-testid="bought-order-link">
                            <code>{order_id.to_string()}</code>
                        </a>
                        " (" {status.label().to_lowercase()} ")."
                    </p>
                }.into_any(),
                // A visitor learns before clicking that buying needs an account, and comes back.
                None if !signed_in => view! {
                    <p class="buy-form">
                        <a class="button primary" data-testid="sign-in-to-buy"
                            href=sign_in_path(&format!("/vouchers/{id}"))>"Sign in to buy"</a>
                    </p>
                }.into_any(),
                None => view! {
                    <ActionForm action=buy attr:class="buy-form">
                        <input type="hidden" name="voucher_id" value=id.get()/>
                        <button type="submit" class="primary buy" data-testid="buy"
                            disabled=move || phase.get() != VoucherStatus::OnSale || buy.pending().get()>
                            {move || if buy.pending().get() { "Buying…" } else { button_label(phase.get()) }}
                        </button>
                    </ActionForm>
                }.into_any(),
            }}
        </section>
        <div aria-live="polite" class="order-status" data-testid="order-status" tabindex="-1" node_ref=answer>
            {move || match buy.value().get() {
                Some(Err(e)) => {
                    let code = e.code();
                    view! { <div data-testid="buy-error" data-code=code><ErrorNote error=e/></div> }.into_any()
                }
                Some(Ok(order_id)) => view! { <OrderProgress order_id order/> }.into_any(),
                None => ().into_any(),
            }}
        </div>
    }
}

/// Moves keyboard focus to `target` (browser only).
fn focus(target: NodeRef<leptos::html::Div>) {
    #[cfg(feature = "hydrate")]
    if let Some(el) = target.get_untracked() {
        let _ = el.focus();
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = target;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_button_says_why_it_is_off() {
        assert_eq!(button_label(VoucherStatus::OnSale), "Buy now");
        assert_eq!(button_label(VoucherStatus::SoldOut), "Sold out");
        assert_eq!(button_label(VoucherStatus::Upcoming), "Not open yet");
        assert_eq!(button_label(VoucherStatus::Ended), "Sale ended");
    }
}
