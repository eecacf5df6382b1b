//! The durable order queue: one Redis stream per voucher (in the voucher's hash slot), read by
//! the consumer group `ORDER_GROUP` of every server instance.
//!
//! An entry is written by the admission script in the same atomic step that takes the unit, so
//! an admitted order is on the queue or nowhere. It leaves the queue only after its PostgreSQL
//! commit (settle: `XACK` + `XDEL` + queued-hash removal, one script). Redis persists the
//! streams (AOF), so a crash of any server instance loses nothing; another instance's worker
//! reclaims what a dead consumer held (`XAUTOCLAIM`).
//!
//! | file | job |
//! | --- | --- |
//! | `delivery.rs` | one entry as handed to this consumer, decoded |
//! | `worker.rs` | the [`Worker`]: its loop, shutdown, and the step-by-step `drain` for tests |
//! | `read.rs` | reading new, own-pending and reclaimed entries |
//! | `write.rs` | writing a set of deliveries to PostgreSQL, in a batch or one by one |
//! | `replicated.rs` | waiting for replicas before writing (`SECKILL_DURABILITY=replicated`) |
//! | `settle.rs` | settling decided entries in Redis, and dead-lettering |
//! | `lag.rs` | the age of the oldest queued order (health, metrics, the console) |

mod delivery;
mod lag;
mod read;
mod replicated;
mod settle;
mod worker;
mod write;

pub use delivery::{Delivery, EntryError};
pub use lag::oldest_queued_age;
pub use worker::{Worker, WorkerReport};
