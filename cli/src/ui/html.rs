//! The viewer's HTML: escaping, the page frame (style, navigation, the live-update script's
//! hooks) and small formatters. Every text that comes from a session, a plugin or a URL goes
//! through [`esc`]; the pages never build markup from data any other way.

use std::fmt::Write as _;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// Characters kept as they are in a URL path segment or query value; everything else is
/// percent-encoded.
const URL_KEEP: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// `text` escaped for HTML text and attribute values.
pub(crate) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `text` percent-encoded for a URL path segment or query value.
pub(crate) fn url(text: &str) -> String {
    utf8_percent_encode(text, URL_KEEP).to_string()
}

/// Unix milliseconds as `YYYY-MM-DD HH:MM:SS UTC`.
pub(crate) fn time(ms: i64) -> String {
    let iso = scratchpad_host::iso8601(ms);
    format!("{} {} UTC", &iso[..10], &iso[11..19])
}

/// A byte count as people read it.
pub(crate) fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / f64::from(1 << 20)),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

/// A whole page: `title`, the navigation, and `main` (already HTML). `stamp` is the URL the
/// live-update script polls; when what it answers changes, the script fetches this page's
/// `main` again and swaps it in.
pub(crate) fn page(title: &str, stamp: Option<&str>, main: &str) -> String {
    let mut out = String::new();
    let stamp = stamp.map(|s| format!(" data-stamp=\"{}\"", esc(s))).unwrap_or_default();
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{} · scratchpad</title><link rel=\"stylesheet\" href=\"/static/viewer.css\">\
         <script src=\"/static/live.js\" defer></script></head>\
         <body{stamp}><nav><a href=\"/\">sessions</a> <a href=\"/plugins\">plugins</a> \
         <a href=\"/metrics\">metrics</a></nav><main>{main}</main></body></html>\n",
        esc(title)
    );
    out
}

/// The style sheet, served at `/static/viewer.css`.
pub(crate) const CSS: &str = "\
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d1d1f;background:#fafafa}\
nav{background:#1d1d1f;padding:.6em 1.2em}nav a{color:#fff;margin-right:1.2em;text-decoration:none}\
main{padding:1em 1.5em;max-width:72em}h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.6em}\
table{border-collapse:collapse;width:100%;background:#fff}th,td{text-align:left;padding:.35em .6em;\
border-bottom:1px solid #e3e3e3;vertical-align:top}th{background:#f0f0f0}\
pre{white-space:pre-wrap;word-break:break-word;background:#fff;border:1px solid #e3e3e3;padding:.6em;margin:.3em 0}\
.meta{color:#666}.error{color:#b00}.bar{background:#e3e3e3;height:.5em;width:12em;display:inline-block}\
.bar>span{background:#3478f6;height:100%;display:block}.over>span{background:#d33}\
.block{border-left:3px solid #3478f6;padding-left:.8em;margin:1em 0}\
input{font:inherit;padding:.3em}";

/// The live-update script, served at `/static/live.js`: polls the page's stamp every 500 ms
/// and swaps in a fresh `main` when it changes (no reload; the scroll position stays), counting
/// the swaps in `body`'s `data-updates` (`data-live` is set once the first stamp was read).
pub(crate) const LIVE_JS: &str = "\
(() => {\n\
  const stamp = document.body.dataset.stamp;\n\
  if (!stamp) return;\n\
  let last = null;\n\
  const tick = async () => {\n\
    try {\n\
      const answer = await fetch(stamp, {cache: 'no-store'});\n\
      if (!answer.ok) return;\n\
      const now = await answer.text();\n\
      if (last !== null && now !== last) {\n\
        const url = new URL(location.href);\n\
        url.searchParams.set('fragment', '1');\n\
        const page = await fetch(url, {cache: 'no-store'});\n\
        if (page.ok) {\n\
          document.querySelector('main').innerHTML = await page.text();\n\
          document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);\n\
        }\n\
      }\n\
      last = now;\n\
      document.body.dataset.live = '1';\n\
    } catch (e) { /* the server stopped: keep the page as it is */ }\n\
  };\n\
  tick();\n\
  setInterval(tick, 500);\n\
})();\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_text_is_escaped() {
        assert_eq!(
            esc("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
    }

    #[test]
    fn times_are_utc_calendar_dates() {
        assert_eq!(time(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(time(1_795_651_200_000), "2026-11-26 00:00:00 UTC");
        assert_eq!(time(951_782_400_000 + 3_661_000), "2000-02-29 01:01:01 UTC");
    }

    #[test]
    fn urls_encode_everything_but_unreserved_characters() {
        assert_eq!(url("a b/c?d&e=é"), "a%20b%2Fc%3Fd%26e%3D%C3%A9");
    }
}
