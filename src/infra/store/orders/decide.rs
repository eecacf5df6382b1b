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
    /// Written orders among the batch's IDs, with their voucher and shopper.
    pub written: HashMap<OrderId, (VoucherId, UserId)>,
    /// Failed orders among the batch's IDs, by ID and shopper.
    pub failed: HashMap<(OrderId, UserId), FailureReason>,
    /// (voucher, user) pairs with a written order.
    pub holders: HashSet<(VoucherId, UserId)>,
}

/// Decides each order of a batch, in order.
///
/// An ID already written (or seen earlier in the batch) for the same voucher and shopper is a
/// redelivery; for anyone else it is a second order under a reused ID (the day's counter went
/// back), which is refused as [`FailureReason::DuplicateId`] rather than taken for written.
pub fn decide(batch: &[QueuedOrder], existing: &Existing) -> Vec<Decision> {
    let mut stock = existing.stock.clone();
    let mut holders = existing.holders.clone();
    let mut seen: HashMap<OrderId, (VoucherId, UserId)> = HashMap::new();
    batch
        .iter()
        .map(|q| {
            let owner = (q.voucher, q.user);
            if let Some(reason) = existing.failed.get(&(q.order, q.user)) {
                return Decision::AlreadyFailed(*reason);
            }
            match existing.written.get(&q.order).or(seen.get(&q.order)) {
                Some(first) if *first == owner => return Decision::AlreadyWritten,
                Some(_) => return Decision::Reject(FailureReason::DuplicateId),
                None => {}
            }
            seen.insert(q.order, owner);
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
            written: HashMap::from([(
                q(1, 1, 10).order,
                (VoucherId::from_db(1), UserId::from_db(10)),
            )]),
            failed: HashMap::from([(
                (q(2, 1, 11).order, UserId::from_db(11)),
                FailureReason::SoldOut,
            )]),
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

    #[test]
    fn a_reused_id_is_refused_not_taken_for_written() {
        let existing = Existing {
            stock: HashMap::from([(VoucherId::from_db(1), 5)]),
            written: HashMap::from([(
                q(1, 1, 10).order,
                (VoucherId::from_db(1), UserId::from_db(10)),
            )]),
            ..Existing::default()
        };
        // Shopper 20 got order 1 again; in the batch, order 2 is handed to two shoppers.
        let batch = [q(1, 1, 20), q(2, 1, 21), q(2, 1, 22), q(2, 1, 21)];
        assert_eq!(
            decide(&batch, &existing),
            vec![
                Decision::Reject(FailureReason::DuplicateId),
                Decision::Write,
                Decision::Reject(FailureReason::DuplicateId),
                Decision::AlreadyWritten,
            ]
        );
    }
}
