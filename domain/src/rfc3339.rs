//! Instants read from the wire (`2030-06-01T10:00:30Z`, `…30.123+08:00`) by a parser of this
//! one shape, for the fields the browser reads (`#[serde(deserialize_with = …)]`). chrono's
//! own `Deserialize` goes through its general format parser, which weighed on every island's
//! bundle (design.md decision 36); the instants written are chrono's (`Serialize` unchanged).

use chrono::{DateTime, Duration, NaiveDate, Utc};
use serde::{de::Error, Deserialize, Deserializer};

/// `text` as an RFC 3339 date and time with its offset (`Z` or `±hh:mm`), or `None`.
pub fn parse(text: &str) -> Option<DateTime<Utc>> {
    let b = text.as_bytes();
    let digits = |from: usize, to: usize| -> Option<u32> {
        b.get(from..to)?.iter().try_fold(0_u32, |n, &c| {
            c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
        })
    };
    let separators = [(4, b'-'), (7, b'-'), (13, b':'), (16, b':')];
    if separators.iter().any(|&(i, c)| b.get(i) != Some(&c))
        || !matches!(b.get(10), Some(b'T' | b't'))
    {
        return None;
    }
    let date = NaiveDate::from_ymd_opt(
        i32::try_from(digits(0, 4)?).ok()?,
        digits(5, 7)?,
        digits(8, 10)?,
    )?;
    let mut at = 19;
    let mut nanos = 0_u32;
    if b.get(at) == Some(&b'.') {
        at += 1;
        let start = at;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        if at == start {
            return None;
        }
        // Nanoseconds: the first nine digits, padded.
        let kept = (at - start).min(9);
        nanos = digits(start, start + kept)? * 10_u32.pow(9 - kept as u32);
    }
    let offset_secs = match b.get(at..)? {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (hours, minutes) = (digits(at + 1, at + 3)?, digits(at + 4, at + 6)?);
            if hours > 23 || minutes > 59 {
                return None;
            }
            let secs = i64::from(hours * 3600 + minutes * 60);
            if *sign == b'-' {
                -secs
            } else {
                secs
            }
        }
        _ => return None,
    };
    let local = date.and_hms_nano_opt(digits(11, 13)?, digits(14, 16)?, digits(17, 19)?, nanos)?;
    local
        .and_utc()
        .checked_sub_signed(Duration::seconds(offset_secs))
}

/// `#[serde(deserialize_with = "domain::rfc3339::deserialize")]`.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
    let text = String::deserialize(d)?;
    parse(&text).ok_or_else(|| D::Error::custom(format!("not an RFC 3339 time: {text:?}")))
}

/// The same for an optional instant (`null` or absent: with `#[serde(default)]`).
pub fn deserialize_option<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<DateTime<Utc>>, D::Error> {
    match Option::<String>::deserialize(d)? {
        None => Ok(None),
        Some(text) => parse(&text)
            .map(Some)
            .ok_or_else(|| D::Error::custom(format!("not an RFC 3339 time: {text:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::parse;
    use chrono::{DateTime, SecondsFormat, Utc};

    fn chrono(text: &str) -> Option<DateTime<Utc>> {
        DateTime::parse_from_rfc3339(text)
            .ok()
            .map(|t| t.with_timezone(&Utc))
    }

    #[test]
    fn reads_what_chrono_reads() {
        for text in [
            "2030-06-01T10:00:30Z",
            "2030-06-01T10:00:30.5Z",
            "2030-06-01T10:00:30.123456789Z",
            "2030-06-01T10:00:30.1234567891Z",
            "2030-06-01T10:00:30+08:00",
            "2030-06-01T02:00:30-05:30",
            "2030-12-31t23:59:59z",
            "2024-02-29T00:00:00Z",
            "1970-01-01T00:00:00Z",
        ] {
            assert_eq!(parse(text), chrono(text), "{text}");
            assert!(parse(text).is_some(), "{text}");
        }
    }

    #[test]
    fn reads_back_what_the_server_writes() {
        let now = Utc::now();
        for format in [
            SecondsFormat::AutoSi,
            SecondsFormat::Secs,
            SecondsFormat::Millis,
        ] {
            let text = now.to_rfc3339_opts(format, true);
            assert_eq!(parse(&text), chrono(&text), "{text}");
        }
        let text = serde_json::to_string(&now).expect("serializes");
        assert_eq!(parse(text.trim_matches('"')), Some(now));
    }

    proptest::proptest! {
        /// Any instant from 1970 to 9999, at any offset and precision, reads as chrono reads it.
        #[test]
        fn agrees_with_chrono(
            secs in 0_i64..253_402_300_799,
            nanos in 0_u32..1_000_000_000,
            offset_minutes in -1439_i32..1440,
            digits in 0_usize..4,
        ) {
            let at = DateTime::from_timestamp(secs, nanos).expect("in range");
            let zone = chrono::FixedOffset::east_opt(offset_minutes * 60).expect("offset");
            let format = [SecondsFormat::Secs, SecondsFormat::Millis, SecondsFormat::Micros, SecondsFormat::Nanos][digits];
            let text = at.with_timezone(&zone).to_rfc3339_opts(format, true);
            proptest::prop_assert_eq!(parse(&text), chrono(&text), "{}", text);
        }
    }

    #[test]
    fn refuses_what_is_not_one() {
        for text in [
            "",
            "2030-06-01",
            "2030-06-01T10:00:30",
            "2030-06-01 10:00:30Z",
            "2030-02-30T10:00:00Z",
            "2030-06-01T24:00:00Z",
            "2030-06-01T10:00:30.Z",
            "2030-06-01T10:00:30+0800",
            "2030-06-01T10:00:30+24:00",
            "2030-06-01T10:00:30Zjunk",
            "2030-6-01T10:00:30Z",
            "+030-06-01T10:00:30Z",
            "２030-06-01T10:00:30Z",
        ] {
            assert_eq!(parse(text), None, "{text}");
        }
    }
}
