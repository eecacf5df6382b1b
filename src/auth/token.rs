//! Signed session tokens (issue #25 point 1, design.md decision 30): every instance verifies a
//! session by itself, with no store round trip.
//!
//! A token is `s1.<key>.<session>.<user>.<phone>.<issued ms>.<expires ms>.<mac>`: the session's
//! own random ID (what a sign-out revokes), the user and their phone in E.164, its lifetime, and
//! HMAC-SHA256 over everything before the MAC with the key named `<key>`. Signed, not
//! encrypted: it tells its holder their own phone, nothing else. Every character is a cookie
//! octet, so it goes in the cookie as it is.
//!
//! Keys: `SECKILL_SESSION_KEYS` (`id:secret,…`): the first signs, every one verifies, so a key
//! is rotated by putting a new one first and dropping the old one once its tokens have expired.

use rand::Rng;

use crate::{
    domain::{Phone, UserId},
    signing,
};

/// The token format's version: the prefix of every signed token.
pub const PREFIX: &str = "s1";
/// Random bytes of a session's ID (128 bits).
const SESSION_ID_BYTES: usize = 16;
/// Shortest secret accepted for a key (bytes).
pub const MIN_SECRET_LEN: usize = 32;

/// One signing key: its name (in every token it signed) and its secret.
#[derive(Clone)]
pub struct SessionKey {
    id: String,
    /// The secret, made ready for HMAC once: every signed-in request checks a token with it.
    mac: signing::Keyed,
}

impl std::fmt::Debug for SessionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SessionKey({}, …)", self.id)
    }
}

/// The keys of this deployment: the first signs, each verifies.
#[derive(Debug, Clone)]
pub struct SessionKeys(Vec<SessionKey>);

/// Why `SECKILL_SESSION_KEYS` was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum KeysError {
    #[error("no key")]
    Empty,
    #[error("{0:?} is not id:secret")]
    NotAPair(String),
    #[error("key id {0:?}: letters, digits, - and _ only, at most 16")]
    BadId(String),
    #[error("key {0:?}: its secret needs at least {MIN_SECRET_LEN} characters")]
    ShortSecret(String),
    #[error("key id {0:?} is given twice")]
    Repeated(String),
}

impl SessionKeys {
    /// Parses `id:secret,id:secret,…` (the first signs).
    pub fn parse(list: &str) -> Result<Self, KeysError> {
        let mut keys: Vec<SessionKey> = Vec::new();
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (id, secret) = item
                .split_once(':')
                .ok_or_else(|| KeysError::NotAPair(item.chars().take(16).collect()))?;
            let id = id.trim();
            if id.is_empty()
                || id.len() > 16
                || !id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            {
                return Err(KeysError::BadId(id.chars().take(16).collect()));
            }
            if secret.len() < MIN_SECRET_LEN {
                return Err(KeysError::ShortSecret(id.to_owned()));
            }
            if keys.iter().any(|k| k.id == id) {
                return Err(KeysError::Repeated(id.to_owned()));
            }
            keys.push(SessionKey {
                id: id.to_owned(),
                mac: signing::Keyed::new(secret.as_bytes()),
            });
        }
        if keys.is_empty() {
            return Err(KeysError::Empty);
        }
        Ok(Self(keys))
    }

    /// A set of one key.
    pub fn single(id: &str, secret: &str) -> Result<Self, KeysError> {
        Self::parse(&format!("{id}:{secret}"))
    }

    fn signer(&self) -> &SessionKey {
        // `parse` refuses an empty list.
        &self.0[0]
    }

    fn named(&self, id: &str) -> Option<&SessionKey> {
        self.0.iter().find(|k| k.id == id)
    }

    /// A new session's token.
    pub fn sign(&self, user: UserId, phone: &Phone, issued_ms: i64, expires_ms: i64) -> String {
        let session: [u8; SESSION_ID_BYTES] = rand::rng().random();
        let key = self.signer();
        let body = format!(
            "{PREFIX}.{}.{}.{user}.{phone}.{issued_ms}.{expires_ms}",
            key.id,
            hex::encode(session)
        );
        let mac = key.mac.sign_hex(&[body.as_bytes()]);
        format!("{body}.{mac}")
    }

    /// The claims of `token` if one of these keys signed it, whatever its expiry and
    /// revocation (checked by the caller). `None` for anything else.
    pub fn verify(&self, token: &str) -> Option<Claims> {
        let (body, mac_hex) = token.rsplit_once('.')?;
        let mut parts = body.split('.');
        let (Some(PREFIX), Some(key), Some(session), Some(user), Some(phone), Some(issued)) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return None;
        };
        let (Some(expires), None) = (parts.next(), parts.next()) else {
            return None;
        };
        let key = self.named(key)?;
        if !key.mac.verify_hex(&[body.as_bytes()], mac_hex) {
            return None;
        }
        if session.len() != 2 * SESSION_ID_BYTES || !session.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return None;
        }
        Some(Claims {
            session: session.to_owned(),
            user: user.parse().ok()?,
            phone: Phone::try_from(phone).ok()?,
            issued_ms: issued.parse().ok()?,
            expires_ms: expires.parse().ok()?,
        })
    }
}

/// What a verified token says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claims {
    /// The session's own ID (32 hex digits): what a sign-out revokes.
    pub session: String,
    pub user: UserId,
    pub phone: Phone,
    pub issued_ms: i64,
    pub expires_ms: i64,
}

/// Whether `token` has the signed form (else it may be a session from before, kept in Redis).
pub fn is_signed(token: &str) -> bool {
    token.starts_with("s1.")
}

/// The name of the signing key kept in Redis (when `SECKILL_SESSION_KEYS` is not set).
const SHARED_KEY_ID: &str = "redis";

/// The signing key the instances share when `SECKILL_SESSION_KEYS` is not set: made by the
/// first instance to start (`SET NX`), read by every other. Whoever can read Redis can then
/// sign sessions, as whoever could write it could open one before; configure the keys to keep
/// them apart.
pub(crate) async fn shared_session_key(
    redis: &mut crate::infra::redis_conn::Redis,
    keys: &crate::infra::keys::Keys,
) -> Result<Result<SessionKeys, String>, crate::infra::backend::Backend> {
    let fresh: [u8; 32] = rand::rng().random();
    let _: Option<String> = redis::cmd("SET")
        .arg(keys.session_key())
        .arg(hex::encode(fresh))
        .arg("NX")
        .query_async(redis)
        .await?;
    let secret: String = redis::cmd("GET")
        .arg(keys.session_key())
        .query_async(redis)
        .await?;
    Ok(SessionKeys::single(SHARED_KEY_ID, &secret)
        .map_err(|e| format!("the key kept in Redis at {}: {e}", keys.session_key())))
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "a-secret-of-at-least-thirty-two-characters";
    const B: &str = "another-secret-of-thirty-two-characters!";

    fn phone() -> Phone {
        Phone::try_from("+8613900000001").expect("phone")
    }

    #[test]
    fn a_signed_token_verifies_with_its_claims() {
        let keys = SessionKeys::single("k1", A).expect("keys");
        let token = keys.sign(UserId::from_db(7), &phone(), 1_000, 2_000);
        assert!(is_signed(&token));
        let claims = keys.verify(&token).expect("verified");
        assert_eq!(claims.user, UserId::from_db(7));
        assert_eq!(claims.phone, phone());
        assert_eq!((claims.issued_ms, claims.expires_ms), (1_000, 2_000));
        assert_eq!(claims.session.len(), 32);
        assert!(token
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b';' && b != b','));
    }

    #[test]
    fn any_change_to_a_token_is_refused() {
        let keys = SessionKeys::single("k1", A).expect("keys");
        let token = keys.sign(UserId::from_db(7), &phone(), 1_000, 2_000);
        for forged in [
            token.replacen(".7.", ".8.", 1),
            token.replacen(".2000.", ".9000.", 1),
            token.replacen("+8613900000001", "+8613900000002", 1),
            format!("{token}0"),
            token[..token.len() - 1].to_owned(),
            token.replacen("s1.", "s2.", 1),
            String::new(),
            "s1.k1".into(),
        ] {
            assert_eq!(keys.verify(&forged), None, "{forged}");
        }
    }

    #[test]
    fn keys_rotate_the_first_signs_and_each_verifies() {
        let old = SessionKeys::single("old", A).expect("keys");
        let both = SessionKeys::parse(&format!("new:{B},old:{A}")).expect("keys");
        let only_new = SessionKeys::single("new", B).expect("keys");
        let from_old = old.sign(UserId::from_db(1), &phone(), 1, 2);
        assert!(
            both.verify(&from_old).is_some(),
            "the old key still verifies"
        );
        let from_both = both.sign(UserId::from_db(1), &phone(), 1, 2);
        assert!(from_both.starts_with("s1.new."), "the first key signs");
        assert!(only_new.verify(&from_both).is_some());
        assert_eq!(
            only_new.verify(&from_old),
            None,
            "a dropped key verifies nothing"
        );
        // Same name, other secret: refused.
        let impostor = SessionKeys::single("old", B).expect("keys");
        assert_eq!(impostor.verify(&from_old), None);
    }

    #[test]
    fn bad_key_lists_are_refused() {
        assert!(matches!(SessionKeys::parse(""), Err(KeysError::Empty)));
        assert!(matches!(
            SessionKeys::parse("k1"),
            Err(KeysError::NotAPair(_))
        ));
        assert!(matches!(
            SessionKeys::parse("k1:short"),
            Err(KeysError::ShortSecret(_))
        ));
        assert!(matches!(
            SessionKeys::parse(&format!("k.1:{A}")),
            Err(KeysError::BadId(_))
        ));
        assert!(matches!(
            SessionKeys::parse(&format!("k1:{A},k1:{B}")),
            Err(KeysError::Repeated(_))
        ));
    }
}
