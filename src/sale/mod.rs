//! The sale: what happens in the second the shopper presses "buy", and what they see after.
//!
//! | file | job |
//! | --- | --- |
//! | `buy.rs` | [`buy`]: a refusal from memory, else the voucher's admission lane |
//! | `lanes.rs` | the lanes: buys (or a draw's entries) for one voucher gathered into one script call (design.md §8, decision 19) |
//! | `refusals.rs` | sales that refuse everyone, remembered for a moment (decision 17) |
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
pub use refusals::announce_stock_back;
pub use status::{my_orders, order_for, order_status, OrderView};
