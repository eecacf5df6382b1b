//! A shopper's phone number, the sign-in identity, in E.164 form (`+8613800000000`).
//!
//! One handset is one phone: `138 0000 0000`, `+86 138…`, `86138…` and `0086138…` all parse
//! to `+8613800000000` with the shop's default country code 86 (decision 26). The rule, without
//! a numbering-plan database:
//! - `+` or the international prefix `00` starts a number with its country code;
//! - otherwise a number is national: one trunk `0` is dropped, and the default country code is
//!   put in front, unless the digits already start with that code and at least
//!   [`MIN_NATIONAL_DIGITS`] digits follow it (a number written with its code but no `+`).
//!
//! Then 8 to 15 digits must remain, the country code included (E.164's maximum is 15).

use std::fmt;

use serde::{Deserialize, Serialize};

/// Fewest digits of a national number written after the country code without `+` (so that
/// `86…` with 8 or more digits after 86 is read as +86…).
pub const MIN_NATIONAL_DIGITS: usize = 8;
/// Fewest and most digits of an E.164 number, the country code included.
const E164_DIGITS: std::ops::RangeInclusive<usize> = 8..=15;

/// Why a string is not a phone number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PhoneError {
    #[error(
        "enter a phone number of 7 to 15 digits, optionally starting with + and its country code"
    )]
    Invalid,
}

/// A country calling code (`86`, `1`, `44`): one to three digits, not starting with 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CountryCode(u16);

impl CountryCode {
    /// China's, the shop's default.
    pub const CHINA: Self = Self(86);

    pub fn get(self) -> u16 {
        self.0
    }
}

impl std::str::FromStr for CountryCode {
    type Err = PhoneError;
    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        let digits = raw.trim().trim_start_matches('+');
        if (1..=3).contains(&digits.len())
            && !digits.starts_with('0')
            && digits.bytes().all(|b| b.is_ascii_digit())
        {
            digits.parse().map(Self).map_err(|_| PhoneError::Invalid)
        } else {
            Err(PhoneError::Invalid)
        }
    }
}

impl fmt::Display for CountryCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A phone number in E.164 form: `+` and 8–15 digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Phone(String);

impl Phone {
    /// Reads a number as a shopper types it (spaces, dashes, dots and brackets allowed), a
    /// national one in `default` country (see the module's rule).
    pub fn parse(raw: &str, default: CountryCode) -> Result<Self, PhoneError> {
        let compact: String = raw
            .trim()
            .chars()
            .filter(|c| !matches!(c, ' ' | '-' | '.' | '(' | ')'))
            .collect();
        let international = compact
            .strip_prefix('+')
            .or_else(|| compact.strip_prefix("00"));
        let digits = match international {
            Some(digits) => digits.to_owned(),
            None => {
                let code = default.to_string();
                match compact.strip_prefix(&code) {
                    Some(rest) if rest.len() >= MIN_NATIONAL_DIGITS => compact.clone(),
                    _ => {
                        let national = compact.strip_prefix('0').unwrap_or(&compact);
                        format!("{code}{national}")
                    }
                }
            }
        };
        Self::from_digits(&digits)
    }

    fn from_digits(digits: &str) -> Result<Self, PhoneError> {
        if E164_DIGITS.contains(&digits.len())
            && digits.bytes().all(|b| b.is_ascii_digit())
            && !digits.starts_with('0')
        {
            Ok(Self(format!("+{digits}")))
        } else {
            Err(PhoneError::Invalid)
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The number as logs show it: all but its last four digits hidden (`+*********1234`).
    pub fn masked(&self) -> String {
        let shown = self.0.len().saturating_sub(4);
        self.0
            .char_indices()
            .map(|(i, c)| {
                if i < shown && c.is_ascii_digit() {
                    '*'
                } else {
                    c
                }
            })
            .collect()
    }
}

/// The stored form only (`+` and digits), as sessions, the database and the wire carry it.
impl TryFrom<&str> for Phone {
    type Error = PhoneError;
    fn try_from(raw: &str) -> Result<Self, Self::Error> {
        raw.strip_prefix('+')
            .ok_or(PhoneError::Invalid)
            .and_then(Self::from_digits)
    }
}

impl TryFrom<String> for Phone {
    type Error = PhoneError;
    fn try_from(raw: String) -> Result<Self, Self::Error> {
        Self::try_from(raw.as_str())
    }
}

impl From<Phone> for String {
    fn from(p: Phone) -> Self {
        p.0
    }
}

impl fmt::Display for Phone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn cn(raw: &str) -> Result<String, PhoneError> {
        Phone::parse(raw, CountryCode::CHINA).map(String::from)
    }

    #[test]
    fn one_handset_is_one_phone_however_it_is_written() {
        for spelling in [
            "13800000000",
            " 138-0000-0000 ",
            "138 0000 0000",
            "+86 138 0000 0000",
            "+8613800000000",
            "8613800000000",
            "008613800000000",
            "(+86) 138.0000.0000",
        ] {
            assert_eq!(
                cn(spelling).as_deref(),
                Ok("+8613800000000"),
                "{spelling:?}"
            );
        }
    }

    #[test]
    fn national_numbers_take_the_default_country_and_drop_one_trunk_zero() {
        assert_eq!(cn("01012345678").as_deref(), Ok("+861012345678"));
        let uk: CountryCode = "44".parse().expect("code");
        assert_eq!(
            Phone::parse("07911 123456", uk)
                .map(String::from)
                .as_deref(),
            Ok("+447911123456")
        );
        assert_eq!(
            Phone::parse("447911123456", uk)
                .map(String::from)
                .as_deref(),
            Ok("+447911123456")
        );
        let us: CountryCode = "+1".parse().expect("code");
        assert_eq!(
            Phone::parse("(202) 555-0123", us)
                .map(String::from)
                .as_deref(),
            Ok("+12025550123")
        );
        // Another country's number keeps its own code.
        assert_eq!(cn("+1 202 555 0123").as_deref(), Ok("+12025550123"));
    }

    #[test]
    fn too_short_too_long_and_letters_are_refused() {
        for bad in [
            "",
            "+",
            "123",
            "+1234567",
            "+1234567890123456",
            "13800abc000",
            "++8613800000000",
            "+0861380000000",
            "+86 138\n0000 0000",
        ] {
            assert!(cn(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn country_codes_are_one_to_three_digits_not_starting_with_zero() {
        for good in ["86", "+86", "1", "358"] {
            assert!(good.parse::<CountryCode>().is_ok(), "{good}");
        }
        for bad in ["", "0", "086", "1234", "8a", "+"] {
            assert!(bad.parse::<CountryCode>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_stored_form_reads_back_and_nothing_else_does() {
        let p = Phone::parse("138 0000 0000", CountryCode::CHINA).expect("phone");
        assert_eq!(Phone::try_from(p.as_str()), Ok(p));
        assert!(Phone::try_from("13800000000").is_err());
        assert!(Phone::try_from("+86 13800000000").is_err());
    }

    proptest! {
        #[test]
        fn any_parsed_phone_is_e164_and_reads_back(d in "[0-9 +()-]{0,20}") {
            if let Ok(p) = Phone::parse(&d, CountryCode::CHINA) {
                let digits = p.as_str().strip_prefix('+').expect("plus");
                prop_assert!((8..=15).contains(&digits.len()));
                prop_assert_eq!(Phone::try_from(p.as_str()), Ok(p.clone()));
                prop_assert_eq!(Phone::parse(p.as_str(), CountryCode::CHINA), Ok(p));
            }
        }

        #[test]
        fn parsing_never_panics(s in "\\PC*") {
            let _ = Phone::parse(&s, CountryCode::CHINA);
            let _ = Phone::try_from(s.as_str());
        }
    }

    #[test]
    fn a_masked_phone_shows_its_last_four_digits_only() {
        let p = Phone::parse("+86 138-0013-8000", CountryCode::CHINA).expect("phone");
        assert_eq!(p.masked(), "+*********8000");
    }
}
