//! Typed configuration, read once from the environment and validated at start-up.
//!
//! Every variable has a default that runs the product against the project's local services
//! (`scripts/services.sh`), so `cargo run` works with no setup. Secrets are redacted from `Debug`.

//!
//! | file | job |
//! | --- | --- |
//! | `mod.rs` | [`Config`]: the whole, its defaults, the instance's name |
//! | `parts.rs` | each part's settings, read by concern (worker, sweep, payments, memory, sign-in, limits, admissions) |
//! | `services.rs` | the services outside: the SMS gateway's webhook, the payment provider, the public origins |
//! | `read.rs` | reading one variable: typed, positive, milliseconds, blank as unset |

mod parts;
mod read;
mod services;
#[cfg(test)]
mod tests;

use std::{net::SocketAddr, time::Duration};

pub use self::{
    parts::{
        AdmissionConfig, AuthConfig, MemoConfig, PaymentsConfig, RateLimits, ReminderConfig,
        SweepConfig, WorkerConfig,
    },
    read::{millis, non_blank, positive, time_zone, typed, ConfigError},
    services::public_origins,
};
pub use crate::secret::Secret;
use crate::{
    domain::{CountryCode, Phone},
    infra::{
        durability::{Durability, ReplicaWait},
        keys::KeyPrefix,
    },
};

/// Default PostgreSQL of the project's local instance (`scripts/services.sh`).
pub const DEFAULT_DATABASE_URL: &str = "postgres://seckill:seckill@127.0.0.1:15432/seckill";
/// Default Redis of the project's local instance.
pub const DEFAULT_REDIS_URL: &str = "redis://127.0.0.1:16379/";
/// Where the server listens when `LEPTOS_SITE_ADDR` is not set.
pub const DEFAULT_SITE_ADDR: &str = "127.0.0.1:3000";
/// The phone that signs in as admin when `SECKILL_ADMIN_PHONES` is not set.
pub const DEFAULT_ADMIN_PHONE: &str = "13800000000";

/// The whole configuration of one server instance.
#[derive(Debug, Clone)]
pub struct Config {
    pub database_url: Secret,
    pub redis_url: Secret,
    pub admin_phones: Vec<Phone>,
    /// Return one-time sign-in codes in the response (there is no SMS provider).
    pub dev_login: bool,
    pub key_prefix: KeyPrefix,
    /// Names this instance's queue consumer: unique per running instance (by default the host
    /// and the listening port, so two instances on one host do not read each other's pending
    /// entries) and stable across restarts, so that a restarted instance resumes its own pending
    /// orders at once.
    pub instance_id: String,
    pub worker: WorkerConfig,
    pub sweep: SweepConfig,
    pub payments: PaymentsConfig,
    pub memo: MemoConfig,
    pub auth: AuthConfig,
    pub limits: RateLimits,
    pub admissions: AdmissionConfig,
    /// How often an instance reads the sales its open pages watch and pushes changes
    /// (`SECKILL_PUSH_MS`).
    pub push_every: Duration,
    /// The lease of every lock the service takes (the sweep's, a sale's preload, a draw), renewed
    /// every third of it while held: how long the work stalls at most when the instance holding
    /// the lock dies (`SECKILL_LOCK_LEASE_MS`).
    pub lock_lease: Duration,
    pub db_max_connections: u32,
    /// What an admission must survive in Redis before its order ID is returned.
    pub durability: Durability,
    /// With `SECKILL_DURABILITY=replicated`: how many replicas must hold a write, how long to
    /// wait for them.
    pub replicas: ReplicaWait,
    /// The draw's receipt key and beacon (`src/draw/settings.rs`).
    pub draw: crate::draw::DrawSettings,
    /// "Remind me when it starts" (`src/reminders/`).
    pub reminders: ReminderConfig,
}

impl Config {
    /// Reads the configuration from the process environment.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads the configuration through `lookup`, so tests need not touch the process environment.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let get = non_blank(&lookup);
        let parse = |var: &'static str, default: &str| -> Result<String, ConfigError> {
            Ok(get(var).unwrap_or_else(|| default.to_owned()))
        };
        let dev_login: bool = typed(&get, "SECKILL_DEV_LOGIN", "false")?;
        let country: CountryCode = typed(&get, "SECKILL_DEFAULT_COUNTRY_CODE", "86")?;
        // Read raw: set but empty means no admins. Unset, the published default admin phone
        // only in dev mode (anyone can sign in as anyone there anyway).
        let admin_phones = match lookup("SECKILL_ADMIN_PHONES") {
            Some(list) => admin_list(&list, country)?,
            None if dev_login => admin_list(DEFAULT_ADMIN_PHONE, country)?,
            None => Vec::new(),
        };
        let key_prefix =
            KeyPrefix::try_from(parse("SECKILL_KEY_PREFIX", "")?.as_str()).map_err(|message| {
                ConfigError {
                    var: "SECKILL_KEY_PREFIX",
                    message,
                }
            })?;
        let instance_id = match get("SECKILL_INSTANCE_ID") {
            Some(id) => id,
            // The server's listening port names the instance by default (the server reads the
            // same variable for its listener).
            None => default_instance_id(typed(&get, "LEPTOS_SITE_ADDR", DEFAULT_SITE_ADDR)?),
        };
        Ok(Self {
            database_url: Secret::new(parse("DATABASE_URL", DEFAULT_DATABASE_URL)?),
            redis_url: Secret::new(parse("REDIS_URL", DEFAULT_REDIS_URL)?),
            admin_phones,
            dev_login,
            key_prefix,
            instance_id,
            worker: WorkerConfig::read(&get)?,
            sweep: SweepConfig::read(&get)?,
            payments: PaymentsConfig::read(&get)?,
            memo: MemoConfig::read(&get)?,
            auth: AuthConfig::read(&get, country)?,
            limits: RateLimits::read(&get)?,
            admissions: AdmissionConfig::read(&get)?,
            push_every: millis(&get, "SECKILL_PUSH_MS", 500)?,
            lock_lease: lock_lease(&get)?,
            db_max_connections: positive(&get, "SECKILL_DB_MAX_CONNECTIONS", 20)?,
            durability: typed(&get, "SECKILL_DURABILITY", "everysec")?,
            replicas: ReplicaWait {
                min_replicas: positive(&get, "SECKILL_MIN_REPLICAS", 1)?,
                timeout: millis(&get, "SECKILL_REPLICA_WAIT_MS", 1_000)?,
            },
            draw: crate::draw::DrawSettings::from_lookup(&get)?,
            reminders: ReminderConfig::read(&get)?,
        })
    }

    /// Whether `phone` signs in as an admin.
    pub fn is_admin(&self, phone: &Phone) -> bool {
        self.admin_phones.contains(phone)
    }
}

/// The admins' phones, comma-separated (blank entries skipped).
fn admin_list(list: &str, country: CountryCode) -> Result<Vec<Phone>, ConfigError> {
    list.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            Phone::parse(p, country).map_err(|e| ConfigError {
                var: "SECKILL_ADMIN_PHONES",
                message: e.to_string(),
            })
        })
        .collect()
}

/// `<host>:<port>`: one consumer per running instance, the same one after a restart.
fn default_instance_id(site_addr: SocketAddr) -> String {
    let host = std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "seckill".to_owned());
    format!("{host}:{}", site_addr.port())
}

/// The locks' lease: at least a second, so a renewal (every third of it, each bounded by the
/// lock's 200 ms per-node timeout) has room to land before the lease runs out.
fn lock_lease(get: &impl Fn(&'static str) -> Option<String>) -> Result<Duration, ConfigError> {
    const VAR: &str = "SECKILL_LOCK_LEASE_MS";
    let lease = millis(get, VAR, 3_000)?;
    if lease < Duration::from_secs(1) {
        return Err(ConfigError {
            var: VAR,
            message: format!("must be at least 1000 ms, got {}", lease.as_millis()),
        });
    }
    Ok(lease)
}
