//! A voucher's page: details, a countdown that turns the buy button on when the sale opens,
//! a live stock bar, and the status of the order once bought.
//!
//! Without JavaScript the buy button is a plain form: the server redirects to the order's page
//! (or back here with the refusal), and the button's state is the server's at render time.

mod buying;
mod draw;
mod live;
mod remind;

use domain::VoucherStatus;
use leptos::{either::Either, prelude::*};
use leptos_router::hooks::use_params_map;

use self::{
    buying::{use_purchase, BuyAnswer, BuyPanel},
    live::{use_live_sale, LiveSale},
};
use crate::{
    api::{
        catalog::get_voucher, draw::draw_entry, orders::my_order_for, reminders::reminder_facts,
    },
    components::ErrorNote,
    error::AppError,
    pages::home::StockBar,
    session::Session,
    time::When,
    wire::{OrderView, VoucherDetail, VoucherView},
    words::{countdown, fill, t, voucher_status},
};

#[component]
pub fn VoucherPage() -> impl IntoView {
    let params = use_params_map();
    // A path that is no voucher ID at all is a voucher that does not exist.
    let id = move || params.read().get("id").and_then(|s| s.parse::<i64>().ok());
    let detail = Resource::new(id, |id| async move {
        match id {
            Some(id) => get_voucher(id).await,
            None => Err(AppError::NotFound),
        }
    });
    // The signed-in shopper's order on this sale, rendered on the server (so it holds without
    // JavaScript): a shopper who bought sees their order instead of "Buy now".
    let mine = Resource::new(id, |id| async move {
        match id {
            Some(id) => my_order_for(id).await,
            None => Ok(None),
        }
    });
    // A draw sale's draw as this visitor stands in it (`None` for first come).
    let entry = Resource::new(id, |id| async move {
        match id {
            Some(id) => draw_entry(id).await,
            None => Ok(None),
        }
    });
    // An upcoming sale's reminders (`None` once it has opened).
    let reminders = Resource::new(id, |id| async move {
        match id {
            Some(id) => reminder_facts(id).await,
            None => Ok(None),
        }
    });
    let session = Session::get();
    view! {
        <Suspense fallback=|| view! { <p class="loading">{t().sale_loading()}</p> }>
            {move || Suspend::new(async move {
                match detail.await {
                    Ok(d) => {
                        // The shopper's own order or entry not read (a store slow to answer):
                        // said, rather than a Buy or an Enter as if they held none.
                        let (mine, entry) = (mine.await, entry.await);
                        let unread = mine.as_ref().err().or(entry.as_ref().err()).cloned().map(|e| {
                            view! { <div data-testid="sale-unread"><ErrorNote error=e/></div> }
                        });
                        let mine = mine.ok().flatten();
                        let entry = entry.ok().flatten().map(draw::standing);
                        let signed_in = matches!(session.me.await, Ok(Some(_)));
                        let id = d.voucher.id.get();
                        let remind = reminders.await.ok().flatten().map(|facts| {
                            view! { <remind::RemindMe id facts signed_in/> }
                        });
                        view! {
                            <leptos_meta::Title text=d.voucher.title.clone()/>
                            {unread}
                            <Sale detail=d mine entry signed_in/>
                            {remind}
                        }
                        .into_any()
                    }
                    Err(AppError::NotFound) => view! { <crate::pages::NotFound/> }.into_any(),
                    Err(e) => view! { <ErrorNote error=e/> }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// A voucher's sale: its facts and live figures, the buy panel and the answer to a buy. The
/// page's island: everything in it lives in the browser, from the props the server rendered.
#[cfg_attr(island_sale, island)]
#[cfg_attr(not(island_sale), component)]
fn Sale(
    detail: VoucherDetail,
    mine: Option<OrderView>,
    entry: Option<draw::Standing>,
    signed_in: bool,
) -> impl IntoView {
    let sale = use_live_sale(detail.voucher, detail.server_time);
    let purchase = use_purchase(sale, mine);
    let phase = sale.phase;
    let panel = match entry {
        Some(entry) => Either::Left(draw::panel(sale, purchase, entry, signed_in)),
        None => Either::Right(view! { <BuyPanel sale purchase signed_in/> }),
    };
    view! {
        <section class="panel sale" data-testid="voucher" data-phase=move || phase.get().as_str()>
            <SaleFacts sale/>
            {panel}
        </section>
        <BuyAnswer purchase/>
    }
}

/// What to announce when the sale changes phase in front of the shopper.
fn announcement(phase: VoucherStatus) -> &'static str {
    let t = t();
    match phase {
        VoucherStatus::Upcoming => "",
        VoucherStatus::OnSale => t.sale_announce_open(),
        VoucherStatus::SoldOut => t.sale_announce_sold_out(),
        VoucherStatus::Ended => t.sale_announce_ended(),
    }
}

/// The voucher's title, phase, price, description, stock bar, window and countdown.
#[component]
fn SaleFacts(sale: LiveSale) -> impl IntoView {
    let LiveSale {
        voucher: v,
        now,
        phase,
        ..
    } = sale;
    let VoucherView {
        title,
        description,
        price_cents,
        window,
        opening,
        ..
    } = v.get_untracked();
    let t = t();
    let opens = if opening.is_draw() {
        t.sale_draw_in()
    } else {
        t.sale_opens_in()
    };
    let (begins_at, ends_at) = (window.begins_at(), window.ends_at());
    view! {
        <h1>{title}</h1>
        <span class=move || format!("badge badge-{}", phase.get().as_str()) data-testid="phase">
            {move || voucher_status(t, phase.get())}
        </span>
        <p class="price">{crate::money::price(price_cents)}</p>
        {(!description.is_empty()).then(|| view! { <p class="description">{description}</p> })}
        {move || {
            let v = v.read();
            view! { <StockBar remaining=v.remaining stock=v.stock/> }
        }}
        <dl class="facts">
            <dt>{t.sale_opens()}</dt>
            <dd><When at=begins_at/></dd>
            <dt>{t.sale_closes()}</dt>
            <dd><When at=ends_at/></dd>
        </dl>
        // The countdown ticks silently; a change of phase is announced once.
        <p class="visually-hidden" aria-live="polite" data-testid="phase-announcement">
            {move || announcement(phase.get())}
        </p>
        <p class="countdown" data-testid="countdown" aria-live="off">
            {move || match phase.get() {
                VoucherStatus::Upcoming => fill(opens, &[&countdown(t, (begins_at - now.get()).num_seconds() + 1)]),
                VoucherStatus::OnSale => fill(t.sale_closes_in(), &[&countdown(t, (ends_at - now.get()).num_seconds())]),
                VoucherStatus::SoldOut => t.sale_all_sold().to_owned(),
                VoucherStatus::Ended => t.sale_over().to_owned(),
            }}
        </p>
    }
}

#[cfg(test)]
mod tests {
    use super::buying::button_label;
    use domain::VoucherStatus;

    #[test]
    fn the_button_says_why_it_is_off() {
        let t = i18n::Lang::En.texts();
        assert_eq!(button_label(t, VoucherStatus::OnSale), "Buy now");
        assert_eq!(button_label(t, VoucherStatus::SoldOut), "Sold out");
        assert_eq!(button_label(t, VoucherStatus::Upcoming), "Not open yet");
        assert_eq!(button_label(t, VoucherStatus::Ended), "Sale ended");
        let t = i18n::Lang::ZhCn.texts();
        assert_eq!(button_label(t, VoucherStatus::OnSale), "立即抢购");
    }
}
