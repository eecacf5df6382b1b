//! Typed configuration, read once from the environment and validated at start-up.
//!
//! Every variable has a default that runs the product against the project's local services
//! (`scripts/services.sh`), so `cargo run` works with no setup. Secrets are redacted from `Debug`.

use std::{fmt, net::SocketAddr, str::FromStr, time::Duration};

pub use crate::secret::Secret;
use crate::{
    auth::delivery::Webhook,
    domain::{CountryCode, Currency, Phone},
    infra::{
        durability::{Durability, ReplicaWait},
        keys::KeyPrefix,
    },
    orders::payment::{stripe::StripeSettings, ProviderSettings},
};

/// Default PostgreSQL of the project's local instance (`scripts/services.sh`).
pub const DEFAULT_DATABASE_URL: &str = "postgres://seckill:seckill@127.0.0.1:15432/seckill";
/// Default Redis of the project's local instance.
pub const DEFAULT_REDIS_URL: &str = "redis://127.0.0.1:16379/";
/// Where the server listens when `LEPTOS_SITE_ADDR` is not set.
pub const DEFAULT_SITE_ADDR: &str = "127.0.0.1:3000";
/// The phone that signs in as admin when `SECKILL_ADMIN_PHONES` is not set.
pub const DEFAULT_ADMIN_PHONE: &str = "13800000000";

/// A configuration variable that is present but unusable.
#[derive(Debug, thiserror::Error)]
#[error("{var}: {message}")]
pub struct ConfigError {
    pub var: &'static str,
    pub message: String,
}

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
}

/// Knobs of the order-queue worker.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// Orders written per PostgreSQL transaction at most.
    pub batch_size: usize,
    /// How long one `XREADGROUP` blocks before the worker looks at shutdown and new vouchers.
    pub block: Duration,
    /// An entry pending this long with any consumer is presumed abandoned and reclaimed.
    pub reclaim_idle: Duration,
    /// Deliveries after which an entry goes to the dead letters.
    pub max_deliveries: u32,
    /// Writing counts as stalled (health fails, the console warns) once the oldest queued
    /// order is older than this.
    pub stall_after: Duration,
}

/// Knobs of the housekeeping job (one instance at a time, see `sweeper`).
#[derive(Debug, Clone)]
pub struct SweepConfig {
    /// How often each instance offers to run the job.
    pub every: Duration,
    /// How long after a sale ends its drained Redis state is retired.
    pub retire_after: Duration,
}

/// After an order is written: its payment.
#[derive(Debug, Clone)]
pub struct PaymentsConfig {
    /// How long a written order waits for payment before the sweep cancels it and its unit
    /// goes back on sale (`SECKILL_PAY_WITHIN_MS`).
    pub pay_within: Duration,
    /// Who takes the money: Stripe (`SECKILL_STRIPE_*`), the development provider
    /// (`SECKILL_DEV_PAYMENTS`, approves at once), or none (start-up refuses that).
    pub provider: ProviderSettings,
    /// The currency of every price (`SECKILL_CURRENCY`, `cny`); amounts are its minor units.
    pub currency: Currency,
    /// Where the provider's hosted page sends the shopper back: the first of
    /// `SECKILL_PUBLIC_ORIGIN`; unset, addresses are paths on the shop (the dev provider's
    /// return; Stripe needs the origin, and its settings are refused without it).
    pub return_origin: Option<String>,
    /// How long past its deadline an order waits for a provider out of reach to close its
    /// payment before it is cancelled anyway (`SECKILL_STRIPE_EXPIRE_GRACE_MS`, 10 minutes);
    /// money that still arrives is then refunded.
    pub expire_grace: Duration,
}

impl PaymentsConfig {
    /// Whether the development provider approves every payment.
    pub fn is_dev(&self) -> bool {
        matches!(self.provider, ProviderSettings::Dev)
    }
}

/// What an instance answers from memory (see `memo`).
#[derive(Debug, Clone)]
pub struct MemoConfig {
    /// How long a session read from Redis is trusted without asking again
    /// (`SECKILL_SESSION_CACHE_MS`): a sign-out reaches the other instances within this.
    pub session_ttl: Duration,
    /// How long a sale's "sold out" or "ended" is answered from memory
    /// (`SECKILL_SOLD_OUT_TTL_MS`); a unit coming back clears it sooner, by pub/sub.
    pub refusal_ttl: Duration,
    /// How long an instance keeps a refused sale's buyers (`SECKILL_SOLD_OUT_BUYERS_MS`): a
    /// unit coming back forgets them at once, by pub/sub; this bounds a lost message.
    pub sold_out_buyers_ttl: Duration,
    /// How long an instance answers the catalog's rows (title, price, window, stock) from memory
    /// (`SECKILL_CATALOG_CACHE_MS`): an admin's change is announced by pub/sub; this bounds a
    /// lost message, and the stock PostgreSQL counts down as orders are written (shown only for
    /// a sale Redis does not hold).
    pub catalog_ttl: Duration,
    /// How long an instance shows a sale's stock left as it last read it, at most
    /// (`SECKILL_STOCK_READ_MS`; see `catalog::cache`).
    pub stock_read_ttl: Duration,
}

/// Sign-in and session policy.
#[derive(Debug, Clone)]
pub struct AuthConfig {
    pub code_ttl: Duration,
    pub code_attempts: u32,
    /// Minimum time between two codes sent to one phone.
    pub code_resend_after: Duration,
    pub session_ttl: Duration,
    /// The country of a phone typed without its code (`SECKILL_DEFAULT_COUNTRY_CODE`, 86).
    pub country: CountryCode,
    /// Wrong codes one phone may send within `failure_window` (`SECKILL_SIGN_IN_FAILURES`,
    /// 10) before its sign-in answers 429 until the window ends, the right code included.
    pub failure_budget: u32,
    /// `SECKILL_SIGN_IN_FAILURE_WINDOW_MS`, an hour.
    pub failure_window: Duration,
    /// Code requests one client address may make a minute (`SECKILL_CODE_REQUESTS_PER_CLIENT`,
    /// 20), whatever the phones.
    pub codes_per_client: u32,
    /// Sign-in attempts one client address may make a minute (`SECKILL_SIGN_INS_PER_CLIENT`,
    /// 30).
    pub sign_ins_per_client: u32,
    /// The keys sessions are signed with (`SECKILL_SESSION_KEYS`, `id:secret,…`, the first
    /// signs). `None`: one key kept in Redis, made by the first instance (decision 30).
    pub session_keys: Option<crate::auth::token::SessionKeys>,
    /// How often each instance reloads the revoked sessions (`SECKILL_REVOCATION_RELOAD_MS`,
    /// 5 s): the bound for a revocation whose announcement was lost.
    pub revocation_reload: Duration,
    /// Where codes are sent (`SECKILL_SMS_WEBHOOK_URL`, `…_SECRET`, `…_TIMEOUT_MS`): the
    /// operator's SMS gateway. `None`: nowhere, which only dev login makes usable.
    pub webhook: Option<Webhook>,
}

/// Request-rate policy on the buy path.
#[derive(Debug, Clone)]
pub struct RateLimits {
    /// Purchases one shopper may attempt per second on one sale (counted by the admission
    /// script, on the Redis clock).
    pub buys_per_second: u32,
    /// Entries into draws one client address may make per minute (`SECKILL_ENTRIES_PER_CLIENT`,
    /// counted in Redis across instances).
    pub entries_per_client: u32,
}

/// How buys for one voucher are gathered into one admission script call (see `admissions`).
#[derive(Debug, Clone)]
pub struct AdmissionConfig {
    /// At most this many purchases decided by one call (`SECKILL_ADMIT_BATCH_MAX`); 1 turns
    /// batching off.
    pub max_batch: usize,
    /// Calls in flight at once per voucher and instance (`SECKILL_ADMIT_IN_FLIGHT`): buys that
    /// arrive while they are all out wait and form the next batch.
    pub in_flight: usize,
    /// A voucher's lane with no buy for this long closes (`SECKILL_ADMIT_LANE_IDLE_MS`).
    pub lane_idle: Duration,
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
            worker: WorkerConfig {
                batch_size: positive(&get, "SECKILL_WORKER_BATCH", 500)?,
                block: millis(&get, "SECKILL_WORKER_BLOCK_MS", 500)?,
                reclaim_idle: millis(&get, "SECKILL_RECLAIM_IDLE_MS", 30_000)?,
                max_deliveries: positive(&get, "SECKILL_MAX_DELIVERIES", 5)?,
                stall_after: millis(&get, "SECKILL_STALL_AFTER_MS", 15_000)?,
            },
            sweep: SweepConfig {
                every: millis(&get, "SECKILL_SWEEP_MS", 15_000)?,
                retire_after: millis(&get, "SECKILL_RETIRE_AFTER_MS", 600_000)?,
            },
            payments: PaymentsConfig {
                pay_within: millis(&get, "SECKILL_PAY_WITHIN_MS", 15 * 60_000)?,
                provider: payment_provider(&get)?,
                currency: typed(&get, "SECKILL_CURRENCY", "cny")?,
                return_origin: public_origins(get("SECKILL_PUBLIC_ORIGIN").as_deref())?
                    .into_iter()
                    .next(),
                expire_grace: millis(&get, "SECKILL_STRIPE_EXPIRE_GRACE_MS", 10 * 60_000)?,
            },
            memo: MemoConfig {
                session_ttl: millis(&get, "SECKILL_SESSION_CACHE_MS", 2_000)?,
                refusal_ttl: millis(&get, "SECKILL_SOLD_OUT_TTL_MS", 1_000)?,
                catalog_ttl: millis(&get, "SECKILL_CATALOG_CACHE_MS", 1_000)?,
                stock_read_ttl: millis(&get, "SECKILL_STOCK_READ_MS", 500)?,
                sold_out_buyers_ttl: millis(&get, "SECKILL_SOLD_OUT_BUYERS_MS", 30_000)?,
            },
            auth: AuthConfig {
                code_ttl: millis(&get, "SECKILL_CODE_TTL_MS", 300_000)?,
                code_attempts: positive(&get, "SECKILL_CODE_ATTEMPTS", 5)?,
                code_resend_after: millis(&get, "SECKILL_CODE_RESEND_MS", 30_000)?,
                session_ttl: millis(&get, "SECKILL_SESSION_TTL_MS", 7 * 24 * 3_600_000)?,
                country,
                failure_budget: positive(&get, "SECKILL_SIGN_IN_FAILURES", 10)?,
                failure_window: millis(&get, "SECKILL_SIGN_IN_FAILURE_WINDOW_MS", 3_600_000)?,
                codes_per_client: positive(&get, "SECKILL_CODE_REQUESTS_PER_CLIENT", 20)?,
                sign_ins_per_client: positive(&get, "SECKILL_SIGN_INS_PER_CLIENT", 30)?,
                session_keys: get("SECKILL_SESSION_KEYS")
                    .filter(|v| !v.trim().is_empty())
                    .map(|v| crate::auth::token::SessionKeys::parse(&v))
                    .transpose()
                    .map_err(|e| ConfigError {
                        var: "SECKILL_SESSION_KEYS",
                        message: e.to_string(),
                    })?,
                revocation_reload: millis(&get, "SECKILL_REVOCATION_RELOAD_MS", 5_000)?,
                webhook: webhook(&get)?,
            },
            limits: RateLimits {
                buys_per_second: positive(&get, "SECKILL_BUYS_PER_SECOND", 5)?,
                entries_per_client: positive(&get, "SECKILL_ENTRIES_PER_CLIENT", 30)?,
            },
            admissions: AdmissionConfig {
                max_batch: positive(&get, "SECKILL_ADMIT_BATCH_MAX", 64)?,
                in_flight: positive(&get, "SECKILL_ADMIT_IN_FLIGHT", 2)?,
                lane_idle: millis(&get, "SECKILL_ADMIT_LANE_IDLE_MS", 30_000)?,
            },
            push_every: millis(&get, "SECKILL_PUSH_MS", 500)?,
            lock_lease: lock_lease(&get)?,
            db_max_connections: positive(&get, "SECKILL_DB_MAX_CONNECTIONS", 20)?,
            durability: typed(&get, "SECKILL_DURABILITY", "everysec")?,
            replicas: ReplicaWait {
                min_replicas: positive(&get, "SECKILL_MIN_REPLICAS", 1)?,
                timeout: millis(&get, "SECKILL_REPLICA_WAIT_MS", 1_000)?,
            },
            draw: crate::draw::DrawSettings::from_lookup(&get)?,
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

/// The SMS gateway's webhook: its URL and secret together, or neither.
fn webhook(get: &impl Fn(&'static str) -> Option<String>) -> Result<Option<Webhook>, ConfigError> {
    const URL: &str = "SECKILL_SMS_WEBHOOK_URL";
    const SECRET: &str = "SECKILL_SMS_WEBHOOK_SECRET";
    let missing = |var: &'static str, with: &str| ConfigError {
        var,
        message: format!("is needed with {with}"),
    };
    let (url, secret) = match (get(URL), get(SECRET)) {
        (None, None) => return Ok(None),
        (Some(_), None) => return Err(missing(SECRET, URL)),
        (None, Some(_)) => return Err(missing(URL, SECRET)),
        (Some(url), Some(secret)) => (url, secret),
    };
    // The client speaks TLS since the payment provider needed it (decision 33): a relay may be
    // reached over https anywhere, or over plain http beside the shop.
    let host = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .unwrap_or_default();
    if host.is_empty() || host.starts_with('/') {
        return Err(ConfigError {
            var: URL,
            message: format!("{url:?} must be an https:// (or, beside the shop, http://) address of the SMS relay"),
        });
    }
    if secret.len() < 16 {
        return Err(ConfigError {
            var: SECRET,
            message: "must be at least 16 characters".into(),
        });
    }
    Ok(Some(Webhook {
        url,
        secret: Secret::new(secret),
        timeout: millis(get, "SECKILL_SMS_WEBHOOK_TIMEOUT_MS", 2_000)?,
    }))
}

/// The payment provider: Stripe's key and webhook secret together, or dev payments, or none;
/// both is refused (which one would a shopper pay?).
fn payment_provider(
    get: &impl Fn(&'static str) -> Option<String>,
) -> Result<ProviderSettings, ConfigError> {
    const KEY: &str = "SECKILL_STRIPE_SECRET_KEY";
    const SECRET: &str = "SECKILL_STRIPE_WEBHOOK_SECRET";
    const BASE: &str = "SECKILL_STRIPE_API_BASE";
    let dev: bool = typed(get, "SECKILL_DEV_PAYMENTS", "false")?;
    let refused = |var: &'static str, e: crate::orders::payment::stripe::StripeSettingError| {
        // The value is never repeated: it may be a secret.
        ConfigError {
            var,
            message: e.to_string(),
        }
    };
    let (key, secret) = match (get(KEY), get(SECRET)) {
        (None, None) if dev => return Ok(ProviderSettings::Dev),
        (None, None) => return Ok(ProviderSettings::None),
        (Some(_), None) => {
            return Err(ConfigError {
                var: SECRET,
                message: format!("is needed with {KEY} (the webhook endpoint's whsec_… secret)"),
            })
        }
        (None, Some(_)) => {
            return Err(ConfigError {
                var: KEY,
                message: format!("is needed with {SECRET}"),
            })
        }
        (Some(key), Some(secret)) => (key, secret),
    };
    if dev {
        return Err(ConfigError {
            var: "SECKILL_DEV_PAYMENTS",
            message: "is on beside the Stripe settings: choose one payment provider".into(),
        });
    }
    if get("SECKILL_PUBLIC_ORIGIN").is_none() {
        return Err(ConfigError {
            var: "SECKILL_PUBLIC_ORIGIN",
            message: "is needed with Stripe: the hosted page sends shoppers back to the order's page on it (https://shop.example)".into(),
        });
    }
    let base = get(BASE).unwrap_or_else(|| crate::orders::payment::stripe::DEFAULT_API_BASE.into());
    Ok(ProviderSettings::Stripe(StripeSettings {
        secret_key: StripeSettings::key(key.trim()).map_err(|e| refused(KEY, e))?,
        webhook_secret: StripeSettings::webhook_secret(secret.trim())
            .map_err(|e| refused(SECRET, e))?,
        api_base: StripeSettings::api_base(&base).map_err(|e| ConfigError {
            var: BASE,
            message: format!("{base:?} {e}"),
        })?,
        timeout: millis(get, "SECKILL_STRIPE_TIMEOUT_MS", 10_000)?,
        payment_methods: get("SECKILL_STRIPE_PAYMENT_METHODS")
            .map_or_else(|| Ok(Default::default()), |raw| raw.parse())
            .map_err(|message| ConfigError {
                var: "SECKILL_STRIPE_PAYMENT_METHODS",
                message,
            })?,
    }))
}

/// The shop's origins (`SECKILL_PUBLIC_ORIGIN`): comma-separated, each `http://` or
/// `https://` with a host and no path.
pub fn public_origins(raw: Option<&str>) -> Result<Vec<String>, ConfigError> {
    let Some(raw) = raw else {
        return Ok(Vec::new());
    };
    raw.split(',')
        .map(str::trim)
        .filter(|o| !o.is_empty())
        .map(|o| {
            let rest = o
                .strip_prefix("https://")
                .or_else(|| o.strip_prefix("http://"));
            match rest {
                Some(host) if !host.is_empty() && !host.trim_end_matches('/').contains('/') => {
                    Ok(o.trim_end_matches('/').to_owned())
                }
                _ => Err(ConfigError {
                    var: "SECKILL_PUBLIC_ORIGIN",
                    message: format!("{o:?} is not an origin like https://shop.example"),
                }),
            }
        })
        .collect()
}

/// `lookup`, with a blank value counted as unset (the server reads its own settings so too).
pub fn non_blank(
    lookup: impl Fn(&str) -> Option<String>,
) -> impl Fn(&'static str) -> Option<String> {
    move |var| lookup(var).filter(|v| !v.trim().is_empty())
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

/// The value of `var` (blank counts as unset), else `default`, parsed as a `T`; an unusable value
/// names its variable. The server reads its own settings with these too.
pub fn typed<T: FromStr>(
    get: &impl Fn(&'static str) -> Option<String>,
    var: &'static str,
    default: &str,
) -> Result<T, ConfigError>
where
    T::Err: fmt::Display,
{
    let raw = get(var).unwrap_or_else(|| default.to_owned());
    raw.trim().parse().map_err(|e: T::Err| ConfigError {
        var,
        message: format!("cannot use {raw:?}: {e}"),
    })
}

/// Like [`typed`], and greater than zero.
pub fn positive<T: FromStr + Default + PartialOrd + fmt::Display>(
    get: &impl Fn(&'static str) -> Option<String>,
    var: &'static str,
    default: T,
) -> Result<T, ConfigError>
where
    T::Err: fmt::Display,
{
    let value: T = typed(get, var, &default.to_string())?;
    if value <= T::default() {
        return Err(ConfigError {
            var,
            message: format!("must be greater than zero, got {value}"),
        });
    }
    Ok(value)
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

/// A positive number of milliseconds.
pub fn millis(
    get: &impl Fn(&'static str) -> Option<String>,
    var: &'static str,
    default: u64,
) -> Result<Duration, ConfigError> {
    positive(get, var, default).map(Duration::from_millis)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Config::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn defaults_point_at_the_local_services() {
        let c = config(&[]).expect("defaults are valid");
        assert_eq!(c.database_url.expose(), DEFAULT_DATABASE_URL);
        assert_eq!(c.redis_url.expose(), DEFAULT_REDIS_URL);
        assert!(c.instance_id.ends_with(":3000"), "{}", c.instance_id);
        assert!(!c.dev_login);
        assert!(
            matches!(c.payments.provider, ProviderSettings::None),
            "payments are approved only when asked"
        );
        assert_eq!(c.payments.currency.as_str(), "cny");
        assert_eq!(c.payments.return_origin, None, "paths on the shop");
        assert_eq!(c.payments.pay_within, Duration::from_secs(900));
        assert!(
            c.admin_phones.is_empty(),
            "no default admin outside dev mode"
        );
        assert!(c.auth.webhook.is_none());
    }

    #[test]
    fn a_bad_value_names_its_variable() {
        let err = config(&[("SECKILL_WORKER_BATCH", "0")]).expect_err("zero batch");
        assert_eq!(err.var, "SECKILL_WORKER_BATCH");
        let err = config(&[("SECKILL_ADMIN_PHONES", "123,abc")]).expect_err("bad phone");
        assert_eq!(err.var, "SECKILL_ADMIN_PHONES");
        let err = config(&[("SECKILL_KEY_PREFIX", "a{b}")]).expect_err("brace");
        assert_eq!(err.var, "SECKILL_KEY_PREFIX");
        let err = config(&[("SECKILL_LOCK_LEASE_MS", "200")]).expect_err("lease under 1 s");
        assert_eq!(err.var, "SECKILL_LOCK_LEASE_MS");
        let c = config(&[("SECKILL_LOCK_LEASE_MS", "1000")]).expect("1 s is enough");
        assert_eq!(c.lock_lease, Duration::from_secs(1));
        assert_eq!(
            config(&[]).expect("defaults").lock_lease,
            Duration::from_secs(3)
        );
    }

    #[test]
    fn two_instances_on_one_host_get_their_own_consumer_names() {
        let a = config(&[("LEPTOS_SITE_ADDR", "127.0.0.1:3001")]).expect("valid");
        let b = config(&[("LEPTOS_SITE_ADDR", "127.0.0.1:3002")]).expect("valid");
        let a_again = config(&[("LEPTOS_SITE_ADDR", "127.0.0.1:3001")]).expect("valid");
        assert_ne!(a.instance_id, b.instance_id);
        assert_eq!(a.instance_id, a_again.instance_id, "stable across restarts");
        assert!(a.instance_id.ends_with(":3001"), "{}", a.instance_id);
        let named = config(&[("SECKILL_INSTANCE_ID", "eu-1")]).expect("valid");
        assert_eq!(named.instance_id, "eu-1");
    }

    #[test]
    fn admin_phones_are_read_in_the_default_country() {
        let c =
            config(&[("SECKILL_ADMIN_PHONES", "138 0000 0000, +44 7911 123456")]).expect("valid");
        let parse = |p: &str| Phone::try_from(p).expect("stored form");
        assert!(c.is_admin(&parse("+8613800000000")));
        assert!(c.is_admin(&parse("+447911123456")));
        let c = config(&[
            ("SECKILL_DEFAULT_COUNTRY_CODE", "44"),
            ("SECKILL_ADMIN_PHONES", "07911 123456"),
        ])
        .expect("valid");
        assert!(c.is_admin(&parse("+447911123456")));
        let err = config(&[("SECKILL_DEFAULT_COUNTRY_CODE", "086")]).expect_err("bad code");
        assert_eq!(err.var, "SECKILL_DEFAULT_COUNTRY_CODE");
    }

    #[test]
    fn secrets_do_not_print() {
        let c = config(&[("DATABASE_URL", "postgres://u:hunter2@h/db")]).expect("valid");
        assert!(!format!("{c:?}").contains("hunter2"));
    }

    const STRIPE: [(&str, &str); 3] = [
        ("SECKILL_STRIPE_SECRET_KEY", "sk_test_abc"),
        ("SECKILL_STRIPE_WEBHOOK_SECRET", "whsec_xyz"),
        ("SECKILL_PUBLIC_ORIGIN", "https://shop.example"),
    ];

    #[test]
    fn stripe_needs_its_key_and_secret_in_their_forms_and_never_prints_them() {
        let c = config(&STRIPE).expect("valid");
        let ProviderSettings::Stripe(s) = &c.payments.provider else {
            panic!("stripe expected");
        };
        assert_eq!(s.api_base, "https://api.stripe.com");
        let printed = format!("{c:?}");
        assert!(!printed.contains("sk_test_abc") && !printed.contains("whsec_xyz"));
        let err = config(&[STRIPE[0], STRIPE[2]]).expect_err("no secret");
        assert_eq!(err.var, "SECKILL_STRIPE_WEBHOOK_SECRET");
        let err = config(&[
            STRIPE[0],
            ("SECKILL_STRIPE_WEBHOOK_SECRET", "sk_oops"),
            STRIPE[2],
        ])
        .expect_err("not whsec");
        assert_eq!(err.var, "SECKILL_STRIPE_WEBHOOK_SECRET");
        assert!(!err.to_string().contains("sk_oops"), "{err}");
        let err = config(&[
            ("SECKILL_STRIPE_SECRET_KEY", "pk_test_abc"),
            STRIPE[1],
            STRIPE[2],
        ])
        .expect_err("publishable key");
        assert_eq!(err.var, "SECKILL_STRIPE_SECRET_KEY");
        let mut vars = STRIPE.to_vec();
        vars.push(("SECKILL_STRIPE_API_BASE", "http://stripe.example"));
        assert_eq!(
            config(&vars).expect_err("plain http off loopback").var,
            "SECKILL_STRIPE_API_BASE"
        );
        let mut vars = STRIPE.to_vec();
        vars.push(("SECKILL_DEV_PAYMENTS", "true"));
        assert_eq!(
            config(&vars).expect_err("two providers").var,
            "SECKILL_DEV_PAYMENTS"
        );
        let err = config(&STRIPE[..2]).expect_err("nowhere to come back to");
        assert_eq!(err.var, "SECKILL_PUBLIC_ORIGIN");
    }

    #[test]
    fn the_sms_relay_may_be_reached_over_https_or_plain_http() {
        let secret = ("SECKILL_SMS_WEBHOOK_SECRET", "0123456789abcdef");
        for ok in ["https://sms.example/hook", "http://127.0.0.1:9/sms"] {
            let c = config(&[("SECKILL_SMS_WEBHOOK_URL", ok), secret]).expect(ok);
            assert_eq!(c.auth.webhook.map(|w| w.url).as_deref(), Some(ok));
        }
        for bad in ["ftp://sms.example", "sms.example", "https:///x"] {
            let err = config(&[("SECKILL_SMS_WEBHOOK_URL", bad), secret]).expect_err(bad);
            assert_eq!(err.var, "SECKILL_SMS_WEBHOOK_URL");
        }
    }

    #[test]
    fn shoppers_come_back_to_the_first_public_origin() {
        let c = config(&[(
            "SECKILL_PUBLIC_ORIGIN",
            "https://shop.example/, https://b.example",
        )])
        .expect("valid");
        assert_eq!(
            c.payments.return_origin.as_deref(),
            Some("https://shop.example")
        );
        let err = config(&[("SECKILL_CURRENCY", "yuan")]).expect_err("not a code");
        assert_eq!(err.var, "SECKILL_CURRENCY");
    }
}
