//! Buying on the sale's page: the button (or "sign in to buy", or the order already held), and
//! the answer, which moves the stock, the phase and the button together.

use domain::{OrderId, OrderStatus, VoucherStatus};
use leptos::{
    either::{Either, EitherOf3},
    prelude::*,
};

use super::live::LiveSale;
use crate::{
    api::orders::Buy,
    components::ErrorNote,
    error::AppError,
    pages::orders::{follow, OrderProgress},
    url::sign_in_path,
    wire::OrderView,
};

/// A purchase in the page: the action, the order it took (followed), and the shopper's order
/// on this sale with its status.
#[derive(Clone, Copy)]
pub struct Purchase {
    pub buy: ServerAction<Buy>,
    pub order: RwSignal<Option<OrderView>>,
    pub held: RwSignal<Option<(OrderId, OrderStatus)>>,
}

/// The purchase of `sale`, starting from the order the server rendered (`mine`). One source of
/// truth: an answer moves the stock, the phase and the button together, at once, instead of
/// waiting for the next figures.
pub fn use_purchase(sale: LiveSale, mine: Option<OrderView>) -> Purchase {
    let p = Purchase {
        buy: ServerAction::<Buy>::new(),
        order: RwSignal::new(None),
        held: RwSignal::new(mine.map(|o| (o.order_id, o.status))),
    };
    let hold = move |order_id: OrderId| {
        p.held.set(Some((order_id, OrderStatus::Queued)));
        p.order.set(None);
        follow(order_id, p.order);
    };
    Effect::new(move |_| match p.buy.value().get() {
        Some(Ok(order_id)) => {
            sale.voucher
                .update(|v| v.remaining = (v.remaining - 1).max(0));
            hold(order_id);
        }
        Some(Err(AppError::SoldOut)) => sale.voucher.update(|v| v.remaining = 0),
        Some(Err(AppError::Ended)) => {
            let now = sale.clock.get_value().now();
            sale.voucher.update(|v| v.window = v.window.ended_by(now));
        }
        Some(Err(AppError::AlreadyBought(order_id))) => hold(order_id),
        _ => {}
    });
    // The held order's status follows its progress.
    Effect::new(move |_| {
        if let Some(o) = p.order.get() {
            p.held.update(|h| match h {
                Some((id, status)) if *id == o.order_id => *status = o.status,
                _ => {}
            });
        }
    });
    p
}

/// The button's words in each phase.
pub(super) fn button_label(phase: VoucherStatus) -> &'static str {
    match phase {
        VoucherStatus::Upcoming => "Not open yet",
        VoucherStatus::OnSale => "Buy now",
        VoucherStatus::SoldOut => "Sold out",
        VoucherStatus::Ended => "Sale ended",
    }
}

/// The order the shopper holds on this sale; else, for a visitor, "Sign in to buy" (buying
/// needs an account, and sign-in comes back here); else the buy button (a plain form without
/// JavaScript), on only while the sale is open.
#[component]
pub fn BuyPanel(sale: LiveSale, purchase: Purchase, signed_in: bool) -> impl IntoView {
    let Purchase { buy, held, .. } = purchase;
    let id = sale.voucher.read_untracked().id;
    let phase = sale.phase;
    move || match held.get() {
        Some((order_id, status)) => EitherOf3::A(view! {
            <p class="bought" data-testid="your-order" data-status=status.as_str()>
                "You bought this: order "
                <a href=format!("/orders/{order_id}") data-testid="bought-order-link">
                    <code>{order_id.to_string()}</code>
                </a>
                " (" {status.label().to_lowercase()} ")."
            </p>
        }),
        None if !signed_in => EitherOf3::B(view! {
            <p class="buy-form">
                <a class="button primary" data-testid="sign-in-to-buy"
                    href=sign_in_path(&format!("/vouchers/{id}"))>"Sign in to buy"</a>
            </p>
        }),
        None => EitherOf3::C(view! {
            <ActionForm action=buy attr:class="buy-form">
                <input type="hidden" name="voucher_id" value=id.get()/>
                <button type="submit" class="primary buy" data-testid="buy"
                    disabled=move || phase.get() != VoucherStatus::OnSale || buy.pending().get()>
                    {move || if buy.pending().get() { "Buying…" } else { button_label(phase.get()) }}
                </button>
            </ActionForm>
        }),
    }
}

/// The answer to a buy, spoken by screen readers; keyboard focus moves to it (the button it
/// was on may have just turned off), so the next Tab starts from there.
#[component]
pub fn BuyAnswer(purchase: Purchase) -> impl IntoView {
    let Purchase { buy, order, .. } = purchase;
    let answer = NodeRef::<leptos::html::Div>::new();
    Effect::new(move |_| {
        if buy.value().with(Option::is_some) {
            focus(answer);
        }
    });
    view! {
        <div aria-live="polite" class="order-status" data-testid="order-status" tabindex="-1" node_ref=answer>
            {move || buy.value().get().map(|answer| match answer {
                Err(e) => {
                    let code = e.code();
                    Either::Left(view! { <div data-testid="buy-error" data-code=code><ErrorNote error=e/></div> })
                }
                Ok(order_id) => Either::Right(view! { <OrderProgress order_id order/> }),
            })}
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
