//! Domain types: values that parse their input, so an invalid one cannot exist past the boundary.

mod ids;
mod order;
mod phone;
mod voucher;

pub use ids::{IdParseError, UserId, VoucherId};
pub use order::{OrderId, OrderIdError, OrderStatus, ORDER_EPOCH_UNIX};
pub use phone::{Phone, PhoneError};
pub use voucher::{
    FieldError, FieldErrors, NewVoucher, SaleWindow, Stock, Voucher, VoucherDraft, VoucherStatus,
    MAX_STOCK,
};
