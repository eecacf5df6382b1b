//! Reading one variable: typed, positive, milliseconds; a blank value counts as unset. The
//! server reads its own settings with these too.

use std::{fmt, str::FromStr, time::Duration};

/// A configuration variable that is present but unusable.
#[derive(Debug, thiserror::Error)]
#[error("{var}: {message}")]
pub struct ConfigError {
    pub var: &'static str,
    pub message: String,
}

/// `lookup`, with a blank value counted as unset (the server reads its own settings so too).
pub fn non_blank(
    lookup: impl Fn(&str) -> Option<String>,
) -> impl Fn(&'static str) -> Option<String> {
    move |var| lookup(var).filter(|v| !v.trim().is_empty())
}

/// The value of `var` (blank counts as unset), else `default`, parsed as a `T`; an unusable value
/// names its variable. The server reads its own settings with these too.
pub fn typed<T: FromStr>(
    get: &impl Fn(&'static str) -> Option<String>,
    var: &'static str,
    default: &str,
) -> Result<T, ConfigError>
where
    T::Err: fmt::Display,
{
    let raw = get(var).unwrap_or_else(|| default.to_owned());
    raw.trim().parse().map_err(|e: T::Err| ConfigError {
        var,
        message: format!("cannot use {raw:?}: {e}"),
    })
}

/// Like [`typed`], and greater than zero.
pub fn positive<T: FromStr + Default + PartialOrd + fmt::Display>(
    get: &impl Fn(&'static str) -> Option<String>,
    var: &'static str,
    default: T,
) -> Result<T, ConfigError>
where
    T::Err: fmt::Display,
{
    let value: T = typed(get, var, &default.to_string())?;
    if value <= T::default() {
        return Err(ConfigError {
            var,
            message: format!("must be greater than zero, got {value}"),
        });
    }
    Ok(value)
}

/// A positive number of milliseconds.
pub fn millis(
    get: &impl Fn(&'static str) -> Option<String>,
    var: &'static str,
    default: u64,
) -> Result<Duration, ConfigError> {
    positive(get, var, default).map(Duration::from_millis)
}

/// `SECKILL_TIME_ZONE` (an IANA name; `Asia/Shanghai` when unset): the shop's zone, which its
/// pages and its reminders' times are in. The server reads it with this too.
pub fn time_zone(raw: Option<&str>) -> Result<chrono_tz::Tz, ConfigError> {
    let name = raw.map_or("Asia/Shanghai", str::trim);
    name.parse().map_err(|_| ConfigError {
        var: "SECKILL_TIME_ZONE",
        message: format!("{name:?} is not an IANA time zone name (such as Asia/Shanghai)"),
    })
}
