//! Go's duration text (`time.ParseDuration`: `1h30m`, `-1.5s`, `300ms`,
//! `2us`, `0`), which schema format `duration` values use.

/// The duration `s` denotes, or `None` (see
/// [`skein_admission::gofmt::parse_duration`]).
pub(crate) fn parse_go(s: &str) -> Option<chrono::Duration> {
    skein_admission::gofmt::parse_duration(s)
        .ok()
        .map(chrono::Duration::nanoseconds)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::parse_go;

    proptest! {
        /// Any text: a duration or `None`, never a panic.
        #[test]
        fn never_panics(s in "[-+0-9.a-zµ]{0,16}") {
            let _ = parse_go(&s);
        }
    }

    #[test]
    fn go_durations() {
        let secs = |s: &str| parse_go(s).map(|d| d.num_milliseconds());
        assert_eq!(secs("1h30m"), Some(5_400_000));
        assert_eq!(secs("-1.5s"), Some(-1500));
        assert_eq!(secs("300ms"), Some(300));
        assert_eq!(secs("0"), Some(0));
        assert_eq!(secs(""), None);
        assert_eq!(secs("1"), None);
        assert_eq!(secs("1d"), None);
        assert_eq!(secs("9999999999h"), None);
        assert_eq!(secs("1.2.3s"), None);
        assert_eq!(secs(".5s"), Some(500));
        assert_eq!(secs("1..s"), None);
    }
}
