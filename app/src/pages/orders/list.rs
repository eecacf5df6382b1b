//! "My orders": the shopper's orders, newest first (each awaiting payment with its Pay now and
//! the time left), and signing out on every device.

use domain::OrderStatus;
use leptos::prelude::*;

use super::{order_refusal, pay::PayRow};
use crate::{
    api::orders::my_orders,
    components::Loaded,
    time::When,
    wire::OrderDetail,
    words::{order_label, order_sentence, t},
};

#[component]
pub fn MyOrdersPage() -> impl IntoView {
    let orders = Resource::new(|| (), |_| my_orders());
    let t = t();
    view! {
        <leptos_meta::Title text=t.orders_title()/>
        <h1>{t.orders_title()}</h1>
        <Loaded data=orders loading=t.orders_loading() ok=order_list handle=order_refusal/>
        <SignOutEverywhere/>
    }
}

/// Ends every session of the shopper (a lost phone, a shared computer), this one included.
#[component]
fn SignOutEverywhere() -> impl IntoView {
    // A plain form: the server signs out and sends the visitor home.
    let sign_out = ServerAction::<crate::api::auth::SignOut>::new();
    view! {
        <ActionForm action=sign_out attr:class="sign-out-everywhere">
            <input type="hidden" name="everywhere" value="true"/>
            <button type="submit" class="link" data-testid="sign-out-everywhere">
                {t().orders_sign_out_everywhere()}
            </button>
        </ActionForm>
    }
}

#[component]
fn OrderRow(detail: OrderDetail) -> impl IntoView {
    let o = detail.order;
    let status = o.status.as_str();
    let t = t();
    view! {
        <li class="order-row" data-testid="order-row" data-status=status>
            <a href=format!("/orders/{}", o.order_id) class="order-title">{detail.voucher_title}</a>
            <span class=format!("state state-{status}") title=order_sentence(t, o.status)>{order_label(t, o.status)}</span>
            <span class="order-meta"><code>{o.order_id.to_string()}</code> " · " <When at=o.created_at/></span>
            // A cancelled or failed order's sentence says what became of it and of its money
            // ("your refund is on its way"), and an unpaid one's that money which did not match
            // it came, which its label alone does not: in the row, where a phone shows it (the
            // tooltip above shows only under a mouse).
            {(matches!(o.status, OrderStatus::Cancelled { .. } | OrderStatus::Failed { .. }) || o.status.payment_mismatch()).then(|| view! {
                <p class="order-note" data-testid="order-note">{order_sentence(t, o.status)}</p>
            })}
            // Type-erased: the list's view type is deep enough without the island's.
            {o.status.pay_by().map(|pay_by| view! { <PayRow order_id=o.order_id pay_by=pay_by.into() rendered_at=chrono::Utc::now().into()/> }.into_any())}
        </li>
    }
}

fn order_list(list: Vec<OrderDetail>) -> AnyView {
    if list.is_empty() {
        return view! {
            <p class="empty" data-testid="no-orders">{t().orders_empty()} <a href="/">{t().orders_see_sales()}</a></p>
        }
        .into_any();
    }
    view! {
        <ul class="order-list" data-testid="order-list">
            {list.into_iter().map(|d| view! { <OrderRow detail=d/> }).collect_view()}
        </ul>
    }
    .into_any()
}
