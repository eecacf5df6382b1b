//! A scratch environment per run: a database of its own on the local PostgreSQL (dropped at the
//! end) and a Redis key prefix of its own (deleted at the end), so benchmarks never touch the
//! product's data or each other's.

use std::collections::HashMap;

use anyhow::Context;
use chrono::{Duration, Utc};
use futures::{StreamExt, TryStreamExt};
use seckill::{
    auth::{Admin, Principal},
    catalog,
    config::{DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL},
    domain::{Phone, UserId, VoucherDraft, VoucherId},
    testing::keys::VoucherKeys,
    testing::scripts,
    testing::store,
    Config, Core,
};
use sqlx::{Connection, PgConnection};

pub struct Scratch {
    pub core: Core,
    /// The variables a server needs to see the same data.
    pub env: Vec<(String, String)>,
    base_url: String,
    db_name: String,
}

impl Scratch {
    pub async fn new(label: &str) -> anyhow::Result<Self> {
        let redis_url = std::env::var("REDIS_URL").unwrap_or_else(|_| DEFAULT_REDIS_URL.to_owned());
        Self::on_redis(label, &redis_url).await
    }

    /// A scratch deployment on the Redis at `redis_url` (one node, or a cluster's seed list).
    pub async fn on_redis(label: &str, redis_url: &str) -> anyhow::Result<Self> {
        let redis_url = redis_url.to_owned();
        let base_url =
            std::env::var("DATABASE_URL").unwrap_or_else(|_| DEFAULT_DATABASE_URL.to_owned());
        let db_name = format!("bench_{label}_{}", std::process::id());
        let mut admin = PgConnection::connect(&base_url)
            .await
            .context("connecting to PostgreSQL (start it with scripts/services.sh start)")?;
        for sql in [
            format!("DROP DATABASE IF EXISTS {db_name}"),
            format!("CREATE DATABASE {db_name}"),
        ] {
            sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
                .execute(&mut admin)
                .await
                .context("creating the scratch database")?;
        }
        let db_url = with_database(&base_url, &db_name);
        let env: Vec<(String, String)> = vec![
            ("DATABASE_URL".into(), db_url),
            ("REDIS_URL".into(), redis_url),
            (
                "SECKILL_KEY_PREFIX".into(),
                format!("bench-{}:", uuid::Uuid::new_v4().simple()),
            ),
            ("SECKILL_ADMIN_PHONES".into(), "13800000000".into()),
            // The bench's shoppers get their sessions directly (no codes); its servers listen
            // on loopback, where dev login is the way to start without an SMS gateway.
            ("SECKILL_DEV_LOGIN".into(), "true".into()),
            // A shop must have a way to be paid to start (decision 33); the bench pays nothing
            // but the drill's orders, through the dev provider.
            ("SECKILL_DEV_PAYMENTS".into(), "true".into()),
            // Every bench shopper comes from loopback: the per-address entry limit would count
            // them as one client.
            ("SECKILL_ENTRIES_PER_CLIENT".into(), "100000000".into()),
        ];
        let vars: HashMap<String, String> = env.iter().cloned().collect();
        let config = Config::from_lookup(|k| vars.get(k).cloned())?;
        let core = Core::connect(config).await?;
        core.migrate().await?;
        Ok(Self {
            core,
            env,
            base_url,
            db_name,
        })
    }

    /// `n` shoppers (fast set-up, not measured).
    pub async fn users(&self, n: usize) -> anyhow::Result<Vec<(UserId, Phone)>> {
        let mut out = Vec::with_capacity(n);
        let phones: Vec<Phone> = (0..n)
            .map(|i| Phone::try_from(format!("+8617{i:09}").as_str()))
            .collect::<Result<_, _>>()?;
        for chunk in phones.chunks(20_000) {
            let ids = store::users::upsert_many(&self.core.db, chunk).await?;
            out.extend(ids.into_iter().zip(chunk.iter().cloned()));
        }
        Ok(out)
    }

    /// A session per shopper (what a sign-in would leave), `concurrency` at a time.
    pub async fn sessions(&self, users: &[(UserId, Phone)]) -> anyhow::Result<Vec<String>> {
        futures::stream::iter(users.iter().cloned())
            .map(|(u, p)| {
                let core = self.core.clone();
                async move {
                    seckill::auth::open_session(&core, u, p)
                        .await
                        .map(|s| s.token)
                }
            })
            .buffered(256)
            .try_collect()
            .await
            .context("opening sessions")
    }

    pub async fn admin(&self) -> anyhow::Result<Admin> {
        let phone = Phone::parse(
            seckill::config::DEFAULT_ADMIN_PHONE,
            self.core.config.auth.country,
        )?;
        let user = store::users::upsert_by_phone(&self.core.db, &phone).await?;
        Principal {
            user,
            phone,
            is_admin: true,
        }
        .as_admin()
        .context("the bench admin is configured as admin")
    }

    /// A voucher whose sale opens `opens_in` from now and lasts an hour.
    pub async fn voucher(&self, stock: usize, opens_in: Duration) -> anyhow::Result<VoucherId> {
        self.voucher_priced(stock, opens_in, 100).await
    }

    /// Like [`Self::voucher`], priced `price_cents`.
    pub async fn voucher_priced(
        &self,
        stock: usize,
        opens_in: Duration,
        price_cents: i64,
    ) -> anyhow::Result<VoucherId> {
        let begins = Utc::now() + opens_in;
        let draft = VoucherDraft {
            title: "Rush voucher".into(),
            description: "benchmark".into(),
            price_cents: price_cents.to_string(),
            stock: stock.to_string(),
            begins_at: begins.to_rfc3339(),
            ends_at: (begins + Duration::hours(1)).to_rfc3339(),
            ..VoucherDraft::default()
        };
        catalog::create_voucher(
            &self.core,
            &self.admin().await?,
            &draft,
            Utc::now() - Duration::seconds(5),
        )
        .await
        .context("creating the voucher")
    }

    /// A draw sale whose entries open now and whose draw (its start) is `draw_in` away.
    pub async fn draw_voucher(&self, stock: usize, draw_in: Duration) -> anyhow::Result<VoucherId> {
        let begins = Utc::now() + draw_in;
        let draft = VoucherDraft {
            title: "Draw voucher".into(),
            description: "benchmark".into(),
            price_cents: "100".into(),
            stock: stock.to_string(),
            begins_at: begins.to_rfc3339(),
            ends_at: (begins + Duration::hours(1)).to_rfc3339(),
            opening: "draw".into(),
            entries_open_at: (Utc::now() - Duration::seconds(1)).to_rfc3339(),
        };
        catalog::create_voucher(&self.core, &self.admin().await?, &draft, Utc::now())
            .await
            .context("creating the draw voucher")
    }

    /// A sale that exists only in Redis (no PostgreSQL row), open for the next hour with
    /// `stock` units: what the admission-script measurements run against.
    pub async fn redis_only_sale(&self, id: i64, stock: usize) -> anyhow::Result<VoucherKeys> {
        let k = self.core.keys.voucher(VoucherId::try_from(id)?);
        let now = Utc::now().timestamp_millis();
        let stock = i64::try_from(stock)?;
        scripts::preload(
            &mut self.core.redis.clone(),
            &k,
            scripts::PreloadMode::Load,
            &scripts::PreloadInput {
                begins_ms: now - 1_000,
                ends_ms: now + 3_600_000,
                total_stock: stock,
                db_stock: stock,
                moves: &[],
                buyers: &[],
                cancelled: &[],
                entries_ms: None,
                draw: None,
            },
        )
        .await?;
        Ok(k)
    }

    /// Deletes the scratch keys and drops the scratch database.
    pub async fn cleanup(self) -> anyhow::Result<()> {
        let pattern = format!("{}*", self.core.keys.prefix().as_str());
        // SCAN sees one node's keys: scan each node (on a cluster, every seed node), delete
        // through the shared connection (routed by slot).
        for client in self.core.redis_deployment().seed_clients() {
            let mut node = client.get_multiplexed_async_connection().await?;
            let mut cursor: u64 = 0;
            loop {
                let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
                    .arg(cursor)
                    .arg("MATCH")
                    .arg(&pattern)
                    .arg("COUNT")
                    .arg(1000)
                    .query_async(&mut node)
                    .await?;
                if !keys.is_empty() {
                    // A cluster client splits a multi-key UNLINK per slot.
                    let mut redis = self.core.redis.clone();
                    let _: () = redis::cmd("UNLINK")
                        .arg(&keys)
                        .query_async(&mut redis)
                        .await?;
                }
                if next == 0 {
                    break;
                }
                cursor = next;
            }
        }
        self.core.db.close().await;
        drop_database(&self.base_url, &self.db_name).await
    }
}

/// Drops `name`, ending the sessions still in it (a killed server's pool may not have noticed
/// yet). PostgreSQL 15 lets only a superuser end an autovacuum worker, and `WITH (FORCE)` then
/// refuses the whole drop (42501) while one is cleaning up after the run's inserts; the worker
/// finishes within seconds, so the drop is tried again until then.
async fn drop_database(base_url: &str, name: &str) -> anyhow::Result<()> {
    const INSUFFICIENT_PRIVILEGE: &str = "42501";
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut admin = PgConnection::connect(base_url).await?;
    loop {
        let dropped = sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
            "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
        )))
        .execute(&mut admin)
        .await;
        match dropped {
            Ok(_) => return Ok(()),
            Err(sqlx::Error::Database(e))
                if e.code().as_deref() == Some(INSUFFICIENT_PRIVILEGE)
                    && std::time::Instant::now() < deadline =>
            {
                tracing::debug!(
                    database = name,
                    "an autovacuum worker is in the scratch database; dropping it again shortly"
                );
                tokio::time::sleep(std::time::Duration::from_millis(250)).await;
            }
            Err(e) => {
                return Err(
                    anyhow::Error::new(e).context(format!("dropping the scratch database {name}"))
                )
            }
        }
    }
}

/// `url` with its database path replaced by `name`.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let authority_end = base.find("://").map_or(0, |i| i + 3);
    let path_start = base[authority_end..]
        .find('/')
        .map_or(base.len(), |i| authority_end + i);
    let mut out = format!("{}/{name}", &base[..path_start]);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn replaces_only_the_database() {
        assert_eq!(
            with_database("postgres://u:p@127.0.0.1:15432/seckill", "b1"),
            "postgres://u:p@127.0.0.1:15432/b1"
        );
        assert_eq!(
            with_database("postgres://h/db?sslmode=disable", "b2"),
            "postgres://h/b2?sslmode=disable"
        );
        assert_eq!(with_database("postgres://h", "b3"), "postgres://h/b3");
    }
}
