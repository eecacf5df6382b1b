//! The seckill domain: values that parse their input, so an invalid one cannot exist past the
//! boundary. Every newtype's serde goes through its parser.
//!
//! This crate needs only serde, chrono, thiserror and the hashes of `fair`, so the browser (wasm) links it too: the
//! core, the server functions, the REST API and the pages share these types instead of copies.

mod counts;
mod failure;
pub mod fair;
mod field;
mod ids;
mod money;
mod number;
mod opening;
mod order;
mod paging;
mod period;
mod phone;
pub mod rfc3339;
mod sales_query;
mod shard;
mod status;
mod voucher;
mod window;

pub use counts::{OrderCounts, ReminderCounts};
pub use failure::{FailureReason, FailureReasonError, Settlement};
pub use field::{FieldError, FieldErrors};
pub use ids::{IdParseError, UserId, VoucherId};
pub use money::{Currency, CurrencyError};
pub use number::{count, grouped};
pub use opening::{EntryState, Opening, OpeningKind, DEFAULT_ENTRY_LEAD};
pub use order::{
    Canceller, CancellerError, IdempotencyKey, IdempotencyKeyError, OrderId, OrderIdError,
    OrderStatus, Refund, ORDER_EPOCH_UNIX,
};
pub use paging::Page;
pub use period::Period;
pub use phone::{CountryCode, Phone, PhoneError, MIN_NATIONAL_DIGITS};
pub use sales_query::{SaleCursor, SaleQuery, SaleStage};
pub use shard::{Shard, SHARD_COUNT, SHARD_SEQUENCE_MAX};
pub use status::VoucherStatus;
pub use voucher::{
    check_edit, editable, EditProblem, EditRefusal, NewVoucher, Voucher, VoucherDraft,
    VoucherPatch, MAX_DESCRIPTION_CHARS, MAX_PRICE_CENTS, MAX_TITLE_CHARS,
};
pub use window::{SaleWindow, Stock, MAX_STOCK};

/// Seconds in a UTC day (the order IDs' counters are per UTC day; the console's buckets and the
/// countdown count whole days).
pub const SECS_PER_DAY: i64 = 86_400;
