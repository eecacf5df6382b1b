//! The outside witness of a draw's committed list: what `domain::fair::check` established of
//! the token, and its authority's signature checked by OpenSSL with the certificate the
//! verifier pins (`--tsa-ca`), as docs/draws.md shows by hand.

use std::path::Path;

use anyhow::Context;
use seckill::domain::fair::{self, Transcript, Witnessed};

use super::said;

/// Says what the witness shows; false when it fails what the verifier asked for (a pinned
/// authority with no token, or a signature that does not hold).
pub fn report(t: &Transcript, witnessed: Witnessed, ca: Option<&Path>) -> anyhow::Result<bool> {
    let Some(w) = &t.witness else {
        return Ok(match ca {
            Some(_) => said(false, "the entrant list carries no outside timestamp, and an authority was pinned (--tsa-ca)"),
            None => said(true, "no outside timestamp published: the close's time is the shop's word (a shop with SECKILL_DRAW_TSA_URL publishes one)"),
        });
    };
    let round = t.beacon.as_ref().map(|b| b.round);
    let when = match witnessed {
        Witnessed::BeforeRound { at } => format!(
            "at {at}, before round {} was emitted",
            round.unwrap_or_default()
        ),
        Witnessed::Unclocked { at } => format!("at {at} (not compared with a round's time)"),
        Witnessed::Absent => String::new(),
    };
    said(
        true,
        &format!(
            "the entrant list and its round were timestamped by {} {when}",
            w.tsa
        ),
    );
    let Some(ca) = ca else {
        said(
            true,
            "the authority's signature was not checked: give --tsa-ca with its certificate",
        );
        return Ok(true);
    };
    let token = hex::decode(&w.token).context("the token's hex")?;
    let root =
        fair::hash_from_hex(t.entries_root.as_deref().unwrap_or_default()).context("the root")?;
    let imprint = fair::witness_imprint(t.voucher_id, &root, round);
    let file = std::env::temp_dir().join(format!(
        "verify-draw-{}-{}.tsr",
        std::process::id(),
        t.voucher_id
    ));
    std::fs::write(&file, &token)?;
    let out = std::process::Command::new("openssl")
        .args([
            "ts",
            "-verify",
            "-digest",
            &hex::encode(imprint),
            "-token_in",
            "-in",
        ])
        .arg(&file)
        .arg("-CAfile")
        .arg(ca)
        .output()
        .context("running openssl ts -verify")?;
    let _ = std::fs::remove_file(&file);
    Ok(said(
        out.status.success(),
        &format!(
            "the authority's signature verifies with {} (openssl ts -verify)",
            ca.display()
        ),
    ))
}
