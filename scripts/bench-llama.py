#!/usr/bin/env python3
"""What Bridle adds in front of a local model: time to first token and tokens per second through
`bridle run`, side by side with the very same request sent to llama-server directly, and the
prompt size Bridle sends with no history for each wire format (the server's own count).

Needs the llama-server of scripts/setup-llama.sh and a built `bridle` ($BRIDLE_LLAMA_DIR,
$BRIDLE_CLI from scripts/env.sh). Usage: python3 scripts/bench-llama.py [runs]
"""
import http.client
import http.server
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

LLAMA = os.environ["BRIDLE_LLAMA_DIR"]
BRIDLE = os.environ["BRIDLE_CLI"]
RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
PROMPT = "Count from one to thirty, one number per line."


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port):
    proc = subprocess.Popen(
        [f"{LLAMA}/build/bin/llama-server", "-m", f"{LLAMA}/SmolLM2-135M-Instruct.Q4_1.gguf", "--host", "127.0.0.1",
         "--port", str(port), "-c", "4096", "-t", "2", "-n", "96", "--no-webui", "--offline", "--jinja", "--seed", "1",
         "--temp", "0", "--chat-template-file", f"{LLAMA}/chatml-tools.jinja"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(300):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            c.request("GET", "/health")
            if c.getresponse().status == 200:
                return proc
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit("llama-server did not start")


def bridle_run(data_dir, workspace, base_url, kind="openai"):
    """Runs bridle; returns (time to first delta, tokens/s, prompt tokens) from its events."""
    start = time.monotonic()
    proc = subprocess.Popen([BRIDLE, "run", PROMPT, "--json", "--provider", kind, "--base-url", base_url, "--model", "smollm2",
                             "--data-dir", data_dir, "--workspace", workspace], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    first = last = None
    usage = {}
    for line in proc.stdout:
        event = json.loads(line)
        now = time.monotonic()
        if event["type"] == "assistantDelta":
            first = first or now
            last = now
        if event["type"] == "tokenUsage":
            usage = event["usage"]
    proc.wait()
    rate = usage.get("outputTokens", 0) / (last - first) if first and last and last > first else float("nan")
    return (first - start if first else float("nan")), rate, usage.get("inputTokens", 0)


class Recorder(http.server.BaseHTTPRequestHandler):
    """Forwards to llama-server and keeps the first chat request body Bridle sends."""
    body = None
    upstream = None

    def log_message(self, *_):
        pass

    def do_GET(self):
        self.forward("GET", None)

    def do_POST(self):
        data = self.rfile.read(int(self.headers.get("content-length", 0)))
        if self.path.endswith("/chat/completions") and Recorder.body is None:
            Recorder.body = data
        self.forward("POST", data)

    def forward(self, method, data):
        c = http.client.HTTPConnection("127.0.0.1", Recorder.upstream, timeout=300)
        c.request(method, self.path, body=data, headers={"content-type": "application/json"})
        r = c.getresponse()
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(k, v)
        self.send_header("connection", "close")
        self.end_headers()
        while chunk := r.read1(65536):
            self.wfile.write(chunk)
            self.wfile.flush()


def direct(port, body):
    """Sends `body` straight to llama-server; returns (time to first delta, tokens/s)."""
    start = time.monotonic()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    c.request("POST", "/v1/chat/completions", body=body, headers={"content-type": "application/json"})
    r = c.getresponse()
    first = last = None
    tokens = 0
    for raw in r:
        line = raw.decode().strip()
        if not line.startswith("data:") or line == "data: [DONE]":
            continue
        chunk = json.loads(line[5:])
        if chunk.get("usage"):
            tokens = chunk["usage"].get("completion_tokens", tokens)
        for choice in chunk.get("choices", []):
            if choice.get("delta", {}).get("content"):
                now = time.monotonic()
                first = first or now
                last = now
    rate = tokens / (last - first) if first and last and last > first else float("nan")
    return (first - start if first else float("nan")), rate


def main():
    port = free_port()
    server = start_server(port)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            ws = os.path.join(tmp, "ws")
            os.makedirs(ws)
            Recorder.upstream = port
            proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
            threading.Thread(target=proxy.serve_forever, daemon=True).start()
            bridle_run(os.path.join(tmp, "capture"), ws, f"http://127.0.0.1:{proxy.server_address[1]}/v1")
            proxy.shutdown()
            body = Recorder.body
            # Warm the server's prompt cache the same way for both (the same prefix every time).
            direct(port, body)
            d = [direct(port, body) for _ in range(RUNS)]
            b = [bridle_run(os.path.join(tmp, f"b{i}"), ws, f"http://127.0.0.1:{port}/v1") for i in range(RUNS)]
            ttft_d, ttft_b = statistics.median(x[0] for x in d), statistics.median(x[0] for x in b)
            tps_d, tps_b = statistics.median(x[1] for x in d), statistics.median(x[1] for x in b)
            print(f"time to first token: direct {ttft_d * 1e3:.0f} ms, through bridle run {ttft_b * 1e3:.0f} ms "
                  f"(ratio {ttft_b / ttft_d:.2f}; bridle's includes starting the process and the session)")
            print(f"tokens per second:   direct {tps_d:.1f}, through bridle run {tps_b:.1f} (ratio {tps_b / tps_d:.2f})")
            _, _, openai_prompt = bridle_run(os.path.join(tmp, "p1"), ws, f"http://127.0.0.1:{port}/v1")
            _, _, anthropic_prompt = bridle_run(os.path.join(tmp, "p2"), ws, f"http://127.0.0.1:{port}", "anthropic")
            print(f"prompt with no history (server's count): openai {openai_prompt} tokens, anthropic {anthropic_prompt} tokens; "
                  f"request body {len(body)} bytes")
    finally:
        server.terminate()


if __name__ == "__main__":
    main()
