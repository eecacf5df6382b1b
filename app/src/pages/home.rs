//! The home page: the vouchers, newest sales first, filterable by the state of their sale and
//! [`PAGE_SIZE`] to a page. The page is the server's: the filters and the pages are links
//! (`/?status=on_sale&page=2`) the server answers with the matching cards, with JavaScript or
//! without. Only the cards are an island: each says, live, how long
//! until its sale opens or ends, and a card whose sale opens or ends while the page is open
//! changes its badge, its bar and its lines by itself (design.md decision 37).

use chrono::{DateTime, Utc};
use domain::{VoucherId, VoucherStatus};
use leptos::{either::Either, prelude::*};
use leptos_router::hooks::use_query_map;

use crate::{
    api::{
        catalog::{ended_sales, list_vouchers},
        reminders::waiting_counts,
    },
    components::Pager,
    error::AppError,
    session::Session,
    time::{every, Instant, When},
    url::sign_in_path,
    wire::VoucherView,
    words::{self, fill, t, voucher_status, Texts},
};

/// The filters: everything, or one status; each with its `?status=` and its words.
fn filters(t: Texts) -> impl Iterator<Item = (Option<VoucherStatus>, &'static str, &'static str)> {
    std::iter::once((None, "all", t.home_filter_all())).chain(
        VoucherStatus::ALL
            .into_iter()
            .map(move |s| (Some(s), s.as_str(), voucher_status(t, s))),
    )
}

/// The cards a page shows: the listing (every filter but "Ended", paged by number), or a page of
/// ended sales read from the whole history with where the older page starts.
type Shown = (Vec<VoucherView>, Option<Option<domain::SaleCursor>>);

#[component]
pub fn HomePage() -> impl IntoView {
    let session = Session::get();
    // An unknown `?status=` shows everything, as "All" does; a `?page=` that is not a page
    // number, the first page; a `?cursor=` that is not one, the latest ended sales.
    let (filter, page, cursor) = use_query_map().with_untracked(|q| {
        (
            q.get("status").as_deref().and_then(VoucherStatus::parse),
            q.get("page")
                .as_deref()
                .map_or(1, domain::Page::parse_number),
            q.get("cursor")
                .as_deref()
                .and_then(domain::SaleCursor::parse),
        )
    });
    let vouchers = Resource::new(
        || (),
        move |_| async move {
            let shown: Result<Shown, AppError> = match filter {
                // Ended sales outnumber the listing's 200 within weeks: read by keyset.
                Some(VoucherStatus::Ended) => ended_sales(cursor).await.map(|found| {
                    let next = found.next.as_deref().and_then(domain::SaleCursor::parse);
                    (found.vouchers, Some(next))
                }),
                _ => list_vouchers().await.map(|list| (list, None)),
            };
            shown
        },
    );
    // How many wait for each upcoming sale's reminder, for its card.
    let waiting = Resource::new(
        || (),
        move |_| async move {
            let now = Utc::now();
            let ids = match vouchers.await {
                Ok((list, _)) => list
                    .iter()
                    .filter(|v| v.status_at(now) == VoucherStatus::Upcoming)
                    .map(|v| v.id.get())
                    .collect(),
                Err(_) => Vec::new(),
            };
            if ids.is_empty() {
                return Vec::new();
            }
            waiting_counts(ids).await.unwrap_or_default()
        },
    );
    let t = t();
    view! {
        <leptos_meta::Title text=t.home_title()/>
        <h1>{t.home_title()}</h1>
        <Filters current=filter/>
        <Suspense fallback=move || view! { <p class="loading">{t.home_loading()}</p> }>
            {move || Suspend::new(async move {
                let signed_in = matches!(session.me.await, Ok(Some(_)));
                let waiting = waiting.await;
                match vouchers.await {
                    Ok((list, None)) => Either::Left(view! { <VoucherList list filter page signed_in waiting/> }.into_any()),
                    Ok((list, Some(next))) => Either::Left(view! { <EndedList list at=cursor next signed_in/> }.into_any()),
                    Err(_) => Either::Right(view! {
                        <p class="error" role="alert">{t.home_load_failed()}</p>
                    }),
                }
            })}
        </Suspense>
    }
}

/// The filters, as links to the page with its `?status=`; the current one is marked.
#[component]
fn Filters(current: Option<VoucherStatus>) -> impl IntoView {
    let t = t();
    view! {
        <nav class="filters" aria-label=t.home_filters_label()>
            {filters(t)
                .map(|(key, name, label)| {
                    let here = key == current;
                    let href = key.map_or_else(|| "/".to_owned(), |s| format!("/?status={}", s.as_str()));
                    view! {
                        <a
                            class="button"
                            class:active=here
                            href=href
                            data-testid=format!("filter-{name}")
                            aria-current=here.then_some("page")
                        >
                            {label}
                        </a>
                    }
                })
                .collect_view()}
        </nav>
    }
}

/// Ended sales, a page of the whole history after `at`, with links to the latest and the older.
#[component]
fn EndedList(
    list: Vec<VoucherView>,
    at: Option<domain::SaleCursor>,
    next: Option<domain::SaleCursor>,
    signed_in: bool,
) -> impl IntoView {
    let t = t();
    let cards: Vec<Card> = list.into_iter().map(Card::of).collect();
    view! {
        {if cards.is_empty() {
            Either::Left(view! { <p class="empty" data-testid="no-vouchers">{t.home_empty()}</p> })
        } else {
            Either::Right(view! { <VoucherCards cards signed_in/> })
        }}
        {(at.is_some() || next.is_some()).then(|| view! {
            <nav class="pager" aria-label=t.home_pages_label()>
                {at.is_some().then(|| view! {
                    <a class="button" rel="prev" href="/?status=ended" data-testid="page-newest">{t.home_latest_ended()}</a>
                })}
                {next.map(|c| view! {
                    <a class="button" rel="next" href=format!("/?status=ended&cursor={c}") data-testid="page-older">{t.home_older()}</a>
                })}
            </nav>
        })}
    }
}

/// Cards on one page of the home page: a phone hydrates each, so a page with hundreds of them
/// was interactive seconds later than one with a screenful (`scripts/bench.sh phone`).
pub const PAGE_SIZE: usize = 24;

/// The cards whose sale stands as `filter` asks at the time of the render, `page` of them.
#[component]
fn VoucherList(
    list: Vec<VoucherView>,
    filter: Option<VoucherStatus>,
    page: usize,
    signed_in: bool,
    /// How many wait for an upcoming sale's reminder, by voucher.
    waiting: Vec<(i64, i64)>,
) -> impl IntoView {
    let now = Utc::now();
    let mut matching: Vec<VoucherView> = list
        .into_iter()
        .filter(|v| filter.is_none_or(|f| v.status_at(now) == f))
        .collect();
    if matching.is_empty() {
        return Either::Left(
            view! { <p class="empty" data-testid="no-vouchers">{t().home_empty()}</p> },
        );
    }
    let page = domain::Page::of(matching.len(), PAGE_SIZE, page);
    let waiting_for = |id: VoucherId| {
        waiting
            .iter()
            .find(|(v, _)| *v == id.get())
            .map(|(_, n)| *n)
    };
    let cards: Vec<Card> = matching
        .drain(page.items)
        .map(|v| {
            let waiting = waiting_for(v.id);
            Card {
                waiting,
                ..Card::of(v)
            }
        })
        .collect();
    let href = move |to: usize| {
        let mut query: Vec<String> = filter
            .map(|s| format!("status={}", s.as_str()))
            .into_iter()
            .collect();
        if to > 1 {
            query.push(format!("page={to}"));
        }
        if query.is_empty() {
            "/".to_owned()
        } else {
            format!("/?{}", query.join("&"))
        }
    };
    Either::Right(view! {
        <VoucherCards cards signed_in/>
        <Pager
            page=page.number
            pages=page.pages
            newer=href(page.number.saturating_sub(1))
            older=href(page.number + 1)
            label=t().home_pages_label()
            newer_text=t().home_newer()
            older_text=t().home_older()
        />
    })
}

/// How often the cards' "Opens in" / "Ends in" tick.
const TICK: std::time::Duration = std::time::Duration::from_secs(1);

/// The cards, one island: each card's phase follows the clock. One island rather than one per
/// card: a phone hydrates 200 islands half a second slower than one holding 200 cards
/// (`scripts/bench.sh phone`, BENCHMARKS.md).
#[cfg_attr(island_home_cards, island)]
#[cfg_attr(not(island_home_cards), component)]
fn VoucherCards(cards: Vec<Card>, signed_in: bool) -> impl IntoView {
    // The cards' clock: the server's at render, the browser's once live.
    let now = RwSignal::new(Utc::now());
    every(TICK, move || now.set(Utc::now()));
    let now = now.read_only();
    view! {
        <ul class="voucher-list" data-testid="voucher-list">
            {cards
                .into_iter()
                .map(|card| view! { <VoucherCard card now signed_in/> })
                .collect_view()}
        </ul>
    }
}

/// What a card shows of its voucher: the island's props, small and made by the server.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub struct Card {
    id: VoucherId,
    title: String,
    /// As shoppers read it (`¥12.50`).
    price: String,
    draw: bool,
    begins: Instant,
    ends: Instant,
    remaining: i64,
    stock: i64,
    /// Shoppers waiting for its reminder, for an upcoming sale.
    waiting: Option<i64>,
}

impl Card {
    fn of(v: VoucherView) -> Self {
        Self {
            id: v.id,
            price: crate::money::price(v.price_cents),
            draw: v.opening.is_draw(),
            begins: v.window.begins_at().into(),
            ends: v.window.ends_at().into(),
            remaining: v.remaining,
            stock: v.stock,
            title: v.title,
            waiting: None,
        }
    }
}

/// One voucher in the list: its phase follows the clock (a sale that opens while the page is
/// open says so), and the badge, the line under the price and the bar agree.
#[component]
fn VoucherCard(
    card: Card,
    now: ReadSignal<DateTime<Utc>>,
    /// Visitors see "Sign in to buy" on sales they could still buy from.
    signed_in: bool,
) -> impl IntoView {
    let Card {
        id,
        title,
        price,
        draw,
        begins: Instant(begins),
        ends: Instant(ends),
        remaining,
        stock,
        waiting,
    } = card;
    let page = format!("/vouchers/{id}");
    let status = Memo::new(move |_| VoucherStatus::between(begins, ends, remaining, now.get()));
    let t = t();
    view! {
        <li class="voucher-card" data-testid="voucher-card" data-status=move || status.get().as_str()>
            <a href=page.clone() class="voucher-title">{title}</a>
            {move || view! { <StatusBadge status=status.get()/> }}
            {draw.then(|| view! { <span class="badge badge-draw" data-testid="draw-badge">{t.card_draw()}</span> })}
            <p class="price">{price}</p>
            {move || match status.get() {
                VoucherStatus::Ended => Either::Left(view! {
                    <p class="stock-text" data-testid="ended-summary">
                        {fill(t.card_ended_summary(), &[&domain::grouped(stock - remaining), &domain::grouped(stock)])}
                    </p>
                }),
                _ => Either::Right(view! { <StockBar remaining stock/> }),
            }}
            // Both lines are always there, one shown: only the countdowns change each tick.
            <p class="opens" data-testid="card-opens" hidden=move || status.get() != VoucherStatus::Upcoming>
                {move || fill(t.card_opens_in(), &[&countdown(begins, now.get(), 1)])}
                <When at=begins/>
            </p>
            {waiting.filter(|n| *n > 0).map(|n| view! {
                <p class="opens" data-testid="card-waiting" hidden=move || status.get() != VoucherStatus::Upcoming>
                    {fill(t.remind_waiting(), &[&domain::grouped(n)])}
                </p>
            })}
            <p class="opens" data-testid="card-ends" hidden=move || status.get() != VoucherStatus::OnSale>
                {move || fill(t.card_ends_in(), &[&countdown(ends, now.get(), 0)])}
                <When at=ends/>
            </p>
            {(!signed_in).then(|| view! {
                <a class="button card-sign-in" data-testid="card-sign-in"
                    href=sign_in_path(&page)
                    hidden=move || !matches!(status.get(), VoucherStatus::Upcoming | VoucherStatus::OnSale)>
                    {t.sign_in_to_buy()}
                </a>
            })}
        </li>
    }
}

/// The time from `now` to `to`, as a countdown, `round_up` seconds later (an opening counts
/// its last second down to zero).
fn countdown(to: DateTime<Utc>, now: DateTime<Utc>, round_up: i64) -> String {
    words::countdown(t(), (to - now).num_seconds() + round_up)
}

/// A sale's status as a coloured badge.
#[component]
pub fn StatusBadge(status: VoucherStatus) -> impl IntoView {
    view! { <span class=format!("badge badge-{}", status.as_str())>{voucher_status(t(), status)}</span> }
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
    let t = t();
    view! {
        <div class="stock">
            <div class="stock-bar" role="meter" aria-label=t.stock_left_label() aria-valuemin="0"
                aria-valuemax=stock aria-valuenow=remaining>
                <div class="stock-fill" style=format!("width: {percent_left}%")></div>
            </div>
            <p class="stock-text" data-testid="remaining" data-remaining=remaining>
                {fill(t.stock_left(), &[&remaining, &stock, &sold])}
            </p>
        </div>
    }
}
