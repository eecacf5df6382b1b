//! One queue entry as handed to this consumer, decoded.

use std::collections::HashMap;

use redis::Value;

use crate::{
    domain::{IdParseError, OrderId, OrderIdError, UserId, VoucherId},
    infra::store::orders::QueuedOrder,
};

/// Why a stream entry is not an order: it cannot be retried into shape, so it goes straight to
/// the dead letters with this text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    #[error("field {0} is missing")]
    Missing(&'static str),
    #[error("field {0} is not text")]
    NotText(&'static str),
    #[error("order: {0}")]
    Order(OrderIdError),
    #[error("user: {0}")]
    User(IdParseError),
}

/// One entry handed to this consumer.
#[derive(Debug, Clone)]
pub struct Delivery {
    pub entry_id: String,
    pub voucher: VoucherId,
    /// The decoded order, or why the entry could not be decoded.
    pub order: Result<QueuedOrder, EntryError>,
    /// How many times the group has handed this entry out, this time included.
    pub deliveries: u64,
    /// The sale's rebuild the order was admitted under (field `built`, lua/take.lua); empty
    /// for an entry written before entries carried it.
    pub built: String,
}

impl Delivery {
    /// Decodes a stream entry's fields (`order` 16-hex, `user`).
    pub fn decode(
        voucher: VoucherId,
        entry_id: String,
        fields: &HashMap<String, Value>,
        deliveries: u64,
    ) -> Self {
        let text = |name: &'static str| -> Result<String, EntryError> {
            let value = fields.get(name).ok_or(EntryError::Missing(name))?;
            redis::from_redis_value::<String>(value.clone()).map_err(|_| EntryError::NotText(name))
        };
        let order = (|| {
            Ok(QueuedOrder {
                order: OrderId::from_redis_hex(&text("order")?).map_err(EntryError::Order)?,
                voucher,
                user: text("user")?.parse::<UserId>().map_err(EntryError::User)?,
            })
        })();
        Self {
            entry_id,
            voucher,
            order,
            deliveries,
            built: text("built").unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(pairs: &[(&str, &str)]) -> HashMap<String, Value> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), Value::BulkString(v.as_bytes().to_vec())))
            .collect()
    }

    #[test]
    fn a_good_entry_decodes_and_a_bad_one_says_why() {
        let v = VoucherId::from_db(3);
        let good = Delivery::decode(
            v,
            "1-0".into(),
            &fields(&[("order", "0000000100000002"), ("user", "9")]),
            1,
        );
        assert_eq!(good.built, "", "an entry from before `built` was written");
        let q = good.order.expect("decodes");
        assert_eq!(
            (q.order.seconds(), q.order.sequence(), q.user.get()),
            (1, 2, 9)
        );
        let missing = Delivery::decode(v, "1-1".into(), &fields(&[("user", "9")]), 1);
        assert_eq!(missing.order.err(), Some(EntryError::Missing("order")));
        let bad_user = Delivery::decode(
            v,
            "1-2".into(),
            &fields(&[("order", "0000000100000002"), ("user", "0")]),
            1,
        );
        assert!(matches!(bad_user.order, Err(EntryError::User(_))));
    }
}
