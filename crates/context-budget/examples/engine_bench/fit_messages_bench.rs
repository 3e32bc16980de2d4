//! fit_messages on a 10,000-message history against naive trimmers that re-count,
//! measured in the same process; prints a markdown table (medians of rounds, ratios).
//! `fit_messages` is the function the server's fit-messages tool runs (input check,
//! model resolution, counting, selection, the output with the kept messages).
//!
//! Usage: engine_bench fit_messages_bench [--quick] [--rounds N]
//!
//! Baselines, both with the same per-message overhead rule (so only the algorithm
//! differs):
//! - "binary search, re-count suffix": LangChain trim_messages' approach — probe a
//!   cut point and count the whole candidate suffix each probe (O(n log n) counts);
//! - "drop oldest, re-count all": `while count(msgs) > budget: msgs.pop(0)` (O(n²)
//!   counts), too slow for 10,000 messages, so measured on a 2,000-message prefix
//!   (500 with --quick), with our time on the same prefix.

use std::sync::Arc;
use std::time::Instant;

use clap::Parser;
use context_budget::{
    Catalog, DEFAULT_MAX_INPUT_BYTES, FitOptions, FunctionCall, Message, Role, TokenCounter,
    Tokenizer, ToolCall, conversation_tokens, fit_messages, input_budget,
};

const ENGLISH: [&str; 6] = [
    "Can you summarize the quarterly report and list the three biggest risks?",
    "The deployment failed at step 4 because the migration timed out after 30 seconds.",
    "Here is the stack trace from the worker: thread 'main' panicked at src/lib.rs:42.",
    "Sure. First, check the connection pool size; second, raise the statement timeout.",
    "Let's circle back on the budget once finance confirms the numbers for Q3.",
    "I found two tickets that match: #4521 (open) and #4533 (closed as duplicate).",
];
const KOREAN: [&str; 6] = [
    "분기 보고서를 요약하고 가장 큰 위험 세 가지를 알려 주세요.",
    "마이그레이션이 30초 후에 시간 초과되어 배포가 4단계에서 실패했습니다.",
    "연결 풀 크기를 먼저 확인하고, 그다음 쿼리 제한 시간을 늘려 보세요.",
    "재무팀이 3분기 숫자를 확정하면 예산 이야기를 다시 하겠습니다.",
    "조건에 맞는 티켓이 두 개 있습니다: #4521(진행 중), #4533(중복으로 종료).",
    "서울 사무소의 회의실 예약 시스템이 오늘 오전에 잠시 중단되었습니다.",
];

/// A deterministic history: system prompt, then user/assistant turns in English and
/// Korean, with a tool call and its result every fifth turn.
fn history(len: usize) -> Vec<Message> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        // xorshift64: deterministic, no dependency.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state as usize
    };
    let mut messages = vec![Message::new(
        Role::System,
        "You are a support assistant for an engineering team. Answer briefly; cite ticket numbers.",
    )];
    let mut turn = 0usize;
    while messages.len() < len {
        let pick = |n: usize| {
            if n.is_multiple_of(2) {
                ENGLISH[n / 2 % ENGLISH.len()]
            } else {
                KOREAN[n / 2 % KOREAN.len()]
            }
        };
        messages.push(Message::new(Role::User, pick(next())));
        if turn.is_multiple_of(5) && messages.len() + 3 <= len {
            let id = format!("call_{turn}");
            messages.push(Message {
                role: Role::Assistant,
                content: None,
                name: None,
                tool_calls: vec![ToolCall {
                    id: id.clone(),
                    kind: "function".into(),
                    function: FunctionCall {
                        name: "search_tickets".into(),
                        arguments: format!("{{\"query\":\"{}\",\"limit\":5}}", pick(next())),
                    },
                }],
                tool_call_id: None,
            });
            messages.push(Message {
                tool_call_id: Some(id),
                ..Message::new(Role::Tool, format!("{} {}", pick(next()), pick(next())))
            });
        }
        if messages.len() < len {
            messages.push(Message::new(
                Role::Assistant,
                format!("{} {}", pick(next()), pick(next())),
            ));
        }
        turn += 1;
    }
    messages
}

/// LangChain-style: binary search for the earliest start whose suffix fits, counting
/// the whole suffix at every probe.
fn naive_binary_search(messages: &[Message], tokenizer: Tokenizer, budget: u64) -> usize {
    let (mut lo, mut hi) = (0, messages.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        if conversation_tokens(&messages[mid..], tokenizer) <= budget {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    messages.len() - lo
}

/// The loop most hand-written trimmers use: drop the oldest, count everything again.
fn naive_drop_oldest(messages: &[Message], tokenizer: Tokenizer, budget: u64) -> usize {
    let mut start = 0;
    while start < messages.len() && conversation_tokens(&messages[start..], tokenizer) > budget {
        start += 1;
    }
    messages.len() - start
}

/// The built-in catalog plus one model with `window` tokens (as a --models-file adds it).
fn with_model(name: &str, tokenizer: Tokenizer, window: u64) -> TokenCounter {
    let json = format!(
        r#"{{"as_of": "2026-01-01", "models": [{{"name": "{name}", "family": "bench",
        "tokenizer": "{}", "context_window": {window}, "max_output_tokens": 1,
        "input_usd_per_mtok": 1.0, "output_usd_per_mtok": 1.0}}]}}"#,
        tokenizer.name()
    );
    let catalog = Catalog::builtin()
        .with_models_file(&json, "bench", std::path::Path::new("."))
        .unwrap_or_else(|e| panic!("bench model: {e}"));
    TokenCounter::new(Arc::new(catalog), DEFAULT_MAX_INPUT_BYTES)
}

fn median_secs(rounds: usize, mut work: impl FnMut() -> usize) -> (f64, usize) {
    let mut times = Vec::with_capacity(rounds);
    let mut kept = 0;
    for _ in 0..rounds {
        let started = Instant::now();
        kept = std::hint::black_box(work());
        times.push(started.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], kept)
}

/// fit_messages on a 10,000-message history against naive trimmers that re-count.
#[derive(Parser)]
struct Cli {
    /// At most 3 rounds and a 500-message prefix for the quadratic baseline.
    #[arg(long)]
    quick: bool,
    /// Timed rounds per row (the median is printed).
    #[arg(long, default_value_t = 7, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    rounds: usize,
}

pub fn run(args: Vec<std::ffi::OsString>) {
    let Cli { quick, mut rounds } = Cli::parse_from(args);
    if quick {
        rounds = rounds.min(3);
    }
    let small = if quick { 500 } else { 2_000 };
    let messages = history(10_000);
    let tokenizer = Tokenizer::O200kBase; // gpt-4o
    let window = 128_000;
    let options = FitOptions::default();
    let budget = input_budget(window, &options).unwrap_or(0);
    tokenizer.preload();
    let total = conversation_tokens(&messages, tokenizer);
    let counter = TokenCounter::default();
    let fit = |msgs: &[Message]| {
        fit_messages(&counter, msgs, Some("gpt-4o"), &options, None)
            .map(|fitted| fitted.kept_indices.len())
            .unwrap_or(0)
    };

    let (ours, ours_kept) = median_secs(rounds, || fit(&messages));
    let (binary, binary_kept) =
        median_secs(rounds, || naive_binary_search(&messages, tokenizer, budget));
    // The quadratic loop on a prefix whose budget forces it to drop most messages.
    let prefix = &messages[..small];
    let prefix_window = (conversation_tokens(prefix, tokenizer) as f64 / 3.0 / 0.9) as u64;
    let prefix_budget = input_budget(prefix_window, &options).unwrap_or(0);
    let prefix_counter = with_model("bench-prefix", tokenizer, prefix_window);
    let fit_prefix = || {
        fit_messages(
            &prefix_counter,
            prefix,
            Some("bench-prefix"),
            &options,
            None,
        )
        .map(|fitted| fitted.kept_indices.len())
        .unwrap_or(0)
    };
    let (ours_small, ours_small_kept) = median_secs(rounds, fit_prefix);
    let (drop_oldest, drop_kept) = median_secs(rounds.min(3), || {
        naive_drop_oldest(prefix, tokenizer, prefix_budget)
    });

    println!(
        "fit_messages, gpt-4o (o200k_base), budget {budget} of a {window}-token window; \
         history of {} messages, {total} tokens; median of {rounds} rounds",
        messages.len()
    );
    println!();
    println!("| history | ours (ms) | kept | baseline | baseline (ms) | kept | ratio |");
    println!("|---|---:|---:|---|---:|---:|---:|");
    println!(
        "| {} msgs | {:.1} | {ours_kept} | binary search, re-count suffix | {:.1} | {binary_kept} | {:.1}x faster |",
        messages.len(),
        ours * 1e3,
        binary * 1e3,
        binary / ours
    );
    println!(
        "| {small} msgs, keep ~1/3 | {:.2} | {ours_small_kept} | drop oldest, re-count all | {:.1} | {drop_kept} | {:.0}x faster |",
        ours_small * 1e3,
        drop_oldest * 1e3,
        drop_oldest / ours_small
    );
    println!();
    println!(
        "Kept counts differ slightly: the baselines cut between a tool call and its \
         result; ours keeps the pair whole (and so may keep one message fewer)."
    );
}
