//! Sign-in by phone and one-time code, and sessions.
//!
//! Codes reach the phone through the operator's SMS gateway webhook, or, in dev mode
//! (`SECKILL_DEV_LOGIN=true`), come back in the answer ([`delivery`]). Sessions are random
//! 256-bit tokens kept in Redis with a TTL; the user ID of every request comes from the
//! session, never from a request body (I7). Admins are the phones listed in
//! `SECKILL_ADMIN_PHONES`, checked on every request so that a config change takes effect at
//! once.

pub mod delivery;

use rand::Rng;
use redis::AsyncCommands;

use crate::{
    domain::{Phone, PhoneError, UserId},
    infra::{
        backend::{backend_error, Backend, Unavailable},
        scripts::{self, CodeCheck},
        store,
    },
    Core,
};

/// Digits of a one-time sign-in code.
const CODE_DIGITS: usize = 6;
/// Random bytes of a session token (256 bits), sent as twice as many hex digits.
const TOKEN_BYTES: usize = 32;

/// A signed-in user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub user: UserId,
    pub phone: Phone,
    pub is_admin: bool,
}

impl Principal {
    /// Proof of the admin role, required by admin operations.
    pub fn as_admin(&self) -> Option<Admin> {
        self.is_admin.then(|| Admin(self.clone()))
    }
}

/// A principal known to be an admin; only [`Principal::as_admin`] makes one.
#[derive(Debug, Clone)]
pub struct Admin(Principal);

impl Admin {
    pub fn user(&self) -> UserId {
        self.0.user
    }
}

/// Why sign-in failed.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    #[error(transparent)]
    InvalidPhone(#[from] PhoneError),
    /// A code was sent moments ago; another may be asked for after this many seconds.
    #[error("a code was sent to this phone moments ago; ask again in {0} s")]
    ResendIn(u64),
    #[error("the code is wrong or has expired")]
    InvalidCode,
    /// The SMS gateway did not take the code; the shopper may ask again at once.
    #[error("the code could not be sent: {0}")]
    NotDelivered(#[source] delivery::DeliveryError),
    #[error(transparent)]
    Backend(#[from] Backend),
}

backend_error!(LoginError);

impl Unavailable for LoginError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Backend(e) => e.is_unavailable(),
            // The gateway, not a store: answered as unavailable by the adapters all the same.
            Self::NotDelivered(_) => true,
            Self::InvalidPhone(_) | Self::ResendIn(_) | Self::InvalidCode => false,
        }
    }
}

/// A code was issued.
#[derive(Debug, Clone)]
pub struct CodeIssued {
    /// The code itself, only in dev-login mode.
    pub dev_code: Option<String>,
}

/// A new session.
#[derive(Debug, Clone)]
pub struct SignedIn {
    pub token: String,
    pub principal: Principal,
}

/// Issues a 6-digit one-time code for `phone`, at most one per `code_resend_after`.
pub async fn request_code(core: &Core, phone: &str) -> Result<CodeIssued, LoginError> {
    let phone = Phone::try_from(phone)?;
    let cfg = &core.config.auth;
    let mut redis = core.redis.clone();
    let throttled: bool = redis::cmd("SET")
        .arg(core.keys.login_throttle(&phone))
        .arg(1)
        .arg("NX")
        .arg("PX")
        .arg(millis(cfg.code_resend_after))
        .query_async::<Option<String>>(&mut redis)
        .await?
        .is_none();
    if throttled {
        let left_ms: i64 = redis::cmd("PTTL")
            .arg(core.keys.login_throttle(&phone))
            .query_async(&mut redis)
            .await?;
        // Rounded up, and at least a second: "in 0 s" would invite a refused retry.
        let secs = u64::try_from(left_ms).unwrap_or(0).div_ceil(1_000).max(1);
        return Err(LoginError::ResendIn(secs));
    }
    let code = format!(
        "{:0width$}",
        rand::rng().random_range(0..10_u32.pow(CODE_DIGITS as u32)),
        width = CODE_DIGITS
    );
    let key = core.keys.login_code(&phone);
    let _: () = redis::pipe()
        .atomic()
        .del(&key)
        .hset_multiple(&key, &[("code", code.as_str()), ("attempts", "0")])
        .pexpire(&key, millis(cfg.code_ttl) as i64)
        .query_async(&mut redis)
        .await?;
    if let Some(hook) = &cfg.webhook {
        if let Err(e) = hook.send(&core.http, &phone, &code, cfg.code_ttl).await {
            tracing::warn!(phone = %phone.masked(), error = %e, "sign-in code not delivered");
            // Never delivered: forget it and the resend throttle, so the shopper may ask again
            // at once (two commands: the keys live in different slots on a cluster).
            let _: () = redis.del(&key).await?;
            let _: () = redis.del(core.keys.login_throttle(&phone)).await?;
            return Err(LoginError::NotDelivered(e));
        }
    }
    tracing::info!(phone = %phone.masked(), "sign-in code issued");
    Ok(CodeIssued {
        dev_code: core.config.dev_login.then_some(code),
    })
}

/// Checks the code and opens a session; creates the user on first sign-in.
pub async fn sign_in(core: &Core, phone: &str, code: &str) -> Result<SignedIn, LoginError> {
    let phone = Phone::try_from(phone).map_err(|_| LoginError::InvalidCode)?;
    let code = code.trim();
    if code.len() != CODE_DIGITS || !code.bytes().all(|b| b.is_ascii_digit()) {
        return Err(LoginError::InvalidCode);
    }
    let mut redis = core.redis.clone();
    let key = core.keys.login_code(&phone);
    match scripts::verify_code(&mut redis, &key, code, core.config.auth.code_attempts).await? {
        CodeCheck::Accepted => {}
        CodeCheck::Wrong | CodeCheck::NoCode => return Err(LoginError::InvalidCode),
    }
    let user = store::users::upsert_by_phone(&core.db, &phone).await?;
    Ok(open_session(core, user, phone).await?)
}

/// Opens a session for a known user (sign-in, and the bench's unmeasured set-up).
pub async fn open_session(core: &Core, user: UserId, phone: Phone) -> Result<SignedIn, Backend> {
    let token = new_token();
    let mut redis = core.redis.clone();
    let _: () = redis
        .pset_ex(
            core.keys.session(&token),
            format!("{user}:{phone}"),
            millis(core.config.auth.session_ttl),
        )
        .await?;
    Ok(SignedIn {
        token,
        principal: principal(core, user, phone),
    })
}

/// The principal of a session token, if the session exists.
pub async fn session(core: &Core, token: &str) -> Result<Option<Principal>, Backend> {
    if token.len() != 2 * TOKEN_BYTES || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(None);
    }
    // A session read a moment ago is trusted for `SECKILL_SESSION_CACHE_MS` (the buy path then
    // needs no Redis round trip for it); a missing one is asked again every time.
    if let Some(p) = core.sessions.get(token) {
        return Ok(Some(p));
    }
    let mut redis = core.redis.clone();
    let value: Option<String> = redis.get(core.keys.session(token)).await?;
    let found = value.and_then(|v| {
        let (user, phone) = v.split_once(':')?;
        let user = user.parse::<UserId>().ok()?;
        let phone = Phone::try_from(phone).ok()?;
        Some(principal(core, user, phone))
    });
    if let Some(p) = &found {
        core.sessions.insert(token.to_owned(), p.clone());
    }
    Ok(found)
}

/// Ends a session (no error if it was already gone).
pub async fn sign_out(core: &Core, token: &str) -> Result<(), Backend> {
    core.sessions.remove(token);
    let mut redis = core.redis.clone();
    let _: () = redis.del(core.keys.session(token)).await?;
    Ok(())
}

fn principal(core: &Core, user: UserId, phone: Phone) -> Principal {
    Principal {
        user,
        is_admin: core.config.is_admin(&phone),
        phone,
    }
}

fn new_token() -> String {
    let bytes: [u8; TOKEN_BYTES] = rand::rng().random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn millis(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
