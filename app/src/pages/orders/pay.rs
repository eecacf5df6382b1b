//! **Pay now**, wherever an order awaiting payment is shown (the sale page's answer, the
//! order's page, each row of "My orders"): the time left to pay, counting down, and a form that
//! opens the provider's payment page: a plain post without JavaScript (the server answers with
//! the provider's page), a REST call in a live island.

use chrono::{DateTime, Utc};
use domain::OrderId;
use leptos::{prelude::*, server_fn::ServerFn};

use webapi::answers::PayStart;

use crate::{
    api::orders::PayOrder,
    components::{form_call, CallForm, ErrorNote},
    refusal::Refusal,
    rest,
    time::{every, Instant, ServerClock},
    words::{countdown, fill, t},
};

/// Pay now: the provider's page to go to.
pub type PayAction = Action<(), Result<String, Refusal>>;

/// Pay now for `order_id`: once answered, the browser goes to the provider's page (the dev
/// provider's comes straight back to the order's page).
pub fn use_pay(order_id: OrderId) -> PayAction {
    let pay: PayAction = form_call(<PayOrder as ServerFn>::PATH, move || async move {
        let path = format!("/api/orders/{order_id}/pay");
        rest::post::<PayStart>(&path).await.map(|p| p.redirect_url)
    });
    Effect::new(move |_| {
        if let Some(Ok(url)) = pay.value().get() {
            if window().location().set_href(&url).is_err() {
                leptos::logging::warn!("could not open the payment page {url}");
            }
        }
    });
    pay
}

/// The server's time, ticking, from `server_time` read when the page was rendered (as old as
/// the page's load when it arrives: close enough for a countdown in minutes). The browser's
/// own clock is not used: a phone set fifteen minutes fast would have shown the time to pay
/// as passed, and turned Pay now off, while the order could still be paid.
pub fn server_now(server_time: DateTime<Utc>) -> RwSignal<DateTime<Utc>> {
    let clock = ServerClock::synced_to(server_time);
    let now = RwSignal::new(server_time);
    every(std::time::Duration::from_millis(500), move || {
        now.set(clock.now())
    });
    now
}

/// The seconds left to pay by `pay_by` at the server's time `now` (the server decides whether
/// a payment is in time).
pub fn seconds_left(pay_by: DateTime<Utc>, now: RwSignal<DateTime<Utc>>) -> Signal<i64> {
    Signal::derive(move || (pay_by - now.get()).num_seconds())
}

/// "Reserved for you: pay within 14:59" and the Pay now button (off while `busy` or once the
/// time has passed).
#[component]
pub fn PayNow(
    order_id: OrderId,
    left: Signal<i64>,
    pay: PayAction,
    #[prop(into)] busy: Signal<bool>,
) -> impl IntoView {
    let t = t();
    let overdue = Memo::new(move |_| left.get() < 0);
    view! {
        <p class="countdown" data-testid="pay-countdown" aria-live="off">
            {move || if overdue.get() {
                t.order_time_passed().to_owned()
            } else {
                fill(t.order_pay_within(), &[&countdown(t, left.get())])
            }}
        </p>
        // One payment per order: a second click (or a resent form) opens the same page.
        <CallForm to={<PayOrder as ServerFn>::PATH} send=move || { pay.dispatch(()); }>
            <input type="hidden" name="order_id" value=order_id.to_string()/>
            <button type="submit" class="primary" data-testid="pay"
                disabled=move || overdue.get() || busy.get() || pay.pending().get()>
                {move || if pay.pending().get() { t.order_opening_payment() } else { t.order_pay_now() }}
            </button>
        </CallForm>
    }
}

/// Pay now on its own, with its error if the provider could not be reached: for an order
/// shown where it is not the page's subject (the sale page's held order, a "My orders" row).
/// A plain post's refusal (no JavaScript) is shown on the order's own page instead
/// (`crate::ssr::refuse_plain_form_on`): a row cannot tell its refusal from another row's.
/// `testid` names the box for the journeys.
#[component]
pub fn PayBox(
    order_id: OrderId,
    pay_by: DateTime<Utc>,
    /// The server's time, ticking.
    now: RwSignal<DateTime<Utc>>,
    #[prop(optional)] class: &'static str,
    testid: &'static str,
) -> impl IntoView {
    let pay = use_pay(order_id);
    let left = seconds_left(pay_by, now);
    view! {
        <div class=format!("pay-box {class}") data-testid=testid>
            <PayNow order_id left pay busy=false/>
            {move || pay.value().get().and_then(Result::err).map(|e| {
                let code = e.code();
                view! { <div data-testid="pay-error" data-code=code><ErrorNote error=e/></div> }
            })}
        </div>
    }
}

/// Pay now in a row of "My orders", an island of its own (the list is the server's);
/// `rendered_at` is the server's time when it rendered the list.
#[cfg_attr(island_pay_row, island)]
#[cfg_attr(not(island_pay_row), component)]
pub fn PayRow(order_id: OrderId, pay_by: Instant, rendered_at: Instant) -> impl IntoView {
    let now = server_now(rendered_at.0);
    view! { <PayBox order_id pay_by=pay_by.0 now class="pay-row" testid="row-pay"/> }
}
