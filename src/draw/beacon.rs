//! The public randomness the draw waits for: a drand chain's round, fetched over drand's HTTP API
//! from a relay and verified against the chain's pinned public key (a relay is only a transport).
//!
//! Round `r` of a chain is emitted at `genesis_time + (r - 1) · period`; nobody knows its value
//! before the chain's nodes sign it. A sale names at creation the first round emitted at least
//! `SECKILL_DRAW_COMMIT_MARGIN_MS` after its entries close, and the draw's seed takes it in.

use std::time::Duration;

use chrono::{DateTime, Utc};
use drand_verify::{G1Pubkey, G2PubkeyRfc, Pubkey};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use tokio::sync::OnceCell;

use super::settings::BeaconSettings;
use crate::domain::fair;

/// Why a round could not be had or trusted.
#[derive(Debug, thiserror::Error)]
pub enum BeaconError {
    #[error("the beacon could not be reached: {0}")]
    Unreachable(#[from] reqwest::Error),
    #[error("the beacon answered {0}")]
    Status(u16),
    /// The relay serves another chain than the one pinned, or one this shop cannot verify.
    #[error("the beacon's chain is not the one pinned: {0}")]
    WrongChain(String),
    /// The round's signature does not verify, or its randomness is not the signature's hash.
    #[error("round {0} does not verify against the pinned public key")]
    Unverified(u64),
}

/// The two unchained schemes drand runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scheme {
    /// `bls-unchained-g1-rfc9380` (quicknet): signatures on G1, the key on G2.
    G1Rfc9380,
    /// `pedersen-bls-unchained`: signatures on G2, the key on G1.
    PedersenUnchained,
}

/// A chain's timing, as its `/info` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChainTiming {
    pub genesis: i64,
    pub period: i64,
}

impl ChainTiming {
    /// The same clock as `domain::fair` reads it: one copy of the round rules for the shop and
    /// its verifiers.
    pub fn chain(&self) -> fair::Chain {
        fair::Chain {
            genesis_time: self.genesis,
            period: self.period,
        }
    }

    /// When round `round` is emitted.
    pub fn emitted_at(&self, round: u64) -> DateTime<Utc> {
        self.chain().emitted_at(round)
    }

    /// The first round emitted at or after `at`.
    pub fn first_round_at(&self, at: DateTime<Utc>) -> u64 {
        self.chain().first_round_at(at)
    }
}

/// A verified round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Round {
    pub round: u64,
    pub randomness: [u8; 32],
}

#[derive(Deserialize)]
struct Info {
    public_key: String,
    period: i64,
    genesis_time: i64,
    hash: String,
    #[serde(rename = "schemeID", default)]
    scheme_id: String,
    /// `groupHash` (drand's v1 JSON) or `genesis_seed` (v2).
    #[serde(rename = "groupHash", alias = "genesis_seed", default)]
    group_hash: String,
    #[serde(default)]
    metadata: InfoMetadata,
    /// v2 JSON's beacon ID.
    #[serde(default)]
    beacon_id: Option<String>,
}

#[derive(Deserialize, Default)]
struct InfoMetadata {
    #[serde(rename = "beaconID", default)]
    beacon_id: String,
}

impl Info {
    /// The chain hash recomputed from the info as drand derives it (`domain::fair::chain_hash`).
    fn recomputed_hash(&self) -> Option<String> {
        let period = u32::try_from(self.period).ok()?;
        let public_key = hex::decode(&self.public_key).ok()?;
        let group_hash = hex::decode(&self.group_hash).ok()?;
        let beacon_id = self
            .beacon_id
            .as_deref()
            .unwrap_or(&self.metadata.beacon_id);
        Some(hex::encode(fair::chain_hash(
            period,
            self.genesis_time,
            &public_key,
            &group_hash,
            beacon_id,
        )))
    }
}

#[derive(Deserialize)]
struct RoundReply {
    round: u64,
    randomness: String,
    signature: String,
}

/// A drand chain reached through a relay.
#[derive(Debug)]
pub struct Beacon {
    settings: BeaconSettings,
    http: reqwest::Client,
    chain: OnceCell<(ChainTiming, Scheme)>,
}

impl Beacon {
    pub fn new(settings: BeaconSettings, http: reqwest::Client) -> Self {
        Self {
            settings,
            http,
            chain: OnceCell::new(),
        }
    }

    pub fn settings(&self) -> &BeaconSettings {
        &self.settings
    }

    fn base(&self) -> String {
        format!("{}/{}", self.settings.url, self.settings.chain_hash)
    }

    async fn get(&self, path: &str) -> Result<Option<reqwest::Response>, BeaconError> {
        let r = self
            .http
            .get(format!("{}/{path}", self.base()))
            .timeout(Duration::from_secs(5))
            .send()
            .await?;
        match r.status().as_u16() {
            200 => Ok(Some(r)),
            // drand relays answer a round not yet emitted with 425 Too Early (older ones 404).
            404 | 425 => Ok(None),
            other => Err(BeaconError::Status(other)),
        }
    }

    /// The chain's timing, read once from `/info` and checked against the pinned hash and key.
    pub async fn timing(&self) -> Result<ChainTiming, BeaconError> {
        self.chain().await.map(|(t, _)| t)
    }

    async fn chain(&self) -> Result<(ChainTiming, Scheme), BeaconError> {
        self.chain
            .get_or_try_init(|| async {
                let info: Info = self
                    .get("info")
                    .await?
                    .ok_or(BeaconError::Status(404))?
                    .json()
                    .await?;
                if !info.hash.eq_ignore_ascii_case(&self.settings.chain_hash) {
                    return Err(BeaconError::WrongChain(format!("hash {}", info.hash)));
                }
                // The hash the relay states is its word; the one its info hashes to is not.
                match info.recomputed_hash() {
                    Some(h) if h.eq_ignore_ascii_case(&self.settings.chain_hash) => {}
                    other => {
                        return Err(BeaconError::WrongChain(format!(
                            "its info (period, genesis, key, group hash, beacon ID) hashes to {}, not to the chain pinned",
                            other.as_deref().unwrap_or("nothing: a field is malformed")
                        )))
                    }
                }
                if hex::decode(&info.public_key).ok().as_deref() != Some(&self.settings.public_key)
                {
                    return Err(BeaconError::WrongChain("another public key".into()));
                }
                let scheme = match (info.scheme_id.as_str(), self.settings.public_key.len()) {
                    ("bls-unchained-g1-rfc9380", 96) => Scheme::G1Rfc9380,
                    ("pedersen-bls-unchained", 48) => Scheme::PedersenUnchained,
                    (other, _) => return Err(BeaconError::WrongChain(format!("scheme {other:?}"))),
                };
                if info.period <= 0 {
                    return Err(BeaconError::WrongChain("a period of zero".into()));
                }
                Ok((
                    ChainTiming {
                        genesis: info.genesis_time,
                        period: info.period,
                    },
                    scheme,
                ))
            })
            .await
            .copied()
    }

    /// Round `round`, verified; `None` while it is not emitted yet.
    pub async fn round(&self, round: u64) -> Result<Option<Round>, BeaconError> {
        let (_, scheme) = self.chain().await?;
        let Some(reply) = self.get(&format!("public/{round}")).await? else {
            return Ok(None);
        };
        let reply: RoundReply = reply.json().await?;
        let signature =
            hex::decode(&reply.signature).map_err(|_| BeaconError::Unverified(round))?;
        let randomness: [u8; 32] = Sha256::digest(&signature).into();
        if reply.round != round
            || hex::decode(&reply.randomness).ok().as_deref() != Some(randomness.as_slice())
            || !verify(scheme, &self.settings.public_key, round, &signature)
        {
            return Err(BeaconError::Unverified(round));
        }
        Ok(Some(Round { round, randomness }))
    }
}

fn verify(scheme: Scheme, key: &[u8], round: u64, signature: &[u8]) -> bool {
    match scheme {
        Scheme::G1Rfc9380 => G2PubkeyRfc::from_variable(key)
            .is_ok_and(|k| k.verify(round, b"", signature).unwrap_or(false)),
        Scheme::PedersenUnchained => G1Pubkey::from_variable(key)
            .is_ok_and(|k| k.verify(round, b"", signature).unwrap_or(false)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quicknet_round_123_verifies_and_a_changed_byte_does_not() {
        // drand's own published round 123 of quicknet (drand-verify's example).
        let key = hex::decode(super::super::settings::QUICKNET_PUBLIC_KEY).expect("hex");
        let sig = hex::decode("b75c69d0b72a5d906e854e808ba7e2accb1542ac355ae486d591aa9d43765482e26cd02df835d3546d23c4b13e0dfc92").expect("hex");
        assert!(verify(Scheme::G1Rfc9380, &key, 123, &sig));
        assert!(!verify(Scheme::G1Rfc9380, &key, 124, &sig), "another round");
        let mut bad = sig.clone();
        bad[10] ^= 1;
        assert!(!verify(Scheme::G1Rfc9380, &key, 123, &bad));
    }

    #[test]
    fn rounds_and_times_meet() {
        let t = ChainTiming {
            genesis: 1_692_803_367,
            period: 3,
        };
        let at = |s: i64| DateTime::from_timestamp(s, 0).expect("time");
        assert_eq!(t.emitted_at(1), at(1_692_803_367));
        assert_eq!(t.first_round_at(at(1_692_803_367)), 1);
        assert_eq!(t.first_round_at(at(1_692_803_368)), 2);
        assert_eq!(t.first_round_at(at(1_692_803_370)), 2);
        assert_eq!(t.first_round_at(at(1_692_803_371)), 3);
        for s in 1_692_803_360..1_692_803_400 {
            let r = t.first_round_at(at(s));
            assert!(t.emitted_at(r) >= at(s), "round {r} comes after {s}");
            assert!(r == 1 || t.emitted_at(r - 1) < at(s), "and is the first");
        }
    }
}
