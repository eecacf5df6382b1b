//! [`Health`]: whether each backing service answers, whether orders are being written, and
//! whether draws or reminders are overdue (`GET /api/health`).

use std::time::Duration;

use crate::{infra::store, Core};

/// Whether each backing service answered, and whether orders are being written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Health {
    pub postgres: bool,
    pub redis: bool,
    /// The age of the oldest order still queued (`None`: nothing queued, or Redis is down).
    pub oldest_queued: Option<Duration>,
    /// The oldest queued order is older than `SECKILL_STALL_AFTER_MS`: writing has stalled.
    pub stalled: bool,
    /// Draws whose sale began over a minute ago and whose ranking is not recorded (waiting for
    /// a beacon round that does not come or does not verify, or no instance able to run them).
    /// Said, not failed on: the rest of the shop serves. `None`: PostgreSQL did not answer.
    pub draws_overdue: Option<i64>,
    /// Reminders still waiting a minute past their moment (the shop's pace behind the asks, a
    /// relay failing, no sender running). Said, not failed on. `None`: PostgreSQL did not answer.
    pub reminders_overdue: Option<i64>,
}

impl Health {
    /// Ready to serve: both stores answer and orders are being written.
    pub fn ok(self) -> bool {
        self.postgres && self.redis && !self.stalled
    }
}

impl Core {
    /// Pings both services and measures the queue's lag, each bounded by one second; records
    /// the lag as the metric `seckill_oldest_queued_seconds`.
    pub async fn health(&self) -> Health {
        let limit = Duration::from_secs(1);
        let postgres = async {
            matches!(
                tokio::time::timeout(limit, sqlx::query("SELECT 1").execute(&self.db)).await,
                Ok(Ok(_))
            )
        };
        let redis = async {
            let mut conn = self.redis.clone();
            if conn.is_cluster() {
                // A PING reaches one node, which answers while another master is down; the
                // cluster's own view says whether every slot is served.
                let mut info = redis::cmd("CLUSTER");
                info.arg("INFO");
                matches!(
                    tokio::time::timeout(limit, info.query_async::<String>(&mut conn)).await,
                    Ok(Ok(text)) if text.lines().any(|l| l.trim() == "cluster_state:ok")
                )
            } else {
                let ping = redis::cmd("PING");
                matches!(
                    tokio::time::timeout(limit, ping.query_async::<String>(&mut conn)).await,
                    Ok(Ok(_))
                )
            }
        };
        let lag = async {
            match tokio::time::timeout(limit, crate::jobs::order_writer::oldest_queued_age(self))
                .await
            {
                Ok(Ok(age)) => age,
                _ => None,
            }
        };
        let overdue = async {
            let late = chrono::Utc::now() - chrono::Duration::seconds(60);
            match tokio::time::timeout(limit, store::draws::overdue(&self.db, late)).await {
                Ok(Ok(n)) => Some(n),
                _ => None,
            }
        };
        let reminders_late = async {
            let late = chrono::Utc::now() - chrono::Duration::seconds(60);
            let lead = self.config.reminders.lead;
            match tokio::time::timeout(limit, store::reminders::overdue(&self.db, late, lead)).await
            {
                Ok(Ok(n)) => Some(n),
                _ => None,
            }
        };
        let (postgres, redis, oldest_queued, draws_overdue, reminders_overdue) =
            tokio::join!(postgres, redis, lag, overdue, reminders_late);
        let age = oldest_queued.unwrap_or_default();
        metrics::gauge!("seckill_oldest_queued_seconds").set(age.as_secs_f64());
        if let Some(n) = draws_overdue {
            metrics::gauge!("seckill_draws_overdue").set(n as f64);
        }
        if let Some(n) = reminders_overdue {
            metrics::gauge!("seckill_reminders_overdue").set(n as f64);
        }
        Health {
            postgres,
            redis,
            oldest_queued,
            stalled: age > self.config.worker.stall_after,
            draws_overdue,
            reminders_overdue,
        }
    }
}
