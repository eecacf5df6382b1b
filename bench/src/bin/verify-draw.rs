//! `verify-draw <shop URL> <voucher id> [--receipt FILE] [--stock-before N]
//! [--commit-margin-ms N] [--drand-public-key HEX] [--drand-chain-hash HEX] [--drand-relay URL]`:
//! checks a draw from what the shop publishes, as anyone could (docs/draws.md, "Checking a draw"):
//!
//! 1. the beacon's chain: the transcript names the pinned chain (quicknet's hash unless given),
//!    and the relay's `/info` states that hash, hashes to it (recomputed as drand derives it from
//!    the period, genesis, public key, group hash and beacon ID: `domain::fair::chain_hash`), and
//!    gives the pinned public key; so its genesis and period are the chain's, not the relay's word;
//! 2. the transcript recomputes (`domain::fair::check`): it is this voucher's; the commitment,
//!    the Merkle root of the sorted leaves, the seed, every key and rank; a beacon round is named,
//!    a moved one is later than the one named at creation, the one named is emitted at or after
//!    the entries close and the one drawn after the close (by the chain's clock; with
//!    `--commit-margin-ms`, each exactly the round the rules name); the draw's stock is at most
//!    the voucher's `stock` now (and at least `--stock-before`, the figure read before the
//!    entries closed); the winners are the first `min(stock, entrants)` ranks (fewer only when
//!    the sale ended before the draw was recorded); each move goes to the next entrant by rank;
//! 3. the beacon round is drand's: fetched from the relay and its BLS signature verified
//!    against the public key pinned here, and its randomness is the transcript's;
//! 4. the outside witness, when published: an RFC 3161 token over the voucher, the root and the
//!    round, whose time comes before the round was emitted; with `--tsa-ca PEM` (the authority's
//!    certificate, pinned) its signature is checked by `openssl ts -verify`, and a draw without
//!    one fails;
//! 5. with `--receipt` (the JSON `POST …/entries` or `GET …/entries/me` answered): the receipt
//!    names the key the transcript names (fixed at the sale's creation), its signature over the
//!    leaf, the commitment, the round named and the close verifies with that key, its leaf is in
//!    the list, and its proof, if any, leads to the root.
//!
//! Exits 0 when everything holds, 1 on the first thing that does not, 2 when it cannot tell.

use std::process::ExitCode;

use anyhow::{bail, Context};
use chrono::{DateTime, Utc};
use ed25519_dalek::{Signature, VerifyingKey};
use seckill::{
    domain::fair::{self, BeaconCheck, Sale, StockSeen, Timing, Transcript},
    draw::{
        settings::{BeaconSettings, QUICKNET_CHAIN_HASH, QUICKNET_PUBLIC_KEY},
        Beacon, BeaconError,
    },
};
use serde_json::Value;

/// quicknet's clock (drand's own clients): round 1 at this Unix second, a round every 3 s.
const QUICKNET_GENESIS: i64 = 1_692_803_367;
const QUICKNET_PERIOD: i64 = 3;

const USAGE: &str = "usage: verify-draw <shop URL> <voucher id> [--receipt FILE] [--stock-before N] [--commit-margin-ms N] [--drand-public-key HEX] [--drand-chain-hash HEX] [--drand-relay URL] [--tsa-ca PEM]";

#[path = "verify_draw/witness.rs"]
mod witness;

struct Args {
    base: String,
    voucher: i64,
    receipt: Option<String>,
    drand_key: String,
    /// The chain pinned: quicknet's with quicknet's key, else only when given.
    chain_hash: Option<String>,
    /// A relay of the verifier's choice, else the one the transcript names.
    relay: Option<String>,
    stock_before: Option<i64>,
    margin: Option<chrono::Duration>,
    /// The timestamping authority's certificate, pinned.
    tsa_ca: Option<std::path::PathBuf>,
}

fn args() -> anyhow::Result<Args> {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let mut positional = Vec::new();
    let (mut receipt, mut drand_key) = (None, QUICKNET_PUBLIC_KEY.to_owned());
    let (mut chain_hash, mut relay, mut stock_before, mut margin) = (None, None, None, None);
    let mut tsa_ca = None;
    let mut it = raw.into_iter();
    while let Some(a) = it.next() {
        let flag = a.as_str();
        let mut value = || it.next().with_context(|| format!("{flag} needs a value"));
        match flag {
            "--receipt" => receipt = Some(value()?),
            "--drand-public-key" => drand_key = value()?,
            "--drand-chain-hash" => chain_hash = Some(value()?.to_ascii_lowercase()),
            "--drand-relay" => relay = Some(value()?),
            "--tsa-ca" => tsa_ca = Some(std::path::PathBuf::from(value()?)),
            "--stock-before" => stock_before = Some(value()?.parse().context("--stock-before")?),
            "--commit-margin-ms" => {
                let ms: i64 = value()?.parse().context("--commit-margin-ms")?;
                margin = Some(chrono::Duration::milliseconds(ms));
            }
            _ if flag.starts_with("--") => bail!("{flag}? {USAGE}"),
            _ => positional.push(a.clone()),
        }
    }
    let [base, voucher] = positional.as_slice() else {
        bail!("{USAGE}");
    };
    if chain_hash.is_none() && drand_key.eq_ignore_ascii_case(QUICKNET_PUBLIC_KEY) {
        chain_hash = Some(QUICKNET_CHAIN_HASH.to_owned());
    }
    Ok(Args {
        base: base.trim_end_matches('/').to_owned(),
        voucher: voucher.parse().context("the voucher id")?,
        receipt,
        drand_key,
        chain_hash,
        relay: relay.map(|r| r.trim_end_matches('/').to_owned()),
        stock_before,
        margin,
        tsa_ca,
    })
}

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("cannot tell: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn said(ok: bool, what: &str) -> bool {
    println!("{} {what}", if ok { "ok  " } else { "FAIL" });
    ok
}

async fn get_json(http: &reqwest::Client, url: &str) -> anyhow::Result<Value> {
    Ok(http
        .get(url)
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?)
}

/// The voucher's published `stock` and `ends_at`, read now (after the close).
async fn sale(http: &reqwest::Client, a: &Args) -> anyhow::Result<Sale> {
    let v = get_json(http, &format!("{}/api/vouchers/{}", a.base, a.voucher)).await?;
    let now = v["stock"].as_i64().context("the voucher's stock")?;
    let ends_at = v["ends_at"].as_str().context("the voucher's ends_at")?;
    let ends_at: DateTime<Utc> = DateTime::parse_from_rfc3339(ends_at)
        .context("the voucher's ends_at")?
        .with_timezone(&Utc);
    let stock = match a.stock_before {
        Some(before) => StockSeen::Between { before, after: now },
        None => StockSeen::After(now),
    };
    Ok(Sale {
        voucher_id: a.voucher,
        stock,
        ends_at,
    })
}

/// The chain the transcript names, checked against the pinned one through the relay: its clock,
/// or `None` when it is not the pinned chain (said).
async fn chain(
    a: &Args,
    b: &fair::BeaconView,
    beacon: &Beacon,
) -> anyhow::Result<Option<fair::Chain>> {
    if let Some(pinned) = &a.chain_hash {
        if !said(
            b.chain_hash.eq_ignore_ascii_case(pinned),
            &format!("the draw names the pinned chain {pinned}"),
        ) {
            return Ok(None);
        }
    }
    let timing = match beacon.timing().await {
        Ok(t) => t,
        Err(e @ BeaconError::WrongChain(_)) => {
            said(false, &format!("the relay's chain info: {e}"));
            return Ok(None);
        }
        Err(e) => return Err(e).context("the chain's info from the relay"),
    };
    let quicknet = b.chain_hash.eq_ignore_ascii_case(QUICKNET_CHAIN_HASH);
    let known = !quicknet || (timing.genesis, timing.period) == (QUICKNET_GENESIS, QUICKNET_PERIOD);
    let whose = if quicknet {
        "quicknet's"
    } else {
        "which the chain hash commits to"
    };
    let what = format!(
        "the relay's chain info hashes to the chain {}, with the pinned public key, genesis {}, period {} s ({whose})",
        b.chain_hash, timing.genesis, timing.period
    );
    Ok(said(known, &what).then(|| timing.chain()))
}

async fn run() -> anyhow::Result<bool> {
    let a = args()?;
    let http = reqwest::Client::new();
    let url = format!("{}/api/vouchers/{}/draw", a.base, a.voucher);
    let t: Transcript = serde_json::from_value(get_json(&http, &url).await?)?;
    let sale = sale(&http, &a).await?;
    let beacon = match &t.beacon {
        Some(b) => Some(Beacon::new(
            BeaconSettings {
                url: a
                    .relay
                    .clone()
                    .unwrap_or_else(|| b.url.trim_end_matches('/').to_owned()),
                chain_hash: b.chain_hash.clone(),
                public_key: hex::decode(&a.drand_key).context("the drand public key")?,
            },
            http.clone(),
        )),
        None => None,
    };
    let check = match (&t.beacon, &beacon) {
        (Some(b), Some(beacon)) => match chain(&a, b, beacon).await? {
            Some(chain) => BeaconCheck::Timed {
                chain,
                margin: a.margin,
            },
            None => return Ok(false),
        },
        // Refused by the check: a draw must name a round.
        _ => BeaconCheck::Untimed,
    };
    let c = match fair::check(&t, &sale, &check) {
        Ok(c) => c,
        Err(e) => return Ok(said(false, &format!("transcript: {e}"))),
    };
    said(
        true,
        &format!(
            "transcript of voucher {}: {} entrants, root, seed and ranking recompute; the winners are the first {}; {} move(s), each to the next entrant by rank",
            t.voucher_id, c.entrants, c.winners, c.moves
        ),
    );
    said(true, &stock_said(&t, &sale));
    if !witness::report(&t, c.witness, a.tsa_ca.as_deref())? {
        return Ok(false);
    }
    if c.cut_short {
        said(
            true,
            &format!(
                "the sale ended before the draw was recorded: {} winner(s), the ranks admitted before its end",
                c.winners
            ),
        );
    }
    if let (Some(b), Some(beacon)) = (&t.beacon, &beacon) {
        said(true, &timing_said(&t, b, c.timing));
        let round = beacon
            .round(b.round)
            .await
            .with_context(|| format!("drand round {} from {}", b.round, beacon.settings().url))?
            .context("the round is not emitted yet")?;
        let same = Some(hex::encode(round.randomness)) == t.randomness;
        if !said(
            same,
            &format!(
                "drand round {} verifies and its randomness is the draw's",
                b.round
            ),
        ) {
            return Ok(false);
        }
    }
    if let Some(file) = &a.receipt {
        return receipt(&t, file);
    }
    Ok(true)
}

fn stock_said(t: &Transcript, sale: &Sale) -> String {
    let drawn = t.stock.unwrap_or_default();
    match sale.stock {
        StockSeen::Between { before, after } => format!(
            "the draw had {drawn} units: at least the {before} published before the close, at most the {after} published now"
        ),
        StockSeen::After(after) => format!(
            "the draw had {drawn} units, at most the {after} the voucher publishes now (units added since count there; --stock-before N compares with a figure read before the close)"
        ),
        StockSeen::Before(before) => format!(
            "the draw had {drawn} units, at least the {before} published before the close"
        ),
    }
}

fn timing_said(t: &Transcript, b: &fair::BeaconView, timing: Timing) -> String {
    let closed = t.closed_at.map(|c| c.to_rfc3339()).unwrap_or_default();
    let named = match b.planned_round {
        Some(p) => format!(
            "round {} (moved from {p}, named at creation, which the late close came after)",
            b.round
        ),
        None => format!("round {} (named at creation)", b.round),
    };
    match timing {
        Timing::Checked { pinned: true } => format!(
            "{named} is emitted after the close at {closed}, and is the round the rules name with the commit margin given"
        ),
        Timing::Checked { pinned: false } => format!(
            "{named} is emitted after the close at {closed} (without --commit-margin-ms the round is bounded by the close, not pinned: a later round than the one named would pass)"
        ),
        Timing::NotChecked | Timing::NoBeacon => format!("{named}: its time was not checked"),
    }
}

fn receipt(t: &Transcript, file: &str) -> anyhow::Result<bool> {
    let body: Value = serde_json::from_str(&std::fs::read_to_string(file)?)?;
    let r = &body["receipt"];
    let text = |v: &Value| v.as_str().map(str::to_owned).context("a receipt field");
    let leaf = fair::hash_from_hex(&text(&r["leaf"])?).context("the receipt's leaf")?;
    // The key the transcript named at the sale's creation, and the terms it fixed then: the
    // receipt covers both, so a transcript restating them otherwise contradicts the receipt.
    let key: [u8; 32] = hex::decode(&t.receipt_key.ed25519)?
        .try_into()
        .map_err(|_| anyhow::anyhow!("the transcript's receipt key is not 32 bytes"))?;
    let named = fair::key_id(&key) == t.receipt_key.id && text(&r["key_id"])? == t.receipt_key.id;
    if !said(named, "the receipt names the key the transcript names") {
        return Ok(false);
    }
    let terms = fair::ReceiptTerms::of(t).context("the transcript's commitment")?;
    let signature: [u8; 64] = hex::decode(text(&r["signature"])?)?
        .try_into()
        .map_err(|_| anyhow::anyhow!("the signature is not 64 bytes"))?;
    let signed = VerifyingKey::from_bytes(&key)?
        .verify_strict(
            terms.message(&leaf).as_bytes(),
            &Signature::from_bytes(&signature),
        )
        .is_ok();
    if !said(signed, "the receipt is signed by that key over its leaf, the commitment, the round named and the close") {
        return Ok(false);
    }
    let leaves = t.leaves.clone().unwrap_or_default();
    let listed = leaves.contains(&hex::encode(leaf));
    if !said(listed, "the receipt's leaf is in the committed list") {
        return Ok(false);
    }
    let p = &body["proof"];
    if p.is_object() {
        let path: Vec<fair::Hash> = p["path"]
            .as_array()
            .context("the proof's path")?
            .iter()
            .filter_map(|h| h.as_str().and_then(fair::hash_from_hex))
            .collect();
        let root = fair::hash_from_hex(t.entries_root.as_deref().unwrap_or_default())
            .context("the root")?;
        let proves = fair::verify_inclusion(
            &leaf,
            p["index"].as_u64().context("the proof's index")?,
            p["tree_size"].as_u64().context("the proof's size")?,
            &path,
            &root,
        );
        if !said(proves, "the receipt's inclusion proof leads to the root") {
            return Ok(false);
        }
    }
    Ok(true)
}
