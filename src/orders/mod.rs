//! After the rush: an order awaits payment until its deadline, then is paid or cancelled, and a
//! cancelled order's unit goes back on sale (design.md §2).
//!
//! | file | job |
//! | --- | --- |
//! | `checkout.rs` | the shopper pays or cancels |
//! | `payment.rs` | the payment-provider trait and the dev provider |
//! | `restock.rs` | units going back on sale in Redis through the `stock_moves` outbox |

pub mod checkout;
pub mod payment;
pub mod restock;
