//! A refusal as an island shows it: the error, for what the island does about it, and its
//! words. A refusal the REST API answered keeps the sentence the server wrote for it, in the
//! request's language: a browser bundle carries no catalogue of refusals (issue #53), only the
//! few words for what the island says itself (a request that did not get through, a buy
//! answered "already bought").

use crate::{error::AppError, words::t};

/// An error and the sentence to show for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub error: AppError,
    words: String,
}

impl Refusal {
    /// The REST API's refusal with the sentence it came with.
    pub fn said(error: AppError, words: String) -> Self {
        Self { error, words }
    }

    /// A refusal the island makes itself, in the page's language: a buy answered "already
    /// bought", an order it cannot find, an answer that was not the API's (a proxy's page: too
    /// many requests, the service unavailable), or a request that did not get through.
    pub fn own(error: AppError) -> Self {
        let t = t();
        let words = match &error {
            AppError::AlreadyBought(_) => t.err_already_bought(),
            AppError::NotFound => t.err_not_found(),
            AppError::RateLimited => t.err_rate_limited(),
            AppError::Unavailable => t.err_unavailable(),
            _ => t.err_transport(),
        };
        Self {
            error,
            words: words.to_owned(),
        }
    }

    /// The sentence for people.
    pub fn words(&self) -> &str {
        &self.words
    }

    /// The error's stable code (`data-code`).
    pub fn code(&self) -> &'static str {
        self.error.code()
    }
}

/// An error the server made (a page's, a plain form's, a server function's): its sentence from
/// the catalogue, in the page's language. Not for the shoppers' islands, whose bundles would
/// then carry every refusal's sentence in both languages.
impl From<AppError> for Refusal {
    fn from(error: AppError) -> Self {
        let words = error.message(crate::words::lang());
        Self { error, words }
    }
}
