//! The small chart of a series' numbers issued per day: inline SVG (no script, no font to
//! fetch), one bar per day with numbers, placed along the days from the first to the last (a day
//! without one is a space), the busiest day's count on the axis. Each bar's `<title>` says its
//! day and count; the page prints the same figures in words beside it.

use std::fmt::Write as _;

use mongo_seq_core::DayCount;

use super::escape::escape;

const WIDTH: f64 = 600.0;
const HEIGHT: f64 = 90.0;
/// Room for the axis labels below the bars.
const LABELS: f64 = 16.0;
const DAY_MS: i64 = 86_400_000;

/// The day number (days since 1970-01-01) of a `YYYY-MM-DD` day.
fn day_number(day: &str) -> Option<i64> {
    bson::DateTime::parse_rfc3339_str(format!("{day}T00:00:00Z"))
        .ok()
        .map(|d| d.timestamp_millis().div_euclid(DAY_MS))
}

/// The chart of `days` (in day order), none when there is no day.
pub fn per_day(days: &[DayCount]) -> Option<String> {
    let placed: Vec<(i64, &DayCount)> = days
        .iter()
        .filter_map(|d| day_number(&d.day).map(|n| (n, d)))
        .collect();
    let (first, last) = (placed.first()?, placed.last()?);
    let span = last.0.saturating_sub(first.0).saturating_add(1) as f64;
    let busiest = placed
        .iter()
        .map(|(_, d)| d.count)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    // A bar is a day wide, at most 16 units (a few days are not a wall of colour).
    let bar = (WIDTH / span).clamp(0.5, 16.0);
    let mut svg = String::new();
    let _ = write!(
        svg,
        r##"<svg class="chart" viewBox="0 0 {WIDTH} {total}" width="100%" role="img" aria-label="Numbers issued per day, {first} to {last}"><line x1="0" y1="{HEIGHT}" x2="{WIDTH}" y2="{HEIGHT}" stroke="#555" stroke-width="0.5"/>"##,
        total = HEIGHT + LABELS,
        first = escape(&first.1.day),
        last = escape(&last.1.day),
    );
    for (number, day) in &placed {
        let height = (day.count as f64 / busiest * (HEIGHT - 12.0)).max(1.0);
        let x = (number.saturating_sub(first.0)) as f64 * WIDTH / span;
        let _ = write!(
            svg,
            r##"<rect x="{x:.2}" y="{y:.2}" width="{w:.2}" height="{height:.2}" fill="#3b5b8c"><title>{day}: {count}</title></rect>"##,
            y = HEIGHT - height,
            w = (bar * 0.85).max(0.5),
            day = escape(&day.day),
            count = day.count,
        );
    }
    let _ = write!(
        svg,
        r##"<text x="0" y="9" font-size="9" font-family="sans-serif" fill="#333">{busiest}</text><text x="0" y="{label}" font-size="9" font-family="sans-serif" fill="#333">{first}</text><text x="{WIDTH}" y="{label}" font-size="9" font-family="sans-serif" fill="#333" text-anchor="end">{last}</text></svg>"##,
        busiest = busiest as u64,
        label = HEIGHT + LABELS - 4.0,
        first = escape(&first.1.day),
        last = escape(&last.1.day),
    );
    Some(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(day: &str, count: u64) -> DayCount {
        DayCount {
            day: day.to_owned(),
            count,
        }
    }

    #[test]
    fn one_bar_per_day_placed_along_the_days() {
        let svg = per_day(&[day("2026-03-01", 2), day("2026-03-04", 1)]).unwrap();
        assert_eq!(svg.matches("<rect").count(), 2, "{svg}");
        // Four days wide: the second bar starts three quarters along.
        assert!(svg.contains(r#"<rect x="450.00""#), "{svg}");
        assert!(svg.contains("<title>2026-03-04: 1</title>"), "{svg}");
        assert!(!svg.contains("<script"), "{svg}");
        assert_eq!(per_day(&[]), None);
    }
}
