//! "My orders": the shopper's orders, newest first, and signing out on every device.

use leptos::prelude::*;

use super::order_refusal;
use crate::{api::orders::my_orders, components::Loaded, time::When, wire::OrderDetail};

#[component]
pub fn MyOrdersPage() -> impl IntoView {
    let orders = Resource::new(|| (), |_| my_orders());
    view! {
        <leptos_meta::Title text="My orders"/>
        <h1>"My orders"</h1>
        <Loaded data=orders loading="Loading your orders…" ok=order_list handle=order_refusal/>
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
                "Sign out on every device"
            </button>
        </ActionForm>
    }
}

#[component]
fn OrderRow(detail: OrderDetail) -> impl IntoView {
    let o = detail.order;
    let status = o.status.as_str();
    view! {
        <li class="order-row" data-testid="order-row" data-status=status>
            <a href=format!("/orders/{}", o.order_id) class="order-title">{detail.voucher_title}</a>
            <span class=format!("state state-{status}") title=o.status.sentence()>{o.status.label()}</span>
            <span class="order-meta"><code>{o.order_id.to_string()}</code> " · " <When at=o.created_at/></span>
        </li>
    }
}

fn order_list(list: Vec<OrderDetail>) -> AnyView {
    if list.is_empty() {
        return view! {
            <p class="empty" data-testid="no-orders">"No orders yet. " <a href="/">"See what is on sale"</a></p>
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
