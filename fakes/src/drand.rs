//! A drand chain on loopback: a real BLS12-381 key, rounds signed as drand's unchained schemes
//! sign them (the message is SHA-256 of the round as 8 big-endian bytes; `randomness` is
//! SHA-256 of the signature), served over drand's HTTP API:
//!
//! - `GET /{chain_hash}/info` → `{"public_key","period","genesis_time","hash","groupHash",
//!   "schemeID","metadata":{"beaconID"}}`
//! - `GET /{chain_hash}/public/{round}` and `/public/latest` → `{"round","randomness",
//!   "signature"}`; a round not emitted yet answers `425 Too Early`, as drand's relays do.
//!
//! Signed here with the `bls12_381` crate directly, not with the shop's verifier: the shop's
//! check is tested against a second implementation of drand's scheme.

use std::{
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering},
        Arc,
    },
    time::{SystemTime, UNIX_EPOCH},
};

use axum::{
    extract::{Path, State},
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::get,
    Json, Router,
};
use bls12_381::{
    hash_to_curve::{ExpandMsgXmd, HashToCurve},
    G1Affine, G1Projective, G2Affine, G2Projective, Scalar,
};
use serde_json::json;
use sha2::Digest;

/// The chain's beacon ID (not drand's default, so it is hashed into the chain hash).
const BEACON_ID: &str = "fake";
const DST_G1: &[u8] = b"BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_";
const DST_G2: &[u8] = b"BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_NUL_";

/// Which of drand's unchained schemes the chain runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// `bls-unchained-g1-rfc9380` (quicknet): signatures on G1, the key on G2.
    Quicknet,
    /// `pedersen-bls-unchained`: signatures on G2, the key on G1.
    PedersenUnchained,
}

impl Scheme {
    fn id(self) -> &'static str {
        match self {
            Self::Quicknet => "bls-unchained-g1-rfc9380",
            Self::PedersenUnchained => "pedersen-bls-unchained",
        }
    }
}

struct Chain {
    secret: Scalar,
    scheme: Scheme,
    genesis: i64,
    period: i64,
    public_key: Vec<u8>,
    /// The group hash the info publishes (32 bytes, hex): part of the chain hash.
    group_hash: String,
    hash: String,
    /// Serve signatures made with another key (a relay that lies).
    forged: AtomicBool,
    /// One round served forged (0: none).
    forged_round: AtomicU64,
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

fn message(round: u64) -> [u8; 32] {
    sha2::Sha256::digest(round.to_be_bytes()).into()
}

impl Chain {
    fn sign_with(&self, secret: Scalar, round: u64) -> Vec<u8> {
        let msg = message(round);
        match self.scheme {
            Scheme::Quicknet => {
                let h = <G1Projective as HashToCurve<ExpandMsgXmd<sha2_09::Sha256>>>::hash_to_curve(
                    msg, DST_G1,
                );
                G1Affine::from(h * secret).to_compressed().to_vec()
            }
            Scheme::PedersenUnchained => {
                let h = <G2Projective as HashToCurve<ExpandMsgXmd<sha2_09::Sha256>>>::hash_to_curve(
                    msg, DST_G2,
                );
                G2Affine::from(h * secret).to_compressed().to_vec()
            }
        }
    }

    /// The latest round emitted now (0 before genesis).
    fn latest(&self) -> u64 {
        let since = now() - self.genesis;
        if since < 0 {
            return 0;
        }
        u64::try_from(since / self.period).unwrap_or(0) + 1
    }

    fn round(&self, round: u64) -> Response {
        if round == 0 || round > self.latest() {
            return (StatusCode::TOO_EARLY, "round not emitted yet").into_response();
        }
        let secret = if self.forged.load(Ordering::Relaxed)
            || self.forged_round.load(Ordering::Relaxed) == round
        {
            Scalar::from(7u64)
        } else {
            self.secret
        };
        let signature = self.sign_with(secret, round);
        let randomness = sha2::Sha256::digest(&signature);
        Json(json!({
            "round": round,
            "randomness": hex::encode(randomness),
            "signature": hex::encode(signature),
        }))
        .into_response()
    }
}

/// The stand-in, serving until dropped.
pub struct FakeDrand {
    chain: Arc<Chain>,
    base: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeDrand {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeDrand {
    /// A chain of `scheme` with rounds every `period` seconds, its genesis ten periods ago, its
    /// key from `seed` (any bytes), on a free loopback port.
    pub async fn start(scheme: Scheme, period: i64, seed: &[u8]) -> anyhow::Result<Self> {
        Self::start_on(0, scheme, period, seed).await
    }

    /// Like [`FakeDrand::start`], on 127.0.0.1:`port` (0: a free one).
    pub async fn start_on(
        port: u16,
        scheme: Scheme,
        period: i64,
        seed: &[u8],
    ) -> anyhow::Result<Self> {
        let wide: [u8; 64] = {
            let a: [u8; 32] = sha2::Sha256::digest([seed, b"a"].concat()).into();
            let b: [u8; 32] = sha2::Sha256::digest([seed, b"b"].concat()).into();
            let mut w = [0u8; 64];
            w[..32].copy_from_slice(&a);
            w[32..].copy_from_slice(&b);
            w
        };
        let secret = Scalar::from_bytes_wide(&wide);
        let public_key = match scheme {
            Scheme::Quicknet => G2Affine::from(G2Projective::generator() * secret)
                .to_compressed()
                .to_vec(),
            Scheme::PedersenUnchained => G1Affine::from(G1Projective::generator() * secret)
                .to_compressed()
                .to_vec(),
        };
        let period = period.max(1);
        let genesis = now() - 10 * period;
        let group_hash: [u8; 32] = sha2::Sha256::digest(&public_key).into();
        // The chain hash as drand derives it from the info (common/chain/info.go, `Hash`):
        // period (u32 BE), genesis (i64 BE), public key, group hash, a non-default beacon ID.
        let hash = {
            let mut h = sha2::Sha256::new();
            h.update(u32::try_from(period).unwrap_or(u32::MAX).to_be_bytes());
            h.update(genesis.to_be_bytes());
            h.update(&public_key);
            h.update(group_hash);
            h.update(BEACON_ID.as_bytes());
            hex::encode(h.finalize())
        };
        let chain = Arc::new(Chain {
            secret,
            scheme,
            genesis,
            period,
            public_key,
            group_hash: hex::encode(group_hash),
            hash,
            forged: AtomicBool::new(false),
            forged_round: AtomicU64::new(0),
        });
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        let base = format!("http://{}", listener.local_addr()?);
        let app = Router::new()
            .route("/{chain}/info", get(info))
            .route("/{chain}/public/{round}", get(public))
            .with_state(Arc::clone(&chain));
        let task = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::error!(error = %e, "the fake drand stopped");
            }
        });
        Ok(Self { chain, base, task })
    }

    /// The relay's URL: the shop's `SECKILL_DRAND_URL`.
    pub fn url(&self) -> &str {
        &self.base
    }

    /// The chain hash: `SECKILL_DRAND_CHAIN_HASH`.
    pub fn chain_hash(&self) -> &str {
        &self.chain.hash
    }

    /// The public key in hex: `SECKILL_DRAND_PUBLIC_KEY`.
    pub fn public_key(&self) -> String {
        hex::encode(&self.chain.public_key)
    }

    /// From now on, rounds are signed with another key (they do not verify), or again with the
    /// chain's own.
    pub fn forge(&self, on: bool) {
        self.chain.forged.store(on, Ordering::Relaxed);
    }

    /// Serves `round` alone signed with another key (0: none): a relay lying about one round.
    pub fn forge_round(&self, round: u64) {
        self.chain.forged_round.store(round, Ordering::Relaxed);
    }

    /// The randomness of `round` as the chain signs it (whether emitted or not).
    pub fn randomness(&self, round: u64) -> [u8; 32] {
        sha2::Sha256::digest(self.chain.sign_with(self.chain.secret, round)).into()
    }
}

async fn info(State(chain): State<Arc<Chain>>, Path(hash): Path<String>) -> Response {
    if hash != chain.hash {
        return (StatusCode::NOT_FOUND, "no such chain").into_response();
    }
    Json(json!({
        "public_key": hex::encode(&chain.public_key),
        "period": chain.period,
        "genesis_time": chain.genesis,
        "hash": chain.hash,
        "groupHash": chain.group_hash,
        "schemeID": chain.scheme.id(),
        "metadata": {"beaconID": BEACON_ID},
    }))
    .into_response()
}

async fn public(
    State(chain): State<Arc<Chain>>,
    Path((hash, round)): Path<(String, String)>,
) -> Response {
    if hash != chain.hash {
        return (StatusCode::NOT_FOUND, "no such chain").into_response();
    }
    let round = if round == "latest" {
        chain.latest()
    } else {
        match round.parse() {
            Ok(r) => r,
            Err(_) => return (StatusCode::BAD_REQUEST, "bad round").into_response(),
        }
    };
    chain.round(round)
}
