#!/usr/bin/env python3
"""A scripted stand-in for a model CLI (`claude -p --output-format json`), for the enrichment tests.

It reads the prompt (stdin, or the argument after `--prompt-arg`), appends one line per call to the log named by
FAKE_MODEL_LOG (its argv, working folder and prompt), and answers by the first rule of the JSON file named by
FAKE_MODEL_SCRIPT whose `match` occurs in the prompt. A rule says what to do:
  {"match": "...", "answer": {...}}            an envelope whose result is that JSON object
  {"match": "...", "text": "..."}              an envelope whose result is that text
  {"match": "...", "fail": "reason"}           an error envelope (is_error) and exit 1
  {"match": "...", "hang": true}               never answer (the caller's time limit kills it)
  {"match": "...", "garbage": "..."}           print that instead of an envelope
  {"match": "...", "no_usage": true, ...}      leave usage out of the envelope
and "usage" (input, cache_read, cache_write, output) and "cost" set the usage it reports.
"""

import json
import os
import sys
import time


def main() -> int:
    argv = sys.argv[1:]
    prompt = argv[argv.index("--prompt-arg") + 1] if "--prompt-arg" in argv else sys.stdin.read()
    with open(os.environ["FAKE_MODEL_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps({"argv": argv, "cwd": os.getcwd(), "prompt": prompt, "pid": os.getpid()}) + "\n")
    with open(os.environ["FAKE_MODEL_SCRIPT"], encoding="utf-8") as fh:
        rules = json.load(fh)
    rule = next((r for r in rules if r.get("match", "") in prompt), None)
    if rule is None:
        print("no rule matches this prompt", file=sys.stderr)
        return 3
    if rule.get("hang"):
        while True:
            time.sleep(3600)
    if "garbage" in rule:
        print(rule["garbage"])
        return 0
    u = rule.get("usage", {})
    envelope = {
        "type": "result",
        "is_error": False,
        "total_cost_usd": rule.get("cost", 0.01),
        "usage": {
            "input_tokens": u.get("input", 100),
            "cache_read_input_tokens": u.get("cache_read", 5000),
            "cache_creation_input_tokens": u.get("cache_write", 20),
            "output_tokens": u.get("output", 50),
        },
    }
    if rule.get("no_usage"):
        del envelope["usage"]
    if "fail" in rule:
        envelope.update(is_error=True, result=rule["fail"])
        print(json.dumps(envelope))
        return 1
    envelope["result"] = rule["text"] if "text" in rule else json.dumps(rule["answer"])
    print(json.dumps(envelope))
    return 0


if __name__ == "__main__":
    sys.exit(main())
