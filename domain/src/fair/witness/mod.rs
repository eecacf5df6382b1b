//! A witness outside the shop for the draw's commitment (issue #51): at the close the shop asks
//! an RFC 3161 timestamping authority to timestamp
//! `SHA-256("seckill-draw-witness-v1:{voucher}:{entries_root hex}:{round or -}")`, and publishes
//! the authority's token. A skeptic checks the token's signature with the authority's
//! certificate (`openssl ts -verify -digest <imprint> -in token.der -token_in -CAfile tsa.pem`)
//! and, here, that it timestamps this draw's root and round before the round was emitted: the
//! list was fixed before anyone could know the randomness, whatever the shop's clock says.
//!
//! No crypto here: the request's DER ([`timestamp_request`]), the reply's status
//! ([`token_of_reply`]) and the token's facts ([`read_token`]), read with a small DER reader.

use chrono::{DateTime, NaiveDate, Utc};
use sha2::{Digest, Sha256};

use super::{check::Mismatch, BeaconCheck, Hash, Transcript};

/// The text a draw's timestamp covers (its SHA-256 is the imprint).
pub fn witness_message(voucher: i64, root: &Hash, round: Option<u64>) -> String {
    let round = round.map_or_else(|| "-".to_owned(), |r| r.to_string());
    format!(
        "seckill-draw-witness-v1:{voucher}:{}:{round}",
        hex::encode(root)
    )
}

/// The imprint a draw's timestamp must carry.
pub fn witness_imprint(voucher: i64, root: &Hash, round: Option<u64>) -> Hash {
    Sha256::digest(witness_message(voucher, root, round)).into()
}

/// `AlgorithmIdentifier { id-sha256, NULL }`.
const SHA256_ALGORITHM: [u8; 15] = [
    0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00,
];
/// The OID `id-sha256` (2.16.840.1.101.3.4.2.1), content only.
const SHA256_OID: [u8; 9] = [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01];
/// `id-signedData` (1.2.840.113549.1.7.2).
const SIGNED_DATA_OID: [u8; 9] = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02];
/// `id-ct-TSTInfo` (1.2.840.113549.1.9.16.1.4).
const TST_INFO_OID: [u8; 11] = [
    0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x10, 0x01, 0x04,
];

/// The DER `TimeStampReq` (RFC 3161 §2.4.1) for `imprint` (SHA-256), with `nonce` and the
/// authority's certificate asked for (so the token carries what verifies it).
pub fn timestamp_request(imprint: &Hash, nonce: u64) -> Vec<u8> {
    // A positive INTEGER: the top bit clear.
    let nonce = der_unsigned(nonce & 0x7fff_ffff_ffff_ffff);
    let mut body = vec![0x02, 0x01, 0x01]; // version 1
    body.extend([0x30, 0x31]); // MessageImprint: 15 + 34 bytes
    body.extend(SHA256_ALGORITHM);
    body.extend([0x04, 0x20]);
    body.extend(imprint);
    body.extend([0x02, u8::try_from(nonce.len()).unwrap_or(0)]);
    body.extend(nonce);
    body.extend([0x01, 0x01, 0xff]); // certReq TRUE
    let mut req = vec![0x30, u8::try_from(body.len()).unwrap_or(0)];
    req.extend(body);
    req
}

/// The content octets of a DER INTEGER holding `n`: as few as hold it (DER's rule; OpenSSL
/// refuses a query whose nonce starts with a zero byte it does not need, "illegal padding"),
/// with a zero byte before a top bit that is set, so the value stays positive.
fn der_unsigned(n: u64) -> Vec<u8> {
    let bytes = n.to_be_bytes();
    let first = bytes
        .iter()
        .position(|b| *b != 0)
        .unwrap_or(bytes.len() - 1);
    let mut out = Vec::with_capacity(9);
    if bytes[first] & 0x80 != 0 {
        out.push(0);
    }
    out.extend(&bytes[first..]);
    out
}

/// Why a reply or a token cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WitnessError {
    #[error("not DER: {0}")]
    Der(&'static str),
    #[error("the authority refused (PKIStatus {0})")]
    Refused(u8),
    #[error("the token is not a signed TSTInfo")]
    NotATimestamp,
    #[error("the token's imprint is not SHA-256")]
    NotSha256,
    #[error("the token's time is not a GeneralizedTime: {0}")]
    Time(String),
}

/// What a timestamp token states (its signature aside).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenFacts {
    /// The SHA-256 imprint timestamped.
    pub imprint: Hash,
    /// The authority's time (`genTime`).
    pub at: DateTime<Utc>,
    /// The request's nonce, echoed (big-endian bytes as encoded).
    pub nonce: Option<Vec<u8>>,
}

impl TokenFacts {
    /// Whether the token echoes `nonce` as [`timestamp_request`] sent it (the same value,
    /// whatever zero bytes lead its encoding).
    pub fn echoes(&self, nonce: u64) -> bool {
        let value = |bytes: &[u8]| {
            bytes
                .iter()
                .skip_while(|b| **b == 0)
                .copied()
                .collect::<Vec<_>>()
        };
        self.nonce.as_deref().map(value)
            == Some(value(&der_unsigned(nonce & 0x7fff_ffff_ffff_ffff)))
    }
}

/// One DER element: its tag and content, and what follows it.
fn element(input: &[u8]) -> Result<(u8, &[u8], &[u8]), WitnessError> {
    let (&tag, rest) = input.split_first().ok_or(WitnessError::Der("truncated"))?;
    let (&first, rest) = rest.split_first().ok_or(WitnessError::Der("no length"))?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return Err(WitnessError::Der("a length this reader does not take"));
        }
        let (bytes, rest) = rest.split_at(n);
        (
            bytes.iter().fold(0usize, |l, b| (l << 8) | usize::from(*b)),
            rest,
        )
    };
    if rest.len() < len {
        return Err(WitnessError::Der("an element longer than its input"));
    }
    let (content, rest) = rest.split_at(len);
    Ok((tag, content, rest))
}

/// The content of the element tagged `tag` at the start of `input`, and what follows it.
fn expect(input: &[u8], tag: u8) -> Result<(&[u8], &[u8]), WitnessError> {
    match element(input)? {
        (t, content, rest) if t == tag => Ok((content, rest)),
        _ => Err(WitnessError::Der("an unexpected element")),
    }
}

/// The `TimeStampToken` of a DER `TimeStampResp`, if the authority granted it (status 0 or 1).
pub fn token_of_reply(reply: &[u8]) -> Result<Vec<u8>, WitnessError> {
    let (resp, _) = expect(reply, 0x30)?;
    let (status_info, after) = expect(resp, 0x30)?;
    let (status, _) = expect(status_info, 0x02)?;
    match status {
        [0] | [1] => {}
        [s] => return Err(WitnessError::Refused(*s)),
        _ => return Err(WitnessError::Der("a PKIStatus")),
    }
    // The whole ContentInfo, tag and length included.
    let (_, _, rest) = element(after)?;
    Ok(after[..after.len() - rest.len()].to_vec())
}

/// What the token states: the imprint, the authority's time, the nonce.
pub fn read_token(token: &[u8]) -> Result<TokenFacts, WitnessError> {
    let (content_info, _) = expect(token, 0x30)?;
    let (oid, rest) = expect(content_info, 0x06)?;
    if oid != SIGNED_DATA_OID {
        return Err(WitnessError::NotATimestamp);
    }
    let (explicit, _) = expect(rest, 0xa0)?;
    let (signed_data, _) = expect(explicit, 0x30)?;
    let (_version, rest) = expect(signed_data, 0x02)?;
    let (_digests, rest) = expect(rest, 0x31)?;
    let (encap, _) = expect(rest, 0x30)?;
    let (oid, rest) = expect(encap, 0x06)?;
    if oid != TST_INFO_OID {
        return Err(WitnessError::NotATimestamp);
    }
    let (explicit, _) = expect(rest, 0xa0)?;
    let (tst_info, _) = expect(explicit, 0x04)?;
    read_tst_info(tst_info)
}

fn read_tst_info(der: &[u8]) -> Result<TokenFacts, WitnessError> {
    let (info, _) = expect(der, 0x30)?;
    let (_version, rest) = expect(info, 0x02)?;
    let (_policy, rest) = expect(rest, 0x06)?;
    let (imprint, rest) = expect(rest, 0x30)?;
    let (algorithm, hashed) = expect(imprint, 0x30)?;
    let (oid, _) = expect(algorithm, 0x06)?;
    if oid != SHA256_OID {
        return Err(WitnessError::NotSha256);
    }
    let (hashed, _) = expect(hashed, 0x04)?;
    let imprint: Hash = hashed.try_into().map_err(|_| WitnessError::NotSha256)?;
    let (_serial, rest) = expect(rest, 0x02)?;
    let (time, mut rest) = expect(rest, 0x18)?;
    let at = generalized_time(time)?;
    // accuracy (SEQUENCE) and ordering (BOOLEAN) may come before the nonce (INTEGER).
    let mut nonce = None;
    while !rest.is_empty() {
        let (tag, content, after) = element(rest)?;
        match tag {
            0x30 | 0x01 => rest = after,
            0x02 => {
                nonce = Some(content.to_vec());
                break;
            }
            _ => break,
        }
    }
    Ok(TokenFacts { imprint, at, nonce })
}

/// `YYYYMMDDHHMMSS[.f+]Z` (RFC 3161 §2.4.2: UTC, no trailing zeros in the fraction).
fn generalized_time(raw: &[u8]) -> Result<DateTime<Utc>, WitnessError> {
    let text = std::str::from_utf8(raw).map_err(|_| WitnessError::Time("not text".into()))?;
    let bad = || WitnessError::Time(text.to_owned());
    let body = text.strip_suffix('Z').ok_or_else(bad)?;
    let (whole, fraction) = body.split_once('.').unwrap_or((body, ""));
    if whole.len() != 14 || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    if !fraction.bytes().all(|b| b.is_ascii_digit()) || fraction.len() > 9 {
        return Err(bad());
    }
    let n = |range: std::ops::Range<usize>| whole[range].parse::<u32>().map_err(|_| bad());
    let nanos = if fraction.is_empty() {
        0
    } else {
        format!("{fraction:0<9}")
            .parse::<u32>()
            .map_err(|_| bad())?
    };
    let year = i32::try_from(n(0..4)?).map_err(|_| bad())?;
    let (month, day) = (n(4..6)?, n(6..8)?);
    let (hour, minute, second) = (n(8..10)?, n(10..12)?, n(12..14)?);
    NaiveDate::from_ymd_opt(year, month, day)
        .and_then(|d| d.and_hms_nano_opt(hour, minute, second, nanos))
        .map(|t| t.and_utc())
        .ok_or_else(bad)
}

/// What a transcript's outside timestamp established (its signature is checked apart, with the
/// authority's certificate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Witnessed {
    /// Timestamped at `at`, before the round drawn was emitted (by the chain's clock).
    BeforeRound { at: DateTime<Utc> },
    /// Timestamped at `at`; without the chain's clock (or a beacon) not compared with a round.
    Unclocked { at: DateTime<Utc> },
    /// No timestamp published: the close's time is the shop's word.
    Absent,
}

/// Checks `t`'s witness, if any: a token that reads, timestamps this voucher's `root` with the
/// round drawn, states the time the transcript states, and (with the chain's clock) came before
/// that round was emitted.
pub(super) fn check(
    t: &Transcript,
    root: &Hash,
    beacon: &BeaconCheck,
) -> Result<Witnessed, Mismatch> {
    let Some(w) = &t.witness else {
        return Ok(Witnessed::Absent);
    };
    let fail = |what: String| Mismatch::Witness(what);
    let token = hex::decode(&w.token).map_err(|_| fail("the token is not hex".into()))?;
    let facts = read_token(&token).map_err(|e| fail(e.to_string()))?;
    let round = t.beacon.as_ref().map(|b| b.round);
    if facts.imprint != witness_imprint(t.voucher_id, root, round) {
        return Err(fail(format!(
            "the token timestamps another list or round than this draw's ({})",
            witness_message(t.voucher_id, root, round)
        )));
    }
    if facts.at != w.at {
        return Err(fail(format!(
            "the token says {}, the transcript {}",
            facts.at, w.at
        )));
    }
    match (beacon, round) {
        (BeaconCheck::Timed { chain, .. }, Some(round)) => {
            let emitted = chain.emitted_at(round);
            if facts.at >= emitted {
                return Err(fail(format!(
                    "timestamped at {}, once round {round} was emitted at {emitted}: it does not show the list was fixed before the randomness",
                    facts.at
                )));
            }
            Ok(Witnessed::BeforeRound { at: facts.at })
        }
        _ => Ok(Witnessed::Unclocked { at: facts.at }),
    }
}

#[cfg(test)]
mod tests;
