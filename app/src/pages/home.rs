//! The home page: every voucher, filterable by the state of its sale. Each card says, live,
//! how long until its sale opens or ends; an ended sale shows what it sold instead of a bar.

use std::time::Duration;

use chrono::{DateTime, Utc};
use domain::VoucherStatus;
use leptos::{either::Either, prelude::*};

use crate::{
    api::catalog::list_vouchers,
    session::Session,
    time::{every, When},
    url::sign_in_path,
    wire::{format_countdown, format_price, VoucherView},
};

/// How often the cards' "Opens in" / "Ends in" tick.
const TICK: Duration = Duration::from_secs(1);

/// The filter buttons: everything, or one status.
fn filters() -> impl Iterator<Item = (Option<VoucherStatus>, &'static str, &'static str)> {
    std::iter::once((None, "all", "All")).chain(
        VoucherStatus::ALL
            .into_iter()
            .map(|s| (Some(s), s.as_str(), s.label())),
    )
}

#[component]
pub fn HomePage() -> impl IntoView {
    let vouchers = Resource::new(|| (), |_| list_vouchers());
    let session = Session::get();
    view! {
        <leptos_meta::Title text="Flash sales"/>
        <h1>"Flash sales"</h1>
        <Suspense fallback=|| view! { <p class="loading">"Loading vouchers…"</p> }>
            {move || Suspend::new(async move {
                let signed_in = matches!(session.me.await, Ok(Some(_)));
                match vouchers.await {
                    Ok(list) => view! { <VoucherList list signed_in/> }.into_any(),
                    Err(_) => view! {
                        <p class="error" role="alert">"The vouchers could not be loaded. Reload the page to try again."</p>
                    }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// The filters and the cards: the page's island. The cards' clock ticks in the browser, so a
/// sale that opens or ends while the page is open moves between the filters by itself.
#[island]
fn VoucherList(list: Vec<VoucherView>, signed_in: bool) -> impl IntoView {
    let (filter, set_filter) = signal(None::<VoucherStatus>);
    // The cards' clock: the server's at render, the browser's once live.
    let now = RwSignal::new(Utc::now());
    every(TICK, move || now.set(Utc::now()));
    // Whether `v` passes the filter, by its live status as its card shows it.
    let shows = move |v: &VoucherView| filter.get().is_none_or(|f| v.status_at(now.get()) == f);
    let none_shown = {
        let list = list.clone();
        move || !list.iter().any(shows)
    };
    // Each card is there or not by the filter, in the list's order: nothing is reordered, so
    // no keyed list (and its diffing) is needed in the browser. A card is made again only when
    // it comes back into view, not at each tick of the clock.
    let cards = list
        .into_iter()
        .map(|v| {
            let on = Memo::new({
                let v = v.clone();
                move |_| shows(&v)
            });
            move || {
                on.get()
                    .then(|| view! { <VoucherCard v=v.clone() now=now.read_only() signed_in/> })
            }
        })
        .collect_view();
    view! {
        <div class="filters" role="group" aria-label="Show vouchers that are">
            {filters()
                .map(|(key, name, label)| {
                    view! {
                        <button
                            type="button"
                            data-testid=format!("filter-{name}")
                            class:active=move || filter.get() == key
                            aria-pressed=move || (filter.get() == key).to_string()
                            on:click=move |_| set_filter.set(key)
                        >
                            {label}
                        </button>
                    }
                })
                .collect_view()}
        </div>
        <ul class="voucher-list" data-testid="voucher-list">{cards}</ul>
        <Show when=none_shown>
            <p class="empty" data-testid="no-vouchers">"No vouchers here yet."</p>
        </Show>
    }
}

/// One voucher in a list: its phase follows the clock (a sale that opens while the page is
/// open says so), and the badge, the line under the price and the bar agree.
#[component]
pub fn VoucherCard(
    v: VoucherView,
    now: ReadSignal<DateTime<Utc>>,
    /// Visitors see "Sign in to buy" on sales they could still buy from.
    signed_in: bool,
) -> impl IntoView {
    let (begins, ends) = (v.window.begins_at(), v.window.ends_at());
    let (remaining, stock) = (v.remaining, v.stock);
    let page = format!("/vouchers/{}", v.id);
    let title = v.title.clone();
    let price = format_price(v.price_cents);
    let draw = v.opening.is_draw();
    let status = Signal::derive(move || v.status_at(now.get()));
    view! {
        <li class="voucher-card" data-testid="voucher-card" data-status=move || status.get().as_str()>
            <a href=page.clone() class="voucher-title">{title}</a>
            {move || view! { <StatusBadge status=status.get()/> }}
            {draw.then(|| view! { <span class="badge badge-draw" data-testid="draw-badge">"Draw"</span> })}
            <p class="price">{price}</p>
            {move || match status.get() {
                VoucherStatus::Ended => Either::Left(view! {
                    <p class="stock-text" data-testid="ended-summary">
                        {format!("Sale ended · {} of {} sold", domain::grouped(stock - remaining), domain::grouped(stock))}
                    </p>
                }),
                _ => Either::Right(view! { <StockBar remaining stock/> }),
            }}
            // Both lines are always there, one shown: re-created each tick, their times would
            // flash UTC before turning local again.
            <p class="opens" data-testid="card-opens" hidden=move || status.get() != VoucherStatus::Upcoming>
                {move || format!("Opens in {} · ", format_countdown((begins - now.get()).num_seconds() + 1))}
                <When at=begins/>
            </p>
            <p class="opens" data-testid="card-ends" hidden=move || status.get() != VoucherStatus::OnSale>
                {move || format!("Ends in {} · ", format_countdown((ends - now.get()).num_seconds()))}
                <When at=ends/>
            </p>
            {(!signed_in).then(|| view! {
                <a class="button card-sign-in" data-testid="card-sign-in"
                    href=sign_in_path(&page)
                    hidden=move || !matches!(status.get(), VoucherStatus::Upcoming | VoucherStatus::OnSale)>
                    "Sign in to buy"
                </a>
            })}
        </li>
    }
}

/// A sale's status as a coloured badge.
#[component]
pub fn StatusBadge(status: VoucherStatus) -> impl IntoView {
    view! { <span class=format!("badge badge-{}", status.as_str())>{status.label()}</span> }
}

/// What is left of a stock, as a bar and in words.
#[component]
pub fn StockBar(remaining: i64, stock: i64) -> impl IntoView {
    let percent_left = if stock > 0 {
        (remaining * 100 / stock).clamp(0, 100)
    } else {
        0
    };
    let sold = stock - remaining;
    view! {
        <div class="stock">
            <div class="stock-bar" role="meter" aria-label="Stock left" aria-valuemin="0"
                aria-valuemax=stock aria-valuenow=remaining>
                <div class="stock-fill" style=format!("width: {percent_left}%")></div>
            </div>
            <p class="stock-text" data-testid="remaining" data-remaining=remaining>
                {format!("{remaining} of {stock} left · {sold} sold")}
            </p>
        </div>
    }
}
