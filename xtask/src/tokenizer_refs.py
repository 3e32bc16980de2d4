# Reference counts and throughput from the reference tokenizer libraries.
# Run by `cargo xtask` (xtask/src/tokenizer_refs.rs) in its own venv:
#   cases DIR REPO       writes DIR/<name>.cases.json: [[text, count], ...]
#   bench DIR TEXT SECS NAME  prints one JSON line for tokenizer NAME: first count
#                        (load included), RSS growth, throughput (one thread; two
#                        threads over two halves), token count
import glob
import json
import os
import random
import sys
import time

import sentencepiece
import tokenizers

HF = ["llama-3.1", "qwen3", "deepseek-v3"]


def rss_kib():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def load(directory, name):
    """(count function, two-halves count function) of one reference tokenizer."""
    if name == "gemma3":
        sp = sentencepiece.SentencePieceProcessor(
            model_file=os.path.join(directory, "gemma3.spiece.model")
        )
        return (
            lambda text: len(sp.encode(text)),
            lambda halves: sum(len(ids) for ids in sp.encode(halves, num_threads=2)),
        )
    tk = tokenizers.Tokenizer.from_file(os.path.join(directory, name + ".tokenizer.json"))
    return (
        lambda text: len(tk.encode(text, add_special_tokens=False).ids),
        lambda halves: sum(
            len(e.ids) for e in tk.encode_batch(halves, add_special_tokens=False)
        ),
    )


ALPHABET = (
    list("abcXYZ019 \n\t  \n\n\r\n.,;:!?-_=+*/\\\"'()[]{}<>|@#$%^&~`")
    + list("한국어문장입니다가나다")
    + list("日本語中文русскийالعربيةहिन्दी")
    + ["👩\u200d👩\u200d👧", "🦊", "👍🏽", "\u200d", "é", "ß", "ü", "e\u0301", "\u00a0", "\u3000", "\ufeff"]
    + ["    ", "        ", "\n\n\n", "   \n", "0000", "1234567", "aaaa"]
    + ["<bos>", "<eos>", "<pad>", "<start_of_turn>", "<end_of_turn>", "<mask>", "<unused3>"]
    + ["<|endoftext|>", "<|begin_of_text|>", "<|eot_id|>", "<|start_header_id|>", "<|im_start|>", "<|im_end|>"]
    + ["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<think>", "</think>", "[multimodal]", "<table>", "</td>", "<0x41>", "▁", "▁▁"]
    + ["fn main() {", "def f(x):", "return x;", "=>", "!==", "::", "->", "'s", "'ll", " the", " The"]
)


def texts(repo):
    out = []
    patterns = ["*.md", "crates/context-budget/src/*.rs", "crates/context-budget/data/corpus/*"]
    for pattern in patterns:
        for path in sorted(glob.glob(os.path.join(repo, pattern))):
            with open(path, encoding="utf-8") as handle:
                out.append(handle.read())
    rng = random.Random(20261123)
    for _ in range(3000):
        out.append("".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 40))))
    for _ in range(1000):
        out.append("".join(rng.choice(ALPHABET) for _ in range(rng.randint(50, 400))))
    out += [" " * n for n in range(0, 70)] + ["\n" * n for n in range(0, 40)]
    out += ["a" * n for n in (1, 2, 3, 7, 8, 9, 64, 512, 1000)]
    return out


def cases(directory, repo):
    corpus = texts(repo)
    for name in ["gemma3"] + HF:
        count, _ = load(directory, name)
        with open(os.path.join(directory, name + ".cases.json"), "w", encoding="utf-8") as handle:
            json.dump([[text, count(text)] for text in corpus], handle, ensure_ascii=False)
        print(f"{name}: {len(corpus)} reference counts", file=sys.stderr)


def median_rate(run, size, seconds):
    rates, deadline = [], time.perf_counter() + seconds
    run()  # warm-up
    while time.perf_counter() < deadline or len(rates) < 3:
        started = time.perf_counter()
        run()
        rates.append(size / (time.perf_counter() - started) / 1e6)
    rates.sort()
    return rates[len(rates) // 2]


def bench(directory, text_path, seconds, name):
    # newline="": the bytes as they are (universal newlines would turn the corpus's
    # CRLF into LF, and the reference would count another text).
    with open(text_path, encoding="utf-8", newline="") as handle:
        text = handle.read()
    size = len(text.encode("utf-8"))
    cut = text.rfind("\n", 0, len(text) // 2) + 1
    halves = [text[:cut], text[cut:]]
    rss = rss_kib()
    started = time.perf_counter()
    count, count_two = load(directory, name)
    count("hello world")
    first_count = time.perf_counter() - started
    rss = rss_kib() - rss
    print(
        json.dumps(
            {
                "tokenizer": name,
                "first_count_s": first_count,
                "rss_kib": rss,
                "one_thread_mbps": median_rate(lambda: count(text), size, seconds),
                "two_threads_mbps": median_rate(lambda: count_two(halves), size, seconds),
                "tokens": count(text),
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    if sys.argv[1] == "cases":
        cases(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "bench":
        bench(sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5])
    else:
        sys.exit("usage: cases DIR REPO | bench DIR TEXT SECONDS NAME")
