//! The work an instance does without a request, each until shutdown:
//!
//! | file | job |
//! | --- | --- |
//! | `draws.rs` | the draws at their sales' starts, and units back down the drawn sales' rankings |
//! | `durability_watch.rs` | `SECKILL_DURABILITY=fsync` set on Redis again after it restarts with its own setting |
//! | `order_writer/` | the durable queue's consumer: orders from Redis Streams into PostgreSQL |
//! | `sweeper.rs` | housekeeping, one instance at a time: restores, retirements, the payment deadline, pending stock moves |
//! | `live_push.rs` | the figures of the sales open pages watch, read and pushed |
//! | `stock_back.rs` | the subscription: units back on sale, catalog changes, revoked sessions |
//! | `revocations.rs` | the revoked sessions reloaded now and then (a lost announcement's bound) |
//! | `reminders::send` | the reminders whose moment came, claimed and sent to the SMS relay |

pub mod draws;
pub mod durability_watch;
pub mod live_push;
pub mod order_writer;
pub mod revocations;
pub mod stock_back;
pub mod sweeper;

use tokio_util::{sync::CancellationToken, task::TaskTracker};

use crate::{infra::backend::Backend, Core};

/// Starts every background job of an instance on `tasks`; each stops at `shutdown` (the order
/// writer after settling the batch in hand).
pub async fn spawn_all(
    core: &Core,
    tasks: &TaskTracker,
    shutdown: &CancellationToken,
) -> Result<(), Backend> {
    let writer = order_writer::Worker::new(core.clone(), core.config.instance_id.clone()).await?;
    tasks.spawn(writer.run(shutdown.clone()));
    tasks.spawn(sweeper::run(core.clone(), shutdown.clone()));
    tasks.spawn(draws::run(core.clone(), shutdown.clone()));
    tasks.spawn(durability_watch::run(core.clone(), shutdown.clone()));
    tasks.spawn(stock_back::listen(core.clone(), shutdown.clone()));
    tasks.spawn(revocations::run(core.clone(), shutdown.clone()));
    tasks.spawn(crate::reminders::send::run(core.clone(), shutdown.clone()));
    tasks.spawn(live_push::run(
        core.clone(),
        core.config.push_every,
        shutdown.clone(),
    ));
    Ok(())
}
