//! Row identifiers of PostgreSQL entities.

use std::{fmt, str::FromStr};

use serde::{Deserialize, Serialize};

/// An identifier that is not a positive integer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a valid identifier")]
pub struct IdParseError;

macro_rules! row_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(try_from = "i64", into = "i64")]
        pub struct $name(i64);

        impl $name {
            /// Wraps a value read from a PostgreSQL key column (`BIGSERIAL`, always positive).
            /// Anything read from elsewhere (Redis, a request) goes through `TryFrom`.
            pub fn from_db(value: i64) -> Self {
                Self(value)
            }
            pub fn get(self) -> i64 {
                self.0
            }
        }

        impl TryFrom<i64> for $name {
            type Error = IdParseError;
            fn try_from(value: i64) -> Result<Self, Self::Error> {
                if value > 0 { Ok(Self(value)) } else { Err(IdParseError) }
            }
        }

        impl From<$name> for i64 {
            fn from(id: $name) -> Self {
                id.0
            }
        }

        impl FromStr for $name {
            type Err = IdParseError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                s.parse::<i64>().map_err(|_| IdParseError).and_then(Self::try_from)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

row_id!(
    /// A voucher's ID (`vouchers.id`).
    VoucherId
);
row_id!(
    /// A shopper's or admin's ID (`users.id`).
    UserId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_must_be_positive_integers() {
        assert_eq!("42".parse::<VoucherId>().map(VoucherId::get), Ok(42));
        assert!("0".parse::<VoucherId>().is_err());
        assert!("-3".parse::<UserId>().is_err());
        assert!("4x".parse::<UserId>().is_err());
        assert!("".parse::<UserId>().is_err());
    }

    #[test]
    fn json_goes_through_the_parser() {
        assert_eq!(
            serde_json::to_string(&VoucherId::from_db(7))
                .ok()
                .as_deref(),
            Some("7")
        );
        assert_eq!(
            serde_json::from_str::<VoucherId>("7").ok(),
            VoucherId::try_from(7).ok()
        );
        assert!(serde_json::from_str::<VoucherId>("0").is_err());
        assert!(serde_json::from_str::<UserId>("-1").is_err());
        assert!(serde_json::from_str::<UserId>("\"1\"").is_err());
    }
}
