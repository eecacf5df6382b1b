//! The draw's settings (design.md decision 42): the key receipts are signed with and the public
//! randomness beacon the draw waits for.
//!
//! | variable | meaning |
//! | --- | --- |
//! | `SECKILL_DRAW_SIGNING_KEY` | the 32-byte Ed25519 seed, 64 hex characters; the same on every instance. Unset: a published dev key, which the server refuses to start with unless dev login is on (`server/src/safety.rs`) |
//! | `SECKILL_DRAW_PREVIOUS_SIGNING_KEYS` | earlier signing keys' seeds, comma-separated: a sale's receipts stay signed with the key its transcript named at creation, so a sale created before a rotation keeps signing with its own |
//! | `SECKILL_DRAND_URL` | a drand relay (`https://api.drand.sh`), or `off`; unset means `off`, which the server refuses unless dev login is on |
//! | `SECKILL_DRAND_CHAIN_HASH`, `SECKILL_DRAND_PUBLIC_KEY` | the chain pinned (hex); default the League of Entropy's quicknet |
//! | `SECKILL_DRAW_TSA_URL` | an RFC 3161 timestamping authority (HTTP transport) that timestamps each closed entrant list with its round; unset: none (a warning at start) |
//! | `SECKILL_DRAW_COMMIT_MARGIN_MS` | how long after entries close the round named at creation is emitted at the earliest (5 s): the entrant list is committed within it |

use std::{fmt, time::Duration};

use ed25519_dalek::{Signer, SigningKey};

use crate::config::{millis, ConfigError};

/// quicknet's chain hash (League of Entropy mainnet, 3 s rounds, `bls-unchained-g1-rfc9380`).
pub const QUICKNET_CHAIN_HASH: &str =
    "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971";
/// quicknet's public key (G2, compressed).
pub const QUICKNET_PUBLIC_KEY: &str = "83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c8c4b450b6a0a6c3ac6a5776a2d1064510d1fec758c921cc22b0e17e63aaf4bcb5ed66304de9cf809bd274ca73bab4af5a6e9c76a4bc09e76eae8991ef5ece45a";

/// The published dev key's seed: receipts signed with it prove nothing (anyone may sign with it).
const DEV_SIGNING_SEED: [u8; 32] = *b"seckill dev draw key: not secret";

/// The key receipts are signed with. `Debug` prints only its public half.
#[derive(Clone)]
pub struct ReceiptKey {
    key: SigningKey,
    /// The published dev key, not a secret.
    pub dev: bool,
}

impl fmt::Debug for ReceiptKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ReceiptKey(public {})", self.public_hex())
    }
}

impl ReceiptKey {
    /// The key from its 32-byte seed in hex.
    pub fn parse(hex_seed: &str) -> Result<Self, String> {
        let bytes = hex::decode(hex_seed.trim())
            .map_err(|_| "must be 64 hex characters (a 32-byte Ed25519 seed)".to_owned())?;
        let seed: [u8; 32] = bytes
            .try_into()
            .map_err(|_| "must be 64 hex characters (a 32-byte Ed25519 seed)".to_owned())?;
        Ok(Self {
            key: SigningKey::from_bytes(&seed),
            dev: false,
        })
    }

    fn dev() -> Self {
        Self {
            key: SigningKey::from_bytes(&DEV_SIGNING_SEED),
            dev: true,
        }
    }

    /// The public key, hex (`GET /api/draws/key`).
    pub fn public_hex(&self) -> String {
        hex::encode(self.public())
    }

    /// The public key.
    pub fn public(&self) -> [u8; 32] {
        self.key.verifying_key().to_bytes()
    }

    /// The Ed25519 signature of `message`, hex.
    pub fn sign_hex(&self, message: &str) -> String {
        hex::encode(self.key.sign(message.as_bytes()).to_bytes())
    }
}

/// A drand chain, pinned, and the relay it is fetched from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BeaconSettings {
    /// The relay, without a trailing slash.
    pub url: String,
    /// The chain hash, 64 lower-case hex characters.
    pub chain_hash: String,
    /// The chain's public key: 96 bytes (G2, quicknet's scheme) or 48 (G1, pedersen's).
    pub public_key: Vec<u8>,
}

/// The draw's settings.
#[derive(Debug, Clone)]
pub struct DrawSettings {
    /// The configured key, or the published dev key when none is (`dev` says which).
    pub receipt_key: ReceiptKey,
    /// Keys rotated out: they sign only for the sales created under them.
    pub previous_keys: Vec<ReceiptKey>,
    /// `None`: no beacon (`SECKILL_DRAND_URL=off`, or unset).
    pub beacon: Option<BeaconSettings>,
    /// Whether `SECKILL_DRAND_URL` was set at all (a production start must choose).
    pub beacon_chosen: bool,
    /// The timestamping authority that witnesses each close (`None`: none).
    pub tsa: Option<String>,
    pub commit_margin: Duration,
}

impl DrawSettings {
    /// Reads the draw's settings. A malformed value is refused here; a missing one falls back to
    /// the dev key or no beacon, which only a dev-login start accepts (`server/src/safety.rs`).
    pub fn from_lookup(get: &impl Fn(&'static str) -> Option<String>) -> Result<Self, ConfigError> {
        const KEY: &str = "SECKILL_DRAW_SIGNING_KEY";
        const URL: &str = "SECKILL_DRAND_URL";
        let receipt_key = match get(KEY) {
            Some(raw) => {
                ReceiptKey::parse(&raw).map_err(|message| ConfigError { var: KEY, message })?
            }
            None => ReceiptKey::dev(),
        };
        const PREVIOUS: &str = "SECKILL_DRAW_PREVIOUS_SIGNING_KEYS";
        let previous_keys = get(PREVIOUS)
            .unwrap_or_default()
            .split(',')
            .filter(|k| !k.trim().is_empty())
            .map(ReceiptKey::parse)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|message| ConfigError {
                var: PREVIOUS,
                message,
            })?;
        let url = get(URL);
        let beacon = match url.as_deref().map(str::trim) {
            None | Some("off") => None,
            Some(url) => Some(beacon(get, url)?),
        };
        const TSA: &str = "SECKILL_DRAW_TSA_URL";
        let tsa = match get(TSA).map(|t| t.trim().to_owned()) {
            None => None,
            Some(t) if t.is_empty() || t == "off" => None,
            Some(t) => match url::Url::parse(&t) {
                Ok(u) if matches!(u.scheme(), "http" | "https") => Some(t),
                _ => {
                    return Err(ConfigError {
                        var: TSA,
                        message: "must be an http(s) URL of an RFC 3161 timestamping authority"
                            .into(),
                    })
                }
            },
        };
        Ok(Self {
            receipt_key,
            previous_keys,
            beacon,
            beacon_chosen: url.is_some(),
            tsa,
            commit_margin: millis(get, "SECKILL_DRAW_COMMIT_MARGIN_MS", 5_000)?,
        })
    }
}

impl DrawSettings {
    /// The key whose public half is `public`: the current one or one rotated out.
    pub fn signing_key(&self, public: &[u8; 32]) -> Option<&ReceiptKey> {
        std::iter::once(&self.receipt_key)
            .chain(&self.previous_keys)
            .find(|k| &k.public() == public)
    }
}

fn beacon(
    get: &impl Fn(&'static str) -> Option<String>,
    url: &str,
) -> Result<BeaconSettings, ConfigError> {
    const URL: &str = "SECKILL_DRAND_URL";
    const HASH: &str = "SECKILL_DRAND_CHAIN_HASH";
    const PK: &str = "SECKILL_DRAND_PUBLIC_KEY";
    let parsed = url::Url::parse(url).map_err(|e| ConfigError {
        var: URL,
        message: format!("is not a URL: {e}"),
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(ConfigError {
            var: URL,
            message: "must be an http(s) URL or `off`".into(),
        });
    }
    let chain_hash = get(HASH)
        .unwrap_or_else(|| QUICKNET_CHAIN_HASH.to_owned())
        .trim()
        .to_ascii_lowercase();
    if hex::decode(&chain_hash).map(|b| b.len()) != Ok(32) {
        return Err(ConfigError {
            var: HASH,
            message: "must be 64 hex characters".into(),
        });
    }
    let public_key = hex::decode(
        get(PK)
            .unwrap_or_else(|| QUICKNET_PUBLIC_KEY.to_owned())
            .trim(),
    )
    .ok()
    .filter(|k| k.len() == 48 || k.len() == 96)
    .ok_or_else(|| ConfigError {
        var: PK,
        message: "must be a BLS12-381 public key in hex (96 bytes on G2, or 48 on G1)".into(),
    })?;
    Ok(BeaconSettings {
        url: url.trim_end_matches('/').to_owned(),
        chain_hash,
        public_key,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn settings(vars: &[(&'static str, &str)]) -> Result<DrawSettings, ConfigError> {
        let map: HashMap<&str, String> = vars.iter().map(|(k, v)| (*k, (*v).to_owned())).collect();
        DrawSettings::from_lookup(&|k| map.get(k).cloned())
    }

    #[test]
    fn the_key_and_the_beacon_are_read_and_their_absence_is_said() {
        let s = settings(&[]).expect("nothing set");
        assert!(s.receipt_key.dev && s.beacon.is_none() && !s.beacon_chosen);
        let key = ("SECKILL_DRAW_SIGNING_KEY", "11".repeat(32));
        let s = settings(&[(key.0, &key.1), ("SECKILL_DRAND_URL", "off")]).expect("off");
        assert!(s.beacon.is_none() && s.beacon_chosen && !s.receipt_key.dev);
        let s = settings(&[
            (key.0, &key.1),
            ("SECKILL_DRAND_URL", "https://api.drand.sh/"),
        ])
        .expect("quicknet");
        let b = s.beacon.expect("beacon");
        assert_eq!(b.url, "https://api.drand.sh");
        assert_eq!(b.chain_hash, QUICKNET_CHAIN_HASH);
        assert_eq!(b.public_key.len(), 96);
        let err = settings(&[("SECKILL_DRAND_URL", "ftp://x")]).expect_err("not http");
        assert_eq!(err.var, "SECKILL_DRAND_URL");
    }

    #[test]
    fn a_malformed_key_is_refused_and_never_printed() {
        for bad in ["abc", &"zz".repeat(32), &"11".repeat(31)] {
            let err = settings(&[("SECKILL_DRAW_SIGNING_KEY", bad)]).expect_err(bad);
            assert_eq!(err.var, "SECKILL_DRAW_SIGNING_KEY");
            assert!(!err.message.contains(bad), "{}", err.message);
        }
        let s = settings(&[("SECKILL_DRAW_SIGNING_KEY", &"22".repeat(32))]).expect("ok");
        assert!(!format!("{s:?}").contains(&"22".repeat(32)));
    }

    #[test]
    fn a_sale_finds_its_own_key_after_a_rotation() {
        let (old, new) = ("33".repeat(32), "44".repeat(32));
        let s = settings(&[
            ("SECKILL_DRAW_SIGNING_KEY", &new),
            ("SECKILL_DRAW_PREVIOUS_SIGNING_KEYS", &format!("{old}, ")),
        ])
        .expect("two keys");
        let old_public = ReceiptKey::parse(&old).expect("a key").public();
        let found = s.signing_key(&old_public).expect("the old key is kept");
        assert_eq!(found.public(), old_public);
        assert_ne!(s.receipt_key.public(), old_public);
        assert!(s.signing_key(&[9; 32]).is_none());
        let err = settings(&[("SECKILL_DRAW_PREVIOUS_SIGNING_KEYS", "abc")]).expect_err("bad");
        assert_eq!(err.var, "SECKILL_DRAW_PREVIOUS_SIGNING_KEYS");
    }

    #[test]
    fn a_beacon_key_of_the_wrong_size_is_refused() {
        let err = settings(&[
            ("SECKILL_DRAND_URL", "http://127.0.0.1:1"),
            ("SECKILL_DRAND_PUBLIC_KEY", "00ff"),
        ])
        .expect_err("short");
        assert_eq!(err.var, "SECKILL_DRAND_PUBLIC_KEY");
    }
}
