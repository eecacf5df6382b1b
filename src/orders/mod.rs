//! After the rush: an order awaits payment until its deadline, then is paid or cancelled, and a
//! cancelled order's unit goes back on sale (design.md §2).
//!
//! | file | job |
//! | --- | --- |
//! | `checkout.rs` | the shopper pays (through the provider's hosted page), comes back, or cancels |
//! | `payment/` | the payment-provider trait and the providers (`dev.rs`, `stripe.rs`) |
//! | `payment_word.rs` | what a provider says of a payment, applied to the order in one place; refunds |
//! | `notify.rs` | the provider's webhook: verified, applied once |
//! | `reconcile.rs` | the money invariants M1–M3 against what the provider says it took and gave back |
//! | `refund_order.rs` | an admin refunds an order; the payments an admin lists |
//! | `money_events.rs` | what the provider says of money already taken: refunds confirmed or failed, disputes |
//! | `payment_sweep.rs` | the sweep's payment steps: lost webhooks, the deadline, refunds owed |
//! | `restock.rs` | units going back on sale in Redis through the `stock_moves` outbox |

pub mod checkout;
pub mod money_events;
pub mod notify;
pub mod payment;
pub mod payment_sweep;
pub mod payment_word;
pub mod reconcile;
pub mod refund_order;
pub mod restock;
