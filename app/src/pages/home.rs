//! The home page: every voucher, filterable by the state of its sale.

use domain::VoucherStatus;
use leptos::prelude::*;

use crate::{
    api::list_vouchers,
    components::When,
    wire::{format_price, VoucherView},
};

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
    let (filter, set_filter) = signal(None::<VoucherStatus>);
    view! {
        <leptos_meta::Title text="Flash sales"/>
        <h1>"Flash sales"</h1>
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
        <Suspense fallback=|| view! { <p class="loading">"Loading vouchers…"</p> }>
            <ErrorBoundary fallback=|_| {
                view! { <p class="error" role="alert">"The vouchers could not be loaded. Reload the page to try again."</p> }
            }>
                {move || Suspend::new(async move {
                    vouchers
                        .await
                        .map(|list| {
                            let list = StoredValue::new(list);
                            let shown = move || {
                                let f = filter.get();
                                list.get_value()
                                    .into_iter()
                                    .filter(|v| f.is_none_or(|f| v.status == f))
                                    .collect::<Vec<_>>()
                            };
                            view! {
                                <ul class="voucher-list" data-testid="voucher-list">
                                    <For each=shown key=|v| v.id let:v>
                                        <VoucherCard v/>
                                    </For>
                                </ul>
                                <Show when=move || shown().is_empty()>
                                    <p class="empty" data-testid="no-vouchers">"No vouchers here yet."</p>
                                </Show>
                            }
                        })
                })}
            </ErrorBoundary>
        </Suspense>
    }
}

/// One voucher in a list.
#[component]
pub fn VoucherCard(v: VoucherView) -> impl IntoView {
    let upcoming = v.status == VoucherStatus::Upcoming;
    view! {
        <li class="voucher-card" data-testid="voucher-card" data-status=v.status.as_str()>
            <a href=format!("/vouchers/{}", v.id) class="voucher-title">{v.title.clone()}</a>
            <StatusBadge status=v.status/>
            <p class="price">{format_price(v.price_cents)}</p>
            <StockBar remaining=v.remaining stock=v.stock/>
            {upcoming.then(|| view! { <p class="opens">"Opens " <When at=v.window.begins_at()/></p> })}
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
