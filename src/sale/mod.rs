//! The sale: what happens in the second the shopper presses "buy", and what they see after.
//!
//! | file | job |
//! | --- | --- |
//! | `buy.rs` | [`buy`]: a refusal from memory, else the voucher's admission lane |
//! | `lanes.rs` | the lanes: buys (or a draw's entries) for one voucher gathered into one script call (design.md §8, decision 19) |
//! | `refusals.rs` | sales that refuse everyone, remembered for a moment (decision 17); [`announce_stock_back`] here forgets them |
//! | `deciders.rs` | how buys and a draw's entries are decided, a batch per call |
//! | `sold_out.rs` | a refused sale's buyers, read once |
//! | `order_id.rs` | the global order IDs' counters (design.md §3) |
//! | `status.rs` | an order's and a shopper's orders' status |
//! | `live.rs` | the live figures open sale pages follow (decision 20) |

mod buy;
pub mod deciders;
pub mod known;
pub mod lanes;
pub mod live;
pub mod order_id;
pub mod refusals;
pub mod sold_out;
mod status;

pub use buy::{buy, BuyError};
pub use live::{Live, SaleFeed};
pub use status::{my_orders, order_for, order_status, OrderView};

use redis::AsyncCommands;

use crate::{domain::VoucherId, Core};

/// Announces that units of `voucher` came back on sale: this instance forgets the sale's
/// refusal at once, the others when the message reaches them. Best effort: a lost message
/// leaves the refusal to expire on its own.
pub async fn announce_stock_back(core: &Core, voucher: VoucherId) {
    core.refusals.remove(&voucher);
    core.sold_out.forget(voucher);
    core.catalog.forget_stock(voucher);
    let mut redis = core.redis.clone();
    let sent: Result<i64, _> = redis
        .publish(core.keys.stock_back_channel(), voucher.get())
        .await;
    if let Err(e) = sent {
        tracing::warn!(%voucher, error = %e, "announcing stock back; refusals expire on their own");
    }
}
