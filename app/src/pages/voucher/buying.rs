//! Buying on the sale's page: the button (or "sign in to buy", or the order already held), and
//! the answer, which moves the stock, the phase and the button together.

use domain::{OrderId, OrderStatus, VoucherStatus};
use leptos::{
    either::{Either, EitherOf3},
    prelude::*,
    server_fn::ServerFn,
};

use super::live::LiveSale;
use crate::{
    api::orders::Buy,
    components::{form_call, CallForm, ErrorNote},
    error::AppError,
    pages::orders::{follow, OrderProgress, PayBox},
    refusal::Refusal,
    rest,
    url::sign_in_path,
    wire::OrderView,
    words::{fill, held_order_prefix, order_label, t, Texts},
};
use webapi::answers::Bought;

/// The answer to a buy: the order, or the one the shopper already held on this sale.
fn outcome(bought: Bought) -> Result<OrderId, Refusal> {
    if bought.already_bought {
        Err(Refusal::own(AppError::AlreadyBought(bought.order_id)))
    } else {
        Ok(bought.order_id)
    }
}

/// A purchase in the page: the buy (`POST /api/vouchers/{id}/orders`), the order it took
/// (followed), and the shopper's order on this sale with its status.
#[derive(Clone, Copy)]
pub struct Purchase {
    pub buy: Action<(), Result<OrderId, Refusal>>,
    pub order: RwSignal<Option<OrderView>>,
    pub held: RwSignal<Option<(OrderId, OrderStatus)>>,
}

impl Purchase {
    /// The shopper now holds `order_id` (bought, or won in a draw): its status is followed.
    pub fn hold(self, order_id: OrderId) {
        self.held.set(Some((order_id, OrderStatus::Queued)));
        self.order.set(None);
        follow(order_id, self.order);
    }
}

/// The purchase of `sale`, starting from the order the server rendered (`mine`). An answer
/// moves the button at once (to the order held, or the sale ended); the stock follows the
/// sale's figures, which count this buy among everyone else's (`LiveSale::changed_here`).
pub fn use_purchase(sale: LiveSale, mine: Option<OrderView>) -> Purchase {
    let id = sale.voucher.read_untracked().id;
    let p = Purchase {
        buy: form_call(<Buy as ServerFn>::PATH, move || async move {
            let path = format!("/api/vouchers/{id}/orders");
            rest::post::<Bought>(&path).await.and_then(outcome)
        }),
        order: RwSignal::new(None),
        held: RwSignal::new(mine.map(|o| (o.order_id, o.status))),
    };
    let hold = move |order_id: OrderId| p.hold(order_id);
    Effect::new(
        move |_| match p.buy.value().get().map(|a| a.map_err(|r| r.error)) {
            Some(Ok(order_id)) => {
                sale.changed_here();
                hold(order_id);
            }
            Some(Err(AppError::SoldOut)) => sale.changed_here(),
            Some(Err(AppError::AlreadyBought(order_id))) => hold(order_id),
            Some(Err(AppError::Ended)) => {
                let now = sale.clock.get_value().now();
                sale.voucher.update(|v| v.window = v.window.ended_by(now));
            }
            _ => {}
        },
    );
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
pub(super) fn button_label(t: Texts, phase: VoucherStatus) -> &'static str {
    match phase {
        VoucherStatus::Upcoming => t.buy_not_open(),
        VoucherStatus::OnSale => t.buy_now(),
        VoucherStatus::SoldOut => t.buy_sold_out(),
        VoucherStatus::Ended => t.buy_ended(),
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
    let t = t();
    move || match held.get() {
        Some((order_id, status)) => EitherOf3::A(view! {
            <p class="bought" data-testid="your-order" data-status=status.as_str()>
                {held_order_prefix(t, status)}
                <a href=format!("/orders/{order_id}") data-testid="bought-order-link">
                    <code>{order_id.to_string()}</code>
                </a>
                {fill(t.bracketed(), &[&order_label(t, status)])}
            </p>
            {status.pay_by().map(|pay_by| view! { <HeldPay order_id pay_by now=sale.now/> })}
        }),
        None if !signed_in => EitherOf3::B(view! {
            <p class="buy-form">
                <a class="button primary" data-testid="sign-in-to-buy"
                    href=sign_in_path(&format!("/vouchers/{id}"))>{t.sign_in_to_buy()}</a>
            </p>
        }),
        None => EitherOf3::C(view! {
            <CallForm to={<Buy as ServerFn>::PATH} send=move || { buy.dispatch(()); } class="buy-form">
                <input type="hidden" name="voucher_id" value=id.get()/>
                <button type="submit" class="primary buy" data-testid="buy"
                    disabled=move || phase.get() != VoucherStatus::OnSale || buy.pending().get()>
                    {move || if buy.pending().get() { t.buy_buying() } else { button_label(t, phase.get()) }}
                </button>
            </CallForm>
        }),
    }
}

/// Pay now for the order the shopper holds on this sale, while it awaits payment.
#[component]
pub(super) fn HeldPay(
    order_id: OrderId,
    pay_by: chrono::DateTime<chrono::Utc>,
    /// The sale's server time, ticking.
    now: RwSignal<chrono::DateTime<chrono::Utc>>,
) -> impl IntoView {
    view! { <PayBox order_id pay_by now testid="sale-pay"/> }
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
