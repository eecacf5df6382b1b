//! A shopper's phone number, the sign-in identity.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Why a string is not a phone number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PhoneError {
    #[error("enter a phone number of 7 to 15 digits, optionally starting with +")]
    Invalid,
}

/// A phone number normalised to an optional `+` and 7–15 digits (spaces and dashes removed).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Phone(String);

impl Phone {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The number as logs show it: all but its last four digits hidden (`+86*******1234`).
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

impl TryFrom<&str> for Phone {
    type Error = PhoneError;
    fn try_from(raw: &str) -> Result<Self, Self::Error> {
        let compact: String = raw
            .trim()
            .chars()
            .filter(|c| *c != ' ' && *c != '-')
            .collect();
        let digits = compact.strip_prefix('+').unwrap_or(&compact);
        if (7..=15).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit()) {
            Ok(Self(compact))
        } else {
            Err(PhoneError::Invalid)
        }
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

    #[test]
    fn formatting_characters_are_removed() {
        let p = Phone::try_from(" +86 138-0000-0000 ").expect("valid");
        assert_eq!(p.as_str(), "+8613800000000");
    }

    #[test]
    fn too_short_too_long_and_letters_are_refused() {
        for bad in [
            "",
            "123456",
            "1234567890123456",
            "13800abc000",
            "++12345678",
            "+",
        ] {
            assert!(Phone::try_from(bad).is_err(), "{bad:?} accepted");
        }
    }

    proptest! {
        #[test]
        fn any_7_to_15_digits_parse(d in "[0-9]{7,15}") {
            prop_assert_eq!(Phone::try_from(d.as_str()).map(|p| p.0), Ok(d));
        }

        #[test]
        fn parsing_never_panics(s in "\\PC*") {
            let _ = Phone::try_from(s.as_str());
        }
    }

    #[test]
    fn a_masked_phone_shows_its_last_four_digits_only() {
        let p = Phone::try_from("+86 138-0013-8000").expect("phone");
        assert_eq!(p.masked(), "+*********8000");
        assert_eq!(
            Phone::try_from("1234567").expect("phone").masked(),
            "***4567"
        );
    }
}
