//! [`witness`]: the close's timestamp by an authority outside the shop (issue #51, decision 49).
//! Right after the entry log closes, the shop asks the RFC 3161 authority configured
//! (`SECKILL_DRAW_TSA_URL`) to timestamp `domain::fair::witness_imprint(voucher, root, round)`
//! and publishes its token with the transcript: a skeptic checks the authority's signature with
//! its certificate and that its time came before the round was emitted, without believing the
//! shop's clock. Asked again by the draws job while the round is not emitted yet; a token that
//! would come after the round proves nothing and is not kept. The draw never waits for it.

use std::time::Duration;

use chrono::Utc;
use rand::Rng;

use crate::{
    domain::{fair, VoucherId},
    infra::store::{self, draws::WitnessRow},
    Core,
};

/// Why the authority's timestamp could not be had.
#[derive(Debug, thiserror::Error)]
pub enum WitnessFailure {
    #[error("the authority could not be reached: {0}")]
    Http(#[from] reqwest::Error),
    #[error("the authority answered HTTP {0}")]
    Status(u16),
    #[error("the authority's reply: {0}")]
    Token(#[from] fair::WitnessError),
    #[error("the token timestamps another imprint than the one asked")]
    Imprint,
    #[error("the token does not echo the query's nonce")]
    Nonce,
    #[error("the token came once round {0} was emitted: it would prove nothing")]
    TooLate(u64),
    #[error("recording it: {0}")]
    Store(#[from] sqlx::Error),
}

/// How long the authority has to answer.
const TIMEOUT: Duration = Duration::from_secs(5);

/// Asks the authority to timestamp `voucher`'s committed `root` with `round` and records its
/// token. `Ok(false)` when no authority is configured, the round was emitted already, or another
/// instance recorded one first.
pub async fn witness(
    core: &Core,
    voucher: VoucherId,
    root: &fair::Hash,
    round: Option<u64>,
) -> Result<bool, WitnessFailure> {
    let Some(tsa) = &core.config.draw.tsa else {
        return Ok(false);
    };
    let emitted = emitted_at(core, round).await;
    if emitted.is_some_and(|at| at <= Utc::now()) {
        return Ok(false);
    }
    let imprint = fair::witness_imprint(voucher.get(), root, round);
    let nonce: u64 = rand::rng().random::<u64>() & 0x7fff_ffff_ffff_ffff;
    let reply = core
        .http
        .post(tsa)
        .header(reqwest::header::CONTENT_TYPE, "application/timestamp-query")
        .body(fair::timestamp_request(&imprint, nonce))
        .timeout(TIMEOUT)
        .send()
        .await?;
    if !reply.status().is_success() {
        return Err(WitnessFailure::Status(reply.status().as_u16()));
    }
    let token = fair::token_of_reply(&reply.bytes().await?)?;
    let facts = fair::read_token(&token)?;
    if facts.imprint != imprint {
        return Err(WitnessFailure::Imprint);
    }
    if !facts.echoes(nonce) {
        return Err(WitnessFailure::Nonce);
    }
    if let (Some(round), Some(at)) = (round, emitted) {
        if facts.at >= at {
            return Err(WitnessFailure::TooLate(round));
        }
    }
    let recorded = store::draws::witness(
        &core.db,
        voucher,
        &WitnessRow {
            tsa: tsa.clone(),
            token,
            at: facts.at,
        },
    )
    .await?;
    if recorded {
        metrics::counter!("seckill_draw_witnesses_total").increment(1);
        tracing::info!(%voucher, at = %facts.at, tsa = %tsa, "draw list timestamped by the authority");
    }
    Ok(recorded)
}

/// When `round` is emitted, if the beacon's clock can be read.
async fn emitted_at(core: &Core, round: Option<u64>) -> Option<chrono::DateTime<Utc>> {
    let (beacon, round) = (core.beacon.as_ref()?, round?);
    let timing = beacon.timing().await.ok()?;
    Some(timing.chain().emitted_at(round))
}
