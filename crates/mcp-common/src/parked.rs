//! A large `tools/call`'s arguments, parked beside the message while rmcp parses it.
//!
//! rmcp reads a JSON-RPC message through untagged enums: serde buffers the whole
//! message in its own tree (`Content`) and clones that tree for each variant it
//! tries, so a call of 6 MB of arguments peaked at ~20x its size before any tool
//! ran. The transports ([`crate::transport`]) therefore take a large call's
//! `arguments` out of the message as the JSON tree they already parsed, put a
//! ticket in their place, and hand rmcp the small rest; the registry trades the
//! ticket back ([`unpark`]) before it parses the arguments. The tree is moved,
//! never copied.
//!
//! A ticket is 128 random bits in a field no schema has ([`TICKET`]): a caller
//! cannot name another's arguments, and a made-up ticket is an unknown argument
//! like any other. Parked arguments are bounded: at most [`MAX_PARKED`] at once
//! (past that, a call takes the ordinary path), each given back by the transport
//! when its request ends ([`Parked`]'s drop) and by age ([`MAX_AGE`]) in any case.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::JsonObject;
use serde_json::Value;

/// Arguments of at least this many bytes (of the message) are parked; smaller ones
/// cost rmcp little, and parking them would only add a round trip through a lock.
pub const MIN_PARKED_BYTES: usize = 256 * 1024;

/// Most arguments parked at once, across sessions and transports.
pub const MAX_PARKED: usize = 64;

/// Parked arguments no call took within this long are dropped (a call rmcp refused
/// after parking, over stdio, where no request ends to drop them).
pub const MAX_AGE: Duration = Duration::from_secs(300);

/// The one field of a parked call's arguments: its ticket. A NUL starts it, so no
/// tool's parameter (an identifier) can be named so.
pub const TICKET: &str = "\u{0}parked";

struct Entry {
    parked_at: Instant,
    arguments: JsonObject,
}

static PARKED: LazyLock<Mutex<HashMap<String, Entry>>> = LazyLock::new(Default::default);

/// A parked call's ticket: dropping it gives the arguments back (if no call took
/// them), so a transport holds it for as long as its request runs.
#[derive(Debug)]
pub struct Parked {
    ticket: String,
}

impl Parked {
    /// Leave the arguments parked until a call takes them or they age out
    /// ([`MAX_AGE`]): over stdio, no request ends for the transport to see.
    pub fn until_taken(self) {
        std::mem::forget(self);
    }
}

impl Drop for Parked {
    fn drop(&mut self) {
        if let Ok(mut parked) = PARKED.lock() {
            parked.remove(&self.ticket);
        }
    }
}

/// 128 bits no caller can guess: two hashes, by per-process random keys, of a
/// counter.
fn new_ticket() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let (a, b) = (RandomState::new(), RandomState::new());
    format!("{:016x}{:016x}", a.hash_one(n), b.hash_one(n))
}

/// If `message` (`message_bytes` long) is a `tools/call` whose `arguments` are an
/// object and the message is at least [`MIN_PARKED_BYTES`], move the arguments out
/// and leave a ticket in their place. `None` when nothing was parked (a small or
/// other message, or [`MAX_PARKED`] already held).
pub fn park(message: &mut Value, message_bytes: usize) -> Option<Parked> {
    if message_bytes < MIN_PARKED_BYTES || message.get("method")? != "tools/call" {
        return None;
    }
    let params = message.get_mut("params")?.as_object_mut()?;
    if !matches!(params.get("arguments"), Some(Value::Object(_))) {
        return None;
    }
    let mut parked = PARKED.lock().ok()?;
    let now = Instant::now();
    parked.retain(|_, entry| now.duration_since(entry.parked_at) < MAX_AGE);
    if parked.len() >= MAX_PARKED {
        return None;
    }
    let Some(Value::Object(arguments)) = params.remove("arguments") else {
        return None;
    };
    let ticket = new_ticket();
    params.insert(
        "arguments".into(),
        Value::Object(JsonObject::from_iter([(
            TICKET.to_string(),
            Value::String(ticket.clone()),
        )])),
    );
    parked.insert(
        ticket.clone(),
        Entry {
            parked_at: now,
            arguments,
        },
    );
    Some(Parked { ticket })
}

/// A call's arguments as sent: the parked ones when `arguments` is a ticket this
/// process holds, else `arguments` unchanged (a made-up or spent ticket stays, and is
/// refused as an unknown argument).
pub fn unpark(arguments: Option<JsonObject>) -> Option<JsonObject> {
    let ticket = match &arguments {
        Some(object) if object.len() == 1 => match object.get(TICKET) {
            Some(Value::String(ticket)) => ticket,
            _ => return arguments,
        },
        _ => return arguments,
    };
    let taken = PARKED.lock().ok().and_then(|mut p| p.remove(ticket));
    match taken {
        Some(entry) => Some(entry.arguments),
        None => arguments,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(arguments: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "t", "arguments": arguments}})
    }

    #[test]
    fn a_large_calls_arguments_are_moved_out_and_traded_back_once() {
        let mut message = call(json!({"tools": ["x"], "model": "m"}));
        let parked = park(&mut message, MIN_PARKED_BYTES).expect("parked");
        let ticket = message["params"]["arguments"].as_object().cloned();
        assert_eq!(ticket.as_ref().map(|t| t.len()), Some(1));
        assert!(ticket.as_ref().is_some_and(|t| t.contains_key(TICKET)));
        let back = unpark(ticket.clone()).expect("arguments");
        assert_eq!(Value::Object(back), json!({"tools": ["x"], "model": "m"}));
        // Spent: the ticket is only a ticket now.
        assert_eq!(unpark(ticket.clone()), ticket);
        drop(parked);
    }

    #[test]
    fn small_other_and_argumentless_messages_are_left_alone() {
        let mut small = call(json!({"a": 1}));
        assert!(park(&mut small, MIN_PARKED_BYTES - 1).is_none());
        assert_eq!(small, call(json!({"a": 1})));
        let mut list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
        assert!(park(&mut list, MIN_PARKED_BYTES).is_none());
        let mut no_object = call(json!([1, 2]));
        assert!(park(&mut no_object, MIN_PARKED_BYTES).is_none());
        assert_eq!(no_object, call(json!([1, 2])));
    }

    #[test]
    fn a_dropped_ticket_gives_its_arguments_back_and_a_made_up_one_is_kept_as_sent() {
        let mut message = call(json!({"k": "v"}));
        let parked = park(&mut message, MIN_PARKED_BYTES).expect("parked");
        let ticket = message["params"]["arguments"].as_object().cloned();
        drop(parked);
        assert_eq!(unpark(ticket.clone()), ticket, "given back when dropped");
        let made_up = Some(JsonObject::from_iter([(
            TICKET.to_string(),
            Value::String("0".repeat(32)),
        )]));
        assert_eq!(unpark(made_up.clone()), made_up);
        assert_eq!(unpark(None), None);
    }

    #[test]
    fn tickets_differ() {
        let tickets: std::collections::HashSet<String> = (0..1000).map(|_| new_ticket()).collect();
        assert_eq!(tickets.len(), 1000);
        assert!(tickets.iter().all(|t| t.len() == 32));
    }
}
