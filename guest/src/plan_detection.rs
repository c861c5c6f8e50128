//! Recognising a plan in the model's reply (the session scratchpad's nudgeOnPlanDetected).
//!
//! A reply "contains a plan" when, outside fenced code blocks, it has any of:
//! - a numbered list of 3 or more items (`1. `, `2) `, up to three digits);
//! - a task list of 3 or more items (`- [ ] `, `* [x] `, `+ [X] `);
//! - "Step N" with 2 or more different numbers (case-insensitive, whole word: `Step 1:`,
//!   `step 2`), since one "step 3" alone is usually a reference, not a plan.

use std::collections::BTreeSet;

/// Whether `text` looks like it contains a multi-step plan.
pub fn contains_plan(text: &str) -> bool {
    let (mut numbered, mut tasks) = (0, 0);
    let mut steps = BTreeSet::new();
    let mut in_fence = false;
    for line in text.lines() {
        let line = line.trim_start();
        if line.starts_with("```") || line.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        numbered += usize::from(is_numbered_item(line));
        tasks += usize::from(is_task_item(line));
        step_numbers(line, &mut steps);
    }
    numbered >= 3 || tasks >= 3 || steps.len() >= 2
}

/// `1. text`, `12) text`.
fn is_numbered_item(line: &str) -> bool {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if !(1..=3).contains(&digits) {
        return false;
    }
    let rest = &line[digits..];
    let Some(rest) = rest.strip_prefix('.').or_else(|| rest.strip_prefix(')')) else {
        return false;
    };
    rest.starts_with([' ', '\t']) && !rest.trim().is_empty()
}

/// `- [ ] text`, `* [x] text`.
fn is_task_item(line: &str) -> bool {
    let Some(rest) = line.strip_prefix(['-', '*', '+']) else {
        return false;
    };
    let rest = rest.trim_start();
    ["[ ]", "[x]", "[X]"].iter().any(|box_| rest.starts_with(box_)) && !rest[3..].trim().is_empty()
}

/// Adds the N of every whole-word "step N" in `line`.
fn step_numbers(line: &str, found: &mut BTreeSet<u32>) {
    let lower = line.to_ascii_lowercase();
    for (at, _) in lower.match_indices("step") {
        let before_ok = lower[..at].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
        let after = &lower[at + 4..];
        let spaced = after.trim_start();
        if !before_ok || spaced.len() == after.len() {
            continue;
        }
        let digits: String = spaced.chars().take_while(char::is_ascii_digit).collect();
        let after_digits = spaced[digits.len()..].chars().next();
        if after_digits.is_none_or(|c| !c.is_alphanumeric())
            && let Ok(n) = digits.parse()
        {
            found.insert(n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_numbered_list_of_three_items_is_a_plan() {
        assert!(contains_plan("Here is the plan:\n1. Fix auth bug\n2. Add test\n3. Update docs"));
        assert!(contains_plan("  1) one\n  2) two\n  3) three"));
    }

    #[test]
    fn a_numbered_list_of_two_items_is_not() {
        assert!(!contains_plan("1. Fix auth bug\n2. Add test"));
    }

    #[test]
    fn a_task_list_of_three_items_is_a_plan() {
        assert!(contains_plan("- [x] Survey sheets\n- [ ] Fix Q3 totals\n* [ ] Add formatting"));
        assert!(!contains_plan("- [x] Survey sheets\n- [ ] Fix Q3 totals"));
    }

    #[test]
    fn two_different_step_numbers_are_a_plan() {
        assert!(contains_plan("Step 1: read the config. Then step 2: patch it."));
        assert!(contains_plan("STEP 1 - read\nStep  2 - write"));
    }

    #[test]
    fn a_single_or_repeated_step_reference_is_not() {
        assert!(!contains_plan("As noted in step 3, the config is read first."));
        assert!(!contains_plan("Step 3 again: step 3."));
        assert!(!contains_plan("footstep 1 and footstep 2; steps 1 and 2; step1 step2"));
    }

    #[test]
    fn lists_inside_code_fences_are_ignored() {
        assert!(!contains_plan("```\n1. a\n2. b\n3. c\n```"));
    }

    #[test]
    fn numbers_that_are_not_list_items_are_ignored() {
        assert!(!contains_plan("1.5 is a number\n2024. was a year\n3.x is a version"));
        assert!(!contains_plan("1. \n2. \n3. "));
    }

    #[test]
    fn prose_is_not_a_plan() {
        assert!(!contains_plan("The root cause is a timezone mismatch in token expiry."));
        assert!(!contains_plan(""));
    }
}
