//! Each part's settings, read by concern.

use std::time::Duration;

use super::{millis, positive, public_origins, services, typed, ConfigError};
use crate::{
    auth::delivery::Webhook,
    domain::{CountryCode, Currency},
    orders::payment::ProviderSettings,
};

type Get<'a> = &'a dyn Fn(&'static str) -> Option<String>;

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
    /// How often each instance reads the sign-outs PostgreSQL recorded since its last read
    /// (`SECKILL_REVOCATION_RELOAD_MS`, 5 s): the bound for a revocation whose announcement was
    /// lost.
    pub revocation_reload: Duration,
    /// How often each instance reads both stores' sign-outs in full
    /// (`SECKILL_REVOCATION_FULL_RELOAD_MS`, 60 s): the bound for one only Redis took.
    pub revocation_full_reload: Duration,
    /// Where codes are sent (`SECKILL_SMS_WEBHOOK_URL`, `…_SECRET`, `…_TIMEOUT_MS`): the
    /// operator's SMS gateway. `None`: nowhere, which only dev login makes usable.
    pub webhook: Option<Webhook>,
}

/// "Remind me when it starts" (issue #56): when and how fast the texts go.
#[derive(Debug, Clone)]
pub struct ReminderConfig {
    /// How long before a sale opens (a draw: its entries) its reminders are sent
    /// (`SECKILL_REMINDER_LEAD_MS`, 5 minutes).
    pub lead: Duration,
    /// Reminders sent a second at most, across every instance (`SECKILL_REMINDER_RATE`, 50).
    pub rate: u32,
    /// Attempts per reminder before it is recorded as failed (`SECKILL_REMINDER_TRIES`, 6).
    pub tries: u32,
    /// How long a claimed batch is held by its sender (`SECKILL_REMINDER_LEASE_MS`, 30 s): past
    /// it, another instance sends what a dead one left. Longer than sending a batch takes.
    pub lease: Duration,
    /// The shop's zone (`SECKILL_TIME_ZONE`): a reminder's time is said in it.
    pub zone: chrono_tz::Tz,
}

impl ReminderConfig {
    pub(super) fn read(get: Get<'_>) -> Result<Self, ConfigError> {
        Ok(Self {
            lead: millis(&get, "SECKILL_REMINDER_LEAD_MS", 300_000)?,
            rate: positive(&get, "SECKILL_REMINDER_RATE", 50)?,
            tries: positive(&get, "SECKILL_REMINDER_TRIES", 6)?,
            lease: millis(&get, "SECKILL_REMINDER_LEASE_MS", 30_000)?,
            zone: super::time_zone(get("SECKILL_TIME_ZONE").as_deref())?,
        })
    }
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

impl WorkerConfig {
    pub(super) fn read(get: Get<'_>) -> Result<Self, ConfigError> {
        Ok(Self {
            batch_size: positive(&get, "SECKILL_WORKER_BATCH", 500)?,
            block: millis(&get, "SECKILL_WORKER_BLOCK_MS", 500)?,
            reclaim_idle: millis(&get, "SECKILL_RECLAIM_IDLE_MS", 30_000)?,
            max_deliveries: positive(&get, "SECKILL_MAX_DELIVERIES", 5)?,
            stall_after: millis(&get, "SECKILL_STALL_AFTER_MS", 15_000)?,
        })
    }
}

impl SweepConfig {
    pub(super) fn read(get: Get<'_>) -> Result<Self, ConfigError> {
        Ok(Self {
            every: millis(&get, "SECKILL_SWEEP_MS", 15_000)?,
            retire_after: millis(&get, "SECKILL_RETIRE_AFTER_MS", 600_000)?,
        })
    }
}

impl PaymentsConfig {
    pub(super) fn read(get: Get<'_>) -> Result<Self, ConfigError> {
        Ok(Self {
            pay_within: millis(&get, "SECKILL_PAY_WITHIN_MS", 15 * 60_000)?,
            provider: services::payment_provider(&get)?,
            currency: typed(&get, "SECKILL_CURRENCY", "cny")?,
            return_origin: public_origins(get("SECKILL_PUBLIC_ORIGIN").as_deref())?
                .into_iter()
                .next(),
            expire_grace: millis(&get, "SECKILL_STRIPE_EXPIRE_GRACE_MS", 10 * 60_000)?,
        })
    }
}

impl MemoConfig {
    pub(super) fn read(get: Get<'_>) -> Result<Self, ConfigError> {
        Ok(Self {
            session_ttl: millis(&get, "SECKILL_SESSION_CACHE_MS", 2_000)?,
            refusal_ttl: millis(&get, "SECKILL_SOLD_OUT_TTL_MS", 1_000)?,
            catalog_ttl: millis(&get, "SECKILL_CATALOG_CACHE_MS", 1_000)?,
            stock_read_ttl: millis(&get, "SECKILL_STOCK_READ_MS", 500)?,
            sold_out_buyers_ttl: millis(&get, "SECKILL_SOLD_OUT_BUYERS_MS", 30_000)?,
        })
    }
}

impl AuthConfig {
    pub(super) fn read(get: Get<'_>, country: CountryCode) -> Result<Self, ConfigError> {
        Ok(Self {
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
                .map(|v| crate::auth::token::SessionKeys::parse(&v))
                .transpose()
                .map_err(|e| ConfigError {
                    var: "SECKILL_SESSION_KEYS",
                    message: e.to_string(),
                })?,
            revocation_reload: millis(&get, "SECKILL_REVOCATION_RELOAD_MS", 5_000)?,
            revocation_full_reload: millis(&get, "SECKILL_REVOCATION_FULL_RELOAD_MS", 60_000)?,
            webhook: services::webhook(&get)?,
        })
    }
}

impl RateLimits {
    pub(super) fn read(get: Get<'_>) -> Result<Self, ConfigError> {
        Ok(Self {
            buys_per_second: positive(&get, "SECKILL_BUYS_PER_SECOND", 5)?,
            entries_per_client: positive(&get, "SECKILL_ENTRIES_PER_CLIENT", 30)?,
        })
    }
}

impl AdmissionConfig {
    pub(super) fn read(get: Get<'_>) -> Result<Self, ConfigError> {
        Ok(Self {
            max_batch: positive(&get, "SECKILL_ADMIT_BATCH_MAX", 64)?,
            in_flight: positive(&get, "SECKILL_ADMIT_IN_FLIGHT", 2)?,
            lane_idle: millis(&get, "SECKILL_ADMIT_LANE_IDLE_MS", 30_000)?,
        })
    }
}
