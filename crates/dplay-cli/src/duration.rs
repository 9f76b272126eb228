//! One parser for every duration option (`--timeout`, `--duration`, `--keepalive`, `--fly`,
//! ...): humantime's forms (`30s`, `2m`, `1h 30m`, `250ms`) or plain seconds (`1.5`).
//!
//! Every value is checked here, so no command meets a NaN, an infinity, a negative time or one
//! so long that adding it to an `Instant` would overflow.

use std::time::Duration;

/// The longest duration any option takes: 30 days (the error message says so).
pub(crate) const MAX: Duration = Duration::from_secs(30 * 24 * 3600);

/// The shortest period a repeating timer takes (`--keepalive`, `--stats-every`).
pub(crate) const MIN_PERIOD: Duration = Duration::from_millis(100);

/// [`parse`], at least [`MIN_PERIOD`]: a shorter one is refused rather than raised silently
/// (issue 25 item 18).
pub(crate) fn parse_period(text: &str) -> Result<Duration, String> {
    let d = parse(text)?;
    if d < MIN_PERIOD {
        return Err(format!("`{}` is shorter than the shortest period taken, 100ms", text.trim()));
    }
    Ok(d)
}

/// Parses `30s`, `2m`, `1h 30m`, `250ms` or plain seconds such as `1.5`; at most [`MAX`].
pub(crate) fn parse(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let duration = match text.parse::<f64>() {
        Ok(secs) if !secs.is_finite() => return Err(format!("`{text}` is not a finite time")),
        Ok(secs) if secs < 0.0 => return Err(format!("`{text}` is negative: give a time of 0 or more")),
        Ok(secs) if secs > MAX.as_secs_f64() => return Err(too_long(text)),
        Ok(secs) => Duration::from_secs_f64(secs),
        Err(_) => humantime::parse_duration(text).map_err(|e| {
            format!(
                "`{text}` is not a time ({e}): give seconds (such as 1.5) or a unit (such as 30s, 2m, 250ms)"
            )
        })?,
    };
    if duration > MAX {
        return Err(too_long(text));
    }
    Ok(duration)
}

fn too_long(text: &str) -> String {
    format!("`{text}` is too long: give at most 30 days")
}

/// A duration as the user would write it again (`1.5s`, `2m`).
pub(crate) fn show(d: Duration) -> humantime::FormattedDuration {
    humantime::format_duration(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        assert_eq!(parse("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse("0"), Ok(Duration::ZERO));
        assert_eq!(parse("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse("1h 30m"), Ok(Duration::from_secs(5400)));
    }

    /// Issue #15 item 6: each of these panicked or was taken as is.
    #[test]
    fn rejected() {
        for bad in ["inf", "-inf", "nan", "NaN", "1e300", "-1", "-0.5", "31d", "soon", "", "1x"] {
            assert!(parse(bad).is_err(), "{bad} accepted");
        }
        assert_eq!(parse("30d"), Ok(MAX));
    }

    proptest::proptest! {
        /// Any text: an error or a duration of at most [`MAX`], never a panic.
        #[test]
        fn never_panics(text in "\\PC{0,24}") {
            if let Ok(d) = parse(&text) {
                proptest::prop_assert!(d <= MAX);
            }
        }

        /// Any number: taken exactly when finite and within 0..=MAX seconds.
        #[test]
        fn numbers(secs in proptest::num::f64::ANY) {
            let ok = secs.is_finite() && (0.0..=MAX.as_secs_f64()).contains(&secs);
            proptest::prop_assert_eq!(parse(&secs.to_string()).is_ok(), ok, "{}", secs);
        }
    }
}
