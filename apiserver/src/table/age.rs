//! Human-readable ages: apimachinery's `duration.HumanDuration` and the
//! printers' `translateTimestampSince`.
//!
//! Contract: the output is byte-for-byte what kube-apiserver prints for the
//! same duration — ~2-3 significant figures, `<invalid>` for timestamps
//! more than a second in the future (clock skew of up to 2s reads as `0s`),
//! `<unknown>` for a zero or absent timestamp.
//!
//! Worked examples (see the boundary tests below): 119.9s → `119s`,
//! 2m → `2m`, 9m59s → `9m59s`, 10m59s → `10m`, 2h59m → `179m`, 3h1m →
//! `3h1m`, 8h59m → `8h`, 49h → `2d1h`, 8d23h → `8d`, 2y+1d → `2y1d`,
//! 8y → `8y`.

use time::OffsetDateTime;

use super::timestamp;

const SECOND: i64 = 1_000_000_000;
const MINUTE: i64 = 60 * SECOND;
const HOUR: i64 = 60 * MINUTE;

/// `translateTimestampSince`: the age of `t` at `now`, `<unknown>` for a
/// zero/absent timestamp.
pub(crate) fn since(t: Option<OffsetDateTime>, now: OffsetDateTime) -> String {
    match t {
        None => "<unknown>".to_owned(),
        Some(t) => human_duration(timestamp::nanos_between(t, now)),
    }
}

/// `duration.HumanDuration` over a Go `time.Duration` (nanoseconds).
pub(crate) fn human_duration(d: i64) -> String {
    // Go: int(d.Seconds()), which truncates toward zero.
    let seconds = d / SECOND;
    if seconds < -1 {
        return "<invalid>".to_owned();
    } else if seconds < 0 {
        return "0s".to_owned();
    } else if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = d / MINUTE;
    if minutes < 10 {
        let s = (d / SECOND) % 60;
        if s == 0 {
            return format!("{minutes}m");
        }
        return format!("{minutes}m{s}s");
    } else if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = d / HOUR;
    if hours < 8 {
        let m = (d / MINUTE) % 60;
        if m == 0 {
            return format!("{hours}h");
        }
        format!("{hours}h{m}m")
    } else if hours < 48 {
        format!("{hours}h")
    } else if hours < 24 * 8 {
        let h = hours % 24;
        if h == 0 {
            return format!("{}d", hours / 24);
        }
        format!("{}d{}h", hours / 24, h)
    } else if hours < 24 * 365 * 2 {
        format!("{}d", hours / 24)
    } else if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        if dy == 0 {
            return format!("{}y", hours / 24 / 365);
        }
        format!("{}y{}d", hours / 24 / 365, dy)
    } else {
        format!("{}y", hours / 24 / 365)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;
    const DAY: i64 = 24 * HOUR;
    const YEAR: i64 = 365 * DAY;

    /// apimachinery `duration_test.go` `TestHumanDuration`.
    #[test]
    fn human_duration_examples() {
        let cases = [
            (SECOND, "1s"),
            (70 * SECOND, "70s"),
            (190 * SECOND, "3m10s"),
            (70 * MINUTE, "70m"),
            (47 * HOUR, "47h"),
            (49 * HOUR, "2d1h"),
            ((8 * 24 + 2) * HOUR, "8d"),
            (367 * DAY, "367d"),
            ((365 * 2 * 24 + 25) * HOUR, "2y1d"),
            ((365 * 8 * 24 + 2) * HOUR, "8y"),
        ];
        for (d, want) in cases {
            assert_eq!(human_duration(d), want, "{d}ns");
        }
    }

    /// apimachinery `duration_test.go` `TestHumanDurationBoundaries`.
    #[test]
    fn human_duration_boundaries() {
        let cases = [
            (-2 * SECOND, "<invalid>"),
            (-2 * SECOND + 1, "0s"),
            (0, "0s"),
            (SECOND - MS, "0s"),
            (2 * MINUTE - MS, "119s"),
            (2 * MINUTE, "2m"),
            (2 * MINUTE + SECOND, "2m1s"),
            (10 * MINUTE - MS, "9m59s"),
            (10 * MINUTE, "10m"),
            (10 * MINUTE + SECOND, "10m"),
            (3 * HOUR - MS, "179m"),
            (3 * HOUR, "3h"),
            (3 * HOUR + MINUTE, "3h1m"),
            (8 * HOUR - MS, "7h59m"),
            (8 * HOUR, "8h"),
            (8 * HOUR + 59 * MINUTE, "8h"),
            (2 * DAY - MS, "47h"),
            (2 * DAY, "2d"),
            (2 * DAY + HOUR, "2d1h"),
            (8 * DAY - MS, "7d23h"),
            (8 * DAY, "8d"),
            (8 * DAY + 23 * HOUR, "8d"),
            (2 * YEAR - MS, "729d"),
            (2 * YEAR, "2y"),
            (2 * YEAR + 23 * HOUR, "2y"),
            (2 * YEAR + 23 * HOUR + 59 * MINUTE, "2y"),
            (2 * YEAR + DAY - MS, "2y"),
            (2 * YEAR + DAY, "2y1d"),
            (3 * YEAR, "3y"),
            (4 * YEAR, "4y"),
            (5 * YEAR, "5y"),
            (6 * YEAR, "6y"),
            (7 * YEAR, "7y"),
            (8 * YEAR - MS, "7y364d"),
            (8 * YEAR, "8y"),
            (8 * YEAR + 364 * DAY, "8y"),
            (9 * YEAR, "9y"),
        ];
        for (d, want) in cases {
            assert_eq!(human_duration(d), want, "{d}ns");
        }
    }

    /// printers_test.go `TestTranslateTimestampSince`.
    #[test]
    fn since_translates_timestamps() {
        let now = timestamp::parse("2025-06-01T12:00:00Z").unwrap();
        let at = |offset: i64| Some(now + time::Duration::nanoseconds(offset));
        assert_eq!(since(at(2_100 * MS), now), "<invalid>");
        assert_eq!(since(at(1_900 * MS), now), "0s");
        assert_eq!(since(at(0), now), "0s");
        assert_eq!(since(None, now), "<unknown>");
        assert_eq!(since(at(-30 * SECOND), now), "30s");
        assert_eq!(since(at(-5 * MINUTE), now), "5m");
        assert_eq!(since(at(-100 * MINUTE), now), "100m");
        assert_eq!(since(at(-2 * DAY), now), "2d");
        assert_eq!(since(at(-90 * DAY), now), "90d");
        assert_eq!(since(at(-10 * YEAR), now), "10y");
        // Far past saturates like Go's Time.Sub (292 years of nanoseconds).
        let ancient = timestamp::parse("0002-01-01T00:00:00Z");
        assert_eq!(since(ancient, now), "292y");
    }
}
