//! The admins' actions (`GET /api/admin/actions`, the page `/admin/actions`): one wire shape
//! for both.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// One admin's action as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ActionView {
    pub id: i64,
    pub at: DateTime<Utc>,
    /// The admin's user ID.
    pub actor_id: i64,
    /// The admin's phone, all but its last four digits masked.
    pub actor_phone: String,
    /// `create voucher`, `edit voucher`, `end sale`, `add stock`, `refund order`, `export orders`,
    /// `export payments`.
    pub action: String,
    /// What it was done to: a voucher's or an order's ID, a period, a refused draft's title.
    pub target: String,
    /// `done`; `refused` (the admin's or the sale's reason, `code`); `failed` (the shop could
    /// not finish it: a store out of reach, another instance holding the sale).
    pub outcome: String,
    /// A refusal's error code, as the API's `error` (`null` when done or failed, and for
    /// refusals recorded before codes were).
    pub code: Option<String>,
    /// Why it was refused or failed, in English, as the server's log says it.
    pub refusal: Option<String>,
}

/// A page of the admins' actions, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ActionsView {
    pub actions: Vec<ActionView>,
    /// `?before=` of the next (older) page; `null` on the last.
    pub next: Option<i64>,
}
