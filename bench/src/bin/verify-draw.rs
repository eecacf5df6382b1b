//! `verify-draw <shop URL> <voucher id> [--receipt FILE] [--drand-public-key HEX]`: checks a
//! draw from what the shop publishes, as anyone could (README, "Checking a draw"):
//!
//! 1. the transcript recomputes (`domain::fair::check`: the commitment, the Merkle root of the
//!    sorted leaves, the seed, every key and rank, the winners, the moves' chain);
//! 2. the beacon round is drand's: fetched from the relay the transcript names and its BLS
//!    signature verified against the public key pinned here (quicknet's unless given), and its
//!    randomness is the transcript's;
//! 3. with `--receipt` (the JSON `POST …/entries` or `GET …/entries/me` answered): the receipt's
//!    signature verifies with the shop's key, its leaf is in the list, and its proof, if any,
//!    leads to the root.
//!
//! Exits 0 when everything holds, 1 on the first thing that does not, 2 when it cannot tell.

use std::process::ExitCode;

use anyhow::{bail, Context};
use ed25519_dalek::{Signature, VerifyingKey};
use seckill::{
    domain::fair::{self, Transcript},
    draw::{settings::BeaconSettings, settings::QUICKNET_PUBLIC_KEY, Beacon},
};
use serde_json::Value;

struct Args {
    base: String,
    voucher: i64,
    receipt: Option<String>,
    drand_key: String,
}

fn args() -> anyhow::Result<Args> {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let mut positional = Vec::new();
    let (mut receipt, mut drand_key) = (None, QUICKNET_PUBLIC_KEY.to_owned());
    let mut it = raw.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--receipt" => receipt = Some(it.next().context("--receipt FILE")?),
            "--drand-public-key" => drand_key = it.next().context("--drand-public-key HEX")?,
            _ => positional.push(a),
        }
    }
    let [base, voucher] = positional.as_slice() else {
        bail!(
            "usage: verify-draw <shop URL> <voucher id> [--receipt FILE] [--drand-public-key HEX]"
        );
    };
    Ok(Args {
        base: base.trim_end_matches('/').to_owned(),
        voucher: voucher.parse().context("the voucher id")?,
        receipt,
        drand_key,
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

async fn run() -> anyhow::Result<bool> {
    let a = args()?;
    let http = reqwest::Client::new();
    let url = format!("{}/api/vouchers/{}/draw", a.base, a.voucher);
    let t: Transcript = http
        .get(&url)
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    match fair::check(&t) {
        Ok(c) => said(
            true,
            &format!(
                "transcript: {} entrants, root, seed and ranking recompute; the winners are the first {}; {} move(s) chained",
                c.entrants, c.winners, c.moves
            ),
        ),
        Err(e) => return Ok(said(false, &format!("transcript: {e}"))),
    };
    if let Some(b) = &t.beacon {
        let beacon = Beacon::new(
            BeaconSettings {
                url: b.url.trim_end_matches('/').to_owned(),
                chain_hash: b.chain_hash.clone(),
                public_key: hex::decode(&a.drand_key).context("the drand public key")?,
            },
            http.clone(),
        );
        let round = beacon
            .round(b.round)
            .await
            .with_context(|| format!("drand round {} from {}", b.round, b.url))?
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
    } else {
        said(
            true,
            "no beacon: the seed rests on the shop's committed secret and the root only",
        );
    }
    if let Some(file) = &a.receipt {
        return receipt(&http, &a, &t, file).await;
    }
    Ok(true)
}

async fn receipt(
    http: &reqwest::Client,
    a: &Args,
    t: &Transcript,
    file: &str,
) -> anyhow::Result<bool> {
    let body: Value = serde_json::from_str(&std::fs::read_to_string(file)?)?;
    let r = &body["receipt"];
    let text = |v: &Value| v.as_str().map(str::to_owned).context("a receipt field");
    let leaf = fair::hash_from_hex(&text(&r["leaf"])?).context("the receipt's leaf")?;
    let key: Value = http
        .get(format!("{}/api/draws/key", a.base))
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    let key: [u8; 32] = hex::decode(text(&key["ed25519"])?)?
        .try_into()
        .map_err(|_| anyhow::anyhow!("the shop's key is not 32 bytes"))?;
    let signature: [u8; 64] = hex::decode(text(&r["signature"])?)?
        .try_into()
        .map_err(|_| anyhow::anyhow!("the signature is not 64 bytes"))?;
    let signed = VerifyingKey::from_bytes(&key)?
        .verify_strict(
            fair::receipt_message(a.voucher, &leaf).as_bytes(),
            &Signature::from_bytes(&signature),
        )
        .is_ok();
    if !said(signed, "the receipt is signed by the shop's published key") {
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
