//! [`StockMove`]: a unit (or several) going back on sale, as both stores hold it: a row of the
//! `stock_moves` outbox in PostgreSQL, then `lua/apply_move.lua` in Redis (design.md §2).

use crate::domain::{OrderId, UserId};

/// One move: its outbox key, its units and, for a cancelled order, the shopper and the order
/// whose buyer slot it releases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StockMove {
    pub key: String,
    pub units: i64,
    pub release: Option<(UserId, OrderId)>,
}
