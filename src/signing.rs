//! HMAC-SHA256, the one signature the shop makes and checks: its session tokens
//! ([`crate::auth::token`]), the SMS webhook it signs ([`crate::auth::delivery`]) and the
//! payment notifications it verifies (Stripe's `Stripe-Signature`). A message is signed as the
//! concatenation of its parts, so callers need not build the signed string; a check compares in
//! constant time (the `hmac` crate's `verify_slice`), so a forger learns nothing from timing.

use hmac::{KeyInit, Mac};

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// The HMAC-SHA256 of the concatenated `parts`, keyed by `key`.
pub fn sign(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    Keyed::new(key).with(parts).finalize().into_bytes().into()
}

/// [`sign`] as lower-case hex, as webhook headers carry it.
pub fn sign_hex(key: &[u8], parts: &[&[u8]]) -> String {
    hex::encode(sign(key, parts))
}

/// Whether `given` is the signature of `parts` under `key`, compared in constant time.
pub fn verify(key: &[u8], parts: &[&[u8]], given: &[u8]) -> bool {
    Keyed::new(key).with(parts).verify_slice(given).is_ok()
}

/// [`verify`] of a hex signature; text that is not hex is no signature.
pub fn verify_hex(key: &[u8], parts: &[&[u8]], given: &str) -> bool {
    hex::decode(given).is_ok_and(|bytes| verify(key, parts, &bytes))
}

/// A key made ready once: HMAC's keyed inner and outer states, cloned for each message, so a
/// key used for every request (the session keys) is not hashed into its pads again each time.
#[derive(Clone)]
pub struct Keyed(HmacSha256);

impl Keyed {
    pub fn new(key: &[u8]) -> Self {
        // HMAC takes a key of any length (a longer one is hashed first): this cannot fail.
        Self(
            <HmacSha256 as KeyInit>::new_from_slice(key)
                .unwrap_or_else(|_| unreachable!("HMAC accepts any key length")),
        )
    }

    fn with(&self, parts: &[&[u8]]) -> HmacSha256 {
        let mut mac = self.0.clone();
        for part in parts {
            mac.update(part);
        }
        mac
    }

    /// [`sign_hex`] under this key.
    pub fn sign_hex(&self, parts: &[&[u8]]) -> String {
        hex::encode(self.with(parts).finalize().into_bytes())
    }

    /// [`verify_hex`] under this key: a signature of another length, or not hex, is none.
    pub fn verify_hex(&self, parts: &[&[u8]], given: &str) -> bool {
        let mut bytes = [0_u8; 32];
        hex::decode_to_slice(given, &mut bytes).is_ok()
            && self.with(parts).verify_slice(&bytes).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_is_hmac_sha256_of_the_concatenated_parts() {
        // RFC 4231, test case 2, the message given in two parts.
        let expected = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";
        assert_eq!(
            sign_hex(b"Jefe", &[b"what do ya want ", b"for nothing?"]),
            expected
        );
        assert!(verify_hex(
            b"Jefe",
            &[b"what do ya want for nothing?"],
            expected
        ));
    }

    #[test]
    fn a_key_made_ready_once_signs_and_checks_as_the_key_does() {
        let key = Keyed::new(b"Jefe");
        let expected = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";
        assert_eq!(
            key.sign_hex(&[b"what do ya want ", b"for nothing?"]),
            expected
        );
        // The same prepared key, used again: no state left from the message before.
        assert!(key.verify_hex(&[b"what do ya want for nothing?"], expected));
        assert!(!key.verify_hex(&[b"what do ya want for nothing!"], expected));
        assert!(!Keyed::new(b"other").verify_hex(&[b"what do ya want for nothing?"], expected));
        assert!(!key.verify_hex(&[b"what do ya want for nothing?"], &expected[..62]));
        assert!(!key.verify_hex(&[b"what do ya want for nothing?"], &format!("{expected}00")));
        assert!(!key.verify_hex(&[b"what do ya want for nothing?"], "not hex"));
    }

    #[test]
    fn any_change_fails_the_check() {
        let good = sign_hex(b"key", &[b"1700000000", b".", b"{}"]);
        assert!(verify_hex(b"key", &[b"1700000000.{}"], &good));
        assert!(!verify_hex(b"key", &[b"1700000001.{}"], &good));
        assert!(!verify_hex(b"other", &[b"1700000000.{}"], &good));
        assert!(!verify_hex(b"key", &[b"1700000000.{}"], &good[..62]));
        assert!(!verify_hex(b"key", &[b"1700000000.{}"], "not hex"));
    }
}
