//! The one ordering rule every registry needs: each package after the packages it depends on.

use std::collections::BTreeMap;

/// The names in `packages` (name → the names it depends on) ordered so that each comes after
/// every one of its dependencies that is itself in `packages`; dependencies outside are
/// ignored (they are already on the registry, or are not ours). Among packages whose
/// dependencies are all placed, the alphabetically first goes next, so the order is the same
/// on every run. A cycle is an error naming the packages in it.
pub fn dependencies_first(packages: &BTreeMap<String, Vec<String>>) -> Result<Vec<String>, String> {
    let mut waiting: BTreeMap<&str, Vec<&str>> = packages
        .iter()
        .map(|(name, deps)| {
            let inside = deps.iter().map(String::as_str).filter(|d| packages.contains_key(*d) && *d != name);
            (name.as_str(), inside.collect())
        })
        .collect();
    let mut order: Vec<String> = Vec::with_capacity(packages.len());
    while !waiting.is_empty() {
        let ready = waiting.iter().find(|(_, deps)| deps.iter().all(|d| order.iter().any(|o| o == d)));
        let Some((&name, _)) = ready else {
            let stuck: Vec<&str> = waiting.keys().copied().collect();
            return Err(format!("these packages depend on each other in a cycle: {}", stuck.join(", ")));
        };
        waiting.remove(name);
        order.push(name.to_owned());
    }
    Ok(order)
}
