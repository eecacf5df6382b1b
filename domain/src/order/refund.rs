//! Where the money of a cancelled order stands: what a shopper may be told about it.

use serde::{Deserialize, Serialize};

/// The refund of a cancelled order, as the payment provider last answered. A shopper reads
/// "refunded" only once the provider confirmed it (issue #52): while it is owed, that it is on
/// its way; when the provider refused it for good, that the shop will make it right.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Refund {
    /// No money was taken for the order: nothing to give back.
    #[default]
    None,
    /// Money is owed back and the provider has not confirmed it yet (it is retried until it
    /// answers: payments `refund_due`).
    Owed,
    /// The provider confirmed the money went back (payments `refunded`).
    Refunded,
    /// The provider refused it for good: the money is still the shopper's to get back, an admin
    /// must act (payments `refund_failed`).
    Refused,
}

impl Refund {
    /// Whether no money is involved (the field is left out of the JSON then).
    pub fn is_none(&self) -> bool {
        *self == Self::None
    }

    /// The wire name (`owed`, `refunded`, `refused`; `none` when nothing was taken).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Owed => "owed",
            Self::Refunded => "refunded",
            Self::Refused => "refused",
        }
    }

    /// From the payments of one order, the one a shopper must hear about: a refusal before a
    /// refund still owed, that before one made. `states` are `payments.state` values.
    pub fn of_payment_states<'a>(states: impl IntoIterator<Item = &'a str>) -> Self {
        states
            .into_iter()
            .map(|state| match state {
                "refund_failed" => Self::Refused,
                "refund_due" => Self::Owed,
                "refunded" => Self::Refunded,
                _ => Self::None,
            })
            .max_by_key(|r| match r {
                Self::None => 0,
                Self::Refunded => 1,
                Self::Owed => 2,
                Self::Refused => 3,
            })
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::Refund;

    #[test]
    fn a_refusal_outweighs_a_refund_owed_which_outweighs_one_made() {
        assert_eq!(Refund::of_payment_states([]), Refund::None);
        assert_eq!(Refund::of_payment_states(["paid"]), Refund::None);
        assert_eq!(Refund::of_payment_states(["refunded"]), Refund::Refunded);
        assert_eq!(
            Refund::of_payment_states(["refunded", "refund_due"]),
            Refund::Owed
        );
        assert_eq!(
            Refund::of_payment_states(["refund_due", "refund_failed", "refunded"]),
            Refund::Refused
        );
    }
}
