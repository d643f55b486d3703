//! The `timeZone` option: an IANA time-zone name, whose local dates place numbers in periods.
//!
//! The core has no time-zone data, so it checks the name's syntax only: ASCII, 1..=64 bytes,
//! `UTC` or `Area/Location[/More]` (segments of letters, digits, `_`, `+` and `-`, each starting
//! with a letter: `Europe/Paris`, `America/Argentina/Buenos_Aires`, `Etc/GMT+5`). Whether the
//! zone exists is the host's to check, with the data it converts with, before any command
//! (`Intl.DateTimeFormat` in JS, the compiled-in tz database natively), naming `timeZone`.

/// The default zone.
pub const UTC: &str = "UTC";

/// Longest accepted name, in bytes (the longest IANA name has 32).
pub const MAX_TIME_ZONE_BYTES: usize = 64;

/// Why `name` cannot be a time-zone name, or `None` when its syntax is fine.
pub(crate) fn time_zone_problem(name: &str) -> Option<&'static str> {
    if name == UTC {
        return None;
    }
    if name.is_empty() || name.len() > MAX_TIME_ZONE_BYTES {
        return Some(
            "must be an IANA time-zone name of 1 to 64 characters (`UTC`, `Europe/Paris`)",
        );
    }
    let segment_ok = |segment: &str| {
        segment
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic())
            && segment
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'+' | b'-'))
    };
    let segments = name.split('/').count();
    if segments < 2 || !name.split('/').all(segment_ok) {
        return Some("must be `UTC` or an IANA time-zone name `Area/Location` (`Europe/Paris`, `America/New_York`): ASCII letters, digits, `_`, `+` and `-`, each part starting with a letter");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax() {
        for good in [
            "UTC",
            "Europe/Paris",
            "America/Argentina/Buenos_Aires",
            "Etc/GMT+5",
            "Etc/GMT-14",
            "America/Port-au-Prince",
            "Pacific/Auckland",
        ] {
            assert_eq!(time_zone_problem(good), None, "{good}");
        }
        for bad in [
            "",
            "utc",
            "GMT",
            "Europe/",
            "/Paris",
            "Europe//Paris",
            "Europe/Pa ris",
            "Europe/Parîs",
            "Europe/1Paris",
            "+01:00",
            "Europe/Paris\n",
            &"A/b".repeat(30),
        ] {
            assert!(time_zone_problem(bad).is_some(), "{bad:?}");
        }
    }
}
