//! Field-by-field validation messages, in words for the person who typed the value.

use serde::{Deserialize, Serialize};

/// One field's problem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldError {
    /// The field's wire name (`title`, `price_cents`, …).
    pub field: String,
    /// What is wrong, to follow the field's label: "is required", "must be a number".
    pub message: String,
}

/// Every problem of one submission, at most one per field, in form order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("invalid: {}", self.0.iter().map(|e| format!("{}: {}", e.field, e.message)).collect::<Vec<_>>().join("; "))]
pub struct FieldErrors(pub Vec<FieldError>);

impl FieldErrors {
    /// Records `message` for `field`, unless the field already has one (the first problem
    /// found is the one to fix first).
    pub fn push(&mut self, field: &str, message: impl Into<String>) {
        if self.get(field).is_none() {
            self.0.push(FieldError {
                field: field.to_owned(),
                message: message.into(),
            });
        }
    }

    /// Records `message` for `field` in place of whatever it had.
    pub fn replace(&mut self, field: &str, message: impl Into<String>) {
        let message = message.into();
        match self.0.iter_mut().find(|e| e.field == field) {
            Some(e) => e.message = message,
            None => self.0.push(FieldError {
                field: field.to_owned(),
                message,
            }),
        }
    }

    pub fn get(&self, field: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|e| e.field == field)
            .map(|e| e.message.as_str())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_message_per_field_the_first_unless_replaced() {
        let mut e = FieldErrors::default();
        e.push("title", "is required");
        e.push("title", "is too long");
        assert_eq!(e.get("title"), Some("is required"));
        e.replace("title", "must be text");
        e.replace("stock", "must be a number");
        assert_eq!(e.get("title"), Some("must be text"));
        assert_eq!(e.0.len(), 2);
    }
}
