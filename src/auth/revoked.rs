//! One revocation as it travels on `seckill:revoked` (decision 30): a session signed out, or a
//! user signed out everywhere.

use crate::domain::UserId;

/// One revocation, as it travels on the channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revoked {
    /// A session signed out: its ID, and its expiry (after which it is refused anyway).
    Session { id: String, expires_ms: i64 },
    /// Every session of a user issued at or before `cut_off_ms`.
    User { user: UserId, cut_off_ms: i64 },
}

impl Revoked {
    /// `s <session> <expires>` or `u <user> <cut-off>`.
    pub fn to_message(&self) -> String {
        match self {
            Self::Session { id, expires_ms } => format!("s {id} {expires_ms}"),
            Self::User { user, cut_off_ms } => format!("u {user} {cut_off_ms}"),
        }
    }

    pub fn from_message(text: &str) -> Option<Self> {
        let mut parts = text.split(' ');
        let (Some(kind), Some(who), Some(ms), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        let ms = ms.parse().ok()?;
        match kind {
            "s" => Some(Self::Session {
                id: who.to_owned(),
                expires_ms: ms,
            }),
            "u" => Some(Self::User {
                user: who.parse().ok()?,
                cut_off_ms: ms,
            }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revocations_travel_as_text_and_back() {
        for r in [
            Revoked::Session {
                id: "0123456789abcdef0123456789abcdef".into(),
                expires_ms: 42,
            },
            Revoked::User {
                user: UserId::from_db(9),
                cut_off_ms: 1_700_000_000_000,
            },
        ] {
            assert_eq!(Revoked::from_message(&r.to_message()), Some(r));
        }
        for bad in [
            "",
            "s",
            "s x",
            "x a 1",
            "u notanumber 1",
            "s a 1 extra",
            "s a b",
        ] {
            assert_eq!(Revoked::from_message(bad), None, "{bad:?}");
        }
    }
}
