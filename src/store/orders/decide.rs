//! The rules of the worker's write, pure so they are tested alone: which orders of a batch are
//! written, which were already handled, which are refused and why.

use std::collections::{HashMap, HashSet};

use crate::domain::{FailureReason, OrderId, UserId, VoucherId};

/// An order taken off the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueuedOrder {
    pub order: OrderId,
    pub voucher: VoucherId,
    pub user: UserId,
}

/// What one batch write did with one order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Written now.
    Write,
    /// Written by an earlier delivery (redelivery after a crash): nothing to do again.
    AlreadyWritten,
    /// Refused by an earlier delivery, with that reason.
    AlreadyFailed(FailureReason),
    /// Refused now.
    Reject(FailureReason),
}

/// What PostgreSQL already holds for a batch, read under the vouchers' row locks.
#[derive(Debug, Default)]
pub struct Existing {
    /// Remaining stock of each voucher of the batch that exists.
    pub stock: HashMap<VoucherId, i64>,
    pub written: HashSet<OrderId>,
    pub failed: HashMap<OrderId, FailureReason>,
    /// (voucher, user) pairs with a written order.
    pub holders: HashSet<(VoucherId, UserId)>,
}

/// Decides each order of a batch, in order.
pub fn decide(batch: &[QueuedOrder], existing: &Existing) -> Vec<Decision> {
    let mut stock = existing.stock.clone();
    let mut holders = existing.holders.clone();
    let mut seen = HashSet::new();
    batch
        .iter()
        .map(|q| {
            if existing.written.contains(&q.order) {
                return Decision::AlreadyWritten;
            }
            if let Some(reason) = existing.failed.get(&q.order) {
                return Decision::AlreadyFailed(*reason);
            }
            if !seen.insert(q.order) {
                // The same entry twice in one batch: the first occurrence decides.
                return Decision::AlreadyWritten;
            }
            let Some(left) = stock.get_mut(&q.voucher) else {
                return Decision::Reject(FailureReason::UnknownVoucher);
            };
            if holders.contains(&(q.voucher, q.user)) {
                return Decision::Reject(FailureReason::AlreadyBought);
            }
            if *left <= 0 {
                return Decision::Reject(FailureReason::SoldOut);
            }
            *left -= 1;
            holders.insert((q.voucher, q.user));
            Decision::Write
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(order: u32, voucher: i64, user: i64) -> QueuedOrder {
        QueuedOrder {
            order: OrderId::from_parts(1, order).expect("fits"),
            voucher: VoucherId::from_db(voucher),
            user: UserId::from_db(user),
        }
    }

    #[test]
    fn stock_is_allotted_in_queue_order_and_never_exceeded() {
        let existing = Existing {
            stock: HashMap::from([(VoucherId::from_db(1), 2)]),
            ..Existing::default()
        };
        let batch = [q(1, 1, 10), q(2, 1, 11), q(3, 1, 12)];
        assert_eq!(
            decide(&batch, &existing),
            vec![
                Decision::Write,
                Decision::Write,
                Decision::Reject(FailureReason::SoldOut)
            ]
        );
    }

    #[test]
    fn redelivered_orders_are_not_written_again() {
        let existing = Existing {
            stock: HashMap::from([(VoucherId::from_db(1), 5)]),
            written: HashSet::from([q(1, 1, 10).order]),
            failed: HashMap::from([(q(2, 1, 11).order, FailureReason::SoldOut)]),
            holders: HashSet::from([(VoucherId::from_db(1), UserId::from_db(10))]),
        };
        let batch = [q(1, 1, 10), q(2, 1, 11), q(1, 1, 10)];
        assert_eq!(
            decide(&batch, &existing),
            vec![
                Decision::AlreadyWritten,
                Decision::AlreadyFailed(FailureReason::SoldOut),
                Decision::AlreadyWritten
            ]
        );
    }

    #[test]
    fn one_live_order_per_shopper_and_unknown_vouchers_are_refused() {
        let existing = Existing {
            stock: HashMap::from([(VoucherId::from_db(1), 5)]),
            holders: HashSet::from([(VoucherId::from_db(1), UserId::from_db(10))]),
            ..Existing::default()
        };
        let batch = [q(1, 1, 10), q(2, 1, 11), q(3, 1, 11), q(4, 2, 11)];
        assert_eq!(
            decide(&batch, &existing),
            vec![
                Decision::Reject(FailureReason::AlreadyBought),
                Decision::Write,
                Decision::Reject(FailureReason::AlreadyBought),
                Decision::Reject(FailureReason::UnknownVoucher),
            ]
        );
    }
}
