//! Sales found by an admin (`GET /api/admin/vouchers`, the console's search): one wire shape.

use serde::{Deserialize, Serialize};

use crate::wire::VoucherView;

/// A page of sales, newest first (by start, then ID).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct SalesView {
    pub vouchers: Vec<VoucherView>,
    /// `?cursor=` of the next (older) page; `null` on the last.
    pub next: Option<String>,
}
