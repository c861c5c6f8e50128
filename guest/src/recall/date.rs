//! Unix milliseconds to and from `YYYY-MM-DD` in UTC, for the dates recall shows and the
//! `since` of `recall_search`: the proleptic Gregorian calendar's days-from-civil and
//! civil-from-days (Howard Hinnant's algorithms), so the component needs no date crate.

const MS_PER_DAY: u64 = 86_400_000;

/// The UTC date of `at_ms` (Unix milliseconds), as `YYYY-MM-DD`.
pub fn date(at_ms: u64) -> String {
    let (year, month, day) = civil_from_days((at_ms / MS_PER_DAY) as i64);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The first millisecond (UTC) of the date `YYYY-MM-DD`, from 1970-01-01 on; `None` for any
/// other text, or a day the month does not have.
pub fn parse_date(text: &str) -> Option<u64> {
    let bytes = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<u32> {
        let part = text.get(range)?;
        part.bytes().all(|b| b.is_ascii_digit()).then(|| part.parse().ok())?
    };
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return None;
    }
    let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    if year < 1970 || !(1..=12).contains(&month) || day == 0 {
        return None;
    }
    let days = days_from_civil(i64::from(year), month, day);
    // A day past the month's end lands in the next month: the round trip tells.
    (civil_from_days(days) == (i64::from(year), month, day)).then(|| days as u64 * MS_PER_DAY)
}

/// Days since 1970-01-01 of a (year, month 1..=12, day 1..=31).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = if year >= 0 { year } else { year - 399 } / 400;
    let year_of_era = year - era * 400;
    let month_from_march = i64::from(if month > 2 { month - 3 } else { month + 9 });
    let day_of_year = (153 * month_from_march + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The (year, month, day) of a count of days since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let days = days + 719_468;
    let era = if days >= 0 { days } else { days - 146_096 } / 146_097;
    let day_of_era = days - era * 146_097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u32;
    let month = if month_from_march < 10 { month_from_march + 3 } else { month_from_march - 9 } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_days_of_unix_milliseconds() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(MS_PER_DAY - 1), "1970-01-01");
        assert_eq!(date(951_782_400_000), "2000-02-29");
        assert_eq!(date(1_700_000_000_000), "2023-11-14");
        assert_eq!(date(4_107_542_400_000), "2100-03-01");
    }

    #[test]
    fn parsing_a_date_gives_its_first_millisecond_and_round_trips() {
        assert_eq!(parse_date("1970-01-01"), Some(0));
        assert_eq!(parse_date("2000-02-29"), Some(951_782_400_000));
        for at_ms in [0, 951_782_400_000, 1_700_000_000_000, 4_107_542_400_000, 253_402_214_400_000] {
            let day_start = at_ms - at_ms % MS_PER_DAY;
            assert_eq!(parse_date(&date(at_ms)), Some(day_start), "{at_ms}");
        }
    }

    #[test]
    fn anything_but_a_real_date_from_1970_is_refused() {
        for text in [
            "",
            "2024-1-01",
            "2024/01/01",
            "2024-01-01T00:00",
            "1969-12-31",
            "2023-02-29",
            "2100-02-29",
            "2024-13-01",
            "2024-00-10",
            "2024-04-31",
            "2024-01-00",
            "+024-01-01",
            "２０２４-01-01",
            "yesterday",
        ] {
            assert_eq!(parse_date(text), None, "{text}");
        }
        assert!(parse_date("2024-02-29").is_some());
    }
}
