//! The shopper's side: buying, an order's status, paying and cancelling.

use leptos::prelude::*;

use crate::{
    error::AppError,
    wire::{OrderDetail, OrderView},
};

/// Buys one unit; returns the order ID at once (decimal string). A plain form post (no
/// JavaScript) is redirected to the order's page.
#[server(prefix = "/sf", endpoint = "buy")]
pub async fn buy(voucher_id: i64) -> Result<domain::OrderId, AppError> {
    let core = crate::ssr::core()?;
    let shopper = crate::ssr::signed_in(&core).await?;
    let voucher = crate::ssr::voucher_id(voucher_id)?;
    let order = seckill::sale::buy(&core, shopper.user, voucher).await?;
    crate::ssr::redirect_plain_form(&format!("/orders/{order}"));
    Ok(order)
}

/// One of the shopper's orders with its voucher's title (the order page). `returning`: the
/// shopper is back from the payment provider's page, which is asked about the payment if its
/// notification has not come yet.
#[server(prefix = "/sf", endpoint = "get_order")]
pub async fn get_order(order_id: String, returning: bool) -> Result<OrderDetail, AppError> {
    let core = crate::ssr::core()?;
    let shopper = crate::ssr::signed_in(&core).await?;
    let order = crate::ssr::order_id(&order_id)?;
    if returning {
        seckill::orders::checkout::returned(&core, shopper.user, order).await?;
    }
    let view = seckill::sale::order_status(&core, shopper.user, order)
        .await?
        .ok_or(AppError::NotFound)?;
    let titles = seckill::catalog::titles(&core, &[view.voucher]).await?;
    Ok(OrderDetail {
        voucher_title: titles.get(&view.voucher).cloned().unwrap_or_default(),
        order: webapi::convert::order(view),
    })
}

/// The signed-in shopper's order on a voucher, if any (`None` for visitors): the voucher's page
/// shows it instead of "Buy now".
#[server(prefix = "/sf", endpoint = "my_order_for")]
pub async fn my_order_for(voucher_id: i64) -> Result<Option<OrderView>, AppError> {
    let core = crate::ssr::core()?;
    let shopper = match crate::ssr::signed_in(&core).await {
        Ok(p) => p,
        Err(AppError::Unauthenticated) => return Ok(None),
        Err(e) => return Err(e),
    };
    let Ok(voucher) = seckill::domain::VoucherId::try_from(voucher_id) else {
        return Ok(None);
    };
    Ok(seckill::sale::order_for(&core, shopper.user, voucher)
        .await?
        .map(webapi::convert::order))
}

/// How many orders "my orders" shows.
pub const MY_ORDERS_LIMIT: i64 = 100;

/// The shopper's orders, newest first, queued ones included.
#[server(prefix = "/sf", endpoint = "my_orders")]
pub async fn my_orders() -> Result<Vec<OrderDetail>, AppError> {
    let core = crate::ssr::core()?;
    let shopper = crate::ssr::signed_in(&core).await?;
    let orders = seckill::sale::my_orders(&core, shopper.user, MY_ORDERS_LIMIT).await?;
    let ids: Vec<_> = orders.iter().map(|o| o.voucher).collect();
    let titles = seckill::catalog::titles(&core, &ids).await?;
    Ok(orders
        .into_iter()
        .map(|o| OrderDetail {
            voucher_title: titles.get(&o.voucher).cloned().unwrap_or_default(),
            order: webapi::convert::order(o),
        })
        .collect())
}

/// **Pay now**: where to send the shopper to pay (the provider's hosted page; one per order,
/// so a second click answers the same). A plain form post is answered `303` to it, or, refused,
/// to the order's own page with the refusal (Pay now is on every unpaid row of "My orders").
#[server(prefix = "/sf", endpoint = "pay_order")]
pub async fn pay_order(order_id: String) -> Result<String, AppError> {
    let core = crate::ssr::core()?;
    let order: domain::OrderId = crate::ssr::order_id(&order_id)?;
    let paying = async {
        let shopper = crate::ssr::signed_in(&core).await?;
        Ok::<_, AppError>(seckill::orders::checkout::pay(&core, shopper.user, order).await?)
    };
    match paying.await {
        Ok(start) => {
            crate::ssr::redirect_plain_form(&start.redirect_url);
            Ok(start.redirect_url)
        }
        Err(e) => {
            crate::ssr::refuse_plain_form_on(
                &format!("/orders/{order}"),
                <PayOrder as leptos::server_fn::ServerFn>::PATH,
                &e,
            );
            Err(e)
        }
    }
}

/// Cancels one of the shopper's orders (its unit goes back on sale) and returns it as it is
/// now. A plain form post is sent back to the order's page.
#[server(prefix = "/sf", endpoint = "cancel_order")]
pub async fn cancel_order(order_id: String) -> Result<OrderView, AppError> {
    let core = crate::ssr::core()?;
    let shopper = crate::ssr::signed_in(&core).await?;
    let order: domain::OrderId = crate::ssr::order_id(&order_id)?;
    seckill::orders::checkout::cancel(&core, shopper.user, order).await?;
    crate::ssr::redirect_plain_form(&format!("/orders/{order}"));
    order_now(&core, shopper.user, order).await
}

#[cfg(feature = "ssr")]
async fn order_now(
    core: &seckill::Core,
    shopper: domain::UserId,
    order: domain::OrderId,
) -> Result<OrderView, AppError> {
    seckill::sale::order_status(core, shopper, order)
        .await?
        .map(webapi::convert::order)
        .ok_or(AppError::NotFound)
}
