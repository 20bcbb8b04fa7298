//! Cron schedules as upstream's CronJob controller reads them
//! (`robfig/cron/v3`'s `ParseStandard`): five fields (minute, hour, day of
//! month, month, day of week) with `*`, `?`, ranges `a-b`, steps `/n`,
//! lists `a,b` and month/day names; the descriptors `@yearly`,
//! `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly`
//! and `@every <duration>`; an optional `CRON_TZ=<zone>` or `TZ=<zone>`
//! prefix. Day of month and day of week are ORed unless either is `*`/`?`
//! (then ANDed), as cron does. Times are searched in the schedule's zone.

use chrono::{DateTime, Datelike, Duration, NaiveDate, NaiveDateTime, TimeZone, Timelike, Utc};
use chrono_tz::Tz;

/// A parsed schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// A cron spec (bit sets per field).
    Cron(Spec),
    /// `@every <duration>`: a fixed delay (whole seconds, at least 1).
    Every(i64),
}

/// The fields of a cron spec; bit `i` set = value `i` allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    minute: u64,
    hour: u64,
    dom: u64,
    month: u64,
    dow: u64,
    dom_star: bool,
    dow_star: bool,
    /// The `CRON_TZ`/`TZ` prefix's zone, if any.
    pub zone: Option<Tz>,
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const DAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

fn value(s: &str, names: &[&str], offset: u32) -> Result<u32, String> {
    let lower = s.to_ascii_lowercase();
    if let Some(i) = names.iter().position(|n| *n == lower) {
        return Ok(u32::try_from(i).unwrap_or(0) + offset);
    }
    s.parse::<u32>().map_err(|_| {
        format!("failed to parse int from {s}: strconv.Atoi: parsing \"{s}\": invalid syntax")
    })
}

/// One field: returns its bits and whether it was `*`/`?`.
fn field(
    text: &str,
    min: u32,
    max: u32,
    names: &[&str],
    offset: u32,
) -> Result<(u64, bool), String> {
    let mut bits = 0u64;
    let mut star = false;
    for part in text.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, s)) => (r, Some(s)),
            None => (part, None),
        };
        let (mut lo, mut hi, whole) = if range == "*" || range == "?" {
            (min, max, true)
        } else if let Some((a, b)) = range.split_once('-') {
            (value(a, names, offset)?, value(b, names, offset)?, false)
        } else {
            let v = value(range, names, offset)?;
            (v, v, false)
        };
        let step = match step {
            Some(s) => {
                let n = s
                    .parse::<u32>()
                    .map_err(|_| format!("failed to parse int from {s}"))?;
                if !whole && lo == hi {
                    // `a/n` means `a-max/n`.
                    hi = max;
                }
                n
            }
            None => 1,
        };
        if whole && step == 1 {
            star = true;
        }
        if lo < min {
            return Err(format!(
                "beginning of range ({lo}) below minimum ({min}): {part}"
            ));
        }
        if hi > max {
            return Err(format!("end of range ({hi}) above maximum ({max}): {part}"));
        }
        if lo > hi {
            return Err(format!(
                "beginning of range ({lo}) beyond end of range ({hi}): {part}"
            ));
        }
        if step == 0 {
            return Err(format!("step of range should be a positive number: {part}"));
        }
        while lo <= hi {
            bits |= 1 << lo;
            lo += step;
        }
    }
    Ok((bits, star))
}

/// Parses a Go duration of `h`, `m`, `s` units (`1h30m`, `90s`).
fn go_duration(s: &str) -> Result<i64, String> {
    let mut total = 0f64;
    let mut num = String::new();
    let mut rest = s.chars().peekable();
    let mut any = false;
    while let Some(c) = rest.next() {
        if c.is_ascii_digit() || c == '.' {
            num.push(c);
            continue;
        }
        let mut unit = c.to_string();
        if c == 'm' && rest.peek() == Some(&'s') {
            unit.push('s');
            rest.next();
        }
        let n: f64 = num
            .parse()
            .map_err(|_| format!("time: invalid duration \"{s}\""))?;
        num.clear();
        total += n * match unit.as_str() {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            _ => return Err(format!("time: unknown unit \"{unit}\" in duration \"{s}\"")),
        };
        any = true;
    }
    if !num.is_empty() || !any {
        return Err(format!("time: invalid duration \"{s}\""));
    }
    // Rounded to whole seconds, at least one, as robfig's `Every`.
    #[allow(clippy::cast_possible_truncation)]
    Ok((total.round() as i64).max(1))
}

impl Schedule {
    /// Parses `text` (see the module documentation); errors read as
    /// robfig/cron's.
    ///
    /// # Errors
    ///
    /// A malformed schedule.
    pub fn parse(text: &str) -> Result<Schedule, String> {
        let text = text.trim();
        let (zone, body) = match text.split_once(' ') {
            Some((first, rest)) if first.starts_with("CRON_TZ=") || first.starts_with("TZ=") => {
                let name = first.split_once('=').map(|(_, z)| z).unwrap_or_default();
                let tz: Tz = name.parse().map_err(|_| {
                    format!("provided bad location {name}: unknown time zone {name}")
                })?;
                (Some(tz), rest.trim())
            }
            _ => (None, text),
        };
        if let Some(d) = body.strip_prefix('@') {
            let fields = match d {
                "yearly" | "annually" => "0 0 1 1 *",
                "monthly" => "0 0 1 * *",
                "weekly" => "0 0 * * 0",
                "daily" | "midnight" => "0 0 * * *",
                "hourly" => "0 * * * *",
                _ => match d.strip_prefix("every ") {
                    Some(dur) => return go_duration(dur.trim()).map(Schedule::Every),
                    None => return Err(format!("unrecognized descriptor: {body}")),
                },
            };
            return Schedule::parse_fields(fields, zone);
        }
        Schedule::parse_fields(body, zone)
    }

    fn parse_fields(body: &str, zone: Option<Tz>) -> Result<Schedule, String> {
        let f: Vec<&str> = body.split_whitespace().collect();
        if f.len() != 5 {
            return Err(format!(
                "expected exactly 5 fields, found {}: {body}",
                f.len()
            ));
        }
        let (minute, _) = field(f[0], 0, 59, &[], 0)?;
        let (hour, _) = field(f[1], 0, 23, &[], 0)?;
        let (dom, dom_star) = field(f[2], 1, 31, &[], 0)?;
        let (month, _) = field(f[3], 1, 12, &MONTHS, 1)?;
        let (dow, dow_star) = field(f[4], 0, 6, &DAYS, 0)?;
        Ok(Schedule::Cron(Spec {
            minute,
            hour,
            dom,
            month,
            dow,
            dom_star,
            dow_star,
            zone,
        }))
    }

    /// The `CRON_TZ`/`TZ` zone of the schedule, if any.
    pub fn zone(&self) -> Option<Tz> {
        match self {
            Schedule::Cron(s) => s.zone,
            Schedule::Every(_) => None,
        }
    }

    /// The first activation strictly after `t`, searched in `zone` (the
    /// schedule's own prefix zone wins); `None` when none within five
    /// years (e.g. `0 0 30 2 *`).
    pub fn next(&self, t: DateTime<Utc>, zone: Tz) -> Option<DateTime<Utc>> {
        let spec = match self {
            Schedule::Every(secs) => {
                let whole = t.with_nanosecond(0).unwrap_or(t);
                return Some(whole + Duration::seconds(*secs));
            }
            Schedule::Cron(spec) => spec,
        };
        let zone = spec.zone.unwrap_or(zone);
        let local = t.with_timezone(&zone).naive_local();
        // The next whole minute after t.
        let mut c = local.with_second(0)?.with_nanosecond(0)? + Duration::minutes(1);
        let limit = c + Duration::days(366 * 5);
        let has = |bits: u64, v: u32| bits & (1 << v) != 0;
        while c < limit {
            if !has(spec.month, c.month()) {
                c = first_of_next_month(c)?;
                continue;
            }
            if !spec.day_matches(c) {
                c = (c.date() + Duration::days(1)).and_hms_opt(0, 0, 0)?;
                continue;
            }
            if !has(spec.hour, c.hour()) {
                c = c.with_minute(0)? + Duration::hours(1);
                continue;
            }
            if !has(spec.minute, c.minute()) {
                c += Duration::minutes(1);
                continue;
            }
            // A local time in a DST gap does not exist: skip it.
            if let Some(at) = zone.from_local_datetime(&c).earliest() {
                let at = at.with_timezone(&Utc);
                if at > t {
                    return Some(at);
                }
            }
            c += Duration::minutes(1);
        }
        None
    }
}

impl Spec {
    fn day_matches(&self, c: NaiveDateTime) -> bool {
        let dom = self.dom & (1 << c.day()) != 0;
        let dow = self.dow & (1 << c.weekday().num_days_from_sunday()) != 0;
        if self.dom_star || self.dow_star {
            dom && dow
        } else {
            dom || dow
        }
    }
}

fn first_of_next_month(c: NaiveDateTime) -> Option<NaiveDateTime> {
    let (y, m) = if c.month() == 12 {
        (c.year() + 1, 1)
    } else {
        (c.year(), c.month() + 1)
    };
    NaiveDate::from_ymd_opt(y, m, 1)?.and_hms_opt(0, 0, 0)
}

/// Upstream's `mostRecentScheduleTime`: from `earliest` (the last schedule,
/// else the CronJob's creation; moved up to `now - startingDeadlineSeconds`
/// when that is later), the latest activation at or before `now`, and how
/// many activations were missed since `earliest` (capped at 101: upstream
/// only tells whether there were more than 100).
pub fn most_recent(
    schedule: &Schedule,
    zone: Tz,
    earliest: DateTime<Utc>,
    now: DateTime<Utc>,
    starting_deadline_seconds: Option<i64>,
) -> (Option<DateTime<Utc>>, u32) {
    let mut earliest = earliest;
    if let Some(s) = starting_deadline_seconds {
        let deadline = now - Duration::seconds(s);
        if deadline > earliest {
            earliest = deadline;
        }
    }
    let Some(t1) = schedule.next(earliest, zone) else {
        return (None, 0);
    };
    if now < t1 {
        return (None, 0);
    }
    let mut missed = 1u32;
    let mut recent = t1;
    // Jump close to now in steps of the schedule's interval, then walk.
    if let Some(t2) = schedule.next(t1, zone)
        && t2 <= now
    {
        let step = (t2 - t1).num_seconds().max(1);
        let elapsed = (now - t1).num_seconds();
        let jumps = elapsed / step;
        if jumps > 1 {
            let candidate = t1 + Duration::seconds((jumps - 1) * step);
            if let Some(start) = schedule.next(candidate - Duration::seconds(1), zone)
                && start <= now
            {
                recent = start;
                missed = u32::try_from(jumps).unwrap_or(u32::MAX);
            }
        }
        while let Some(n) = schedule.next(recent, zone) {
            if n > now {
                break;
            }
            recent = n;
            missed = missed.saturating_add(1);
        }
    }
    (Some(recent), missed.min(101))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s)
            .expect("time")
            .with_timezone(&Utc)
    }

    fn next(s: &str, after: &str) -> Option<String> {
        Schedule::parse(s)
            .expect("schedule")
            .next(t(after), Tz::UTC)
            .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
    }

    #[test]
    fn fields_ranges_steps_lists_and_names() {
        assert_eq!(
            next("*/1 * * * *", "2026-01-01T10:00:30Z").as_deref(),
            Some("2026-01-01T10:01:00Z")
        );
        assert_eq!(
            next("0 * * * *", "2026-01-01T10:00:00Z").as_deref(),
            Some("2026-01-01T11:00:00Z")
        );
        assert_eq!(
            next("*/15 * * * *", "2026-01-01T10:16:00Z").as_deref(),
            Some("2026-01-01T10:30:00Z")
        );
        assert_eq!(
            next("5-10/5 3 * * *", "2026-01-01T03:06:00Z").as_deref(),
            Some("2026-01-01T03:10:00Z")
        );
        assert_eq!(
            next("0 9 * * MON-FRI", "2026-01-02T10:00:00Z").as_deref(),
            Some("2026-01-05T09:00:00Z")
        );
        assert_eq!(
            next("0 0 1,15 * *", "2026-01-02T00:00:00Z").as_deref(),
            Some("2026-01-15T00:00:00Z")
        );
        assert_eq!(
            next("0 0 * FEB *", "2026-03-01T00:00:00Z").as_deref(),
            Some("2027-02-01T00:00:00Z")
        );
        assert_eq!(
            next("@hourly", "2026-01-01T10:59:59Z").as_deref(),
            Some("2026-01-01T11:00:00Z")
        );
        assert_eq!(
            next("@weekly", "2026-01-01T00:00:00Z").as_deref(),
            Some("2026-01-04T00:00:00Z")
        );
        assert_eq!(
            next("@yearly", "2026-01-01T00:00:00Z").as_deref(),
            Some("2027-01-01T00:00:00Z")
        );
        assert_eq!(
            next("@every 1h30m", "2026-01-01T00:00:00Z").as_deref(),
            Some("2026-01-01T01:30:00Z")
        );
        assert_eq!(next("0 0 30 2 *", "2026-01-01T00:00:00Z"), None);
    }

    #[test]
    fn day_of_month_and_week_or_unless_one_is_star() {
        // The 13th or any Friday.
        assert_eq!(
            next("0 0 13 * 5", "2026-01-01T00:00:00Z").as_deref(),
            Some("2026-01-02T00:00:00Z")
        );
        // Any day of month (star) and Friday.
        assert_eq!(
            next("0 0 * * 5", "2026-01-03T00:00:00Z").as_deref(),
            Some("2026-01-09T00:00:00Z")
        );
    }

    #[test]
    fn time_zones_from_the_prefix_or_the_field() {
        // 09:00 in New York is 14:00 UTC in January.
        let s = Schedule::parse("0 9 * * *").expect("schedule");
        let ny: Tz = "America/New_York".parse().expect("zone");
        assert_eq!(
            s.next(t("2026-01-01T00:00:00Z"), ny),
            Some(t("2026-01-01T14:00:00Z"))
        );
        let s = Schedule::parse("CRON_TZ=Asia/Tokyo 0 9 * * *").expect("schedule");
        assert_eq!(
            s.next(t("2026-01-01T00:00:00Z"), Tz::UTC),
            Some(t("2026-01-02T00:00:00Z"))
        );
        assert!(Schedule::parse("TZ=Nowhere/City * * * * *").is_err());
    }

    #[test]
    fn malformed_schedules_fail() {
        for bad in [
            "* * * *",
            "60 * * * *",
            "* 24 * * *",
            "* * 0 * *",
            "* * * 13 *",
            "* * * * 7",
            "*/0 * * * *",
            "@sometimes",
            "a * * * *",
        ] {
            assert!(Schedule::parse(bad).is_err(), "{bad}");
        }
    }

    // Upstream's TestMostRecentScheduleTime shapes: hourly schedule,
    // earliest at the top of the hour.
    #[test]
    fn most_recent_counts_missed_schedules() {
        let s = Schedule::parse("0 * * * *").expect("schedule");
        let top = t("2026-05-19T10:00:00Z");
        assert_eq!(
            most_recent(&s, Tz::UTC, top, t("2026-05-19T10:30:00Z"), None),
            (None, 0)
        );
        assert_eq!(
            most_recent(&s, Tz::UTC, top, t("2026-05-19T11:00:00Z"), None),
            (Some(t("2026-05-19T11:00:00Z")), 1)
        );
        assert_eq!(
            most_recent(&s, Tz::UTC, top, t("2026-05-19T13:05:00Z"), None),
            (Some(t("2026-05-19T13:00:00Z")), 3)
        );
        // Many missed: capped above 100.
        let (recent, missed) = most_recent(&s, Tz::UTC, top, t("2026-06-19T10:30:00Z"), None);
        assert_eq!(recent, Some(t("2026-06-19T10:00:00Z")));
        assert_eq!(missed, 101);
        // A starting deadline moves the earliest time up.
        assert_eq!(
            most_recent(&s, Tz::UTC, top, t("2026-05-19T13:05:00Z"), Some(600)),
            (Some(t("2026-05-19T13:00:00Z")), 1)
        );
        assert_eq!(
            most_recent(&s, Tz::UTC, top, t("2026-05-19T13:15:00Z"), Some(600)),
            (None, 0)
        );
        // Every minute, two days missed.
        let m = Schedule::parse("*/1 * * * *").expect("schedule");
        let (recent, _) = most_recent(&m, Tz::UTC, top, t("2026-05-21T10:00:30Z"), None);
        assert_eq!(recent, Some(t("2026-05-21T10:00:00Z")));
    }

    proptest::proptest! {
        /// `next` is strictly later, on a minute the fields allow, and no
        /// allowed minute lies between.
        #[test]
        fn next_is_the_first_matching_minute_after(
            minute in 0u32..60,
            step in 1u32..30,
            hour in proptest::option::of(0u32..24),
            dow in proptest::option::of(0u32..7),
            after in 1_700_000_000i64..1_900_000_000,
        ) {
            let text = format!(
                "{minute}/{step} {} * * {}",
                hour.map_or("*".to_owned(), |h| h.to_string()),
                dow.map_or("*".to_owned(), |d| d.to_string()),
            );
            let s = Schedule::parse(&text).expect("schedule");
            let t0 = DateTime::from_timestamp(after, 0).expect("time");
            let n = s.next(t0, Tz::UTC).expect("an activation");
            proptest::prop_assert!(n > t0);
            let ok = |d: DateTime<Utc>| {
                d.minute() >= minute && (d.minute() - minute).is_multiple_of(step)
                    && hour.is_none_or(|h| d.hour() == h)
                    && dow.is_none_or(|w| d.weekday().num_days_from_sunday() == w)
            };
            proptest::prop_assert!(ok(n), "{text}: {n}");
            proptest::prop_assert_eq!(n.second(), 0);
            // No earlier matching minute (checked over the first 3 hours).
            let mut c = t0.with_second(0).expect("minute") + Duration::minutes(1);
            while c < n && c < t0 + Duration::hours(3) {
                proptest::prop_assert!(!ok(c), "{text}: {c} before {n}");
                c += Duration::minutes(1);
            }
        }
    }
}
