//! The large-observation store's test data, in one place for the plugin's unit tests, the integration tests
//! (`scratchpad-tests`) and the OpenClaw end-to-end test.

/// The large-observation store's log: `INFO 2026-04-26 10:00:01 event number 0` and so on, one event per second
/// (every hundredth, from event 50, an `ERROR`), ending with
/// `ERROR 2026-04-26 23:59:59 LAST_CRITICAL_EVENT\n`: exactly 89,042 bytes.
pub fn big_log() -> String {
    let mut log = String::new();
    for i in 0..2095u32 {
        let level = if i % 100 == 50 { "ERROR" } else { "INFO" };
        let t = 10 * 3600 + i + 1;
        log.push_str(&format!(
            "{level} 2026-04-26 {:02}:{:02}:{:02} event number {i}\n",
            t / 3600,
            t / 60 % 60,
            t % 60
        ));
    }
    log.push_str("ERROR 2026-04-26 23:59:59 LAST_CRITICAL_EVENT\n");
    assert_eq!(log.len(), 89_042);
    log
}
