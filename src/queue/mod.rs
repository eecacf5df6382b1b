//! The durable order queue: one Redis stream per voucher (in the voucher's hash slot), read by
//! the consumer group [`ORDER_GROUP`](crate::keys::ORDER_GROUP) of every server instance.
//!
//! An entry is written by the admission script in the same atomic step that takes the unit, so
//! an admitted order is on the queue or nowhere. It leaves the queue only after its PostgreSQL
//! commit (settle: `XACK` + `XDEL` + queued-hash removal, one script). Redis persists the
//! streams (AOF), so a crash of any server instance loses nothing; another instance's worker
//! reclaims what a dead consumer held (`XAUTOCLAIM`).

mod worker;

use std::collections::HashMap;

use redis::Value;

pub use worker::{Worker, WorkerReport};

use crate::{
    domain::{OrderId, UserId, VoucherId},
    store::orders::QueuedOrder,
};

/// One entry handed to this consumer.
#[derive(Debug, Clone)]
pub struct Delivery {
    pub entry_id: String,
    pub voucher: VoucherId,
    /// The decoded order, or why the entry could not be decoded.
    pub order: Result<QueuedOrder, String>,
    /// How many times the group has handed this entry out, this time included.
    pub deliveries: u64,
}

impl Delivery {
    /// Decodes a stream entry's fields (`order` 16-hex, `user`, `voucher`).
    pub fn decode(
        voucher: VoucherId,
        entry_id: String,
        fields: &HashMap<String, Value>,
        deliveries: u64,
    ) -> Self {
        let text = |name: &str| -> Result<String, String> {
            match fields.get(name) {
                Some(v) => redis::from_redis_value::<String>(v.clone())
                    .map_err(|_| format!("field {name} is not text")),
                None => Err(format!("field {name} is missing")),
            }
        };
        let order = (|| {
            let order =
                OrderId::from_redis_hex(&text("order")?).map_err(|e| format!("order: {e}"))?;
            let user = text("user")?
                .parse::<UserId>()
                .map_err(|e| format!("user: {e}"))?;
            Ok(QueuedOrder {
                order,
                voucher,
                user,
            })
        })();
        Self {
            entry_id,
            voucher,
            order,
            deliveries,
        }
    }
}
