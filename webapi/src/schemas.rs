//! The wire views' schemas for the OpenAPI document (server only): a view's schema is its flat
//! twin's (`wire::FlatVoucher`, `wire::FlatOrder`), the JSON as it is.

use std::borrow::Cow;

use utoipa::{
    openapi::{RefOr, Schema},
    PartialSchema, ToSchema,
};

use crate::wire::{FlatOrder, FlatVoucher, OrderView, VoucherView};

impl PartialSchema for VoucherView {
    fn schema() -> RefOr<Schema> {
        FlatVoucher::schema()
    }
}

impl ToSchema for VoucherView {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("VoucherView")
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        FlatVoucher::schemas(schemas);
    }
}

impl PartialSchema for OrderView {
    fn schema() -> RefOr<Schema> {
        FlatOrder::schema()
    }
}

impl ToSchema for OrderView {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("OrderView")
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        FlatOrder::schemas(schemas);
    }
}
